// Compile-time pattern matching (`pm`) vs the runtime UPat interpreter (`pm.dynamic()`, a port of tinygrad's
// UPat.match) on the same rule set and the same graphs. See bench/README.md for the method and the results.
//
//   BM_rewrite/<family>/<matcher>: graph_rewrite(root, pm) over a prebuilt graph; nodes/s = input nodes per second,
//                                  rewrites/s = rule results per second (both counted in a separate untimed run).
//   BM_match/<matcher>:            pm.rewrite(node) over a fixed list of nodes (no driver): matches tried per second.
#include <benchmark/benchmark.h>

#include <graft/graft.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace graft;

namespace {

// ---- the rule set: 20 rules in tinygrad's style (uop/symbolic.py symbolic_simple + constant folding) -------------
constexpr auto x = pat::var<"x">;
constexpr auto y = pat::var<"y">;
constexpr auto c = pat::var<"c">;
constexpr auto c1 = pat::cvar<"c1">;
constexpr auto c2 = pat::cvar<"c2">;

// integer constant folding with wrap-around (no signed overflow UB), only for two int CONSTs of one dtype
UOp fold(Ops op, const UOp& a, const UOp& b) {
  if (a.dtype() != b.dtype() || !a.arg().is<int64_t>() || !b.arg().is<int64_t>()) return UOp();
  uint64_t p = uint64_t(a.arg().get<int64_t>()), q = uint64_t(b.arg().get<int64_t>());
  int64_t r;
  switch (op) {
    case Ops::ADD: r = int64_t(p + q); break;
    case Ops::MUL: r = int64_t(p * q); break;
    case Ops::XOR: r = int64_t(p ^ q); break;
    case Ops::MAX: r = std::max(int64_t(p), int64_t(q)); break;
    default: return UOp();
  }
  return a.const_like(r);
}

PatternMatcher make_rules() {
  return PatternMatcher{
      // identities
      rule(x + 0, [](const auto& m) { return m[x]; }),
      rule(x * 1, [](const auto& m) { return m[x]; }),
      rule(x * 0, [](const auto& m) { return m[x].const_like(0); }),
      rule(floordiv(x, 1), [](const auto& m) { return m[x]; }),
      rule(x ^ 0, [](const auto& m) { return m[x]; }),
      // constant folding of two CONSTs
      rule(c1 + c2, [](const auto& m) { return fold(Ops::ADD, m[c1], m[c2]); }),
      rule(c1 * c2, [](const auto& m) { return fold(Ops::MUL, m[c1], m[c2]); }),
      rule(c1 ^ c2, [](const auto& m) { return fold(Ops::XOR, m[c1], m[c2]); }),
      rule(maximum(c1, c2), [](const auto& m) { return fold(Ops::MAX, m[c1], m[c2]); }),
      // two-stage folding (x op c1) op c2 -> x op (c1 op c2)
      rule((x + c1) + c2, [](const auto& m) {
        UOp k = fold(Ops::ADD, m[c1], m[c2]);
        return k ? m[x] + k : UOp();
      }),
      rule((x * c1) * c2, [](const auto& m) {
        UOp k = fold(Ops::MUL, m[c1], m[c2]);
        return k ? m[x] * k : UOp();
      }),
      // self-referencing (a repeated name is a pointer compare)
      rule(x % x, [](const auto& m) { return m[x].const_like(0); }),
      rule(where(c, x, x), [](const auto& m) { return m[x]; }),
      rule(-(-x), [](const auto& m) { return m[x]; }),
      rule(x < x, [](const auto&) { return UOp::const_bool(false); }),
      rule(x != x, [](const auto& m) { return dtypes::is_int(m[x].dtype()) ? UOp::const_bool(false) : UOp(); }),
      rule(maximum(x, x), [](const auto& m) { return m[x]; }),
      rule(x ^ x, [](const auto& m) { return m[x].const_like(0); }),
      rule(x + x, [](const auto& m) { return m[x] * 2; }),
      // a deeper, ordered pattern: (x * c1 + y) // c1 with x*c1 divisible stays as is unless y is 0..c1-1
      rule(floordiv(x * c1 + y, c1), [](const auto& m) {
        int64_t d = m[c1].arg().as_int();
        if (d <= 0 || m[y].vmin().as_int() < 0 || m[y].vmax().as_int() >= d) return UOp();
        return m[x];
      }),
  };
}
const PatternMatcher& rules_static() { static const PatternMatcher pm = make_rules(); return pm; }
const PatternMatcher& rules_dynamic() { static const PatternMatcher pm = make_rules().dynamic(); return pm; }

// ---- graph families -------------------------------------------------------------------------------------------
// bsum: balanced binary ADD tree of 2^14 terms v[i%16] * (i+1) (tinygrad bench_symbolic's bsum_N); few rules fire.
UOp build_bsum(int n) {
  std::vector<UOp> v;
  for (int i = 0; i < 16; i++) v.push_back(UOp::variable(std::string("v") += std::to_string(i), 0, 100));
  std::vector<UOp> level;
  for (int i = 0; i < n; i++) level.push_back(v[size_t(i % 16)] * (i + 1));
  while (level.size() > 1) {
    std::vector<UOp> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2) next.push_back(level[i] + level[i + 1]);
    if (level.size() % 2) next.push_back(level.back());
    level.swap(next);
  }
  return level[0];
}
// const_tree: balanced tree of 2^14 random int CONSTs joined by ADD/MAX/XOR/MUL; it folds to one CONST.
UOp build_const_tree(int n) {
  std::mt19937_64 rng(1234);
  std::vector<UOp> level;
  for (int i = 0; i < n; i++) level.push_back(UOp::const_int(int64_t(rng() % 1000)));
  const Ops ops[] = {Ops::ADD, Ops::MAX, Ops::XOR, Ops::MUL};
  while (level.size() > 1) {
    std::vector<UOp> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2) next.push_back(level[i].alu(ops[rng() % 4], level[i + 1]));
    if (level.size() % 2) next.push_back(level.back());
    level.swap(next);
  }
  return level[0];
}
// chain: left-deep ((x + c1) + c2) + ... of depth 10^5; (x+c1)+c2 folds level by level to x + sum (and x+0 fires).
UOp build_chain(int n) {
  UOp e = UOp::variable("x", 0, 1000);
  for (int i = 1; i <= n; i++) e = e + UOp::const_int(i % 7);
  return e;
}

struct Family {
  UOp root;
  size_t nodes_in = 0;
  size_t rewrites = 0;  // rule results in one graph_rewrite (counted with an instrumented matcher)
  UOp expected;
};

// wraps a matcher and counts how many results it returns (for the rewrites/s counter; not used while timing)
struct CountingRewriter {
  const PatternMatcher* pm;
  mutable size_t fired = 0;
  UOp rewrite(const UOp& u, const CtxRef& ctx) const {
    UOp r = pm->rewrite(u, ctx);
    if (r) fired++;
    return r;
  }
};

const Family& family(const std::string& name) {
  static std::map<std::string, Family> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  Family f;
  if (name == "bsum_16k") f.root = build_bsum(1 << 14);
  else if (name == "const_tree_16k") f.root = build_const_tree(1 << 14);
  else f.root = build_chain(100000);
  f.nodes_in = f.root.toposort().size();
  CountingRewriter cr{&rules_static()};
  f.expected = graph_rewrite(f.root, cr);
  f.rewrites = cr.fired;
  return cache.emplace(name, std::move(f)).first->second;
}

void BM_rewrite(benchmark::State& state, const char* fam, bool dynamic) {
  const Family& f = family(fam);
  const PatternMatcher& pm = dynamic ? rules_dynamic() : rules_static();
  // both matchers must agree before we time anything
  if (graph_rewrite(f.root, pm) != f.expected) {
    state.SkipWithError("static and dynamic matchers disagree");
    return;
  }
  for (auto _ : state) {
    UOp out = graph_rewrite(f.root, pm);
    benchmark::DoNotOptimize(out);
  }
  state.counters["nodes_in"] = double(f.nodes_in);
  state.counters["nodes/s"] = benchmark::Counter(double(f.nodes_in), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["rewrites/s"] = benchmark::Counter(double(f.rewrites), benchmark::Counter::kIsIterationInvariantRate);
}

// ---- raw matching: pm.rewrite(node) over a fixed node list ---------------------------------------------------------
// A mix of nodes that hit a rule at various depths and nodes that reach the rules of their op and fail.
const std::vector<UOp>& match_nodes() {
  static const std::vector<UOp> nodes = [] {
    std::vector<UOp> v;
    UOp a = UOp::variable("ma", 0, 50), b = UOp::variable("mb", 0, 50);
    for (int i = 0; i < 64; i++) {
      UOp k = UOp::const_int(i + 2);
      v.push_back(a + 0);                                // x + 0
      v.push_back(a * 1);                                // x * 1
      v.push_back((a + k) + 3);                          // (x + c1) + c2
      v.push_back(UOp::const_int(i) * k);                // c1 * c2
      v.push_back(where(a < k, b, b));                   // where(c, x, x)
      v.push_back(-(-(a + k)));                          // -(-x)
      v.push_back(floordiv(a * k + (b % k), k));         // (x*c1 + y) // c1
      v.push_back(a + b);                                // ADD, no rule fires
      v.push_back((a * k) + (b * k));                    // ADD, no rule fires
      v.push_back(a < b);                                // CMPLT, no rule fires
      v.push_back(maximum(a, b + k));                    // MAX, no rule fires
      v.push_back(floordiv(a + b, k));                   // FLOORDIV, no rule fires
    }
    return v;
  }();
  return nodes;
}

void BM_match(benchmark::State& state, bool dynamic) {
  const PatternMatcher& pm = dynamic ? rules_dynamic() : rules_static();
  const auto& nodes = match_nodes();
  size_t fired = 0;
  for (const UOp& u : nodes) fired += bool(pm.rewrite(u));
  for (auto _ : state)
    for (const UOp& u : nodes) {
      UOp r = pm.rewrite(u);
      benchmark::DoNotOptimize(r);
    }
  state.counters["nodes/s"] = benchmark::Counter(double(nodes.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["hit_fraction"] = double(fired) / double(nodes.size());
}

}  // namespace

BENCHMARK_CAPTURE(BM_rewrite, bsum_16k/static, "bsum_16k", false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_rewrite, bsum_16k/dynamic, "bsum_16k", true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_rewrite, const_tree_16k/static, "const_tree_16k", false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_rewrite, const_tree_16k/dynamic, "const_tree_16k", true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_rewrite, chain_100k/static, "chain_100k", false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_rewrite, chain_100k/dynamic, "chain_100k", true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_match, static, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_match, dynamic, true)->Unit(benchmark::kMicrosecond);
