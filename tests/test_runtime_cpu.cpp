// CPU runtime: hand-written C kernels following the ABI
//   void name(void* const* bufs, long long gid_start, long long gid_end)
// compiled with the host C compiler, cached, and launched over the thread pool.
#include <doctest/doctest.h>

#include <graft/runtime/cpu.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

using namespace graft;
using namespace graft::rt;

namespace {

// A fresh temp directory for one test's disk cache, removed afterwards.
struct TempDir {
  std::string path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "graft-cpu-test-XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    REQUIRE(::mkdtemp(buf.data()) != nullptr);
    path = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

CpuOptions opts(const TempDir& d, unsigned threads = 0) {
  CpuOptions o;
  o.cache_dir = d.path;
  o.threads = threads;
  return o;
}

KernelSource ks(std::string name, std::string source, uint32_t num_buffers, int64_t threads = 1) {
  KernelSource k;
  k.name = std::move(name);
  k.source = std::move(source);
  k.num_buffers = num_buffers;
  k.threads = threads;
  return k;
}

template <class T>
std::vector<T> read(Buffer& b, size_t n) {
  std::vector<T> v(n);
  b.copy_out(v.data(), n * sizeof(T));
  return v;
}

const char* kAddF32 = R"C(
void add_f32(void* const* bufs, long long gid_start, long long gid_end) {
  float* out = (float*)bufs[0];
  const float* a = (const float*)bufs[1];
  const float* b = (const float*)bufs[2];
  for (long long gid = gid_start; gid < gid_end; gid++) out[gid] = a[gid] + b[gid];
}
)C";

}  // namespace

TEST_CASE("cpu runtime: device basics") {
  TempDir d;
  CpuDevice dev(opts(d));
  CHECK(dev.name() == "CPU");
  CHECK(dev.features().int64);
  CHECK(dev.features().float64);
  CHECK(dev.features().float16);
  CHECK(dev.features().int8_storage);
  CHECK(dev.threads() >= 1);
  CHECK(dev.cache_dir() == d.path + "/cpu");
  auto a = CpuDevice::get(), b = CpuDevice::get();
  CHECK(a.get() == b.get());
  CHECK(a->name() == "CPU");
}

TEST_CASE("cpu runtime: elementwise add on 1000 floats") {
  TempDir d;
  CpuDevice dev(opts(d));
  const size_t n = 1000;
  std::vector<float> a(n), b(n);
  for (size_t i = 0; i < n; i++) a[i] = float(i) * 0.5f, b[i] = 1.0f / float(i + 1);
  auto A = dev.alloc(n * 4), B = dev.alloc(n * 4), O = dev.alloc(n * 4);
  A->copy_in(a.data(), n * 4);
  B->copy_in(b.data(), n * 4);
  auto prog = dev.compile(ks("add_f32", kAddF32, 3, int64_t(n)));
  Buffer* bufs[] = {O.get(), A.get(), B.get()};
  prog->launch(bufs);
  dev.synchronize();
  auto out = read<float>(*O, n);
  for (size_t i = 0; i < n; i++) REQUIRE(out[i] == a[i] + b[i]);  // exact: same float add
  auto times = dev.last_kernel_times();
  REQUIRE(times.size() == 1);
  CHECK(times[0] >= 0.0);
  // the buffer memory is 64-byte aligned and reachable for zero-copy
  auto* cb = dynamic_cast<CpuBuffer*>(A.get());
  REQUIRE(cb);
  CHECK(reinterpret_cast<uintptr_t>(cb->data()) % 64 == 0);
  CHECK(static_cast<float*>(cb->data())[3] == a[3]);
}

TEST_CASE("cpu runtime: kernel times move into last_kernel_times on synchronize") {
  TempDir d;
  CpuDevice dev(opts(d));
  auto prog = dev.compile(ks("add_f32", kAddF32, 3, 16));
  auto A = dev.alloc(64), B = dev.alloc(64), O = dev.alloc(64);
  std::vector<float> z(16, 1.0f);
  A->copy_in(z.data(), 64);
  B->copy_in(z.data(), 64);
  Buffer* bufs[] = {O.get(), A.get(), B.get()};
  CHECK(dev.last_kernel_times().empty());
  prog->launch(bufs);
  prog->launch(bufs);
  prog->launch(bufs);
  CHECK(dev.last_kernel_times().empty());  // not yet synchronized
  dev.synchronize();
  CHECK(dev.last_kernel_times().size() == 3);
  dev.synchronize();
  CHECK(dev.last_kernel_times().empty());
}

TEST_CASE("cpu runtime: 1M invocations on several threads match the single-thread result") {
  TempDir d;
  // a gid-dependent, non-trivial computation so that wrong chunk bounds show up
  const char* src = R"C(
#include <math.h>
void mix(void* const* bufs, long long gid_start, long long gid_end) {
  float* out = (float*)bufs[0];
  const float* x = (const float*)bufs[1];
  int* who = (int*)bufs[2];
  for (long long gid = gid_start; gid < gid_end; gid++) {
    out[gid] = sinf(x[gid]) * 3.0f + (float)(gid % 7);
    who[gid] = (int)(gid_start & 0x7fffffff);
  }
}
)C";
  const int64_t n = 1000000;
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; i++) x[size_t(i)] = float(i % 1000) * 0.01f;
  auto run = [&](unsigned threads, std::vector<float>& out, std::vector<int>& who) {
    CpuDevice dev(opts(d, threads));
    CHECK(dev.threads() == threads);
    auto X = dev.alloc(n * 4), O = dev.alloc(n * 4), W = dev.alloc(n * 4);
    X->copy_in(x.data(), n * 4);
    auto prog = dev.compile(ks("mix", src, 3, n));
    Buffer* bufs[] = {O.get(), X.get(), W.get()};
    prog->launch(bufs);
    dev.synchronize();
    out = read<float>(*O, n);
    who = read<int>(*W, n);
  };
  std::vector<float> out1, out4;
  std::vector<int> who1, who4;
  run(1, out1, who1);
  run(4, out4, who4);
  CHECK(out1 == out4);
  // single thread: one chunk starting at 0; four threads: four contiguous chunks
  std::set<int> starts1(who1.begin(), who1.end()), starts4(who4.begin(), who4.end());
  CHECK(starts1 == std::set<int>{0});
  CHECK(starts4.size() == 4);
  int64_t unordered = 0;  // contiguous chunks, in order
  for (int64_t i = 1; i < n; i++) unordered += who4[size_t(i)] < who4[size_t(i - 1)];
  CHECK(unordered == 0);
}

TEST_CASE("cpu runtime: small launch stays inline, set_threads and set_min_parallel") {
  TempDir d;
  const char* src = R"C(
void starts(void* const* bufs, long long gid_start, long long gid_end) {
  long long* who = (long long*)bufs[0];
  for (long long gid = gid_start; gid < gid_end; gid++) who[gid] = gid_start;
}
)C";
  CpuDevice dev(opts(d, 3));
  const int64_t n = 30;
  auto W = dev.alloc(n * 8);
  auto prog = dev.compile(ks("starts", src, 1, n));
  Buffer* bufs[] = {W.get()};
  prog->launch(bufs);
  auto who = read<int64_t>(*W, n);
  CHECK(std::set<int64_t>(who.begin(), who.end()) == std::set<int64_t>{0});  // below min_parallel: one chunk
  dev.set_min_parallel(1);
  prog->launch(bufs);
  who = read<int64_t>(*W, n);
  CHECK(std::set<int64_t>(who.begin(), who.end()) == std::set<int64_t>{0, 10, 20});
  dev.set_threads(2);
  CHECK(dev.threads() == 2);
  prog->launch(bufs);
  who = read<int64_t>(*W, n);
  CHECK(std::set<int64_t>(who.begin(), who.end()) == std::set<int64_t>{0, 15});
}

TEST_CASE("cpu runtime: int32, int64, double and uint8 buffers") {
  TempDir d;
  CpuDevice dev(opts(d, 2));
  const char* src = R"C(
#include <stdint.h>
void types(void* const* bufs, long long gid_start, long long gid_end) {
  int32_t* i32 = (int32_t*)bufs[0];
  int64_t* i64 = (int64_t*)bufs[1];
  double* f64 = (double*)bufs[2];
  uint8_t* u8 = (uint8_t*)bufs[3];
  const int32_t* in = (const int32_t*)bufs[4];
  for (long long gid = gid_start; gid < gid_end; gid++) {
    int32_t v = in[gid];
    i32[gid] = v * -3 + 1;
    i64[gid] = (int64_t)v * 5000000000LL;
    f64[gid] = (double)v / 3.0;
    u8[gid] = (uint8_t)(v * 7);
  }
}
)C";
  const int64_t n = 777;
  std::vector<int32_t> in(n);
  for (int64_t i = 0; i < n; i++) in[size_t(i)] = int32_t(i * 13 - 4000);
  auto I32 = dev.alloc(n * 4), I64 = dev.alloc(n * 8), F64 = dev.alloc(n * 8), U8 = dev.alloc(n), IN = dev.alloc(n * 4);
  IN->copy_in(in.data(), n * 4);
  auto prog = dev.compile(ks("types", src, 5, n));
  Buffer* bufs[] = {I32.get(), I64.get(), F64.get(), U8.get(), IN.get()};
  prog->launch(bufs);
  auto o32 = read<int32_t>(*I32, n);
  auto o64 = read<int64_t>(*I64, n);
  auto of = read<double>(*F64, n);
  auto o8 = read<uint8_t>(*U8, n);
  for (int64_t i = 0; i < n; i++) {
    int32_t v = in[size_t(i)];
    REQUIRE(o32[size_t(i)] == v * -3 + 1);
    REQUIRE(o64[size_t(i)] == int64_t(v) * 5000000000LL);
    REQUIRE(of[size_t(i)] == double(v) / 3.0);
    REQUIRE(o8[size_t(i)] == uint8_t(v * 7));
  }
}

TEST_CASE("cpu runtime: a C syntax error names the kernel, the compiler message and the offending line") {
  TempDir d;
  CpuDevice dev(opts(d));
  const char* src =
      "void broken(void* const* bufs, long long gid_start, long long gid_end) {\n"
      "  float* out = (float*)bufs[0];\n"
      "  for (long long gid = gid_start; gid < gid_end; gid++) out[gid] = 1.0f +* ;\n"
      "}\n";
  std::string msg;
  try {
    dev.compile(ks("broken", src, 1, 4));
  } catch (const graft::Error& e) {
    msg = e.what();
  }
  INFO(msg);
  CHECK(msg.find("'broken'") != std::string::npos);
  CHECK(msg.find("error") != std::string::npos);                // the compiler's diagnostic
  CHECK(msg.find("out[gid] = 1.0f +* ;") != std::string::npos);  // the quoted source line
  CHECK(msg.find("3 | ") != std::string::npos);                 // with its line number
  CHECK(dev.stats().compiler_runs == 1);
}

TEST_CASE("cpu runtime: a missing compiler or symbol gives a clear error") {
  TempDir d;
  CpuOptions o = opts(d);
  o.cc = "/nonexistent/graft-no-such-cc";
  CpuDevice dev(o);
  std::string msg;
  try {
    dev.compile(ks("add_f32", kAddF32, 3, 4));
  } catch (const graft::Error& e) {
    msg = e.what();
  }
  CHECK(msg.find("/nonexistent/graft-no-such-cc") != std::string::npos);
  CHECK(msg.find("not found") != std::string::npos);
  CHECK(msg.find("GRAFT_CC") != std::string::npos);

  o.cc = "graft-no-such-cc-in-path";
  CpuDevice dev2(o);
  CHECK_THROWS_WITH_AS(dev2.compile(ks("add_f32", kAddF32, 3)),
                       doctest::Contains("GRAFT_CC"), graft::Error);

  // the source compiles but does not define the entry point: dlsym's error
  CpuDevice dev3(opts(d));
  std::string msg3;
  try {
    dev3.compile(ks("not_defined_here", kAddF32, 3));
  } catch (const graft::Error& e) {
    msg3 = e.what();
  }
  CHECK(msg3.find("not_defined_here") != std::string::npos);
}

TEST_CASE("cpu runtime: compile cache in memory and on disk") {
  TempDir d;
  KernelSource k = ks("add_f32", kAddF32, 3, 8);
  {
    CpuDevice dev(opts(d));
    auto p1 = dev.compile(k);
    CHECK(dev.stats().compiler_runs == 1);
    auto p2 = dev.compile(k);  // same source: in-memory hit
    CHECK(dev.stats().compiler_runs == 1);
    CHECK(dev.stats().memory_hits == 1);
    // one .so in <dir>/cpu, no temp files left
    int sos = 0, others = 0;
    for (auto& e : std::filesystem::directory_iterator(d.path + "/cpu"))
      (e.path().extension() == ".so" && e.path().filename().string()[0] != '.') ? sos++ : others++;
    CHECK(sos == 1);
    CHECK(others == 0);
    // a different source compiles again
    std::string src2 = std::string(kAddF32) + "\n/* v2 */\n";
    dev.compile(ks("add_f32", src2, 3));
    CHECK(dev.stats().compiler_runs == 2);
  }
  {
    CpuDevice dev(opts(d));  // new device, same cache dir: disk hit, no compiler run
    auto p = dev.compile(k);
    CHECK(dev.stats().compiler_runs == 0);
    CHECK(dev.stats().disk_hits == 1);
    std::vector<float> a(8, 2.0f), b(8, 0.25f);
    auto A = dev.alloc(32), B = dev.alloc(32), O = dev.alloc(32);
    A->copy_in(a.data(), 32);
    B->copy_in(b.data(), 32);
    Buffer* bufs[] = {O.get(), A.get(), B.get()};
    p->launch(bufs);
    CHECK(read<float>(*O, 8) == std::vector<float>(8, 2.25f));
  }
  {
    CpuOptions o = opts(d);
    o.cache_dir = "";  // disk cache off
    CpuDevice dev(o);
    CHECK(dev.cache_dir().empty());
    dev.compile(k);
    CHECK(dev.stats().compiler_runs == 1);
  }
  {
    CpuOptions o = opts(d);
    o.cache_dir = "/proc/graft-cannot-create-this";  // uncreatable: compile still works without disk caching
    CpuDevice dev(o);
    CHECK(dev.cache_dir().empty());
    auto p = dev.compile(k);
    CHECK(p != nullptr);
  }
}

TEST_CASE("cpu runtime: zero-size buffers and bounds-checked copies") {
  TempDir d;
  CpuDevice dev(opts(d));
  auto z = dev.alloc(0);
  CHECK(z->nbytes() == 0);
  z->copy_in(nullptr, 0);
  z->copy_out(nullptr, 0);
  char c = 0;
  CHECK_THROWS_AS(z->copy_in(&c, 1), graft::Error);

  auto b = dev.alloc(10);
  std::vector<char> big(11, 'x');
  CHECK_THROWS_WITH_AS(b->copy_out(big.data(), 11), doctest::Contains("copy_out"), graft::Error);
  CHECK_THROWS_AS(b->copy_in(big.data(), 11), graft::Error);
  b->copy_in(big.data(), 10);
  std::vector<char> back(10);
  b->copy_out(back.data(), 10);
  CHECK(std::string(back.begin(), back.end()) == "xxxxxxxxxx");

  // a launch with zero invocations does nothing (and still records a time)
  auto prog = dev.compile(ks("add_f32", kAddF32, 3, 0));
  Buffer* bufs[] = {z.get(), z.get(), z.get()};
  prog->launch(bufs);
  dev.synchronize();
  CHECK(dev.last_kernel_times().size() == 1);
  // too few buffers
  Buffer* one[] = {z.get()};
  CHECK_THROWS_AS(prog->launch(one), graft::Error);
}

TEST_CASE("cpu runtime: buffers of 2 MiB and more are 2 MiB aligned for huge pages and keep their bytes") {
  TempDir d;
  CpuDevice dev(opts(d));
  const size_t n = (size_t(2) << 20) + 3;  // just over a huge page: the capacity rounds up, the size does not
  auto b = dev.alloc(n);
  CHECK(b->nbytes() == n);
  CHECK(reinterpret_cast<uintptr_t>(static_cast<CpuBuffer*>(b.get())->data()) % (size_t(2) << 20) == 0);
  std::vector<unsigned char> in(n), out(n, 0);
  for (size_t i = 0; i < n; i++) in[i] = static_cast<unsigned char>(i * 7 + 1);
  b->copy_in(in.data(), n);
  b->copy_out(out.data(), n);
  CHECK(in == out);
  auto small = dev.alloc(100);  // small buffers keep the 64-byte alignment
  CHECK(reinterpret_cast<uintptr_t>(static_cast<CpuBuffer*>(small.get())->data()) % CpuBuffer::kAlign == 0);
}
