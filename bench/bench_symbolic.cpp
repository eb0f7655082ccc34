// Symbolic simplification benchmarks: the workloads of reference/tinygrad_core.md §9.1, built from the same
// deterministic generator as bench/tinygrad_symbolic.py (an LCG shared by both), so graft and tinygrad rewrite the
// same graphs. Every timed iteration rewrites a freshly built graph (new variable names / range ids / constants), so
// per-node caches are cold, like tinygrad's measurements. Graph construction is outside the timed region.
// Counters: n_in (distinct input nodes), n_out, rewrites (top-level rule results that returned a new node),
// in_nodes/s and rewrites/s (per CPU second of the rewrite); ms_median / ms_min: per-iteration CPU times of the rewrite
// (iteration_times.hpp; tinygrad_symbolic.py reports its minimum over runs).
// Modes: rule set `symbolic` (UOp::simplify / graph_rewrite(x, symbolic())) as in §9.1; BM_*_sym use sym().
#include <benchmark/benchmark.h>
#include <graft/graft.hpp>

#include "iteration_times.hpp"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

using namespace graft;

namespace {

// prefix + round + "_" + i, built by appending (GCC 12 -Wrestrict false positive on `"c" + std::string`)
std::string vname(const char* prefix, int64_t round, int64_t i) {
  std::string s(prefix);
  s += std::to_string(round);
  s += '_';
  s += std::to_string(i);
  return s;
}

// the generator shared with tinygrad_symbolic.py
struct Lcg {
  uint64_t s;
  uint64_t next() { return s = s * 6364136223846793005ull + 1442695040888963407ull; }
  int64_t below(int64_t n) { return int64_t((next() >> 33) % uint64_t(n)); }
};

UOp idx_graph(int64_t m, int64_t round) {
  std::vector<UOp> outs;
  for (int64_t i = 0; i < m; i++) {
    UOp x = UOp::variable(vname("x", round, i), 0, 1023), y = UOp::variable(vname("y", round, i), 0, 3);
    outs.push_back(floordiv(x * 4 + y, 4) % 8);
  }
  return UOp::sink(outs);
}

UOp idx_ranges_graph(int64_t m, int64_t round) {
  Lcg g{12345};
  UOp r[4];
  const int64_t ends[4] = {16, 16, 16, 16};
  for (int j = 0; j < 4; j++) r[j] = UOp::range(ends[j], round * 4 + j);
  const int64_t es[] = {2, 3, 4, 5, 8, 16};
  std::vector<UOp> outs;
  for (int64_t i = 0; i < m; i++) {
    int64_t s0 = 1 + g.below(128), s1 = 1 + g.below(128), s2 = 1 + g.below(128), k = g.below(64), d = 1 + g.below(64), e = es[g.below(6)];
    outs.push_back(floordiv(r[0] * s0 + r[1] * s1 + r[2] * s2 + r[3] + k, d) % e);
  }
  return UOp::sink(outs);
}

UOp bsum_graph(int64_t n, int64_t round) {
  std::vector<UOp> v;
  for (int j = 0; j < 16; j++) v.push_back(UOp::variable(vname("b", round, j), 0, 10));
  std::vector<UOp> level;
  for (int64_t i = 0; i < n; i++) level.push_back(v[size_t(i % 16)] * (i + 1));
  while (level.size() > 1) {
    std::vector<UOp> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2) next.push_back(level[i] + level[i + 1]);
    if (level.size() % 2) next.push_back(level.back());
    level = std::move(next);
  }
  return level[0];
}

// const_tree: leaves in [0, 1024); ops cycle ADD, MAX, XOR, MUL; a MUL whose exact product would reach 2^31 is
// replaced by XOR (Python ints never overflow, so an unbounded tree would fold to a huge bignum in tinygrad but not
// in graft's int64)
UOp const_tree_graph(int64_t n, int64_t round) {
  Lcg g{uint64_t(round) + 1};
  std::vector<std::pair<UOp, int64_t>> level;
  for (int64_t i = 0; i < n; i++) {
    int64_t v = int64_t(g.next() >> 54);
    level.emplace_back(UOp::const_int(v), v);
  }
  const Ops ops[] = {Ops::ADD, Ops::MAX, Ops::XOR, Ops::MUL};
  size_t k = 0;
  while (level.size() > 1) {
    std::vector<std::pair<UOp, int64_t>> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2) {
      Ops o = ops[k++ % 4];
      int64_t a = level[i].second, b = level[i + 1].second, r = 0;
      if (o == Ops::MUL && (__builtin_mul_overflow(a, b, &r) || r >= (int64_t(1) << 31) || r <= -(int64_t(1) << 31))) o = Ops::XOR;
      r = o == Ops::ADD ? a + b : o == Ops::MAX ? std::max(a, b) : o == Ops::XOR ? (a ^ b) : a * b;
      next.emplace_back(level[i].first.alu(o, level[i + 1].first), r);
    }
    if (level.size() % 2) next.push_back(level.back());
    level = std::move(next);
  }
  return level[0].first;
}

UOp cmp_where_graph(int64_t m, int64_t round) {
  std::vector<UOp> outs;
  for (int64_t i = 0; i < m; i++) {
    UOp x = UOp::variable(vname("cx", round, i), 0, 1023), y = UOp::variable(vname("cy", round, i), 0, 3);
    UOp s = x * 4 + y;
    outs.push_back(where(s < 16, s, floordiv(s, 4)));
  }
  return UOp::sink(outs);
}

UOp chain_graph(int64_t n, int64_t round) {
  std::vector<UOp> v;
  for (int j = 0; j < 16; j++) v.push_back(UOp::variable(vname("c", round, j), 0, 10));
  UOp e = v[0] * 1;
  for (int64_t i = 1; i < n; i++) e = e + v[size_t(i % 16)] * (i + 1);
  return e;
}

// counts rule results that replaced a node (top-level graph_rewrite only; the nested simplify() calls inside
// fold_divmod_general / uop_given_valid are not counted)
struct CountingPM {
  const PatternMatcher* pm;
  mutable size_t n = 0;
  UOp rewrite(const UOp& u, const CtxRef& ctx = {}) const {
    UOp r = pm->rewrite(u, ctx);
    if (r) n++;
    return r;
  }
};

using Gen = UOp (*)(int64_t, int64_t);

template <bool Sym> void run(benchmark::State& state, Gen gen) {
  const int64_t n = state.range(0);
  const PatternMatcher& pm = Sym ? sym() : symbolic();
  // untimed: warm the rule tables, then count nodes and rewrites on a graph of the same family (round -1)
  (void)graph_rewrite(gen(std::min<int64_t>(n, 64), -2), pm);
  UOp probe = gen(n, -1);
  CountingPM cpm{&pm};
  UOp out = graph_rewrite(probe, cpm);
  const double n_in = double(probe.toposort().size()), n_out = double(out.toposort().size()), rw = double(cpm.n);
  int64_t round = 0;
  IterationTimes times;
  for (auto _ : state) {
    state.PauseTiming();
    UOp g = gen(n, round++);
    state.ResumeTiming();
    const double t0 = IterationTimes::now();
    UOp r = graph_rewrite(g, pm);
    times.add(IterationTimes::now() - t0);
    benchmark::DoNotOptimize(r);
    state.PauseTiming();
    g = UOp(), r = UOp();  // node destruction is not timed
    state.ResumeTiming();
  }
  state.counters["n_in"] = n_in;
  state.counters["n_out"] = n_out;
  state.counters["rewrites"] = rw;
  state.counters["in_nodes/s"] = benchmark::Counter(n_in * double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["rewrites/s"] = benchmark::Counter(rw * double(state.iterations()), benchmark::Counter::kIsRate);
  times.report(state, "ms_", 1e3);
}

void BM_idx(benchmark::State& s) { run<false>(s, idx_graph); }
void BM_idx_ranges(benchmark::State& s) { run<false>(s, idx_ranges_graph); }
void BM_bsum(benchmark::State& s) { run<false>(s, bsum_graph); }
void BM_const_tree(benchmark::State& s) { run<false>(s, const_tree_graph); }
void BM_cmp_where(benchmark::State& s) { run<false>(s, cmp_where_graph); }
void BM_chain(benchmark::State& s) { run<false>(s, chain_graph); }
void BM_idx_sym(benchmark::State& s) { run<true>(s, idx_graph); }
void BM_idx_ranges_sym(benchmark::State& s) { run<true>(s, idx_ranges_graph); }

}  // namespace

BENCHMARK(BM_idx)->Arg(2000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_idx_ranges)->Arg(2000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_bsum)->Arg(4096)->Arg(32768)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_const_tree)->Arg(16384)->Arg(65536)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_cmp_where)->Arg(5000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_chain)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_idx_sym)->Arg(2000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_idx_ranges_sym)->Arg(2000)->Unit(benchmark::kMillisecond);
