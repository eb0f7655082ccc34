// map_graph: a single post-order pass over a DAG (each node once, children first) that rebuilds every node on its
// mapped sources and lets a function replace it. The cheap sibling of graph_rewrite for passes that need no fixed
// point (the scheduler's passes).
#pragma once
#include <type_traits>
#include <vector>

#include "graft/core/scratch.hpp"
#include "graft/core/uop.hpp"
#include "graft/core/uop_map.hpp"

namespace graft {

inline constexpr OpSet kAllOps = [] { OpSet s; s.lo = s.hi = ~uint64_t(0); return s; }();

// f gets the node rebuilt on its mapped sources (and, when it takes two arguments, the original node first) and
// returns its replacement (or the node itself). Iterative.
// `touches`: the ops f may change when their sources did not; a subgraph with none of them (its slice_ops) is kept
// as it is without a visit (perf: most passes change a few STOREs, STAGEs or REDUCEs, not the index math below).
template <class F> UOp map_graph(const UOp& root, F&& f, OpSet touches = kAllOps) {
  const UOp keep = root;  // keeps the original nodes alive (and their addresses unique) for `index`
  if ((keep.slice_ops() & touches).empty()) return keep;
  constexpr uint32_t kEntered = ~uint32_t(0);
  NodeMap<uint32_t> index;  // node -> its replacement's position in done (kEntered until visited); the visited set
  detail::Scratch<UOp> done_buf, ns_buf;
  std::vector<UOp>& done = *done_buf;
  std::vector<UOp>& ns = *ns_buf;
  detail::post_order(
      keep.node(),
      [&](const UOpNode* n) { return !(n->slice_ops & touches).empty() && index.try_emplace(n, kEntered).second; },
      [&](const UOpNode* n) {
        const UOp& x = UOp::borrow(n);
        ns.clear();
        for (const UOp& s : x.src()) {
          const uint32_t* i = index.find(s.node());
          ns.push_back(i ? done[*i] : s);  // not in the index: a subgraph without `touches`, kept
        }
        *index.find(n) = uint32_t(done.size());
        if constexpr (std::is_invocable_v<F&, const UOp&, const UOp&>) done.push_back(f(x, x.with_src(ns)));
        else done.push_back(f(x.with_src(ns)));
      });
  return done.back();  // the root comes last in post order
}

}  // namespace graft
