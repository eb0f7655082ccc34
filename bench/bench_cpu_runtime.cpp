// CPU runtime benchmarks: host memory bandwidth as the roofline, and a hand-written elementwise C kernel
// (the ABI of graft/runtime/cpu.hpp) run through CpuDevice on one thread and on all threads.
// Counters: GB/s = bytes moved per second (memcpy: read + write; add: 2 reads + 1 write), real time.
#include <benchmark/benchmark.h>
#include <graft/runtime/cpu.hpp>

#include <cstring>
#include <thread>
#include <vector>

using namespace graft::rt;

namespace {

constexpr size_t kMemcpyBytes = size_t(64) << 20;  // 64 MiB
constexpr int64_t kAddN = int64_t(16) << 20;       // 16M floats = 64 MiB per array

void BM_host_memcpy_64MiB(benchmark::State& state) {
  std::vector<char> src(kMemcpyBytes, 1), dst(kMemcpyBytes, 0);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kMemcpyBytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.counters["GB/s"] = benchmark::Counter(double(state.iterations()) * 2.0 * double(kMemcpyBytes) / 1e9,
                                              benchmark::Counter::kIsRate);
}
BENCHMARK(BM_host_memcpy_64MiB)->Unit(benchmark::kMillisecond)->UseRealTime();

const char* kAdd = R"C(
void bench_add(void* const* bufs, long long gid_start, long long gid_end) {
  float* restrict out = (float*)bufs[0];
  const float* restrict a = (const float*)bufs[1];
  const float* restrict b = (const float*)bufs[2];
  for (long long gid = gid_start; gid < gid_end; gid++) out[gid] = a[gid] + b[gid];
}
)C";

// state.range(0): worker threads (0 = all hardware threads)
void BM_cpu_kernel_add_16M(benchmark::State& state) {
  CpuOptions opt;
  opt.threads = unsigned(state.range(0));
  CpuDevice dev(opt);
  auto O = dev.alloc(kAddN * 4), A = dev.alloc(kAddN * 4), B = dev.alloc(kAddN * 4);
  std::vector<float> a(kAddN, 1.5f), b(kAddN, 2.0f);
  A->copy_in(a.data(), kAddN * 4);
  B->copy_in(b.data(), kAddN * 4);
  KernelSource k;
  k.name = "bench_add";
  k.source = kAdd;
  k.num_buffers = 3;
  k.threads = kAddN;
  auto prog = dev.compile(k);
  Buffer* bufs[] = {O.get(), A.get(), B.get()};
  prog->launch(bufs);  // warm-up: first touch of the output pages, pool start-up
  for (auto _ : state) {
    prog->launch(bufs);
    dev.synchronize();
  }
  float check = 0;
  O->copy_out(&check, 4);
  if (check != 3.5f) state.SkipWithError("wrong result");
  state.counters["threads"] = double(dev.threads());
  state.counters["GB/s"] =
      benchmark::Counter(double(state.iterations()) * 3.0 * double(kAddN) * 4.0 / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_cpu_kernel_add_16M)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
