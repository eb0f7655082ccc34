// Codegen (lower, linearize, C and GLSL renderers) and the engine: structure of the generated code, dtype
// semantics, error paths, memory planning, and a differential fuzz of random tensor programs across the three
// backends. Cases named "numeric: ..." run on the default device and again under GRAFT_DEVICE=CPU / INTERP / VULKAN
// (see tests/CMakeLists.txt); their expected values come from plain loops in double precision.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include <graft/graft.hpp>

using namespace graft;

namespace {
codegen::Program compile_ir(const Tensor& t, size_t kernel = 0) {
  Schedule s = schedule({t});
  REQUIRE(kernel < s.size());
  return codegen::linearize(codegen::lower(s[kernel].sink()));
}
size_t count(const codegen::Program& p, codegen::InstKind k, Ops op = Ops::NOOP) {
  size_t n = 0;
  for (const auto& i : p.insts) n += i.kind == k && (op == Ops::NOOP || i.op == op);
  return n;
}
std::vector<float> rnd(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}
void close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); i++) {
    if (std::isnan(want[i])) { CHECK(std::isnan(got[i])); continue; }
    CHECK_MESSAGE(got[i] == doctest::Approx(want[i]).epsilon(tol).scale(1.0), "element " << i);
  }
}
bool vulkan() { return rt::VulkanDevice::available(); }
}  // namespace

TEST_CASE("codegen: an elementwise kernel is one invocation per element, no loops") {
  Tensor a = Tensor::empty({32, 64}), b = Tensor::empty({32, 64});
  codegen::Program p = compile_ir(a + b);
  CHECK(p.threads == 32 * 64);
  CHECK(p.index_dtype == dtypes::int32);
  CHECK(count(p, codegen::InstKind::Loop) == 0);
  CHECK(count(p, codegen::InstKind::Value, Ops::LOAD) == 2);
  CHECK(count(p, codegen::InstKind::Store) == 1);
  // row-major index math folds back to the thread id: no division left
  CHECK(count(p, codegen::InstKind::Value, Ops::CDIV) + count(p, codegen::InstKind::Value, Ops::FLOORDIV) == 0);
  for (const auto& i : p.insts)
    if (i.op == Ops::LOAD) CHECK_FALSE(i.clamp);  // provably in bounds
  std::string c = codegen::render_c(p);
  CHECK(c.find("void E_32_64(void* const* bufs, long long gid_start, long long gid_end)") != std::string::npos);
  CHECK(c.find("const float* restrict data1") != std::string::npos);
  std::string g = codegen::render_glsl(p);
  CHECK(g.find("#version 450") == 0);
  CHECK(g.find("layout(local_size_x = 128) in;") != std::string::npos);
  CHECK(g.find("readonly buffer B1 { float data1[]; }") != std::string::npos);
  CHECK(g.find("#extension") == std::string::npos);  // float32 only: no extension needed
}

TEST_CASE("codegen: a reduce becomes an accumulator loop and loop-invariant loads are hoisted") {
  Tensor x = Tensor::empty({4, 8});
  Schedule s = schedule({x.softmax()});
  REQUIRE(s.size() == 3);
  codegen::Program p = codegen::linearize(codegen::lower(s[1].sink()));  // sum(exp2((x - max) * c))
  CHECK(p.threads == 4);
  CHECK(count(p, codegen::InstKind::Loop) == 1);
  CHECK(count(p, codegen::InstKind::AccInit, Ops::ADD) == 1);
  // the per-row max (slot 2) does not depend on the reduce range: it is loaded before the loop
  size_t loop = 0, max_load = 0;
  for (size_t i = 0; i < p.insts.size(); i++) {
    if (p.insts[i].kind == codegen::InstKind::Loop) loop = i;
    if (p.insts[i].op == Ops::LOAD && p.insts[i].imm == 2) max_load = i;
  }
  CHECK(max_load < loop);
}

TEST_CASE("codegen: padded reads are gated and clamped") {
  Tensor x = Tensor::empty({4, 8});
  codegen::Program p = compile_ir(x.pad({{1, 1}, {2, 0}}).sum(1));
  bool gated = false;
  for (const auto& i : p.insts)
    if (i.op == Ops::LOAD) gated = i.b >= 0 && i.clamp;
  CHECK(gated);
  CHECK(codegen::render_c(p).find(" ? data1[(") != std::string::npos);
  CHECK(codegen::render_glsl(p).find("clamp(") != std::string::npos);
}

TEST_CASE("codegen: GLSL needs device features for wide and narrow dtypes") {
  codegen::Program p64 = compile_ir(Tensor::empty({8}, dtypes::float64) + 1.0);
  rt::DeviceFeatures none;
  none.float64 = none.int64 = none.float16 = none.int8_storage = none.int16 = false;
  CHECK_THROWS_WITH_AS(codegen::render_glsl(p64, none), doctest::Contains("dtypes.double"), Error);
  CHECK(codegen::render_glsl(p64).find("double") != std::string::npos);
  codegen::Program pb = compile_ir(Tensor::empty({8}) > 0.0f);
  CHECK_THROWS_WITH_AS(codegen::render_glsl(pb, none), doctest::Contains("8-bit storage"), Error);
  std::string g = codegen::render_glsl(pb);
  CHECK(g.find("GL_EXT_shader_8bit_storage") != std::string::npos);
  CHECK(g.find("uint8_t data0[]") != std::string::npos);
  // GLSL has no float64 exp2
  codegen::Program pe = compile_ir(Tensor::empty({8}, dtypes::float64).exp());
  CHECK_THROWS_WITH_AS(codegen::render_glsl(pe), doctest::Contains("float64"), Error);
}

namespace {
bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }
std::string glsl(const codegen::Program& p) { return codegen::render_glsl(p, {}, codegen::glsl_launch(p)); }
}  // namespace

TEST_CASE("codegen: GLSL vec4 over threads for contiguous elementwise kernels, scalar otherwise") {
  Tensor a = Tensor::empty({16, 64}), b = Tensor::empty({16, 64});
  codegen::Program p = compile_ir(a + b);
  codegen::GlslLaunch l = codegen::glsl_launch(p);
  CHECK(l.vec == 4);
  CHECK(l.invocations == 16 * 64 / 4);
  CHECK(l.local == codegen::kGlslVec4LocalSize);
  std::string g = glsl(p);
  CHECK(has(g, "restrict buffer B0 { vec4 data0[]; }"));
  CHECK(has(g, "readonly buffer B1 { vec4 data1[]; }"));
  CHECK(has(g, "if (inv >= 256u) return;"));
  CHECK(has(g, "int(inv * 4u + 3u)"));  // lane 3's gidx
  CHECK(has(g, " = vec4(v"));             // one vec4 store of the 4 lanes' values
  // the scalar entry point keeps the scalar layout (callers that dispatch glsl_invocations(threads, per))
  CHECK(has(codegen::render_glsl(p), "float data0[]"));
  // 15 elements: no vec4
  codegen::Program odd = compile_ir(Tensor::empty({3, 5}) + Tensor::empty({3, 5}));
  CHECK(codegen::glsl_launch(odd).vec == 1);
  CHECK(has(glsl(odd), "float data0[]"));
  CHECK_THROWS_WITH_AS(codegen::render_glsl(odd, {}, codegen::GlslLaunch{.vec = 4}), doctest::Contains("cannot take 4"), Error);
  // a read at an offset divisible by 4 is a vec4 read at offset / 4; any other offset stays scalar
  Tensor c = Tensor::empty({70});
  std::string g4 = glsl(compile_ir(c.shrink({{4, 68}}) + 1.0f));
  CHECK(has(g4, "vec4 data1[]"));
  CHECK(has(g4, "_0 / 4];"));  // lane 0's index (gidx + 4) / 4
  std::string g1 = glsl(compile_ir(c.shrink({{1, 65}}) + 1.0f));
  CHECK(has(g1, "vec4 data0[]"));
  CHECK(has(g1, "float data1[]"));
  // transposed read: scalar read, vec4 write; int32: ivec4
  std::string gt = glsl(compile_ir(Tensor::empty({8, 8}).transpose(0, 1) + Tensor::empty({8, 8})));
  CHECK(has(gt, "vec4 data0[]"));
  CHECK((has(gt, "float data1[]") || has(gt, "float data2[]")));
  CHECK(has(glsl(compile_ir(Tensor::empty({8}, dtypes::int32) + 1)), "ivec4 data0[]"));
  // bool and float16 buffers stay scalar
  CHECK(has(glsl(compile_ir(Tensor::empty({8}) > 0.0f)), "uint8_t data0[]"));
}

TEST_CASE("codegen: GLSL reduce loops step by 4 with vec4 reads of contiguous rows") {
  std::string g = glsl(compile_ir(Tensor::empty({16, 32}).sum(1)));
  CHECK(has(g, "vec4 data1[]"));
  CHECK(has(g, "_4 += 4) {"));
  CHECK(has(g, "float data0[]"));  // 16 outputs with a loop: scalar threads
  // trip count not divisible by 4, or a row start not provably a multiple of 4: plain loop
  std::string g30 = glsl(compile_ir(Tensor::empty({16, 30}).sum(1)));
  CHECK_FALSE(has(g30, "+= 4"));
  CHECK(has(g30, "float data1[]"));
  std::string g9 = glsl(compile_ir(Tensor::empty({5, 9}).shrink({{0, 5}, {0, 8}}).sum(1)));
  CHECK_FALSE(has(g9, "+= 4"));
  // matmul: the row of A is read as vec4, the column of B stays scalar
  std::string gm = glsl(compile_ir(Tensor::empty({8, 12}).matmul(Tensor::empty({12, 8}))));
  CHECK(has(gm, "_4 += 4) {"));
  CHECK(has(gm, "vec4 data1[]"));
  CHECK(has(gm, "float data2[]"));
  // 1024 outputs: 4 lanes; B's columns 4i..4i+3 are one vec4 read, A's row is read once for the 4 lanes
  codegen::Program mm = compile_ir(Tensor::empty({32, 64}).matmul(Tensor::empty({64, 32})));
  CHECK(codegen::glsl_launch(mm).vec == 4);
  std::string gmm = glsl(mm);
  CHECK(has(gmm, "vec4 data1[]"));
  CHECK(has(gmm, "vec4 data2[]"));
  CHECK(has(gmm, "vec4 data0[]"));
  CHECK(has(gmm, "v1_3 += "));  // one accumulator per lane
  // many outputs with a loop: vec4 over threads and over the loop
  codegen::Program big = compile_ir(Tensor::empty({1 << 16, 8}).sum(1));
  CHECK(codegen::glsl_launch(big).vec == 4);
  std::string gb = glsl(big);
  CHECK(has(gb, "vec4 data0[]"));
  CHECK(has(gb, "vec4 data1[]"));
  CHECK(has(gb, "_4 += 4) {"));
}

TEST_CASE("codegen: GLSL reads read-only 4-byte buffers through uniform texel buffers when the launch allows") {
  Tensor a = Tensor::empty({16, 64}), b = Tensor::empty({16, 64});
  codegen::Program p = compile_ir(a + b);
  CHECK(codegen::glsl_launch(p).max_texels == 0);  // default: storage buffers only
  CHECK(!has(glsl(p), "samplerBuffer"));
  codegen::GlslLaunch l = codegen::glsl_launch(p, 1024, uint64_t(1) << 27);
  std::string g = codegen::render_glsl(p, {}, l);
  CHECK(has(g, "restrict buffer B0 { vec4 data0[]; }"));  // written: storage buffer
  CHECK(has(g, "uniform samplerBuffer data1;"));
  CHECK(has(g, "uniform samplerBuffer data2;"));
  CHECK(has(g, " = texelFetch(data1, int(v"));  // one RGBA32 texel = the 4 lanes' elements
  CHECK(!has(g, "data1["));
  // a buffer with more elements than 4 * max_texels stays a storage buffer
  l.max_texels = 16 * 64 / 4 - 1;
  CHECK(!has(codegen::render_glsl(p, {}, l), "samplerBuffer"));
  // scalar reads take one component of a texel; gated reads fetch texel 0 when the gate is off; int32 / uint32 / bool
  Tensor x = Tensor::empty({6}, dtypes::int32);
  codegen::Program pp = compile_ir(x.pad({{1, 1}}) + 1);
  std::string gp = codegen::render_glsl(pp, {}, codegen::glsl_launch(pp, 1024, 1 << 20));
  CHECK(has(gp, "uniform isamplerBuffer data1;"));
  CHECK(has(gp, " >> 2 : 0)["));
  CHECK(has(gp, " & 3]"));
  codegen::Program pu = compile_ir(Tensor::empty({8}, dtypes::uint32) + 1u);
  CHECK(has(codegen::render_glsl(pu, {}, codegen::glsl_launch(pu, 1024, 1 << 20)), "uniform usamplerBuffer data1;"));
  codegen::Program pb = compile_ir(Tensor::empty({8}, dtypes::bool_).cast(dtypes::float32));
  CHECK(!has(codegen::render_glsl(pb, {}, codegen::glsl_launch(pb, 1024, 1 << 20)), "samplerBuffer"));
  // reduce loops: the vec4 row reads become texel fetches
  codegen::Program pr = compile_ir(Tensor::empty({4096, 64}).sum(1));
  std::string gr = codegen::render_glsl(pr, {}, codegen::glsl_launch(pr, 1024, 1 << 20));
  CHECK(has(gr, "uniform samplerBuffer data1;"));
  CHECK(has(gr, " = texelFetch(data1, int(("));
}

TEST_CASE("codegen: big elementwise GLSL kernels give each invocation 4 groups of 4 lanes, grid-stride") {
  codegen::Program small = compile_ir(Tensor::empty({16, 64}) + Tensor::empty({16, 64}));
  CHECK(codegen::glsl_launch(small).per == 1);
  int64_t n = (int64_t(1) << 20) + 12;  // 2^18 + 3 groups of 4
  codegen::Program p = compile_ir(Tensor::empty({n}) + Tensor::empty({n}));
  codegen::GlslLaunch l = codegen::glsl_launch(p);
  CHECK(l.vec == 4);
  CHECK(l.per == 4);
  CHECK(l.invocations == ((n / 4) + 3) / 4);
  std::string g = codegen::render_glsl(p, {}, l);
  CHECK(has(g, "for (uint k = 0u; k < 4u; k++)"));
  CHECK(has(g, "uint inv = inv0 + k * " + std::to_string(l.invocations) + "u;"));
  CHECK(has(g, "if (inv >= " + std::to_string(n / 4) + "u) break;"));
  // kernels with loops keep one group per invocation
  codegen::Program r = compile_ir(Tensor::empty({1 << 20, 8}).sum(1));
  CHECK(codegen::glsl_launch(r).per == 1);
}

TEST_CASE("codegen: vec4 GLSL paths match the reference (sizes divisible by 4 and not, offsets)") {
  std::mt19937_64 g(77);
  std::vector<std::string> devices{"CPU"};
  if (vulkan()) devices.push_back("VULKAN");
  auto T = [&](Shape s, float lo = -1.0f, float hi = 1.0f) { return Tensor(rnd(size_t(prod(s)), g(), lo, hi), s); };
  Tensor v70 = T({70}), m1 = T({16, 32}), m2 = T({16, 30}), m3 = T({5, 9}), big = T({1 << 16, 8});
  std::vector<int32_t> iv(1028);
  for (size_t i = 0; i < iv.size(); i++) iv[i] = int32_t(i * 7919 % 1000) - 500;
  Tensor ints = Tensor::from(iv, {1028});
  std::vector<std::pair<std::string, Tensor>> progs{
      {"a+b 16x64", T({16, 64}) + T({16, 64})},
      {"a+b 3x5", T({3, 5}) + T({3, 5})},
      {"a*b 1x4", T({1, 4}) * T({1, 4})},
      {"a+b 1030", T({1030}) + T({1030})},
      {"where 1028", (T({1028}) > 0.0f).where(T({1028}), T({1028}) * 2.0f)},
      {"shrink +4", v70.shrink({{4, 68}}) + 1.0f},
      {"shrink +1", v70.shrink({{1, 65}}) * 2.0f},
      {"shrink +3", v70.shrink({{3, 67}}) - v70.shrink({{0, 64}})},
      {"shrink +8 and +4", v70.shrink({{8, 68}}) + v70.shrink({{4, 64}})},
      {"transpose", T({8, 12}).transpose(0, 1) + T({12, 8})},
      {"int32", ints * 3 + ints},
      {"compare", (T({4, 8}) < T({4, 8})).cast(dtypes::float32)},
      {"sum 16x32", m1.sum(1)},
      {"sum 16x30", m2.sum(1)},
      {"sum 5x9 shrunk", m3.shrink({{0, 5}, {0, 8}}).sum(1)},
      {"max 16x32", m1.max(1)},
      {"sum axis 0", m1.sum(0)},
      {"softmax 8x12", T({8, 12}).softmax(1)},
      {"matmul 8x12x8", T({8, 12}).matmul(T({12, 8}))},
      {"matmul 5x7x3", T({5, 7}).matmul(T({7, 3}))},
      {"matmul 32x20x36", T({32, 20}).matmul(T({20, 36}))},
      {"matmul 40x16x32 transposed", T({16, 40}).transpose(0, 1).matmul(T({16, 32}))},
      {"sum axis 0 64x48", T({64, 48}).sum(0)},
      {"sum 1024x12", T({1024, 12}).sum(1)},
      {"sum 1024x10 max", T({1024, 10}).max(1)},
      {"softmax 256x12", T({256, 12}).softmax(1)},
      {"padded 32x40", T({32, 38}).pad({{0, 0}, {1, 1}}) * 2.0f},
      {"broadcast 64x16", T({64, 1}).expand({64, 16}) + T({64, 16})},
      {"broadcast 6x16 / 8 rows", T({1, 16}).expand({8, 16}) * T({8, 16})},
      {"flip 1028", T({1028}).flip({0}) + 1.0f},
      {"sum 65536x8", big.sum(1)},
      {"int sum", ints.reshape({257, 4}).sum(1)},
      {"a+b 4*(2^18+3): 4 lane groups per invocation, tail", T({(1 << 20) + 12}) + T({(1 << 20) + 12})},
      {"gated read of an int buffer", (ints.pad({{2, 2}}) * 2).cast(dtypes::float32)},
  };
  for (auto& [name, t] : progs) {
    std::vector<double> want = evaluate(t.uop());
    for (const std::string& d : devices) {
      CAPTURE(name);
      CAPTURE(d);
      close(t.to_vector<double>(d), want, 1e-5);
    }
  }
}

TEST_CASE("codegen: index math that may leave int32 is int64") {
  // 3 * 2^30 elements are never allocated: only lowering is checked
  codegen::Program p = compile_ir(Tensor::full({3, 1 << 30}, 1.0f) * 2.0f);
  CHECK(p.index_dtype == dtypes::int64);
  CHECK(codegen::render_c(p).find("long long v") != std::string::npos);
}

TEST_CASE("codegen: arange's counting reduce collapses to a closed form") {
  for (Tensor t : {Tensor::arange(1000), Tensor::arange(int64_t(10), int64_t(-3), int64_t(-2)), Tensor::arange(0.0, 1.0, 0.1)}) {
    codegen::Program p = compile_ir(t);
    CHECK(count(p, codegen::InstKind::Loop) == 0);  // O(n), not a reduce per element
    CHECK(p.name.rfind("E_", 0) == 0);
  }
}

TEST_CASE("numeric: arange matches the reference exactly, also for large n") {
  for (Tensor t : {Tensor::arange(int64_t(10), int64_t(-3), int64_t(-2)), Tensor::arange(0.0, 1.0, 0.1), Tensor::arange(0.5, 3.0, 0.5)})
    CHECK(t.to_vector<double>() == evaluate(t.uop()));
  int64_t n = engine::device()->name() == "INTERP" ? 5000 : int64_t(1) << 22;
  auto v = Tensor::arange(n).to_vector<int64_t>();
  REQUIRE(int64_t(v.size()) == n);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) bad += v[size_t(i)] != i;
  CHECK(bad == 0);
}

TEST_CASE("engine: GRAFT_DEVICE names a device, unknown names are errors") {
  CHECK(engine::device("CPU")->name() == "CPU");
  CHECK(engine::device("interp")->name() == "INTERP");
  CHECK_THROWS_WITH_AS(engine::device("TPU"), doctest::Contains("not a device"), Error);
}

TEST_CASE("engine: intermediates of dead kernels are reused (memory planning)") {
  Tensor x(rnd(64 * 64, 1), {64, 64});
  // four chained reductions + elementwise stages: softmax of softmax needs several intermediates
  Tensor y = x.softmax().softmax().softmax();
  Schedule s = schedule({y});
  REQUIRE(s.size() >= 6);
  engine::RunStats st;
  auto out = engine::run(s, engine::device("CPU"), &st);
  CHECK(st.launches == s.size());
  CHECK(st.bytes_reused > 0);
  std::vector<double> want = evaluate(y.uop());
  REQUIRE(out[0]);
  for (int64_t i = 0; i < out[0]->numel; i++) CHECK(out[0]->get(i) == doctest::Approx(want[size_t(i)]).epsilon(1e-5));
}

TEST_CASE("engine: a kernel the Vulkan device cannot express runs the schedule on the CPU" * doctest::skip(!vulkan())) {
  Tensor x = Tensor::from(std::vector<double>{0.5, 1.0, 2.0}, {3});
  engine::RunStats st;
  auto out = engine::run(schedule({x.exp()}), engine::device("VULKAN"), &st);
  CHECK(st.device == "CPU");
  CHECK(out[0]->get(2) == doctest::Approx(std::exp(2.0)));
}

TEST_CASE("numeric: kernels with the same source and different buffer sizes") {
  // copying the first 8 elements of a 32- and of a 16-element buffer renders the same C/GLSL text; the compiled
  // program must not be shared (the interpreter's IR carries the sizes and checks them)
  auto first8 = [](int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; i++) v[size_t(i)] = float(n * 100 + i);
    return Tensor::from(v, {n}).shrink({{0, 8}}).contiguous().to_vector();
  };
  for (int64_t n : {32, 16}) {
    std::vector<float> v = first8(n);
    REQUIRE(v.size() == 8);
    for (int64_t i = 0; i < 8; i++) CHECK(v[size_t(i)] == float(n * 100 + i));
  }
}

TEST_CASE("numeric: outputs that share a base read one buffer") {
  // tinygrad test_reduce_multiple_paths_midshrink and test_reduce_doesnt_split on data: the realized row sums are
  // one buffer that the other outputs read (3 kernels, and 1 for two reshapes of one reduce)
  std::vector<float> d(16);
  for (size_t i = 0; i < 16; i++) d[i] = 0.1f * float(i);
  Tensor x = Tensor::from(d, {4, 4});
  Tensor r = x.sum(1), out0 = r.exp2();
  Tensor out1 = out0.shrink({{0, 1}}).reshape({}) + out0;
  graft::realize({&r, &out0, &out1});
  std::vector<float> rv = r.to_vector(), o0 = out0.to_vector(), o1 = out1.to_vector();
  REQUIRE(rv.size() == 4);
  REQUIRE(o0.size() == 4);
  REQUIRE(o1.size() == 4);
  auto row_sum = [&](size_t i) {
    double sum = 0;
    for (size_t j = 0; j < 4; j++) sum += double(d[4 * i + j]);
    return sum;
  };
  for (size_t i = 0; i < 4; i++) {
    CHECK(rv[i] == doctest::Approx(row_sum(i)).epsilon(1e-5));
    CHECK(o0[i] == doctest::Approx(std::exp2(row_sum(i))).epsilon(1e-5));
    CHECK(o1[i] == doctest::Approx(std::exp2(row_sum(0)) + std::exp2(row_sum(i))).epsilon(1e-5));
  }
  Tensor s = x.sum(1), a1 = s.reshape({2, 2}), a2 = s.reshape({4, 1, 1});
  graft::realize({&a1, &a2});
  CHECK(a1.shape() == Shape{2, 2});
  CHECK(a2.shape() == Shape{4, 1, 1});
  CHECK(a1.to_vector() == rv);
  CHECK(a2.to_vector() == rv);
}

TEST_CASE("numeric: more invocations than one grid dimension holds") {
  // 65535 workgroups of 128 invocations = 8388480: one more row of 1000 needs the second grid dimension
  int64_t n = 65535 * 128 + 1000;
  if (engine::device()->name() == "INTERP") n = 5000;  // the interpreter has no grid; 8M invocations take minutes
  std::vector<int32_t> iota(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) iota[size_t(i)] = int32_t(i);
  Tensor a = Tensor::from(iota, {n});
  auto v = (a * 3 + 1).to_vector<int64_t>();
  REQUIRE(int64_t(v.size()) == n);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) bad += v[size_t(i)] != 3 * i + 1;
  CHECK(bad == 0);
}

TEST_CASE("numeric: integer semantics (floor division, wraparound, shifts, casts)") {
  std::vector<int32_t> av{-7, -6, -1, 0, 1, 5, 7, 2147483647}, bv{2, -4, 3, 5, -2, 5, -3, 1};
  Tensor a = Tensor::from(av, {8}), b = Tensor::from(bv, {8});
  auto fd = a.alu(Ops::FLOORDIV, {b}).to_vector<int64_t>(), fm = a.alu(Ops::FLOORMOD, {b}).to_vector<int64_t>();
  auto cd = a.alu(Ops::CDIV, {b}).to_vector<int64_t>(), cm = a.alu(Ops::CMOD, {b}).to_vector<int64_t>();
  auto wrap = (a + b).to_vector<int64_t>();
  for (size_t i = 0; i < av.size(); i++) {
    int64_t x = av[i], y = bv[i], q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) q--;
    CHECK(fd[i] == q);
    CHECK(fm[i] == x - q * y);
    CHECK(cd[i] == x / y);
    CHECK(cm[i] == x % y);
    CHECK(wrap[i] == int64_t(int32_t(uint32_t(x) + uint32_t(y))));
  }
  auto sh = (a.alu(Ops::SHL, {Tensor::from(std::vector<int32_t>(8, 2), {8})})).to_vector<int64_t>();
  for (size_t i = 0; i < av.size(); i++) CHECK(sh[i] == int64_t(int32_t(uint32_t(av[i]) << 2)));
  Tensor f = Tensor::from(std::vector<float>{-2.7f, -0.5f, 0.5f, 3.9f, 1e3f}, {5});
  auto ci = f.cast(dtypes::int32).to_vector<int64_t>();
  CHECK(ci == std::vector<int64_t>{-2, 0, 0, 3, 1000});
  auto cu = f.cast(dtypes::uint8).to_vector<int64_t>();
  CHECK(cu == std::vector<int64_t>{254, 0, 0, 3, 232});
}

TEST_CASE("numeric: bool, int8, int64 and float64 tensors") {
  Tensor x = Tensor::from(std::vector<float>{-1, 0, 2, 3}, {4});
  auto m = (x > 0.0f).alu(Ops::AND, {x < 2.5f}).to_vector<int>();
  CHECK(m == std::vector<int>{0, 0, 1, 0});
  Tensor i8 = Tensor::from(std::vector<int8_t>{100, -100, 127, 3}, {4});
  CHECK((i8 + i8).to_vector<int>() == std::vector<int>{-56, 56, -2, 6});
  Tensor i64 = Tensor::from(std::vector<int64_t>{int64_t(1) << 40, -3, 7, 0}, {4});
  auto w = (i64 * 3).to_vector<int64_t>();
  CHECK(w == std::vector<int64_t>{int64_t(3) << 40, -9, 21, 0});
  Tensor d = Tensor::from(std::vector<double>{1e-300, 1.0 / 3.0, 2.0, -4.0}, {4});
  auto dv = (d * d).to_vector<double>();
  CHECK(dv[1] == doctest::Approx(1.0 / 9.0).epsilon(1e-15));
  CHECK(dv[0] == 0.0);
  CHECK(d.sum().to_vector<double>()[0] == doctest::Approx(1e-300 + 1.0 / 3.0 - 2.0).epsilon(1e-15));
}

TEST_CASE("numeric: empty tensors and reductions over empty axes") {
  CHECK((Tensor::empty({0, 4}) + 1.0f).to_vector<float>().empty());
  CHECK(Tensor::empty({3, 0}).sum(1).to_vector<float>() == std::vector<float>{0, 0, 0});
  CHECK(Tensor::empty({3, 0}).max(1).to_vector<float>() == std::vector<float>(3, -INFINITY));
  CHECK(Tensor::empty({3, 0}, dtypes::int32).max(1).to_vector<int64_t>() == std::vector<int64_t>(3, INT32_MIN));
}

TEST_CASE("numeric: NaN and infinity survive max, sum and casts") {
  Tensor x = Tensor::from(std::vector<float>{1.0f, NAN, -INFINITY, INFINITY}, {2, 2});
  auto mx = x.max(1).to_vector<double>();
  CHECK(std::isnan(mx[0]));
  CHECK(mx[1] == INFINITY);
  auto s = x.sum(0).to_vector<double>();
  CHECK(std::isnan(s[1]));
  CHECK(s[0] == -INFINITY);
  CHECK(x.cast(dtypes::int32).to_vector<int>() == std::vector<int>{1, 0, 0, 0});
}

TEST_CASE("numeric: MLP 784-128-10 with softmax against loops") {
  int B = 4, I = 784, H = 128, O = 10;
  auto xv = rnd(size_t(B * I), 11), w1 = rnd(size_t(I * H), 12, -0.05f, 0.05f), w2 = rnd(size_t(H * O), 13, -0.1f, 0.1f);
  Tensor x(xv, {B, I}), W1(w1, {I, H}), W2(w2, {H, O});
  Tensor y = x.matmul(W1).relu().matmul(W2).softmax();
  std::vector<double> want;
  for (int b = 0; b < B; b++) {
    std::vector<double> h(size_t(H), 0.0), o(size_t(O), 0.0);
    for (int j = 0; j < H; j++) {
      for (int i = 0; i < I; i++) h[size_t(j)] += double(xv[size_t(b * I + i)]) * w1[size_t(i * H + j)];
      h[size_t(j)] = std::max(h[size_t(j)], 0.0);
    }
    double mx = -1e300, sum = 0;
    for (int k = 0; k < O; k++) {
      for (int j = 0; j < H; j++) o[size_t(k)] += h[size_t(j)] * w2[size_t(j * O + k)];
      mx = std::max(mx, o[size_t(k)]);
    }
    for (int k = 0; k < O; k++) sum += std::exp(o[size_t(k)] - mx);
    for (int k = 0; k < O; k++) want.push_back(std::exp(o[size_t(k)] - mx) / sum);
  }
  close(y.to_vector<double>(), want, 1e-4);
}

TEST_CASE("numeric: attention block (1,4,16,8) against loops") {
  int Hh = 4, T = 16, D = 8;
  auto qv = rnd(size_t(Hh * T * D), 21), kv = rnd(size_t(Hh * T * D), 22), vv = rnd(size_t(Hh * T * D), 23);
  Tensor q(qv, {1, Hh, T, D}), k(kv, {1, Hh, T, D}), v(vv, {1, Hh, T, D});
  Tensor att = (q.matmul(k.transpose(-1, -2)) * (1.0 / std::sqrt(double(D)))).softmax().matmul(v);
  std::vector<double> want;
  for (int h = 0; h < Hh; h++)
    for (int i = 0; i < T; i++) {
      std::vector<double> s(static_cast<size_t>(T));
      double mx = -1e300, sum = 0;
      for (int j = 0; j < T; j++) {
        double d = 0;
        for (int c = 0; c < D; c++) d += double(qv[size_t((h * T + i) * D + c)]) * kv[size_t((h * T + j) * D + c)];
        s[size_t(j)] = d / std::sqrt(double(D)), mx = std::max(mx, s[size_t(j)]);
      }
      for (double& e : s) e = std::exp(e - mx), sum += e;
      for (int c = 0; c < D; c++) {
        double o = 0;
        for (int j = 0; j < T; j++) o += s[size_t(j)] / sum * vv[size_t((h * T + j) * D + c)];
        want.push_back(o);
      }
    }
  close(att.to_vector<double>(), want, 1e-4);
}

// Differential fuzz: random programs from a menu of ops on random shapes, run on every backend and checked against
// the reference evaluator (tensor/reference.hpp), which shares no code with the code generator.
TEST_CASE("codegen: differential fuzz of random tensor programs across backends") {
  std::mt19937_64 g(1234);
  auto pick = [&](int n) { return int(g() % uint64_t(n)); };
  std::vector<std::string> devices{"INTERP", "CPU"};
  if (vulkan()) devices.push_back("VULKAN");
  for (int prog = 0; prog < 40; prog++) {
    Shape shape{1 + pick(5), 1 + pick(7)};
    int64_t n = shape[0] * shape[1];
    std::vector<Tensor> pool{Tensor(rnd(size_t(n), g()), shape), Tensor(rnd(size_t(n), g(), 0.1f, 2.0f), shape)};
    for (int step = 0; step < 6; step++) {
      const Tensor& a = pool[size_t(pick(int(pool.size())))];
      const Tensor& b = pool[size_t(pick(int(pool.size())))];
      Tensor t = a;
      switch (pick(12)) {
        case 0: t = a + b; break;
        case 1: t = a * b; break;
        case 2: t = a - b.maximum(a); break;
        case 3: t = (a > b).where(a, b * 0.5f); break;
        case 4: t = a.relu() + 1.0f; break;
        case 5: t = (a * a + 0.5f).sqrt(); break;
        case 6: t = a.sum(1, true).expand(shape) + b; break;
        case 7: t = a.max(0, true).expand(shape) * b; break;
        case 8: t = a.flip({1}) + b; break;
        case 9: t = a.pad({{1, 0}, {0, 2}}).shrink({{0, shape[0]}, {1, shape[1] + 1}}); break;
        case 10: t = a.softmax(1); break;
        case 11: t = (a * 0.5f).exp() - b.cast(dtypes::int32).cast(dtypes::float32); break;
      }
      pool.push_back(t);
    }
    Tensor out = pool.back();
    std::vector<double> want = evaluate(out.uop());
    for (const std::string& d : devices) {
      CAPTURE(prog);
      CAPTURE(d);
      close(out.to_vector<double>(d), want, 1e-4);
    }
  }
}
