// Symbolic simplification benchmarks (compare reference/tinygrad_core.md §9.1). Each iteration builds a fresh graph
// (new variable names) so per-node caches are cold, like tinygrad's measurements.
#include <benchmark/benchmark.h>
#include <graft/graft.hpp>

#include <string>
#include <vector>

using namespace graft;

// prefix + round + "_" + i, built by appending (GCC 12 -Wrestrict false positive on `"c" + std::string`)
static std::string vname(const char* prefix, int round, int i) {
  std::string s(prefix);
  s += std::to_string(round);
  s += '_';
  s += std::to_string(i);
  return s;
}

// chain_N: left-deep v0*1 + v1*2 + ... (tinygrad: N=1000 takes 7.9 s, about O(N^3))
static void BM_chain(benchmark::State& state) {
  const int n = int(state.range(0));
  int round = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<UOp> v;
    for (int i = 0; i < 16; i++) v.push_back(UOp::variable(vname("c", round, i), 0, 10));
    UOp e = v[0] * 1;
    for (int i = 1; i < n; i++) e = e + v[size_t(i % 16)] * (i + 1);
    round++;
    state.ResumeTiming();
    benchmark::DoNotOptimize(e.simplify());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_chain)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

// idx_M: SINK of M expressions ((x_i*4 + y_i)//4) % 8, x_i in [0,1023], y_i in [0,3]; result x_i % 8
static void BM_idx(benchmark::State& state) {
  const int m = int(state.range(0));
  int round = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<UOp> outs;
    for (int i = 0; i < m; i++) {
      UOp x = UOp::variable(vname("x", round, i), 0, 1023), y = UOp::variable(vname("y", round, i), 0, 3);
      outs.push_back(floordiv(x * 4 + y, 4) % 8);
    }
    UOp sink = UOp::sink(outs);
    round++;
    state.ResumeTiming();
    benchmark::DoNotOptimize(graph_rewrite(sink, symbolic()));
  }
  state.SetItemsProcessed(state.iterations() * m);
}
BENCHMARK(BM_idx)->Arg(2000)->Unit(benchmark::kMillisecond);

// const_tree_N: balanced tree of random int CONSTs with ADD/MAX/XOR/MUL; folds to one CONST
static void BM_const_tree(benchmark::State& state) {
  const int n = int(state.range(0));
  uint64_t seed = 1;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<UOp> level;
    for (int i = 0; i < n; i++) seed = seed * 6364136223846793005ull + 1442695040888963407ull, level.push_back(UOp::const_int(int64_t(seed >> 54)));
    Ops ops[] = {Ops::ADD, Ops::MAX, Ops::XOR, Ops::MUL};
    int k = 0;
    while (level.size() > 1) {
      std::vector<UOp> next;
      for (size_t i = 0; i + 1 < level.size(); i += 2) next.push_back(level[i].alu(ops[k++ % 4], level[i + 1]));
      if (level.size() % 2) next.push_back(level.back());
      level = std::move(next);
    }
    state.ResumeTiming();
    benchmark::DoNotOptimize(level[0].simplify());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_const_tree)->Arg(16384)->Unit(benchmark::kMillisecond);
