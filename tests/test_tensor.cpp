// graft::Tensor front end + reference evaluator: numerics against plain loops, shape errors, and graph parity
// (op histograms of the toposort) against tinygrad rewrite_rangeify2 (expected values produced by running tinygrad).
#include <doctest/doctest.h>

#include <cmath>
#include <atomic>
#include <map>
#include <thread>

#include <graft/graft.hpp>
#include <graft/testing.hpp>

using namespace graft;

namespace {
std::vector<float> seq(int64_t n, float scale = 1.0f, float off = 0.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) v[size_t(i)] = float(i) * scale + off;
  return v;
}
void check_close(const std::vector<float>& got, const std::vector<double>& want, double tol = 1e-5) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); i++) CHECK(double(got[i]) == doctest::Approx(want[i]).epsilon(tol).scale(1.0));
}
std::map<std::string, int> hist(const Tensor& t) {
  std::map<std::string, int> h;
  for (const UOp& u : t.uop().toposort()) h[std::string(op_name(u.op()))]++;
  return h;
}
}  // namespace

TEST_CASE("tensor: construction, buffer layout and to_vector") {
  Tensor t({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(t.shape() == Shape{2, 3});
  CHECK(t.dtype() == dtypes::float32);
  CHECK(t.uop().op() == Ops::RESHAPE);
  UOp buf = t.uop().src(0);
  CHECK(buf.op() == Ops::BUFFER);
  CHECK(buf.arg().param().device == "CPU");
  CHECK(buf.shape() == Shape{6});
  CHECK(host_storage(buf) != nullptr);
  CHECK(t.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
  Tensor i = Tensor::from<int32_t>({1, -2, 3}, {3});
  CHECK(i.dtype() == dtypes::int32);
  CHECK(i.uop().op() == Ops::BUFFER);  // 1-D: tinygrad's reshape is a no-op
  CHECK(i.to_vector<int>() == std::vector<int>{1, -2, 3});
  Tensor d = Tensor::from<double>({1.5, 2.5}, {2}, dtypes::float64);
  CHECK(d.to_vector<double>() == std::vector<double>{1.5, 2.5});
  CHECK_THROWS_AS(Tensor({1, 2, 3}, {2, 2}), Error);
}

TEST_CASE("tensor: host storage side table is reclaimed with its tensors") {
  size_t before = host_storage_count();
  {
    Tensor a({1, 2, 3, 4}, {2, 2});
    Tensor b = a * 2.0f + 1.0f;
    CHECK(host_storage_count() == before + 1);
    Tensor c = b;
    { Tensor dropped = a; }
    a = Tensor();
    CHECK(c.to_vector<float>() == std::vector<float>{3, 5, 7, 9});  // the graph keeps the data alive
  }
  CHECK(host_storage_count() == before);
}

TEST_CASE("tensor: creation empty full zeros ones arange rand") {
  CHECK(Tensor::empty({2, 3}).shape() == Shape{2, 3});
  Tensor f = Tensor::full({2, 2}, 3.5);
  CHECK(f.uop().op() == Ops::AFTER);
  CHECK(f.dtype() == dtypes::float32);
  CHECK(f.to_vector<float>() == std::vector<float>{3.5, 3.5, 3.5, 3.5});
  CHECK(Tensor::full({3}, 7, dtypes::int32).to_vector<int>() == std::vector<int>{7, 7, 7});
  CHECK(Tensor::full({2}, 2.0, std::nullopt, false).dtype() == dtypes::weakfloat);
  CHECK(Tensor::zeros({3}).to_vector<float>() == std::vector<float>{0, 0, 0});
  CHECK(Tensor::ones({2, 1}).to_vector<float>() == std::vector<float>{1, 1});
  Tensor r = Tensor::arange(10);
  CHECK(r.dtype() == dtypes::int32);
  CHECK(r.to_vector<int>() == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(Tensor::arange(int64_t(2), int64_t(11), int64_t(3)).to_vector<int>() == std::vector<int>{2, 5, 8});
  Tensor fr = Tensor::arange(1.0, 3.0, 0.5);
  CHECK(fr.dtype() == dtypes::float32);
  CHECK(fr.to_vector<float>() == std::vector<float>{1.0f, 1.5f, 2.0f, 2.5f});
  auto r1 = Tensor::rand({4, 5}, 7).to_vector<float>(), r2 = Tensor::rand({4, 5}, 7).to_vector<float>();
  CHECK(r1 == r2);
  CHECK(r1 != Tensor::rand({4, 5}, 8).to_vector<float>());
  for (float x : r1) CHECK((x >= 0.0f && x < 1.0f));
}

TEST_CASE("tensor: elementwise arithmetic with broadcasting") {
  Tensor a(seq(6, 1, 1), {2, 3}), b({10, 20, 30}, {3});
  auto av = seq(6, 1, 1);
  std::vector<double> add, sub, mul, div, rsub;
  for (int i = 0; i < 6; i++) {
    double x = av[size_t(i)], y = 10.0 * (i % 3 + 1);
    add.push_back(x + y), sub.push_back(x - y), mul.push_back(x * y), div.push_back(x / y), rsub.push_back(2 - x);
  }
  check_close((a + b).to_vector<float>(), add);
  check_close((a - b).to_vector<float>(), sub);
  check_close((a * b).to_vector<float>(), mul);
  check_close((a / b).to_vector<float>(), div);
  check_close((2.0f - a).to_vector<float>(), rsub);
  check_close((-a).to_vector<float>(), {-1, -2, -3, -4, -5, -6});
  CHECK((a + b).shape() == Shape{2, 3});
  // sub = add of neg, div = mul of reciprocal
  CHECK((a - b).uop().op() == Ops::ADD);
  CHECK((a / b).uop().op() == Ops::MUL);
  CHECK((a / b).uop().src(1).op() == Ops::RECIPROCAL);
  Tensor c({1, 2}, {2, 1});
  CHECK((c + b).shape() == Shape{2, 3});
  check_close((c * b).to_vector<float>(), {10, 20, 30, 20, 40, 60});
}

TEST_CASE("tensor: dtype promotion and weak scalars") {
  Tensor i = Tensor::from<int32_t>({1, 2, 3}, {3});
  Tensor f({0.5, 0.5, 0.5}, {3});
  CHECK((i + f).dtype() == dtypes::float32);
  CHECK((i + 1).dtype() == dtypes::int32);
  CHECK((i + 1).uop().src(1).op() == Ops::CONST);
  CHECK((i + 1).uop().src(1).dtype() == dtypes::weakint);
  CHECK((f * 2).uop().src(1).dtype() == dtypes::weakfloat);  // weakint lifted to weakfloat
  CHECK((i * 2.5).dtype() == dtypes::weakfloat);             // as tinygrad: int tensor * python float
  CHECK((i / 2).dtype() == dtypes::float32);
  check_close((i / 2).to_vector<float>(), {0.5, 1.0, 1.5});
  Tensor b8 = Tensor::from<int8_t>({100, -100}, {2});
  CHECK((b8 + b8).to_vector<int>() == std::vector<int>{-56, 56});  // int8 wraps
  Tensor u8 = Tensor::from<uint8_t>({250}, {1});
  CHECK((u8 + Tensor::from<uint8_t>({10}, {1})).to_vector<int>() == std::vector<int>{4});
  CHECK((i + Tensor::from<int64_t>({1, 1, 1}, {3})).dtype() == dtypes::int64);
  Tensor big = Tensor::from<float>({16777216.0f}, {1});
  CHECK((big + 1.0f).to_vector<double>()[0] == 16777216.0);  // float32 rounding
}

TEST_CASE("tensor: comparisons where and cast") {
  Tensor a({1, 5, 3}, {3}), b({2, 5, 1}, {3});
  CHECK((a < b).dtype() == dtypes::bool_);
  CHECK((a < b).to_vector<int>() == std::vector<int>{1, 0, 0});
  CHECK((a > b).to_vector<int>() == std::vector<int>{0, 0, 1});
  CHECK((a <= b).to_vector<int>() == std::vector<int>{1, 1, 0});
  CHECK((a >= b).to_vector<int>() == std::vector<int>{0, 1, 1});
  CHECK(a.eq(b).to_vector<int>() == std::vector<int>{0, 1, 0});
  CHECK(a.ne(b).to_vector<int>() == std::vector<int>{1, 0, 1});
  check_close((a < b).where(a, b).to_vector<float>(), {1, 5, 1});
  check_close((a > 2.0f).where(a, Tensor::scalar(0.0)).to_vector<float>(), {0, 5, 3});
  CHECK_THROWS_AS(a.where(a, b), Error);
  Tensor f({-1.7f, 2.5f, 3.9f}, {3});
  CHECK(f.cast(dtypes::int32).to_vector<int>() == std::vector<int>{-1, 2, 3});
  CHECK(f.cast(dtypes::uint8).to_vector<int>() == std::vector<int>{255, 2, 3});
  CHECK(f.cast(dtypes::bool_).to_vector<int>() == std::vector<int>{1, 1, 1});
  CHECK(f.cast(dtypes::float32).uop() == f.uop());
  check_close(a.maximum(b).to_vector<float>(), {2, 5, 3});
  check_close(a.minimum(b).to_vector<float>(), {1, 5, 1});
}

TEST_CASE("tensor: unary math relu exp log sqrt exp2 log2 reciprocal") {
  std::vector<float> xs{-2.0f, -0.5f, 0.25f, 1.0f, 3.0f};
  Tensor x(xs, {5});
  std::vector<double> relu, exp, exp2, recip;
  for (float v : xs) relu.push_back(v > 0 ? v : 0), exp.push_back(std::exp(double(v))), exp2.push_back(std::exp2(double(v))), recip.push_back(1.0 / v);
  check_close(x.relu().to_vector<float>(), relu);
  check_close(x.exp().to_vector<float>(), exp);
  check_close(x.exp2().to_vector<float>(), exp2);
  check_close(x.reciprocal().to_vector<float>(), recip);
  Tensor p({0.5f, 1.0f, 4.0f, 9.0f}, {4});
  check_close(p.log().to_vector<float>(), {std::log(0.5), 0.0, std::log(4.0), std::log(9.0)});
  check_close(p.log2().to_vector<float>(), {-1.0, 0.0, 2.0, std::log2(9.0)});
  check_close(p.sqrt().to_vector<float>(), {std::sqrt(0.5), 1.0, 2.0, 3.0});
  // exp = exp2(x * 1/ln2), log = log2(x) * ln2 (tinygrad)
  CHECK(x.exp().uop().op() == Ops::EXP2);
  CHECK(x.exp().uop().src(0).op() == Ops::MUL);
  CHECK(p.log().uop().op() == Ops::MUL);
  CHECK(x.relu().uop().op() == Ops::WHERE);
  CHECK(Tensor::from<int32_t>({4}, {1}).sqrt().dtype() == dtypes::float32);
}

TEST_CASE("tensor: movement reshape permute expand pad shrink flip") {
  Tensor a(seq(6), {2, 3});
  CHECK(a.reshape({3, -1}).shape() == Shape{3, 2});
  CHECK(a.reshape({-1}).to_vector<float>() == seq(6));
  CHECK(a.reshape({2, 3}).uop() == a.uop());
  CHECK(a.permute({1, 0}).to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
  CHECK(a.transpose().to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
  CHECK(a.permute({-1, 0}).shape() == Shape{3, 2});
  Tensor e = Tensor({1, 2}, {2, 1}).expand({3, 2, 4});
  CHECK(e.shape() == Shape{3, 2, 4});
  CHECK(e.uop().op() == Ops::PERMUTE);  // RESHAPE(squeeze) + EXPAND(prepend) + PERMUTE
  auto ev = e.to_vector<float>();
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++)
      for (int k = 0; k < 4; k++) CHECK(ev[size_t(i * 8 + j * 4 + k)] == float(j + 1));
  CHECK(Tensor({1, 2}, {2, 1}).expand({-1, 3}).to_vector<float>() == std::vector<float>{1, 1, 1, 2, 2, 2});
  Tensor pd = a.pad({{1, 0}, {0, 2}});
  CHECK(pd.shape() == Shape{3, 5});
  CHECK(pd.to_vector<float>() == std::vector<float>{0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 5, 0, 0});
  CHECK(a.shrink({{1, 2}, {0, 2}}).to_vector<float>() == std::vector<float>{3, 4});
  CHECK(a.flip({0}).to_vector<float>() == std::vector<float>{3, 4, 5, 0, 1, 2});
  CHECK(a.flip({0, 1}).to_vector<float>() == std::vector<float>{5, 4, 3, 2, 1, 0});
  Tensor t3(seq(24), {2, 3, 4});
  CHECK(t3.flatten().shape() == Shape{24});
  CHECK(t3.flatten(1).shape() == Shape{2, 12});
  CHECK(t3.unsqueeze(1).shape() == Shape{2, 1, 3, 4});
  CHECK(t3.unsqueeze(-1).shape() == Shape{2, 3, 4, 1});
  CHECK(t3.unsqueeze(0).squeeze().shape() == Shape{2, 3, 4});
  CHECK(t3.unsqueeze(0).squeeze(0).shape() == Shape{2, 3, 4});
  CHECK(t3.transpose(0, 2).shape() == Shape{4, 3, 2});
  CHECK(t3.transpose(0, 2).to_vector<float>()[1] == 12.0f);
}

TEST_CASE("tensor: shape errors raise graft::Error naming the op and shapes") {
  Tensor a(seq(6), {2, 3}), b(seq(4), {4});
  auto msg = [](auto&& f) {
    try { f(); } catch (const Error& e) { return std::string(e.what()); }
    return std::string("no error");
  };
  std::string m = msg([&] { (void)(a + b); });
  CHECK(m.find("ADD") != std::string::npos);
  CHECK(m.find("(2, 3)") != std::string::npos);
  CHECK(m.find("(4,)") != std::string::npos);
  CHECK(msg([&] { (void)a.reshape({4, 2}); }).find("reshape") != std::string::npos);
  CHECK_THROWS_AS(a.reshape({-1, -1}), Error);
  CHECK_THROWS_AS(a.permute({0, 0}), Error);
  CHECK_THROWS_AS(a.permute({0}), Error);
  CHECK_THROWS_AS(a.expand({4, 3}), Error);
  CHECK_THROWS_AS(a.pad({{1, 1}}), Error);
  CHECK_THROWS_AS(a.shrink({{0, 3}, {0, 1}}), Error);
  CHECK_THROWS_AS(a.sum(std::vector<int64_t>{2}), Error);
  CHECK_THROWS_AS(a.flip({0, 0}), Error);
  std::string mm = msg([&] { (void)a.matmul(a); });
  CHECK(mm.find("dot") != std::string::npos);
  CHECK(mm.find("(2, 3)") != std::string::npos);
  CHECK_THROWS_AS(Tensor::empty({1, 3, 8, 8}).conv2d(Tensor::empty({4, 2, 3, 3})), Error);
  CHECK_THROWS_AS(Tensor::empty({3}).dot(Tensor::empty({2})), Error);
}

TEST_CASE("tensor: reductions sum max min mean") {
  Tensor a({1, -2, 3, 4, 5, -6}, {2, 3});
  check_close(a.sum().to_vector<float>(), {5});
  CHECK(a.sum().shape() == Shape{});
  check_close(a.sum(0).to_vector<float>(), {5, 3, -3});
  check_close(a.sum(1).to_vector<float>(), {2, 3});
  CHECK(a.sum(1, true).shape() == Shape{2, 1});
  CHECK(a.sum(std::vector<int64_t>{0, 1}, true).shape() == Shape{1, 1});
  check_close(a.max(1).to_vector<float>(), {3, 5});
  check_close(a.max().to_vector<float>(), {5});
  check_close(a.min(0).to_vector<float>(), {1, -2, -6});
  check_close(a.mean(1).to_vector<float>(), {2.0 / 3, 1.0});
  check_close(a.mean().to_vector<float>(), {5.0 / 6});
  // REDUCE structure: PERMUTE reduced axes to front + REDUCE(op, n)
  UOp r = a.sum(1).uop();
  CHECK(r.op() == Ops::REDUCE);
  CHECK(r.arg() == Arg{Arg(Ops::ADD), Arg(int64_t(1))});
  CHECK(r.src(0).op() == Ops::PERMUTE);
  Tensor i = Tensor::from<int32_t>({1, 2, 3, 4}, {2, 2});
  CHECK(i.sum().dtype() == dtypes::int32);
  CHECK(i.sum().to_vector<int>() == std::vector<int>{10});
  CHECK(i.mean().dtype() == dtypes::float32);
  check_close(i.mean().to_vector<float>(), {2.5});
  CHECK(i.max(0).to_vector<int>() == std::vector<int>{3, 4});
  CHECK(i.min(0).to_vector<int>() == std::vector<int>{1, 2});
  // reduce over a size-1 axis is a reshape
  CHECK(Tensor({1, 2}, {1, 2}).sum(0).uop().op() == Ops::RESHAPE);
}

TEST_CASE("tensor: var and std with correction") {
  std::vector<float> v{1, 2, 4, 7, 0, 3};
  Tensor a(v, {2, 3});
  auto var = [](std::vector<double> x, int corr) {
    double m = 0, s = 0;
    for (double y : x) m += y;
    m /= double(x.size());
    for (double y : x) s += (y - m) * (y - m);
    return s / double(int(x.size()) - corr);
  };
  check_close(a.var(1).to_vector<float>(), {var({1, 2, 4}, 1), var({7, 0, 3}, 1)});
  check_close(a.var(1, false, 0).to_vector<float>(), {var({1, 2, 4}, 0), var({7, 0, 3}, 0)});
  check_close(a.std(0).to_vector<float>(), {std::sqrt(var({1, 7}, 1)), std::sqrt(var({2, 0}, 1)), std::sqrt(var({4, 3}, 1))});
  check_close(a.var().to_vector<float>(), {var({1, 2, 4, 7, 0, 3}, 1)});
  auto one = Tensor({3}, {1, 1}).var(0).to_vector<float>();  // n == 1, correction 1: NaN like tinygrad
  CHECK(std::isnan(one[0]));
  CHECK(Tensor({3}, {1}).std().to_vector<float>()[0] != Tensor({3}, {1}).std().to_vector<float>()[0]);
}

TEST_CASE("tensor: matmul and dot against loops") {
  int M = 5, K = 7, N = 3;
  Tensor a(seq(M * K, 0.1f, -1.0f), {M, K}), b(seq(K * N, -0.05f, 0.5f), {K, N});
  auto av = seq(M * K, 0.1f, -1.0f), bv = seq(K * N, -0.05f, 0.5f);
  std::vector<double> want;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int k = 0; k < K; k++) s += double(av[size_t(i * K + k)]) * double(bv[size_t(k * N + j)]);
      want.push_back(s);
    }
  Tensor c = a.matmul(b);
  CHECK(c.shape() == Shape{M, N});
  check_close(c.to_vector<float>(), want, 1e-4);
  Tensor v(seq(K), {K});
  CHECK(a.dot(v).shape() == Shape{M});
  CHECK(v.dot(b).shape() == Shape{N});
  check_close(v.dot(v).to_vector<float>(), {91});
  Tensor batched(seq(2 * M * K), {2, M, K});
  CHECK(batched.matmul(b).shape() == Shape{2, M, N});
}

TEST_CASE("tensor: softmax log_softmax layernorm against loops") {
  std::vector<float> xv{1, 2, 3, -1, 0, 5, 0.5f, 0.5f};
  Tensor x(xv, {2, 4});
  std::vector<double> sm, lsm, ln, sm0;
  for (int r = 0; r < 2; r++) {
    double mx = -1e30, s = 0, mean = 0, v = 0;
    for (int c = 0; c < 4; c++) mx = std::max(mx, double(xv[size_t(r * 4 + c)])), mean += xv[size_t(r * 4 + c)];
    mean /= 4;
    for (int c = 0; c < 4; c++) s += std::exp(xv[size_t(r * 4 + c)] - mx), v += (xv[size_t(r * 4 + c)] - mean) * (xv[size_t(r * 4 + c)] - mean);
    v /= 4;
    for (int c = 0; c < 4; c++) {
      double y = xv[size_t(r * 4 + c)];
      sm.push_back(std::exp(y - mx) / s), lsm.push_back(y - mx - std::log(s)), ln.push_back((y - mean) / std::sqrt(v + 1e-5));
    }
  }
  check_close(x.softmax().to_vector<float>(), sm);
  check_close(x.log_softmax(1).to_vector<float>(), lsm, 1e-4);
  check_close(x.layernorm().to_vector<float>(), ln, 1e-4);
  auto s0 = x.softmax(0).to_vector<float>();
  for (int c = 0; c < 4; c++) CHECK(double(s0[size_t(c)] + s0[size_t(4 + c)]) == doctest::Approx(1.0));
  CHECK(x.layernorm({0, 1}).shape() == Shape{2, 4});
}

TEST_CASE("tensor: conv2d with bias stride and padding against loops") {
  int B = 2, C = 3, H = 6, W = 5, O = 4, KH = 3, KW = 2;
  auto xv = seq(B * C * H * W, 0.01f, -0.5f), wv = seq(O * C * KH * KW, -0.02f, 0.3f);
  std::vector<float> bv{0.1f, -0.2f, 0.3f, 0.0f};
  Tensor x(xv, {B, C, H, W}), w(wv, {O, C, KH, KW}), bias(bv, {O});
  for (auto [stride, pad] : std::vector<std::pair<int, int>>{{1, 0}, {2, 1}}) {
    int OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
    std::vector<double> want;
    for (int b = 0; b < B; b++)
      for (int o = 0; o < O; o++)
        for (int i = 0; i < OH; i++)
          for (int j = 0; j < OW; j++) {
            double s = bv[size_t(o)];
            for (int c = 0; c < C; c++)
              for (int ki = 0; ki < KH; ki++)
                for (int kj = 0; kj < KW; kj++) {
                  int y = i * stride + ki - pad, z = j * stride + kj - pad;
                  if (y < 0 || y >= H || z < 0 || z >= W) continue;
                  s += double(xv[size_t(((b * C + c) * H + y) * W + z)]) * double(wv[size_t(((o * C + c) * KH + ki) * KW + kj)]);
                }
            want.push_back(s);
          }
    Tensor out = x.conv2d(w, bias, 1, stride, 1, {pad});
    CHECK(out.shape() == Shape{B, O, OH, OW});
    check_close(out.to_vector<float>(), want, 1e-4);
  }
}

TEST_CASE("tensor: cumsum contiguous realize") {
  Tensor a(seq(6, 1, 1), {2, 3});
  check_close(a.cumsum(1).to_vector<float>(), {1, 3, 6, 4, 9, 15});
  check_close(a.cumsum(0).to_vector<float>(), {1, 2, 3, 5, 7, 9});
  check_close(a.cumsum(-1).to_vector<float>(), {1, 3, 6, 4, 9, 15});
  CHECK(a.contiguous().uop() == a.uop());  // RESHAPE(BUFFER) has buffer identity
  Tensor s = a.sum(1).contiguous();
  CHECK(s.uop().op() == Ops::CONTIGUOUS);
  check_close(s.to_vector<float>(), {6, 15});
  Tensor r = (a * 2.0f).permute({1, 0});
  r.realize();
  CHECK(r.uop().op() == Ops::RESHAPE);
  CHECK(r.uop().src(0).op() == Ops::BUFFER);
  CHECK(r.shape() == Shape{3, 2});
  CHECK(r.to_vector<float>() == std::vector<float>{2, 8, 4, 10, 6, 12});
}

TEST_CASE("tensor: evaluator on a deep chain is iterative") {
  Tensor t({1}, {1});
  for (int i = 0; i < 20000; i++) t = t + 1.0f;
  CHECK(t.to_vector<float>()[0] == 20001.0f);
}

// Expected values: tinygrad rewrite_rangeify2, `Counter(u.op.name for u in t.uop.toposort())` on Tensor.empty inputs.
TEST_CASE("tensor: graph parity with tinygrad (op histograms)") {
  using H = std::map<std::string, int>;
  auto check = [](const Tensor& t, Shape shape, size_t nodes, H want) {
    CHECK(t.shape() == shape);
    CHECK(t.uop().toposort().size() == nodes);
    CHECK(hist(t) == want);
  };
  check(Tensor::empty({64, 512}).softmax(-1), {64, 512}, 23,
        {{"ADD", 1}, {"BUFFER", 1}, {"CONST", 6}, {"DETACH", 1}, {"EXP2", 1}, {"MUL", 3}, {"PERMUTE", 2}, {"RECIPROCAL", 1}, {"REDUCE", 2}, {"RESHAPE", 3}, {"STACK", 2}});
  check(Tensor::empty({64, 512}).log_softmax(-1), {64, 512}, 26,
        {{"ADD", 2}, {"BUFFER", 1}, {"CONST", 7}, {"DETACH", 1}, {"EXP2", 1}, {"LOG2", 1}, {"MUL", 4}, {"PERMUTE", 2}, {"REDUCE", 2}, {"RESHAPE", 3}, {"STACK", 2}});
  check(Tensor::empty({8, 64}).layernorm({-1}), {8, 64}, 27,
        {{"ADD", 2}, {"BUFFER", 1}, {"CONST", 7}, {"MUL", 5}, {"PERMUTE", 2}, {"RECIPROCAL", 2}, {"REDUCE", 2}, {"RESHAPE", 3}, {"SQRT", 1}, {"STACK", 2}});
  check(Tensor::empty({16, 32}).matmul(Tensor::empty({32, 8})), {16, 8}, 20,
        {{"BUFFER", 2}, {"CONST", 6}, {"MUL", 1}, {"PERMUTE", 2}, {"REDUCE", 1}, {"RESHAPE", 4}, {"STACK", 4}});
  check(Tensor::empty({1, 3, 32, 32}).conv2d(Tensor::empty({8, 3, 3, 3})), {1, 8, 30, 30}, 54,
        {{"BUFFER", 2}, {"CONST", 12}, {"EXPAND", 2}, {"MUL", 1}, {"PERMUTE", 5}, {"REDUCE", 1}, {"RESHAPE", 13}, {"SHRINK", 2}, {"STACK", 16}});
  check(Tensor::empty({1, 3, 32, 32}).conv2d(Tensor::empty({8, 3, 3, 3}), Tensor::empty({8}), 1, 2, 1, {1}), {1, 8, 16, 16}, 67,
        {{"ADD", 1}, {"BUFFER", 3}, {"CONST", 14}, {"EXPAND", 2}, {"MUL", 1}, {"PAD", 1}, {"PERMUTE", 5}, {"REDUCE", 1}, {"RESHAPE", 14}, {"SHRINK", 3}, {"STACK", 22}});
  check(Tensor::empty({4, 6}).cumsum(1), {4, 6}, 38,
        {{"BUFFER", 1}, {"CONST", 11}, {"EXPAND", 1}, {"PAD", 1}, {"PERMUTE", 3}, {"REDUCE", 1}, {"RESHAPE", 7}, {"SHRINK", 2}, {"STACK", 11}});
  check(Tensor::empty({4, 6}).std(1), {4}, 24,
        {{"ADD", 1}, {"BUFFER", 1}, {"CONST", 7}, {"MUL", 4}, {"PERMUTE", 2}, {"RECIPROCAL", 2}, {"REDUCE", 2}, {"RESHAPE", 2}, {"SQRT", 1}, {"STACK", 2}});
  check(Tensor::arange(10), {10}, 34,
        {{"ADD", 1}, {"CONST", 11}, {"EXPAND", 2}, {"PAD", 1}, {"PERMUTE", 2}, {"REDUCE", 1}, {"RESHAPE", 8}, {"SHRINK", 2}, {"STACK", 6}});
  check(Tensor::empty({4, 6}).relu().exp().log().sqrt(), {4, 6}, 16,
        {{"BUFFER", 1}, {"CMPLT", 1}, {"CONST", 6}, {"EXP2", 1}, {"LOG2", 1}, {"MUL", 2}, {"RESHAPE", 1}, {"SQRT", 1}, {"STACK", 1}, {"WHERE", 1}});
  check(Tensor::empty({4, 6}).min(0) + Tensor::empty({4, 6}).mean(), {6}, 17,
        {{"ADD", 1}, {"BUFFER", 2}, {"CONST", 5}, {"MUL", 3}, {"RECIPROCAL", 1}, {"REDUCE", 2}, {"RESHAPE", 2}, {"STACK", 1}});
}

TEST_CASE("tensor: two-stage cumsum above 512 elements") {
  Tensor a(seq(1000, 0.5f), {1000});
  auto got = a.cumsum().to_vector<float>();
  double run = 0;
  for (int i = 0; i < 1000; i++) {
    run += 0.5 * i;
    CHECK(double(got[size_t(i)]) == doctest::Approx(run).epsilon(1e-5));
  }
  Tensor b(seq(3 * 600, 1.0f / 64), {3, 600});
  auto gb = b.cumsum(1).to_vector<float>();
  for (int r = 0; r < 3; r++) {
    double acc = 0;
    for (int c = 0; c < 600; c++) {
      acc += double(r * 600 + c) / 64;
      CHECK(double(gb[size_t(r * 600 + c)]) == doctest::Approx(acc).epsilon(1e-5));
    }
  }
}

// Toposort op sequences from tinygrad rewrite_rangeify2 (`" ".join(u.op.name for u in t.uop.toposort())`).
TEST_CASE("tensor: graph parity with tinygrad (toposort op order)") {
  auto ops = [](const Tensor& t) {
    std::string s;
    for (const UOp& u : t.uop().toposort()) {
      if (!s.empty()) s += ' ';
      s += op_name(u.op());  // not " " + string&&: GCC 12 -Wrestrict false positive
    }
    return s;
  };
  CHECK(ops(Tensor::empty({64, 512}).softmax(-1)) ==
        "CONST BUFFER CONST CONST STACK RESHAPE PERMUTE REDUCE CONST STACK RESHAPE DETACH CONST MUL ADD CONST MUL EXP2 PERMUTE "
        "REDUCE RESHAPE RECIPROCAL MUL");
  CHECK(ops(Tensor::empty({8, 64}).layernorm({-1})) ==
        "CONST BUFFER CONST CONST STACK RESHAPE PERMUTE REDUCE CONST STACK RESHAPE CONST RECIPROCAL MUL CONST MUL ADD MUL "
        "PERMUTE REDUCE RESHAPE MUL CONST ADD SQRT RECIPROCAL MUL");
  CHECK(ops(Tensor::empty({16, 32}).matmul(Tensor::empty({32, 8}))) ==
        "CONST BUFFER CONST CONST STACK RESHAPE CONST STACK RESHAPE CONST BUFFER CONST STACK RESHAPE STACK RESHAPE PERMUTE MUL "
        "PERMUTE REDUCE");
  CHECK(ops(Tensor::empty({1, 3, 32, 32}).conv2d(Tensor::empty({8, 3, 3, 3}))) ==
        "CONST BUFFER CONST CONST CONST STACK RESHAPE STACK RESHAPE RESHAPE CONST STACK EXPAND PERMUTE CONST STACK RESHAPE "
        "CONST STACK CONST STACK SHRINK CONST STACK RESHAPE STACK CONST STACK SHRINK STACK RESHAPE RESHAPE PERMUTE STACK "
        "RESHAPE STACK RESHAPE CONST EXPAND PERMUTE PERMUTE CONST BUFFER STACK RESHAPE STACK RESHAPE MUL PERMUTE REDUCE STACK "
        "RESHAPE STACK RESHAPE");
  CHECK(ops(Tensor::empty({1000}).cumsum()) ==
        "CONST BUFFER CONST CONST PAD CONST CONST STACK RESHAPE CONST CONST STACK CONST STACK PAD CONST STACK RESHAPE RESHAPE "
        "CONST EXPAND PERMUTE CONST STACK RESHAPE STACK CONST STACK SHRINK CONST STACK RESHAPE STACK STACK SHRINK STACK "
        "RESHAPE RESHAPE PERMUTE PERMUTE REDUCE STACK SHRINK RESHAPE CONST CONST PAD STACK RESHAPE RESHAPE CONST EXPAND CONST "
        "RESHAPE CONST SHRINK CONST STACK RESHAPE STACK SHRINK STACK RESHAPE RESHAPE PERMUTE PERMUTE REDUCE SHRINK PAD RESHAPE "
        "ADD RESHAPE SHRINK");
  CHECK(ops(Tensor::empty({3, 600}).cumsum(1)) ==
        "CONST BUFFER CONST CONST STACK RESHAPE CONST CONST STACK CONST STACK PAD CONST STACK RESHAPE CONST STACK CONST STACK "
        "PAD CONST STACK RESHAPE RESHAPE CONST EXPAND PERMUTE CONST STACK RESHAPE STACK CONST STACK SHRINK CONST STACK "
        "RESHAPE STACK STACK SHRINK STACK RESHAPE RESHAPE PERMUTE PERMUTE REDUCE STACK SHRINK STACK RESHAPE CONST STACK CONST "
        "STACK PAD STACK RESHAPE RESHAPE CONST EXPAND PERMUTE CONST STACK RESHAPE STACK CONST STACK SHRINK CONST STACK RESHAPE "
        "STACK SHRINK STACK RESHAPE RESHAPE PERMUTE PERMUTE REDUCE STACK SHRINK STACK PAD RESHAPE ADD RESHAPE SHRINK");
}

// More programs: tinygrad rewrite_rangeify2 `(shape, dtype.name, " ".join(op names of the toposort))` on Tensor.empty inputs.
TEST_CASE("tensor: graph parity with tinygrad (misc ops, dtypes)") {
  auto sig = [](const Tensor& t) {
    std::string s = shape_str(t.shape());
    s += ' ', s += t.dtype().name(), s += " |";
    for (const UOp& u : t.uop().toposort()) s += ' ', s += op_name(u.op());
    return s;
  };
  Tensor a = Tensor::empty({2, 3}), b = Tensor::empty({3}), c = Tensor::empty({2, 1});
  Tensor i = Tensor::empty({2, 3}, dtypes::int32), i8 = Tensor::empty({4}, dtypes::int8), u8 = Tensor::empty({4}, dtypes::uint8);
  CHECK(sig((a - b) / c) == "(2, 3) float | CONST BUFFER CONST CONST STACK RESHAPE BUFFER CONST MUL ADD BUFFER CONST STACK RESHAPE RECIPROCAL MUL");  // sub_div
  CHECK(sig(2.0 - a / 3) == "(2, 3) float | CONST CONST BUFFER CONST CONST STACK RESHAPE CONST RECIPROCAL MUL CONST MUL ADD");  // rsub_rdiv
  CHECK(sig((a < b).where(a, c)) == "(2, 3) float | CONST BUFFER CONST CONST STACK RESHAPE BUFFER CMPLT BUFFER CONST STACK RESHAPE WHERE");  // cmp_where
  CHECK(sig((a >= b).where(a <= c, a.eq(b))) == "(2, 3) bool | CONST BUFFER CONST CONST STACK RESHAPE BUFFER CMPLT CONST CMPNE BUFFER CONST STACK RESHAPE CMPLT CMPNE CMPNE CMPNE WHERE");  // ge_le_eq
  CHECK(sig(c.expand({2, 3}).pad({{1, 0}, {0, 2}}).flip({1}).shrink({{0, 2}, {1, 3}})) == "(2, 2) float | CONST BUFFER CONST STACK RESHAPE RESHAPE CONST EXPAND PERMUTE CONST STACK CONST STACK PAD FLIP STACK STACK SHRINK");  // expand_pad_flip
  CHECK(sig(i.mean(1) + i.min(0).sum()) == "(2,) float | CONST BUFFER CONST CONST STACK RESHAPE PERMUTE REDUCE CAST RECIPROCAL MUL CONST XOR REDUCE XOR REDUCE CAST ADD");  // int_mean_min
  CHECK(sig(i8.sum()) == "() int | CONST BUFFER CAST REDUCE");  // int8_sum
  CHECK(sig(i8 + u8) == "(4,) short | CONST BUFFER CAST BUFFER CAST ADD");  // i8_u8_add
  CHECK(sig(a.var(0, true, 0)) == "(1, 3) float | CONST BUFFER CONST CONST STACK RESHAPE REDUCE CONST STACK RESHAPE CONST RECIPROCAL MUL CONST MUL ADD MUL REDUCE RESHAPE MUL");  // var_keep
  CHECK(sig(Tensor::empty({2, 3, 4}).permute({2, 0, 1}).reshape({4, -1}).transpose().flatten()) == "(24,) float | CONST BUFFER CONST CONST CONST STACK RESHAPE PERMUTE CONST STACK RESHAPE PERMUTE RESHAPE");  // permute_reshape
  CHECK(sig(Tensor::empty({3, 1, 4}).squeeze().unsqueeze(0).squeeze(1)) == "(1, 3, 4) float | CONST BUFFER CONST CONST CONST STACK RESHAPE STACK RESHAPE STACK RESHAPE");  // unsq_sq
  CHECK(sig(a.max({}, true)) == "(1, 1) float | CONST BUFFER CONST CONST STACK RESHAPE REDUCE CONST STACK RESHAPE");  // max_all_keep
  CHECK(sig((a < b).logical_not()) == "(2, 3) bool | CONST BUFFER CONST CONST STACK RESHAPE BUFFER CMPLT CONST CMPNE");  // bool_ops
  CHECK(sig(i.exp()) == "(2, 3) float | CONST BUFFER CONST CONST STACK RESHAPE CAST CONST MUL EXP2");  // exp_int
  CHECK(sig(i.log()) == "(2, 3) float | CONST BUFFER CONST CONST STACK RESHAPE LOG2 CONST MUL");  // log_int
  CHECK(sig(a.cast(dtypes::int32).cast(dtypes::float32)) == "(2, 3) float | CONST BUFFER CONST CONST STACK RESHAPE CAST CAST");  // cast
  CHECK(sig(a.sum(0).contiguous()) == "(3,) float | CONST BUFFER CONST CONST STACK RESHAPE REDUCE CONTIGUOUS");  // contig
  CHECK(sig(Tensor::empty({5}).dot(Tensor::empty({5, 3}))) == "(3,) float | CONST BUFFER CONST BUFFER CONST STACK RESHAPE PERMUTE MUL PERMUTE REDUCE");  // dot_1d
  CHECK(sig(Tensor::empty({2, 4, 5}).matmul(Tensor::empty({5, 3}))) == "(2, 4, 3) float | CONST BUFFER CONST CONST CONST STACK RESHAPE CONST STACK RESHAPE CONST BUFFER CONST STACK RESHAPE STACK RESHAPE PERMUTE MUL PERMUTE REDUCE");  // bmm
}

// Values produced by running tinygrad rewrite_rangeify2 (CPU) on the same inputs.
TEST_CASE("tensor: integer and bool semantics match tinygrad values") {
  Tensor u8 = Tensor::from<uint8_t>({3, 250, 7}, {3}), i8 = Tensor::from<int8_t>({-100, 100, 5}, {3});
  CHECK(u8.min().dtype() == dtypes::uint8);
  CHECK(u8.min().to_vector<int>() == std::vector<int>{3});
  CHECK(u8.max().to_vector<int>() == std::vector<int>{250});
  CHECK((i8 + u8).dtype() == dtypes::int16);
  CHECK((i8 + u8).to_vector<int>() == std::vector<int>{-97, 350, 12});
  CHECK(i8.sum().dtype() == dtypes::int32);
  CHECK(i8.sum().to_vector<int>() == std::vector<int>{5});
  CHECK(u8.sum().dtype() == dtypes::uint32);
  CHECK(u8.sum().to_vector<int>() == std::vector<int>{260});
  check_close((Tensor::from<int32_t>({7, -7}, {2}) / 2).to_vector<float>(), {3.5, -3.5});
  check_close((Tensor::from<int32_t>({1, 2, 3}, {3}) * 2.5).to_vector<float>(), {2.5, 5.0, 7.5});
  Tensor gt = Tensor({1, 2, 3}, {3}) > 1.0f;
  CHECK(gt.sum().dtype() == dtypes::int32);
  CHECK(gt.sum().to_vector<int>() == std::vector<int>{2});
  CHECK(Tensor::from<int32_t>({1, 2, 4}, {3}).mean().to_vector<float>() == std::vector<float>{2.3333334922790527f});
  Tensor a(seq(6), {2, 3});
  CHECK(a.max({}, true).shape() == Shape{1, 1});
  CHECK(a.sum({0, 1}).shape() == Shape{});
  CHECK(a.sum(std::vector<int64_t>{}).shape() == Shape{2, 3});
  CHECK(a.sum(-1).to_vector<float>() == std::vector<float>{3, 12});
}

TEST_CASE("tensor: building and evaluating from several threads") {
  std::vector<std::thread> ts;
  std::atomic<int> ok{0};
  for (int k = 0; k < 4; k++)
    ts.emplace_back([k, &ok] {
      for (int r = 0; r < 20; r++) {
        Tensor a(seq(12, 1, float(k)), {3, 4});
        auto v = (a * 2.0f).sum(1).to_vector<float>();
        double want = 0;
        for (int i = 0; i < 4; i++) want += 2.0 * (i + k);
        if (v.size() == 3 && double(v[0]) == want) ok++;
      }
    });
  for (auto& t : ts) t.join();
  CHECK(ok.load() == 80);
}

TEST_CASE("tensor: half dtypes build graphs without host storage") {
  Tensor h = Tensor::empty({4, 3}, dtypes::float16);
  CHECK(h.dtype() == dtypes::float16);
  CHECK(h.sum(1).dtype() == dtypes::float16);  // accumulates in float32, casts back (tinygrad)
  CHECK(h.sum(1).uop().op() == Ops::CAST);
  CHECK((h + 1).dtype() == dtypes::float16);
  CHECK_THROWS_AS(h.to_vector<float>(), Error);
}

TEST_CASE("tensor: testing::check_close on realized values") {
  CHECK(testing::check_close(Tensor::arange(4) * 2, {0, 2, 4, 6}));
  CHECK(testing::check_close(Tensor(std::vector<float>{1, 4, 9}, {3}).sqrt(), {1, 2, 3}, 1e-6, 1e-6));
  CHECK(testing::close_mismatch((Tensor::arange(3) + 1).to_vector<double>(), std::vector<double>{1, 2, 4}) != "");
}
