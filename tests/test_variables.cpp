// Bound Variables (tinygrad `Variable(...).bind(v)`): a scalar whose value is passed with each kernel launch (C: a
// pointer after the buffers, GLSL: a push constant, interpreter: a register), so one compiled kernel serves every
// value. Cases named "numeric: ..." run again on CPU / INTERP / VULKAN (tests/CMakeLists.txt); expected values are
// computed by plain loops here.
#include <doctest/doctest.h>

#include <graft/graft.hpp>

using namespace graft;

namespace {
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
codegen::Program program_of(const Schedule& s, size_t k = 0) { return codegen::linearize(codegen::lower(s[k].sink())); }
}  // namespace

TEST_CASE("variables: bind is AFTER(var, STORE(var, value)) and checks the range") {
  UOp v = UOp::variable("i", 1, 10);
  UOp b = v.bind(3);
  CHECK(b.op() == Ops::AFTER);
  CHECK(b.is_bound_var());
  CHECK(b.src(0) == v);
  CHECK(b.bound_value() == 3);
  CHECK(b == v.bind(3));  // hash-consed
  CHECK_FALSE(v.is_bound_var());
  CHECK_THROWS_WITH_AS(v.bind(11), doctest::Contains("outside the range [1, 10] of variable i"), Error);
  CHECK_THROWS_WITH_AS(v.bind(0), doctest::Contains("outside the range"), Error);
  CHECK_THROWS_WITH_AS(UOp::variable("m", 0, 64, dtypes::weakint, 8).bind(12), doctest::Contains("not a multiple of 8"), Error);
  CHECK_THROWS_WITH_AS(UOp::const_int(3).bind(3), doctest::Contains("not a Variable"), Error);
}

TEST_CASE("variables: the kernel does not depend on the bound value") {
  UOp v = UOp::variable("i", 1, 10);
  Tensor a = Tensor::empty({16});
  auto prog = [&](int64_t val) {
    Tensor t(v.bind(val));
    return a * t + t.sum();  // the variable used twice: still one kernel, no kernel for the bind
  };
  Schedule s3 = schedule({prog(3)}), s5 = schedule({prog(5)});
  REQUIRE(s3.size() == 1);
  REQUIRE(s5.size() == 1);
  CHECK(s3.var_vals == std::map<std::string, int64_t>{{"i", 3}});
  CHECK(s5.var_vals.at("i") == 5);
  CHECK(s3[0].sink() == s5[0].sink());  // same kernel node: same source, compiled once
  REQUIRE(s3[0].vars().size() == 1);
  CHECK(s3[0].vars()[0] == v);
  CHECK(s3[0].buffers().size() == 2);
  CHECK(s3[0].args().back() == v);  // variables follow the buffers

  codegen::Program p = program_of(s3);
  REQUIRE(p.vars.size() == 1);
  CHECK(p.vars[0].name == "i");
  CHECK(p.vars[0].dtype == dtypes::int32);
  CHECK(p.vars[0].lo == 1);
  CHECK(p.vars[0].hi == 10);
  CHECK(has(codegen::render_c(p), "*(const long long*)bufs[2] /* i */"));
  std::string g = codegen::render_glsl(p, {}, codegen::glsl_launch(p));
  CHECK(has(g, "layout(push_constant) uniform Vars { layout(offset = 0) int var0; } vars;"));
  CHECK(has(g, "= vars.var0;"));
}

TEST_CASE("variables: misuse is an error naming the variable") {
  UOp v = UOp::variable("n", 0, 100);
  Tensor a = Tensor::empty({4});
  CHECK_THROWS_WITH_AS(schedule({a * Tensor(v.bind(3)) + Tensor(v.bind(4))}),
                       doctest::Contains("variable 'n' is bound to both 3 and 4"), Error);
  Tensor unbound = Tensor::from(std::vector<float>{1, 2}, {2}) * Tensor(v);
  CHECK_THROWS_WITH_AS(unbound.realize(), doctest::Contains("variable 'n' is not bound"), Error);
  // a compiled kernel with a variable launched without its value
  Schedule s = schedule({Tensor::from(std::vector<float>{1, 2}, {2}) * Tensor(v.bind(2))});
  auto ir = std::make_shared<const codegen::Program>(program_of(s));
  rt::KernelSource k;
  k.name = ir->name, k.num_buffers = uint32_t(ir->bufs.size()), k.threads = ir->threads, k.var_bytes = {4};
  k.source = codegen::render_c(*ir), k.program = ir;
  for (std::shared_ptr<rt::Device> d : {std::shared_ptr<rt::Device>(rt::CpuDevice::get()), std::shared_ptr<rt::Device>(rt::InterpDevice::get())}) {
    auto prog = d->compile(k);
    auto b0 = d->alloc(8), b1 = d->alloc(8);
    std::vector<rt::Buffer*> bufs{b0.get(), b1.get()};
    CHECK_THROWS_WITH_AS(prog->launch(bufs), doctest::Contains("takes 1 variable value, got 0"), Error);
    int64_t two[] = {2, 2};
    CHECK_THROWS_WITH_AS(prog->launch(bufs, two), doctest::Contains("takes 1 variable value, got 2"), Error);
  }
  int64_t big[] = {101};
  auto ip = rt::InterpDevice::get()->compile(k);
  auto b0 = rt::InterpDevice::get()->alloc(8), b1 = rt::InterpDevice::get()->alloc(8);
  std::vector<rt::Buffer*> bufs{b0.get(), b1.get()};
  CHECK_THROWS_WITH_AS(ip->launch(bufs, big), doctest::Contains("'n' = 101 is outside [0, 100]"), Error);
}

TEST_CASE("numeric: a bound variable scales, offsets and masks tensors") {
  UOp v = UOp::variable("i", 0, 16);
  std::vector<float> data(24);
  for (size_t j = 0; j < data.size(); j++) data[j] = float(j) * 0.5f - 3.0f;
  for (int64_t val : {3, 11}) {
    Tensor a = Tensor::from(data, {4, 6});
    Tensor t(v.bind(val));
    // elementwise, a reduce over a scaled input, and a mask from comparing an arange with the variable
    Tensor scaled = a * t + t;
    std::vector<double> oracle = evaluate(scaled.uop());
    Tensor rows = (a * t).sum(1);
    Tensor masked = Tensor::arange(int64_t(24)).reshape({4, 6}).lt(t).where(a, Tensor::scalar(0.0f));
    std::vector<float> got_s = scaled.to_vector(), got_r = rows.to_vector(), got_m = masked.to_vector();
    REQUIRE(got_s.size() == 24);
    REQUIRE(got_r.size() == 4);
    REQUIRE(got_m.size() == 24);
    for (size_t j = 0; j < 24; j++) {
      CHECK(got_s[j] == doctest::Approx(double(data[j]) * double(val) + double(val)));
      CHECK(oracle.at(j) == doctest::Approx(double(got_s[j])));
      CHECK(got_m[j] == (int64_t(j) < val ? data[j] : 0.0f));
    }
    for (size_t r = 0; r < 4; r++) {
      double want = 0;
      for (size_t c = 0; c < 6; c++) want += double(data[r * 6 + c]) * double(val);
      CHECK(got_r[r] == doctest::Approx(want));
    }
  }
}

TEST_CASE("numeric: a bound variable across kernels, alone, and beyond int32") {
  UOp v = UOp::variable("k", 1, 8);
  for (int64_t val : {2, 7}) {
    // softmax of a scaled input: three kernels read the variable
    std::vector<float> x{0.5f, -1.0f, 2.0f, 0.25f, 1.5f, -0.5f};
    std::vector<float> got = (Tensor::from(x, {2, 3}) * Tensor(v.bind(val))).softmax(1).to_vector();
    REQUIRE(got.size() == 6);
    for (size_t r = 0; r < 2; r++) {
      double m = -1e30, sum = 0;
      for (size_t c = 0; c < 3; c++) m = std::max(m, double(x[r * 3 + c]) * double(val));
      for (size_t c = 0; c < 3; c++) sum += std::exp(double(x[r * 3 + c]) * double(val) - m);
      for (size_t c = 0; c < 3; c++)
        CHECK(got[r * 3 + c] == doctest::Approx(std::exp(double(x[r * 3 + c]) * double(val) - m) / sum).epsilon(1e-5));
    }
    // the variable's value as a tensor of its own
    CHECK(Tensor(v.bind(val)).to_vector<int32_t>() == std::vector<int32_t>{int32_t(val)});
  }
  // a variable whose range leaves int32 is read as int64
  UOp w = UOp::variable("w", 0, int64_t(1) << 40);
  int64_t big = (int64_t(1) << 33) + 5;
  Tensor idx = Tensor::from(std::vector<int64_t>{0, 1, -2}, {3});
  Schedule s = schedule({idx + Tensor(w.bind(big))});
  REQUIRE(s.size() == 1);
  CHECK(program_of(s).vars.at(0).dtype == dtypes::int64);
  CHECK((idx + Tensor(w.bind(big))).to_vector<int64_t>() == std::vector<int64_t>{big, big + 1, big - 2});
}

TEST_CASE("numeric: an assign reads a bound variable, and the kernel is compiled once for every value") {
  UOp v = UOp::variable("step", 0, 100);
  Tensor acc = Tensor::from(std::vector<float>{1, 2, 3}, {3}).contiguous().realize();
  std::vector<double> want{1, 2, 3};
  for (int64_t val : {4, 9, 20}) {
    acc.assign(acc + Tensor(v.bind(val))).realize();
    for (double& w : want) w += double(val);
  }
  std::vector<float> got = acc.to_vector();
  REQUIRE(got.size() == 3);
  for (size_t j = 0; j < 3; j++) CHECK(got[j] == doctest::Approx(want[j]));
}

TEST_CASE("variables: a new value runs the compiled kernel again (no compile)") {
  UOp v = UOp::variable("s", 1, 1000);
  std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8};
  auto run = [&](int64_t val) { return (Tensor::from(x, {8}) * Tensor(v.bind(val)) + 0.5f).to_vector("CPU"); };
  CHECK(run(7)[1] == 14.5f);
  auto before = rt::CpuDevice::get()->stats();
  std::vector<float> got = run(123);
  auto after = rt::CpuDevice::get()->stats();
  CHECK(after.compiler_runs == before.compiler_runs);
  CHECK(after.memory_hits == before.memory_hits);  // not even a lookup in the device: the engine reused the program
  CHECK(after.disk_hits == before.disk_hits);
  for (size_t j = 0; j < x.size(); j++) CHECK(got[j] == x[j] * 123.0f + 0.5f);
}

TEST_CASE("numeric: shrink at a bound variable offset reads and writes a window (a KV cache)") {
  UOp v = UOp::variable("pos", 0, 6);
  auto c = [](int64_t x) { return UOp::const_int(x); };
  std::vector<float> x(24);
  for (size_t j = 0; j < x.size(); j++) x[j] = float(j);
  Tensor cache = Tensor::from(x, {8, 3}).contiguous().realize();
  for (int64_t val : {0, 2, 6}) {  // two rows from pos
    UOp p = v.bind(val);
    Tensor window = cache.shrink({{p, p + 2}, {c(0), c(3)}}) * 2.0f;
    std::vector<double> oracle = evaluate(window.uop());  // the reference evaluator reads the bound offset too
    std::vector<float> got = window.to_vector();
    REQUIRE(got.size() == 6);
    REQUIRE(oracle.size() == 6);
    for (size_t j = 0; j < 6; j++) CHECK(got[j] == 2.0f * x[size_t(val) * 3 + j]);
    for (size_t j = 0; j < 6; j++) CHECK(oracle[j] == double(got[j]));
  }
  // one kernel for every offset
  Schedule s1 = schedule({cache.shrink({{v.bind(1), v.bind(1) + 2}, {c(0), c(3)}}) * 2.0f});
  Schedule s5 = schedule({cache.shrink({{v.bind(5), v.bind(5) + 2}, {c(0), c(3)}}) * 2.0f});
  REQUIRE(s1.size() == 1);
  CHECK(s1[0].sink() == s5[0].sink());
  // write row pos (a KV-cache update), then read the whole cache
  for (int64_t val : {3, 5}) {
    UOp p = v.bind(val);
    cache.shrink({{p, p + 1}, {c(0), c(3)}}).assign(Tensor::from(std::vector<float>{-1, -2, -3}, {1, 3})).realize();
    for (size_t j = 0; j < 3; j++) x[size_t(val) * 3 + j] = -float(j + 1);
  }
  CHECK(cache.to_vector() == x);
}

TEST_CASE("variables: a symbolic shrink must have a constant size and stay inside for every value") {
  Tensor t = Tensor::empty({8, 3});
  UOp w = UOp::variable("w", 0, 7), p = w.bind(1);
  auto c = [](int64_t x) { return UOp::const_int(x); };
  CHECK_THROWS_WITH_AS(t.shrink({{p, p + 2}, {c(0), c(3)}}), doctest::Contains("bad (offset, size) ([0, 7], 2) on axis 0"), Error);
  CHECK_THROWS_WITH_AS(t.shrink({{p, p * 2}, {c(0), c(3)}}), doctest::Contains("is not a constant"), Error);
  CHECK_THROWS_WITH_AS(t.shrink({{UOp::const_float(1.0), UOp::const_float(2.0)}, {c(0), c(3)}}),
                       doctest::Contains("must be integer UOps"), Error);
  CHECK(t.shrink({{c(1), c(3)}, {c(0), c(3)}}).shape() == Shape{2, 3});  // constant bounds: the ordinary shrink
  CHECK(t.shrink({{p, p + 1}, {c(0), c(3)}}).shape() == Shape{1, 3});
}
