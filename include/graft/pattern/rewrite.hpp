// graph_rewrite: tinygrad's unified_rewrite driver (ops.py RewriteContext), iterative with an explicit stack.
//   - default mode: a rule runs on a node AFTER its children are rewritten (post-order); results and rebuilt parents
//     go through the whole process again until nothing changes (every output node is a fixed point).
//   - {.bottom_up = true}: tinygrad's naming trap: the rule runs on a node BEFORE its children (pre-order), repeatedly
//     until it stops matching; throwing BottomUpGate from such a rule stops the descent below that node.
//   - {.walk = true}: one pass, no fixed point, no re-traversal of replacements (MLIR's walk driver).
// The memo is per call. Loop guard: tinygrad stops at a fixed stack of 250000 entries, which would also reject a
// legitimately 10^6-deep graph; here the limit grows with the number of distinct nodes placed on the stack, so only
// rewrites that cycle without building new graph (3 -> 4 -> 3) trip it, with a graft::Error.
#pragma once
#include <unordered_map>

#include "graft/core/uop_map.hpp"
#include "graft/pattern/matcher.hpp"
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

  UOp unified(const UOp& root) {
    struct Entry { UOp n; int stage; UOp new_n; };
    std::vector<Entry> stack{{root, 0, root}};
    // replace_ doubles as tinygrad's on_stack set: an empty value means "placed on the stack, not finished"
    replace_.try_emplace(root, UOp());
    UOpMap<std::vector<Entry>> waitlist;  // nodes waiting for a source to finish
    size_t waiting = 0;
    std::vector<UOp> tmp;
    auto finish = [&](const UOp& n, const UOp& r) {
      *replace_.try_emplace(n, UOp()).first = r;
      if (waiting)
        if (auto* w = waitlist.find(n); w && !w->empty()) {
          waiting -= w->size();
          for (Entry& e : *w) stack.push_back(std::move(e));
          w->clear();
        }
    };
    auto wait_on = [&](const UOp& x, Entry e) { waitlist[x].push_back(std::move(e)), waiting++; };
    while (!stack.empty()) {
      if (stack.size() > opt_.stack_limit + 2 * replace_.size())
        throw Error("infinite loop in graph_rewrite (stack too big): a rule set keeps rewriting without converging");
      Entry e = std::move(stack.back());
      stack.pop_back();
      if (done(e.n)) continue;
      if (e.stage == 0) {
        UOp new_n = e.n;
        if (bpm_) {
          UOp test_n = e.n;
          UOpSet seen;
          bool gated = false;
          try {
            while (test_n) {
              if (!seen.insert(test_n)) throw Error("infinite loop in fixed_point_rewrite (bottom-up rules cycle)");
              new_n = test_n;
              test_n = cached_bpm(test_n);
            }
          } catch (const BottomUpGate&) {
            gated = true;
          }
          if (gated) { finish(e.n, test_n); continue; }
        }
        stack.push_back({e.n, 1, new_n});
        if (!opt_.enter_calls && is_opaque_call(new_n) && !done(new_n.src(0)))
          *replace_.try_emplace(new_n.src(0), UOp()).first = new_n.src(0);
        for (size_t i = new_n.nsrc(); i-- > 0;) {
          const UOp& x = new_n.src(i);
          if (replace_.try_emplace(x, UOp()).second) stack.push_back({x, 0, x});
        }
      } else if (e.stage == 1) {
        tmp.clear();
        const UOp* missing = nullptr;
        for (const UOp& x : e.new_n.src()) {
          const UOp* r = done(x);
          if (!r) { missing = &x; break; }
          tmp.push_back(*r);
        }
        if (missing) { wait_on(*missing, std::move(e)); continue; }
        UOp next;
        if (std::equal(tmp.begin(), tmp.end(), e.new_n.src().begin())) {
          if (!pm_ || !(next = pm_->rewrite(e.new_n, ctx_))) { finish(e.n, e.new_n); continue; }
          if (viz_) [[unlikely]] viz_->step(e.new_n, next, false);
        } else {
          next = UOp::make(e.new_n.op(), rebuild_dtype(e.new_n, tmp), tmp, e.new_n.arg(), e.new_n.tag());
        }
        stack.push_back({e.n, 2, next});
        stack.push_back({next, 0, next});
      } else {
        if (const UOp* r = done(e.new_n)) finish(e.n, UOp(*r));
        else { UOp key = e.new_n; wait_on(key, std::move(e)); }
      }
    }
    // a node left waiting means a replacement contains the node it replaces (tinygrad: KeyError)
    const UOp* r = done(root);
    if (!r) throw Error("graph_rewrite did not finish: a rewrite result contains the node it replaces");
    return *r;
  }

  UOp walk(const UOp& root) {
    std::vector<std::pair<UOp, bool>> stack{{root, false}};
    std::vector<UOp> new_src;
    while (!stack.empty()) {
      auto [n, processed] = std::move(stack.back());
      stack.pop_back();
      if (replace_.contains(n)) continue;
      if (!processed) {
        if (bpm_) {
          if (UOp r = cached_bpm(n)) { replace_.try_emplace(n, r); continue; }
        }
        stack.push_back({n, true});
        if (!opt_.enter_calls && is_opaque_call(n)) replace_.try_emplace(n.src(0), n.src(0));
        for (size_t i = n.nsrc(); i-- > 0;)
          if (!replace_.contains(n.src(i))) stack.push_back({n.src(i), false});
      } else {
        new_src.clear();
        for (const UOp& x : n.src()) {
          const UOp* r = replace_.find(x);
          new_src.push_back(r ? *r : x);
        }
        UOp new_n = std::equal(new_src.begin(), new_src.end(), n.src().begin())
                        ? n : UOp::make(n.op(), rebuild_dtype(n, new_src), new_src, n.arg(), n.tag());
        if (pm_) {
          if (UOp r = pm_->rewrite(new_n, ctx_)) {
            if (viz_) [[unlikely]] viz_->step(new_n, r, false);
            new_n = r;
          }
        }
        replace_.try_emplace(n, new_n);
      }
    }
    const UOp* r = replace_.find(root);
    return r ? *r : root;
  }

 private:
  // the finished replacement of x, if any (walk() never stores placeholders)
  const UOp* done(const UOp& x) const {
    const UOp* r = replace_.find(x);
    return r && !r->empty() ? r : nullptr;
  }
  UOp cached_bpm(const UOp& x) {
    if (const UOp* r = bpm_cache_.find(x)) return *r;
    UOp r = bpm_->rewrite(x, ctx_);
    if (r && viz_) [[unlikely]] viz_->step(x, r, true);
    bpm_cache_.try_emplace(x, r);
    return r;
  }

 public:
  viz::detail::Call* viz_ = nullptr;  // GRAFT_VIZ recorder of this call, if any

 private:
  const PM* pm_;
  const BPM* bpm_;
  CtxRef ctx_;
  RewriteOptions opt_;
  UOpMap<UOp> replace_;
  UOpMap<UOp> bpm_cache_;
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
  const std::unordered_map<UOp, UOp>* map;
  UOp rewrite(const UOp& u, const CtxRef&) const {
    auto it = map->find(u);
    return it == map->end() ? UOp() : it->second;
  }
};
}  // namespace detail

inline UOp UOp::substitute(const std::unordered_map<UOp, UOp>& map, bool walk) const {
  std::unordered_map<UOp, UOp> clean;
  for (auto& [k, v] : map)
    if (!(k == v)) clean.emplace(k, v);
  if (clean.empty()) return *this;
  detail::MapRewriter mr{&clean};
  return detail::run_rewrite(*this, mr, CtxRef{}, RewriteOptions{.bottom_up = true, .walk = walk});
}

}  // namespace graft
