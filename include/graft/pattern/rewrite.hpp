// graph_rewrite: tinygrad's unified_rewrite driver (ops.py RewriteContext), iterative with an explicit stack.
//   - default mode: a rule runs on a node AFTER its children are rewritten (post-order); results and rebuilt parents
//     go through the whole process again until nothing changes (every output node is a fixed point).
//   - {.bottom_up = true}: tinygrad's naming trap: the rule runs on a node BEFORE its children (pre-order), repeatedly
//     until it stops matching; throwing BottomUpGate from such a rule stops the descent below that node.
//   - {.walk = true}: one pass, no fixed point, no re-traversal of replacements (MLIR's walk driver).
// The memo is per call (rewrite_memo.hpp). Loop guard: tinygrad stops at a fixed stack of 250000 entries, which
// would also reject a legitimately 10^6-deep graph; here the limit grows with the number of distinct nodes placed on
// the stack, so only rewrites that cycle without building new graph (3 -> 4 -> 3) trip it, with a graft::Error.
#pragma once
#include <unordered_map>

#include "graft/core/map_graph.hpp"
#include "graft/core/scratch.hpp"
#include "graft/core/uop_map.hpp"
#include "graft/pattern/matcher.hpp"
#include "graft/pattern/rewrite_memo.hpp"
#include "graft/pattern/viz.hpp"

namespace graft {

struct RewriteOptions {
  bool bottom_up = false;    // tinygrad bottom_up=True: rules fire on a node before its children
  bool walk = false;         // single pass, no fixed point
  bool enter_calls = false;  // also rewrite the bodies of CALL/FUNCTION
  const PatternMatcher* bpm = nullptr;  // an extra pre-order matcher used together with a post-order one
  size_t stack_limit = 250000;
};

namespace detail {

inline bool is_opaque_call(const UOp& n) {
  if (n.op() == Ops::FUNCTION) return true;
  if (n.op() != Ops::CALL || n.nsrc() == 0) return false;
  Ops b = n.src(0).op();
  return b == Ops::SINK || b == Ops::PROGRAM || b == Ops::LINEAR || b == Ops::COPY || b == Ops::CUSTOM_FUNCTION;
}

// _rebuild_dtype: re-infer only when a child's dtype changed (Invalid children are ignored)
inline DType rebuild_dtype(const UOp& n, std::span<const UOp> new_src) {
  bool same = true;
  for (size_t i = 0; i < new_src.size(); i++)
    same &= n.src(i).dtype() == new_src[i].dtype() || new_src[i].base().is_invalid();
  if (same) return n.dtype();
  try {
    DType d = UOp::infer_dtype(n.op(), new_src, n.arg());
    return d == dtypes::void_ && n.dtype() != dtypes::void_ ? n.dtype() : d;
  } catch (const Error&) {
    return n.dtype();
  }
}

template <class PM, class BPM> class RewriteContext {
 public:
  RewriteContext(const PM* pm, const BPM* bpm, CtxRef ctx, const RewriteOptions& o) : pm_(pm), bpm_(bpm), ctx_(ctx), opt_(o) {}

  // No reference counting in the hot loop: the stack, the memo and the waitlist hold plain node pointers. Every node
  // they mention stays alive for the whole call: it is reachable from `root` (which the caller holds), or it is a
  // rule result / rebuilt parent (owned by keep_), or reachable from one of those.
  //
  // A node gets a stage-0 entry only when it first enters replace_ (as a placeholder), so each node is visited once
  // and only its own entries finish it: popped entries need no "already done?" probe (tinygrad re-checks every pop).
  // The exception is an opaque CALL marking its body done while the body is still pending: from then on every pop
  // re-checks (`recheck`).
  UOp unified(const UOp& root) {
    auto U = [](const N& p) -> const UOp& { return UOp::borrow(p); };
    struct Entry { N n; uint32_t stage; N new_n; };
    Scratch<Entry> stack_buf;
    std::vector<Entry>& stack = *stack_buf;
    // replace_ doubles as tinygrad's on_stack set: a null value means "placed on the stack, not finished"
    replace_.try_emplace(root.node(), nullptr);
    stack.push_back({root.node(), 0, root.node()});
    // entries waiting for a node to finish: a list per node, in insertion order, threaded through one array
    // (perf: a vector per waited-on node was a malloc each)
    struct Waiter { Entry e; uint32_t next; };
    struct WaitList { uint32_t head, tail; };
    constexpr uint32_t kNone = ~uint32_t(0);
    NodeMap<WaitList> waitlist;
    Scratch<Waiter> waiters_buf;
    std::vector<Waiter>& waiters = *waiters_buf;
    size_t waiting = 0;
    bool recheck = false;
    Scratch<N> tmp_buf;
    std::vector<N>& tmp = *tmp_buf;
    auto finish = [&](N n, N r) {
      *replace_.try_emplace(n, nullptr).first = r;  // its entry, or a new one (a node finished without a visit)
      if (waiting)
        if (WaitList* w = waitlist.find(n); w && w->head != kNone) {
          for (uint32_t i = w->head; i != kNone; i = waiters[i].next) stack.push_back(waiters[i].e), waiting--;
          w->head = w->tail = kNone;
        }
    };
    auto wait_on = [&](N x, Entry e) {
      uint32_t i = uint32_t(waiters.size());
      waiters.push_back({e, kNone});
      WaitList* w = waitlist.try_emplace(x, {kNone, kNone}).first;
      if (w->head == kNone) w->head = i;
      else waiters[w->tail].next = i;
      w->tail = i, waiting++;
    };
    // e.n becomes whatever nx becomes: nx is visited from `stage` (0, or 1 when its sources are known finished) if
    // it is new, or is its own result at once (kFinal: no visit could change it); linked at once if it is finished,
    // waited for if it is pending
    constexpr uint32_t kFinal = ~uint32_t(0);
    auto link = [&](const Entry& e, N nx, uint32_t stage) {
      if (is_fixed_leaf(nx)) { finish(e.n, nx); return; }  // a folded constant, mostly
      auto [slot, inserted] = replace_.try_emplace(nx, nullptr);
      if (!inserted) {
        if (*slot) finish(e.n, *slot);
        else wait_on(nx, {e.n, 2, nx});
        return;
      }
      if (stage == kFinal) { *slot = nx; finish(e.n, nx); return; }
      stack.push_back({e.n, 2, nx});
      stack.push_back({nx, stage, nx});
    };
    while (!stack.empty()) {
      if (stack.size() > opt_.stack_limit + 2 * replace_.size())
        throw Error("infinite loop in graph_rewrite (stack too big): a rule set keeps rewriting without converging");
      Entry e = stack.back();
      stack.pop_back();
      if (recheck && done(e.n)) continue;
      if (e.stage == 0) {
        N new_n = e.n;
        if (bpm_) {
          N test_n = e.n;
          std::optional<NodeSet> seen;  // perf: made only when a node rewrites many times (a set per node was a
                                        // malloc per visited node)
          bool gated = false;
          try {
            for (int steps = 0; test_n; steps++) {
              if (steps >= kCycleCheckAfter && !(seen ? *seen : seen.emplace()).insert(test_n))
                throw Error("infinite loop in fixed_point_rewrite (bottom-up rules cycle)");
              new_n = test_n;
              test_n = cached_bpm(test_n);
            }
          } catch (const BottomUpGate&) {
            gated = true;
          }
          if (gated) { finish(e.n, test_n); continue; }
        }
        stack.push_back({e.n, 1, new_n});
        const UOp& nn = U(new_n);
        if (skips_body(nn)) {
          auto [slot, inserted] = replace_.try_emplace(nn.src(0).node(), nullptr);
          if (!*slot) recheck |= !inserted, *slot = nn.src(0).node();
        }
        for (size_t i = nn.nsrc(); i-- > 0;) {
          N x = nn.src(i).node();
          if (is_fixed_leaf(x)) continue;  // its own result (done() says so): no memo entry, no stack visits
          if (replace_.try_emplace(x, nullptr).second) stack.push_back({x, 0, x});
        }
      } else if (e.stage == 1) {
        const UOp& nn = U(e.new_n);
        tmp.clear();
        N missing = nullptr;
        bool same = true;
        for (const UOp& x : nn.src()) {
          N r = done(x.node());
          if (!r) { missing = x.node(); break; }
          tmp.push_back(r);
          same &= r == x.node();
        }
        if (missing) { wait_on(missing, e); continue; }
        if (same) {
          if (N f = folded(nn.op(), nn.dtype(), nn.src(), nn.arg())) { link(e, f, 0); continue; }
          UOp next;
          if (!pm_ || !(next = pm_->rewrite(nn, ctx_))) { finish(e.n, e.new_n); continue; }
          if (viz_) [[unlikely]] viz_->step(nn, next, false);
          link(e, own(std::move(next)), 0);
        } else {
          std::span<const UOp> srcs = UOp::borrow(std::span<const N>(tmp));
          DType dt = rebuild_dtype(nn, srcs);
          if (N f = folded(nn.op(), dt, srcs, nn.arg())) { link(e, f, 0); continue; }
          N nx = own(UOp::make(nn.op(), dt, srcs, nn.arg(), nn.tag()));
          // perf: the rebuilt node's sources are finished results, so its stage 0 would place none of them; without
          // a pre-order matcher or an opaque CALL (both act in stage 0) it starts at stage 1. In a pre-order-only
          // pass, one that no rule looks at is final: its visit would rebuild it unchanged (most rebuilt nodes of the
          // scheduler's bottom-up passes)
          const bool opaque = skips_body(U(nx));
          link(e, nx, !pm_ && !bpm_may_fire(nx) && !opaque ? kFinal : !bpm_ && !opaque ? 1 : 0);
        }
      } else {
        if (N r = done(e.new_n)) finish(e.n, r);
        else wait_on(e.new_n, e);
      }
    }
    // a node left waiting: a replacement contains the node it replaces, or rules rewrite in a cycle (tinygrad: KeyError
    // or its stack limit)
    N r = done(root.node());
    if (!r)
      throw Error("graph_rewrite did not converge: a rewrite result contains the node it replaces, or the rules rewrite "
                  "in a cycle (a -> b -> a)");
    return U(r);
  }

  UOp walk(const UOp& root) {
    Scratch<std::pair<N, bool>> stack_buf;
    Scratch<N> new_src_buf;
    std::vector<std::pair<N, bool>>& stack = *stack_buf;
    std::vector<N>& new_src = *new_src_buf;
    stack.push_back({root.node(), false});
    while (!stack.empty()) {
      auto [n, processed] = stack.back();
      stack.pop_back();
      if (replace_.contains(n)) continue;
      const UOp& u = UOp::borrow(n);
      if (!processed) {
        if (bpm_) {
          if (N r = cached_bpm(n)) { replace_.try_emplace(n, r); continue; }
        }
        stack.push_back({n, true});
        if (skips_body(u)) replace_.try_emplace(u.src(0).node(), u.src(0).node());
        for (size_t i = u.nsrc(); i-- > 0;)
          if (!replace_.contains(u.src(i).node())) stack.push_back({u.src(i).node(), false});
      } else {
        new_src.clear();
        bool same = true;
        for (const UOp& x : u.src()) {
          const N* r = replace_.find(x.node());
          new_src.push_back(r ? *r : x.node());
          same &= new_src.back() == x.node();
        }
        N new_n = n;
        if (!same) {
          std::span<const UOp> srcs = UOp::borrow(std::span<const N>(new_src));
          new_n = own(UOp::make(u.op(), rebuild_dtype(u, srcs), srcs, u.arg(), u.tag()));
        }
        if (pm_) {
          if (UOp r = pm_->rewrite(UOp::borrow(new_n), ctx_)) {
            if (viz_) [[unlikely]] viz_->step(UOp::borrow(new_n), r, false);
            new_n = own(std::move(r));
          }
        }
        replace_.try_emplace(n, new_n);
      }
    }
    const N* r = replace_.find(root.node());
    return r ? UOp::borrow(*r) : root;
  }

 private:
  using N = const UOpNode*;
  static constexpr int kCycleCheckAfter = 8;  // pre-order rewrites of one node before its results are tracked
  // a CALL/FUNCTION whose body this call leaves as it is (RewriteOptions::enter_calls)
  bool skips_body(const UOp& u) const { return !opt_.enter_calls && is_opaque_call(u); }
  // a node without sources whose op roots no rule, with no pre-order matcher, is a fixed point (the fold shortcut
  // is never asked about leaves). perf: such leaves never enter the memo; done() answers for them.
  bool is_fixed_leaf(N x) const {
    if constexpr (requires { pm_->has_rules_for(x->op); })
      return x->nsrc == 0 && !bpm_ && (!pm_ || !pm_->has_rules_for(x->op));
    else return false;
  }
  // the finished replacement of x, if any (walk() never stores placeholders)
  N done(N x) const {
    if (const N* r = replace_.find(x); r && *r) return *r;
    return is_fixed_leaf(x) ? x : nullptr;
  }
  N own(UOp u) {  // keep a node created during this call alive until the call ends
    N p = u.node();
    keep_->push_back(std::move(u));
    return p;
  }
  // the matcher's fold shortcut (PatternMatcher::with_fold), off while GRAFT_VIZ records the rules that fire and
  // never asked about a leaf
  [[gnu::always_inline]] N folded(Ops op, DType dt, std::span<const UOp> src, const Arg& arg) {
    if constexpr (requires { pm_->fold(); })
      if (pm_ && pm_->fold() && !viz_ && !src.empty())
        if (UOp r = pm_->fold()(op, dt, src, arg)) return own(std::move(r));
    return nullptr;
  }
  // whether the pre-order matcher could rewrite x (false: it roots no rule at x's op, or there is none)
  bool bpm_may_fire(N x) const {
    if (!bpm_) return false;
    if constexpr (requires { bpm_->has_rules_for(x->op); }) return bpm_->has_rules_for(x->op);
    else return true;
  }
  N cached_bpm(N x) {
    // perf: a node of an op that roots no pre-order rule never rewrites: no cache entry (in the scheduler's bottom-up
    // passes most nodes are ALUs, constants and ranges that no rule of the pass looks at)
    if (!bpm_may_fire(x)) return nullptr;
    if (const N* r = bpm_cache_.find(x)) return *r;
    UOp r = bpm_->rewrite(UOp::borrow(x), ctx_);
    if (r && viz_) [[unlikely]] viz_->step(UOp::borrow(x), r, true);
    N p = r ? own(std::move(r)) : nullptr;
    bpm_cache_.try_emplace(x, p);
    return p;
  }

 public:
  viz::detail::Call* viz_ = nullptr;  // GRAFT_VIZ recorder of this call, if any

 private:
  const PM* pm_;
  const BPM* bpm_;
  CtxRef ctx_;
  RewriteOptions opt_;
  RewriteMemo replace_;
  NodeMap<N> bpm_cache_;
  Scratch<UOp> keep_;  // owns every node created during the call (see unified())
};

template <class PM> UOp run_rewrite_impl(const UOp& root, const PM& pm, CtxRef ctx, const RewriteOptions& o,
                                         viz::detail::Call* viz) {
  if (o.bottom_up) {
    RewriteContext<PM, PM> rc(nullptr, &pm, ctx, o);
    rc.viz_ = viz;
    return o.walk ? rc.walk(root) : rc.unified(root);
  }
  if (o.bpm) {
    RewriteContext<PM, PatternMatcher> rc(&pm, o.bpm, ctx, o);
    rc.viz_ = viz;
    return o.walk ? rc.walk(root) : rc.unified(root);
  }
  RewriteContext<PM, PM> rc(&pm, nullptr, ctx, o);
  rc.viz_ = viz;
  return o.walk ? rc.walk(root) : rc.unified(root);
}

// `site` is graph_rewrite's caller (recorded by GRAFT_VIZ); substitute passes none and is not recorded.
template <class PM> UOp run_rewrite(const UOp& root, const PM& pm, CtxRef ctx, const RewriteOptions& o,
                                    const std::source_location* site = nullptr) {
  if (site && viz::enabled()) [[unlikely]] {
    std::string opts = o.bottom_up ? "bottom_up" : o.bpm ? "post-order + pre-order bpm" : "post-order";
    if (o.walk) opts += ", walk";
    if (o.enter_calls) opts += ", enter_calls";
    std::string rules = viz::detail::describe(&pm);
    if (o.bpm) rules += "; pre-order bpm: " + viz::detail::describe(o.bpm);
    return viz::detail::traced(root, std::move(rules), std::move(opts), *site,
                               [&](viz::detail::Call* c) { return run_rewrite_impl(root, pm, ctx, o, c); });
  }
  return run_rewrite_impl(root, pm, ctx, o, nullptr);
}

}  // namespace detail

// Any type with `UOp rewrite(const UOp&, const CtxRef&) const` can drive graph_rewrite.
template <class PM> concept Rewriter = requires(const PM& pm, const UOp& u, const CtxRef& c) {
  { pm.rewrite(u, c) } -> std::convertible_to<UOp>;
};

// `site` only feeds GRAFT_VIZ (pattern/viz.hpp); leave it defaulted.
template <Rewriter PM>
UOp graph_rewrite(const UOp& root, const PM& pm, RewriteOptions o = {},
                  std::source_location site = std::source_location::current()) {
  return detail::run_rewrite(root, pm, CtxRef{}, o, &site);
}
template <Rewriter PM, class Ctx> requires(!std::is_same_v<std::remove_cvref_t<Ctx>, RewriteOptions>)
UOp graph_rewrite(const UOp& root, const PM& pm, Ctx& ctx, RewriteOptions o = {},
                  std::source_location site = std::source_location::current()) {
  return detail::run_rewrite(root, pm, CtxRef(ctx), o, &site);
}

// substitute: replace nodes by a map, pre-order with a fixed point (a replacement's own subtree is rewritten again;
// the outermost match wins). walk=true replaces once without revisiting replacements.
namespace detail {
struct MapRewriter {
  const NodeMap<const UOpNode*>* map;  // key -> value; the caller's map keeps both alive
  UOp rewrite(const UOp& u, const CtxRef&) const {
    const UOpNode* const* v = map->find(u.node());
    return v ? UOp::borrow(*v) : UOp();
  }
};
}  // namespace detail

inline UOp UOp::substitute(const std::unordered_map<UOp, UOp>& map, bool walk) const {
  using N = const UOpNode*;
  NodeMap<N> rep(map.size());  // key -> value (the caller's map keeps both alive)
  OpSet key_ops;
  for (auto& [k, v] : map)
    if (!(k == v)) rep.try_emplace(k.node(), v.node()), key_ops.add(k.op());
  if ((slice_ops() & key_ops).empty()) return *this;  // no key in this graph (or none at all)
  // perf: when no value reaches a key, the driver's fixed point is one post-order pass: a replaced node's value has
  // nothing left to replace, and a rebuilt node is replaced at most once. The driver stays for the rest (values that
  // hold keys, walk mode, CALL/FUNCTION bodies it must not enter).
  bool closed = !walk && !slice_ops().has(Ops::CALL) && !slice_ops().has(Ops::FUNCTION);
  detail::NodeSet seen;
  for (auto& [k, v] : map) {
    if (!closed) break;
    if (!(k == v))
      detail::post_order(
          v.node(), [&](N n) { return closed && !(n->slice_ops & key_ops).empty() && seen.insert(n); },
          [&](N n) { closed &= !rep.contains(n); });
  }
  if (!closed) {
    detail::MapRewriter mr{&rep};
    return detail::run_rewrite(*this, mr, CtxRef{}, RewriteOptions{.bottom_up = true, .walk = walk});
  }
  auto lookup = [&](const UOp& n) -> UOp {
    const N* v = rep.find(n.node());
    return v ? borrow(*v) : n;
  };
  return map_graph(
      *this,
      [&](const UOp& x, const UOp& rebuilt) -> UOp {
        if (rep.contains(x.node())) return lookup(x);
        if (rebuilt == x) return x;
        DType d = detail::rebuild_dtype(x, rebuilt.src());  // a source's dtype may have changed
        return lookup(d == rebuilt.dtype() ? rebuilt : rebuilt.replace({.dtype = d}));
      },
      key_ops);
}

}  // namespace graft
