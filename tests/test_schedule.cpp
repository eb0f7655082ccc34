// graft::schedule (rangeify2 first cut): kernel counts against the seed column of tinygrad_rangeify.md §6 and
// structural checks of the kernel ASTs.
#include <doctest/doctest.h>
#include <random>
#include <set>

#include <graft/graft.hpp>

using namespace graft;

namespace {
std::vector<UOp> ops_of(const UOp& root, Ops op) {
  std::vector<UOp> r;
  for (const UOp& u : root.toposort())
    if (u.op() == op) r.push_back(u);
  return r;
}
// the kernel's single STORE (through END)
UOp store_of(const Kernel& k) {
  auto st = ops_of(k.sink(), Ops::STORE);
  REQUIRE(st.size() == 1);
  return st[0];
}
AxisType axis_of(const UOp& r) { return r.arg().tuple().back().get<AxisType>(); }

// A tiny interpreter for the kernel ASTs (END/STORE/INDEX/REDUCE/RANGE/ALU over 1-D PARAMs): runs a Schedule on the
// host so the index math and fusion decisions are checked numerically against the reference evaluator.
struct KernelInterp {
  std::unordered_map<UOp, std::vector<double>> bufs;  // underlying BUFFER -> data
  std::vector<std::vector<double>*> slots;
  std::unordered_map<UOp, int64_t> env;               // RANGE -> current value

  static UOp underlying(UOp u) {
    while (u.op() == Ops::AFTER || u.op() == Ops::RESHAPE) u = u.src(0);
    return u;
  }
  std::vector<double>& buffer(const UOp& b) {
    auto it = bufs.find(b);
    if (it != bufs.end()) return it->second;
    std::vector<double> v(size_t(graft::prod(b.shape())), 0.0);
    if (auto st = host_storage(b))
      for (size_t i = 0; i < v.size(); i++) v[i] = st->get(int64_t(i));
    return bufs[b] = std::move(v);
  }
  template <class F> void loop(std::span<const UOp> rngs, size_t i, F&& body) {
    if (i == rngs.size()) { body(); return; }
    int64_t n = rngs[i].src(0).arg().as_int();
    for (int64_t v = 0; v < n; v++) env[rngs[i]] = v, loop(rngs, i + 1, body);
  }
  int64_t addr(const UOp& idx) {
    REQUIRE(idx.op() == Ops::INDEX);
    REQUIRE(idx.src(0).op() == Ops::PARAM);
    REQUIRE(idx.nsrc() == 2);
    double a = eval(idx.src(1));
    REQUIRE(std::isfinite(a));
    int64_t i = int64_t(a);
    REQUIRE(i >= 0);
    REQUIRE(i < int64_t(slots.at(size_t(idx.src(0).arg().param().slot))->size()));
    return i;
  }
  double eval(const UOp& u) {
    switch (u.op()) {
      case Ops::CONST: return u.is_invalid() ? NAN : u.arg().as_double();
      case Ops::RANGE: return double(env.at(u));
      case Ops::INDEX: return (*slots.at(size_t(u.src(0).arg().param().slot)))[size_t(addr(u))];
      case Ops::WHERE: return eval(u.src(0)) != 0 ? eval(u.src(1)) : eval(u.src(2));
      case Ops::CAST: return detail::ref::cast_value(u.src(0).dtype(), u.dtype(), eval(u.src(0)));
      case Ops::REDUCE: {
        Ops op = u.arg().tuple()[0].get<Ops>();
        double acc = op == Ops::ADD ? 0.0 : op == Ops::MUL ? 1.0 : -INFINITY;
        loop(u.src().subspan(1), 0, [&] {
          double v = eval(u.src(0));
          acc = op == Ops::ADD ? acc + v : op == Ops::MUL ? acc * v : std::max(acc, v);
        });
        return detail::ref::round_to(u.dtype(), acc);
      }
      default: {
        REQUIRE_MESSAGE(GroupOp::ALU.has(u.op()), "interp: unexpected op " << op_name(u.op()));
        std::vector<std::vector<double>> vals;
        for (const UOp& s : u.src()) vals.push_back({eval(s)});
        std::vector<const std::vector<double>*> in;
        for (auto& v : vals) in.push_back(&v);
        return detail::ref::eval_alu(u, in)[0];
      }
    }
  }
  void exec(const UOp& x) {
    if (x.op() == Ops::END) { loop(x.src().subspan(1), 0, [&] { exec(x.src(0)); }); return; }
    REQUIRE(x.op() == Ops::STORE);
    int64_t a = addr(x.src(0));
    (*slots.at(size_t(x.src(0).src(0).arg().param().slot)))[size_t(a)] = detail::ref::round_to(x.src(0).dtype(), eval(x.src(1)));
  }
  void run(const Schedule& s) {
    for (const Kernel& k : s) {
      slots.clear();
      for (const UOp& a : k.args()) slots.push_back(&buffer(underlying(a)));
      for (const UOp& st : k.sink().src()) exec(st);
    }
  }
};

// schedule + run the kernels (the test's AST interpreter, then the engine on the current device: GRAFT_DEVICE), compare
// every output with the reference evaluator
void check_numerics(const std::vector<Tensor>& ts) {
  Schedule s = schedule(ts);
  KernelInterp in;
  in.run(s);
  auto dev = engine::run(s, engine::device());
  for (size_t i = 0; i < ts.size(); i++) {
    std::vector<double> want = evaluate(ts[i].uop());
    REQUIRE(s.outputs[i]);
    const std::vector<double>& got = in.buffer(s.outputs[i]);
    REQUIRE(got.size() == want.size());
    REQUIRE(dev[i]);
    REQUIRE(dev[i]->numel == int64_t(want.size()));
    for (size_t j = 0; j < want.size(); j++) {
      CHECK(got[j] == doctest::Approx(want[j]).epsilon(1e-5));
      CHECK(dev[i]->get(int64_t(j)) == doctest::Approx(want[j]).epsilon(1e-5));
    }
  }
}
Tensor rnd(Shape s, uint64_t seed) { return Tensor::rand(std::move(s), seed) - 0.5f; }
Tensor realized(Tensor t) { return t.realize(); }
}  // namespace

TEST_CASE("schedule: elementwise a+b is one kernel") {
  Tensor a = Tensor::empty({32, 64}), b = Tensor::empty({32, 64});
  Schedule s = schedule({a + b});
  REQUIRE(s.size() == 1);
  const Kernel& k = s[0];
  CHECK(k.args().size() == 3);
  auto params = ops_of(k.sink(), Ops::PARAM);
  CHECK(params.size() == 3);
  for (const UOp& p : params) CHECK(p.shape() == Shape{2048});
  UOp st = store_of(k);
  CHECK(st.src(0).op() == Ops::INDEX);
  CHECK(st.src(0).src(0).arg().param().slot == 0);
  CHECK(st.src(1).op() == Ops::ADD);
  auto rngs = ops_of(k.sink(), Ops::RANGE);
  CHECK(rngs.size() == 2);
  for (const UOp& r : rngs) CHECK(r.arg().tuple()[0].as_int() < 2);
  CHECK(k.sink().src(0).op() == Ops::END);
}

TEST_CASE("schedule: sum over an axis is one kernel with a REDUCE range") {
  Tensor a = Tensor::empty({32, 64});
  Schedule s = schedule({a.sum(1)});
  REQUIRE(s.size() == 1);
  auto reds = ops_of(s[0].sink(), Ops::REDUCE);
  REQUIRE(reds.size() == 1);
  CHECK(reds[0].arg().tuple()[0].get<Ops>() == Ops::ADD);
  REQUIRE(reds[0].nsrc() == 2);
  CHECK(axis_of(reds[0].src(1)) == AxisType::REDUCE);
  CHECK(reds[0].src(1).src(0).arg().as_int() == 64);
  CHECK(ops_of(s[0].sink(), Ops::PARAM).size() == 2);
}

TEST_CASE("schedule: full sum to a scalar stores one element") {
  Tensor a = Tensor::empty({16, 8});
  Schedule s = schedule({a.sum()});
  REQUIRE(s.size() == 1);
  auto params = ops_of(s[0].sink(), Ops::PARAM);
  bool out1 = false;
  for (const UOp& p : params) out1 |= p.arg().param().slot == 0 && p.shape() == Shape{1};
  CHECK(out1);
  CHECK(ops_of(s[0].sink(), Ops::REDUCE).size() == 1);
}

TEST_CASE("schedule: transpose_add is one kernel") {
  Tensor a = Tensor::empty({64, 32}), b = Tensor::empty({32, 64});
  Schedule s = schedule({a.transpose() + b});
  REQUIRE(s.size() == 1);
  CHECK(ops_of(s[0].sink(), Ops::PARAM).size() == 3);
  CHECK(ops_of(s[0].sink(), Ops::RESHAPE).empty());
  CHECK(ops_of(s[0].sink(), Ops::PERMUTE).empty());
}

TEST_CASE("schedule: matmul is one kernel") {
  Tensor a = Tensor::empty({16, 32}), b = Tensor::empty({32, 8});
  Schedule s = schedule({a.matmul(b)});
  REQUIRE(s.size() == 1);
  auto reds = ops_of(s[0].sink(), Ops::REDUCE);
  REQUIRE(reds.size() == 1);
  CHECK(reds[0].src(0).op() == Ops::MUL);
  CHECK(reds[0].src(1).src(0).arg().as_int() == 32);
  for (Ops o : {Ops::RESHAPE, Ops::EXPAND, Ops::PERMUTE}) CHECK(ops_of(s[0].sink(), o).empty());
}

TEST_CASE("schedule: softmax is three kernels") {
  Tensor x = Tensor::empty({4, 8});
  Schedule s = schedule({x.softmax()});
  REQUIRE(s.size() == 3);
  // kernel 0: the row max, one REDUCE over one REDUCE-axis range of size 8
  auto r0 = ops_of(s[0].sink(), Ops::REDUCE);
  REQUIRE(r0.size() == 1);
  CHECK(r0[0].arg().tuple()[0].get<Ops>() == Ops::MAX);
  REQUIRE(r0[0].nsrc() == 2);
  CHECK(axis_of(r0[0].src(1)) == AxisType::REDUCE);
  int reduce_ranges = 0;
  for (const UOp& r : ops_of(s[0].sink(), Ops::RANGE)) reduce_ranges += axis_of(r) == AxisType::REDUCE;
  CHECK(reduce_ranges == 1);
  CHECK(s[0].args().size() == 2);
  // kernel 1: sum of exp, reads x and kernel 0's buffer
  auto r1 = ops_of(s[1].sink(), Ops::REDUCE);
  REQUIRE(r1.size() == 1);
  CHECK(r1[0].arg().tuple()[0].get<Ops>() == Ops::ADD);
  CHECK(!ops_of(s[1].sink(), Ops::EXP2).empty());
  CHECK(s[1].args().size() == 3);
  // kernel 2: elementwise, 4 buffers (out, x, max, 1/sum), no REDUCE
  CHECK(ops_of(s[2].sink(), Ops::REDUCE).empty());
  CHECK(s[2].args().size() == 4);
  CHECK(ops_of(s[2].sink(), Ops::STAGE).empty());
  // dependency order: kernel 1 reads kernel 0's output
  CHECK(s[1].args()[2].op() == Ops::AFTER);
  CHECK(s[1].args()[2].src(1) == s[0].call);
}

TEST_CASE("schedule: pad_sum is one kernel with a gated load") {
  Tensor a = Tensor::empty({16, 16});
  Schedule s = schedule({a.pad({{1, 1}, {1, 1}}).sum(1)});
  REQUIRE(s.size() == 1);
  CHECK(ops_of(s[0].sink(), Ops::PAD).empty());
  CHECK(!ops_of(s[0].sink(), Ops::WHERE).empty());
  CHECK(ops_of(s[0].sink(), Ops::REDUCE).size() == 1);
}

TEST_CASE("schedule: a fanned-out cheap elementwise value is recomputed") {
  Tensor a = Tensor::empty({32, 64});
  Tensor b = (a + 1.0f);
  Schedule s = schedule({b * b});
  CHECK(s.size() == 1);
}

TEST_CASE("schedule: relu of a matmul plus bias fuses into one kernel") {
  Tensor x = Tensor::empty({16, 64}), w = Tensor::empty({64, 32}), bias = Tensor::empty({32});
  Schedule s = schedule({(x.matmul(w) + bias).relu()});
  CHECK(s.size() == 1);
}

TEST_CASE("schedule: log_softmax and layernorm kernel counts") {
  Tensor x = Tensor::empty({8, 16});
  CHECK(schedule({x.log_softmax()}).size() == 3);
  CHECK(schedule({x.layernorm()}).size() == 3);
}

TEST_CASE("schedule: a sum and its exp fuse into one kernel") {
  Tensor a = Tensor::empty({8, 16});
  Tensor x = a.sum(1);
  CHECK(schedule({x + x.exp()}).size() == 1);
}

TEST_CASE("schedule: contiguous splits the graph into two kernels") {
  Tensor a = Tensor::empty({8, 16});
  Schedule s = schedule({((a + 1.0f).contiguous() * 2.0f)});
  CHECK(s.size() == 2);
}

TEST_CASE("schedule: two outputs give two kernels") {
  Tensor a = Tensor::empty({8, 16});
  Tensor b = a + 1.0f;
  Tensor c = b * 2.0f;
  CHECK(schedule({b, c}).size() == 2);
}

TEST_CASE("schedule: kernels compute the reference values (elementwise, reduce, movement)") {
  Tensor a = realized(rnd({6, 5}, 1)), b = realized(rnd({6, 5}, 2)), c = realized(rnd({5, 6}, 3));
  check_numerics({a + b});
  check_numerics({a.sum(1)});
  check_numerics({a.sum(0)});
  check_numerics({a.max()});
  check_numerics({c.transpose() + a});
  check_numerics({a.flip({0, 1}) * b});
  check_numerics({a.shrink({{1, 4}, {0, 3}}).exp()});
  check_numerics({a.reshape({3, 10}).sum(0)});
  check_numerics({a.reshape({30}).reshape({5, 6}) + c});
}

TEST_CASE("schedule: kernels compute the reference values (pad, matmul, softmax, layernorm)") {
  Tensor a = realized(rnd({6, 5}, 4)), w = realized(rnd({5, 7}, 5)), bias = realized(rnd({7}, 6));
  check_numerics({a.pad({{1, 2}, {2, 1}}).sum(1)});
  check_numerics({a.pad({{1, 1}, {0, 3}}) + 1.0f});
  check_numerics({a.matmul(w)});
  check_numerics({(a.matmul(w) + bias).relu()});
  check_numerics({a.softmax()});
  check_numerics({a.log_softmax()});
  check_numerics({a.layernorm()});
  Tensor x = a.sum(1);
  check_numerics({x + x.exp()});
  check_numerics({a.sum()});
  check_numerics({(a + 1.0f).contiguous() * 2.0f});
  Tensor b1 = a + 1.0f;
  check_numerics({b1, b1 * 2.0f});
}

TEST_CASE("schedule: seed kernel counts of the benchmark programs") {
  Tensor x = Tensor::empty({16, 32}), y = Tensor::empty({16, 32});
  CHECK(schedule({((x + y) * 2.0f - y).relu().exp()}).size() == 1);  // ew5
  Tensor w = Tensor::empty({32}), b = Tensor::empty({32});
  CHECK(schedule({x.layernorm() * w + b}).size() == 3);  // layernorm with affine params
  Tensor xi = Tensor::empty({8, 48}), w1 = Tensor::empty({48, 16}), b1 = Tensor::empty({16});
  Tensor w2 = Tensor::empty({16, 10}), b2 = Tensor::empty({10});
  CHECK(schedule({((xi.matmul(w1) + b1).relu()).matmul(w2) + b2}).size() == 2);  // mlp
  Tensor img = Tensor::empty({1, 3, 8, 8}), k = Tensor::empty({4, 3, 3, 3});
  CHECK(schedule({img.conv2d(k)}).size() == 1);  // conv2d
  Tensor q = Tensor::empty({1, 2, 8, 4}), kk = Tensor::empty({1, 2, 8, 4}), v = Tensor::empty({1, 2, 8, 4});
  CHECK(schedule({(q.matmul(kk.transpose(-2, -1)) * 0.5f).softmax(-1).matmul(v)}).size() == 4);  // attention
  CHECK(schedule({Tensor::empty({64}).cumsum()}).size() == 1);  // cumsum
}

TEST_CASE("schedule: seed kernel counts of the one-liners") {
  Tensor a = Tensor::empty({8, 16});
  CHECK(schedule({a - (a * 2.0f).sum(1, true)}).size() == 2);
  Tensor sq = Tensor::empty({16, 16}) * 3.0f;
  CHECK(schedule({sq.sum(0) + sq.sum(1)}).size() == 1);  // (a*3) reduced along two different axes
  CHECK(schedule({(a + 1.0f).reshape({8, 16, 1}).expand({8, 16, 64}) * 2.0f}).size() == 1);
  CHECK(schedule({a / a.mean(-1, true)}).size() == 2);
  Tensor m = Tensor::empty({16, 16});
  CHECK(schedule({((m.matmul(m)).relu() + m).contiguous().softmax()}).size() == 4);
}

TEST_CASE("schedule: kernels compute the reference values (conv2d, attention, cumsum, mlp)") {
  Tensor img = realized(rnd({1, 2, 5, 5}, 7)), k = realized(rnd({3, 2, 3, 3}, 8));
  check_numerics({img.conv2d(k)});
  Tensor q = realized(rnd({1, 2, 4, 3}, 9)), kk = realized(rnd({1, 2, 4, 3}, 10)), v = realized(rnd({1, 2, 4, 3}, 11));
  check_numerics({(q.matmul(kk.transpose(-2, -1)) * 0.5f).softmax(-1).matmul(v)});
  check_numerics({realized(rnd({20}, 12)).cumsum()});
  Tensor xi = realized(rnd({4, 6}, 13)), w1 = realized(rnd({6, 5}, 14)), b1 = realized(rnd({5}, 15));
  Tensor w2 = realized(rnd({5, 3}, 16)), b2 = realized(rnd({3}, 17));
  check_numerics({((xi.matmul(w1) + b1).relu()).matmul(w2) + b2});
  Tensor x = realized(rnd({4, 6}, 18)), y = realized(rnd({4, 6}, 19));
  check_numerics({((x + y) * 2.0f - y).relu().exp()});
  Tensor sq = realized(rnd({5, 5}, 20)) * 3.0f;
  check_numerics({sq.sum(0) + sq.sum(1)});
  check_numerics({x / x.mean(-1, true)});
}

TEST_CASE("schedule: a reduce over a broadcast axis becomes a multiply") {
  Tensor a = realized(rnd({4, 6}, 21));
  Tensor t = a.reshape({4, 6, 1}).expand({4, 6, 5}).sum(2);
  Schedule s = schedule({t});
  REQUIRE(s.size() == 1);
  CHECK(ops_of(s[0].sink(), Ops::REDUCE).empty());
  check_numerics({t});
  Tensor m = a.reshape({4, 6, 1}).expand({4, 6, 5}).max(2);
  CHECK(ops_of(schedule({m})[0].sink(), Ops::REDUCE).empty());
  check_numerics({m});
}

TEST_CASE("schedule: size-1 output ranges fold away") {
  Tensor a = realized(rnd({4, 6}, 22));
  Schedule s = schedule({a.sum()});
  REQUIRE(s.size() == 1);
  CHECK(ops_of(s[0].sink(), Ops::END).empty());
  CHECK(s[0].sink().src(0).op() == Ops::STORE);
  for (const UOp& r : ops_of(s[0].sink(), Ops::RANGE)) CHECK(axis_of(r) == AxisType::REDUCE);
  check_numerics({a.sum()});
  check_numerics({a.sum(1, true)});
}

TEST_CASE("schedule: a Tensor.full input gets its own fill kernel first") {
  // Tensor::full builds AFTER(buf.reshape(shape), STORE(...)); prepare moves the RESHAPE above the AFTER, so the
  // fill is its own kernel and the add reads its buffer (no seed count for this one: tinygrad's ones() is lazy)
  Tensor a = realized(rnd({4, 4}, 23));
  Tensor t = Tensor::ones({4, 4}) + a;
  Schedule s = schedule({t});
  REQUIRE(s.size() == 2);
  CHECK(s[0].args().size() == 1);
  CHECK(s[1].args().size() == 3);
  CHECK(s[1].args()[1].op() == Ops::AFTER);
  CHECK(s[1].args()[1].src(1) == s[0].call);
  check_numerics({t});
}

TEST_CASE("rangeify reshape index math: grouped unflattening gives the values of the flat div/mod form") {
  // random reshapes built from groups of equal size (each side a random factorisation with size-1 dims sprinkled in),
  // indexed by RANGEs and by bounded sums of RANGEs; every range assignment is evaluated on both forms
  std::mt19937 rng(11);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto factor = [&](int64_t n, Shape& out) {
    while (n > 1) {
      std::vector<int64_t> divs;
      for (int64_t d = 2; d <= n; d++)
        if (n % d == 0) divs.push_back(d);
      int64_t d = pick(0, 2) == 0 ? n : divs[size_t(pick(0, int(divs.size()) - 1))];
      out.push_back(d);
      n /= d;
      if (pick(0, 4) == 0) out.push_back(1);
    }
  };
  const int64_t sizes[] = {1, 2, 3, 4, 6, 8, 12};
  int checked = 0, grouped = 0;
  for (int t = 0; t < 200; t++) {
    Shape in, out;
    for (int g = pick(1, 3); g-- > 0;) {
      int64_t n = sizes[pick(0, 6)];
      factor(n, in), factor(n, out);
      if (n == 1) (pick(0, 1) ? in : out).push_back(1);
    }
    if (in.empty()) in.push_back(1);
    if (out.empty()) out.push_back(1);
    CAPTURE(t);
    std::vector<UOp> idx, rngs;
    int64_t id = 0;
    for (int64_t d : out) {
      if (d == 1) { idx.push_back(UOp::const_int(0)); continue; }
      if (d % 2 == 0 && d > 2 && pick(0, 1)) {  // a bounded composite index: r_a*2 + r_b over (d/2, 2)
        UOp a = UOp::range(d / 2, id++), b = UOp::range(2, id++);
        rngs.push_back(a), rngs.push_back(b);
        idx.push_back(a * 2 + b);
        continue;
      }
      rngs.push_back(UOp::range(d, id++));
      idx.push_back(rngs.back());
    }
    std::vector<UOp> got = sched::apply_reshape(in, out, idx);
    std::vector<UOp> want = sched::apply_reshape_flat(in, out, sched::simplify_all(idx));
    REQUIRE(got.size() == in.size());
    REQUIRE(want.size() == in.size());
    grouped += got != want;
    int64_t total = 1;
    for (const UOp& r : rngs) total *= r.src(0).arg().as_int();
    for (int64_t flat = 0; flat < total; flat++) {
      std::unordered_map<UOp, UOp> at;
      int64_t rest = flat;
      for (const UOp& r : rngs) {
        int64_t n = r.src(0).arg().as_int();
        at.emplace(r, UOp::const_int(rest % n));
        rest /= n;
      }
      for (size_t j = 0; j < in.size(); j++) {
        UOp g = got[j].substitute(at).simplify(), w = want[j].substitute(at).simplify();
        REQUIRE(g.is_const());
        REQUIRE(w.is_const());
        CHECK(g.arg().as_int() == w.arg().as_int());
        CHECK(g.arg().as_int() >= 0);
        CHECK(g.arg().as_int() < in[j]);
      }
      checked++;
    }
  }
  CHECK(checked > 1000);
  CHECK(grouped > 0);  // some results differ in form from the flat path and still agree in value
}

// A merge of distinct RANGEs into one dim is built without a simplifying rewrite, in symbolic's commutative order: the
// node must be the one the rewrite makes of the plain sum (idx[n-1] + idx[n-2]*s + ...), and a fixed point of it.
TEST_CASE("rangeify reshape index math: a merge of distinct ranges is built as the simplifier's node") {
  uint64_t seed = 7;
  auto pick = [&](int lo, int hi) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return lo + int((seed >> 33) % uint64_t(hi - lo + 1));
  };
  int merges = 0;
  for (int t = 0; t < 500; t++) {
    Shape out, in;
    std::vector<UOp> idx;
    for (int k = pick(1, 6); k-- > 0;) {
      if (!idx.empty() && idx.back().op() == Ops::RANGE && pick(0, 5) == 0) {  // the same range twice: no shortcut
        out.push_back(out.back()), idx.push_back(idx.back());
        continue;
      }
      int64_t d = pick(0, 3) == 0 ? 1 : pick(2, 40);
      out.push_back(d);
      idx.push_back(d == 1 ? UOp::const_int(0) : UOp::range(d, int64_t(out.size()) + 10 * pick(0, 3)));
    }
    for (int k = pick(0, 2); k-- > 0;) in.push_back(1);
    in.push_back(graft::prod(out));
    for (int k = pick(0, 1); k-- > 0;) in.push_back(1);
    CAPTURE(t);
    UOp plain;  // the sum as tinygrad writes it, before simplification
    int64_t acc = 1;
    for (size_t k = out.size(); k-- > 0;) {
      if (out[k] == 1) continue;
      UOp term = acc == 1 ? idx[k] : idx[k] * acc;
      plain = plain ? plain + term : term;
      acc *= out[k];
    }
    std::vector<UOp> got = sched::apply_reshape(in, out, idx);
    REQUIRE(got.size() == in.size());
    for (size_t j = 0; j < in.size(); j++) {
      if (in[j] != graft::prod(out) || in[j] == 1) continue;  // the unit dims around the merged one index 0
      CHECK(got[j] == sched::simplify_index(plain));
      CHECK(sched::simplify_index(got[j]) == got[j]);
      merges += plain.op() == Ops::ADD;
    }
  }
  CHECK(merges > 100);
}

TEST_CASE("rangeify reshape index math: an index without a proven bound takes tinygrad's flat path") {
  UOp v = UOp::variable("reshape_v", 0, 100);  // may leave the output dim of 6
  std::vector<UOp> idx{v, UOp::range(4, 0)};
  Shape in{24}, out{6, 4};
  CHECK(sched::apply_reshape(in, out, idx) == sched::apply_reshape_flat(in, out, sched::simplify_all(idx)));
  std::vector<UOp> simple{UOp::range(6, 1), UOp::range(4, 0)};
  CHECK(sched::simplify_all(simple) == simple);  // ranges and int constants are already simplified
}

TEST_CASE("rangeify index simplification: the no-rewrite shortcut gives the rewrite's nodes") {
  // simple indices (ranges over ends above 1, int constants) and unit ranges skip the rewrite: each must come out
  // as the node simplify_index makes of it
  std::vector<UOp> xs{UOp::range(1, 0), UOp::range(5, 1), UOp::const_int(0), UOp::const_int(7), UOp::range(1, 2, AxisType::REDUCE)};
  std::vector<UOp> got = sched::simplify_all(xs);
  REQUIRE(got.size() == xs.size());
  for (size_t i = 0; i < xs.size(); i++) {
    CAPTURE(i);
    CHECK(got[i] == sched::simplify_index(xs[i]));
  }
  CHECK(got[0] == UOp::const_int(0));
  CHECK(got[0].dtype() == xs[0].dtype());
  // one index that needs the rewrite sends all of them through it
  std::vector<UOp> mixed{UOp::range(1, 3), UOp::range(4, 4) + UOp::range(1, 5)};
  std::vector<UOp> m = sched::simplify_all(mixed);
  CHECK(m[0] == sched::simplify_index(mixed[0]));
  CHECK(m[1] == UOp::range(4, 4));
}

TEST_CASE("rangeify open ranges: union of the sources' minus the ranges a REDUCE or END closes") {
  UOp r0 = UOp::range(4, 0), r1 = UOp::range(3, 1), r2 = UOp::range(5, 2, AxisType::REDUCE);
  auto sorted = [](std::vector<UOp> v) { std::sort(v.begin(), v.end(), UOp::AddressLess{}); return v; };
  UOp a = r0 * 2, b = a + r1, c = b + r2;  // a keeps its source's set, b and c grow it
  UOp red = UOp::make(Ops::REDUCE, dtypes::weakint, {c, r2}, Arg{Arg(Ops::ADD), Arg(int64_t(0))});
  UOp top = red + a;  // r2 closed below, a's set is a subset of red's
  sched::RangeCache rc;
  auto get = [&](const UOp& u) {
    std::vector<UOp> v;
    for (const UOp& r : rc.get(u)) v.push_back(r);
    return sorted(v);
  };
  CHECK(get(top) == sorted({r0, r1}));  // one walk fills every node below
  CHECK(get(a) == std::vector<UOp>{r0});
  CHECK(get(b) == sorted({r0, r1}));
  CHECK(get(c) == sorted({r0, r1, r2}));
  CHECK(get(red) == sorted({r0, r1}));
  CHECK(get(UOp::const_int(3)).empty());
  UOp end = UOp::make(Ops::END, dtypes::void_, {c, r0, r1, r2});
  CHECK(get(end).empty());
  CHECK(get(r1 * 0 + UOp::range(2, 3)) == sorted({r1, UOp::range(2, 3)}));  // two disjoint sets: a new set
  // the sets share one array: earlier sets read the same after later ones were added
  CHECK(get(c) == sorted({r0, r1, r2}));
  CHECK(get(b) == sorted({r0, r1}));
  CHECK(rc.get(c).contains(r2));
  CHECK(!rc.get(red).contains(r2));
  CHECK(!rc.get(red).contains(a));  // not a range at all
}

TEST_CASE("rangeify open ranges: sets of more than 64 ranges keep every range, also in the sets made before") {
  sched::RangeCache rc;
  std::vector<UOp> rs;
  UOp sum = UOp::range(2, 1000);
  rs.push_back(sum);
  CHECK(rc.get(sum).contains(sum));  // a set made while one word per set was enough
  for (int64_t i = 1; i < 150; i++) {
    rs.push_back(UOp::range(2 + i % 5, 1000 + i));
    sum = sum + rs.back();
  }
  size_t n = 0;
  for (const UOp& r : rc.get(sum)) {
    CHECK(std::find(rs.begin(), rs.end(), r) != rs.end());
    n++;
  }
  CHECK(n == rs.size());
  for (const UOp& r : rs) CHECK(rc.get(sum).contains(r));
  CHECK(rc.get(rs[0]).contains(rs[0]));   // the first set, after the sets were widened twice
  CHECK(!rc.get(rs[0]).contains(rs[1]));
  UOp end = UOp::make(Ops::END, dtypes::void_, {sum, rs[0], rs[70], rs[149]});  // closes three, one per word
  size_t left = 0;
  for (const UOp& r : rc.get(end)) {
    CHECK((r != rs[0] && r != rs[70] && r != rs[149]));
    left++;
  }
  CHECK(left == rs.size() - 3);
}

TEST_CASE("map_graph: a pass visits only the subgraphs that hold an op it touches") {
  UOp a = UOp::variable("mg_a", 0, 9), b = UOp::variable("mg_b", 0, 9);
  UOp lhs = a * 3, rhs = maximum(b, UOp::const_int(2));
  UOp root = UOp::sink({lhs + rhs, rhs});
  std::vector<Ops> seen;
  auto bump_max = [&](const UOp& x) -> UOp {  // MAX(v, 2) -> MAX(v, 5); records every visit
    seen.push_back(x.op());
    return x.op() == Ops::MAX ? maximum(x.src(0), UOp::const_int(5)) : x;
  };
  UOp all = sched::map_graph(root, bump_max);
  UOp want_rhs = maximum(b, UOp::const_int(5));
  CHECK(all == UOp::sink({lhs + want_rhs, want_rhs}));
  size_t visits_all = seen.size();
  seen.clear();
  UOp pruned = sched::map_graph(root, bump_max, OpSet{Ops::MAX});
  CHECK(pruned == all);               // the same result
  CHECK(seen.size() < visits_all);    // without visiting a * 3 and its sources
  CHECK(std::find(seen.begin(), seen.end(), Ops::MUL) == seen.end());
  seen.clear();
  CHECK(sched::map_graph(root, bump_max, OpSet{Ops::CAST}) == root);  // nothing to touch: no visit at all
  CHECK(seen.empty());
}

// split_kernels renumbers ranges and makes PARAMs without tags when the kernel's graph holds no PARAM; a kernel that
// reads a PARAM already takes the tagged path, where a made PARAM equal to the one it reads stays apart from it
TEST_CASE("split: a kernel reading a PARAM equal to the one made for its destination keeps both apart") {
  UOp buf = new_buffer_uop(16, dtypes::float32);
  ParamArg pa = buf.arg().param();
  pa.slot = 0;  // exactly the PARAM the split makes for `buf` (slot 0: the STORE destination)
  UOp in = UOp::make(Ops::PARAM, dtypes::float32, {UOp::shape_arg({16})}, Arg(pa));
  for (bool reads_param : {true, false}) {
    UOp src = reads_param ? in : new_buffer_uop(16, dtypes::float32);
    UOp r = UOp::range(16, sched::kFirstRangeNumber + 7), r2 = UOp::range(4, sched::kFirstRangeNumber + 3);
    UOp val = sched::make_index(src, std::vector<UOp>{r}) + sched::make_index(src, std::vector<UOp>{r2 * 4});
    UOp st = sched::make_end(sched::make_store(sched::make_index(buf, std::vector<UOp>{r}), val), std::vector<UOp>{r, r2});
    UOp g = sched::split_kernels(UOp::sink({sched::make_after(buf, st)}));
    std::vector<UOp> calls = ops_of(g, Ops::CALL);
    REQUIRE(calls.size() == 1);
    const UOp& call = calls[0];
    REQUIRE(call.nsrc() == 3);  // body, destination, source
    CHECK(call.src(1) == buf);
    CHECK(call.src(2) == src);
    std::set<int64_t> read_slots, range_numbers;
    for (const UOp& u : call.src(0).toposort()) {
      CHECK(u.tag().is_none());
      if (u.op() == Ops::RANGE) range_numbers.insert(u.arg().tuple()[0].as_int());
      if (u.op() == Ops::INDEX && u.src(0).op() == Ops::PARAM) read_slots.insert(u.src(0).arg().param().slot);
    }
    CHECK(read_slots == std::set<int64_t>{0, 1});
    CHECK(range_numbers == std::set<int64_t>{0, 1});
  }
}

// A broadcasting ALU's sources are indexed directly (broadcast_index), without building the expands that Tensor.expand
// would (RESHAPE, EXPAND, PERMUTE) and pushing the index through each: the INDEX must be the node those pushes end at.
TEST_CASE("rangeify: a broadcast source's index is the one the expand's movement ops give") {
  struct Case { Shape in, out; };
  for (const Case& c : {Case{{5}, {3, 5}}, Case{{4, 1, 6}, {4, 3, 6}}, Case{{1, 5}, {2, 1, 5}}, Case{{2, 1, 1, 3}, {7, 2, 5, 1, 3}},
                        Case{{1, 1}, {4, 5}}, Case{{3, 1}, {3, 1}}, Case{{1}, {6}}}) {
    CAPTURE(shape_str(c.in));
    CAPTURE(shape_str(c.out));
    UOp buf = new_buffer_uop(graft::prod(c.in), dtypes::float32);
    UOp src = UOp::make(Ops::RESHAPE, buf.dtype(), {buf, UOp::shape_arg(c.in)});
    for (bool plain : {true, false}) {  // RANGE indices, and index expressions (the reshape's other paths)
      std::vector<UOp> idx;
      for (size_t i = 0; i < c.out.size(); i++)
        idx.push_back(plain ? UOp::range(c.out[i], int64_t(100 + i)) : floordiv(UOp::range(2 * c.out[i], int64_t(100 + i)), 2));
      UOp direct = sched::broadcast_index(src, c.out, idx);
      // the long way: the expand as Tensor.expand builds it, its INDEX pushed by the migration rules
      UOp want = graph_rewrite(sched::make_index(sched::expand_to(src, c.out), idx), sched::pm_range_migration(), {.bottom_up = true});
      CHECK(graph_rewrite(direct, sched::pm_range_migration(), {.bottom_up = true}) == want);
    }
  }
}
