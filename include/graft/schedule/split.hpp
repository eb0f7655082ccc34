// split_kernels (seed rangeify2.py `split_store` / `pm_split_graph`): each STORE/END of the kernel graph becomes
// `CALL(SINK(body), buffers...)`. Inside the body every GLOBAL BUFFER/PARAM/AFTER becomes a 1-D PARAM(slot) (one slot
// per underlying buffer; an AFTER takes its buffer's slot and stays the call argument so the dependency is kept),
// the INDEX migration rules fold the remaining RESHAPEs into flat indices, and RANGEs are renumbered per kernel in
// visit order. Slot 0 is the STORE destination, then inputs in discovery order.
// Variables (0-d BUFFERs in the ALU addrspace; schedule() has moved bound values to Schedule::var_vals) become
// scalar ALU PARAMs numbered among the kernel's variables (slot = variable index); the call passes the variables
// after the buffers, so a kernel's code does not depend on the values.
// Not here (yet): NOOP stores (STORE(a, a), Invalid values), symbolic max shapes, MSTACK/MSELECT.
#pragma once
#include "graft/schedule/rangeify.hpp"

namespace graft::sched {

struct SplitCtx {
  std::vector<UOp> call_args;
  std::vector<UOp> buffers;  // the underlying buffer of each slot (a kernel has few: a linear search, no hashing)
  std::vector<UOp> vars;  // Variables (0-d ALU BUFFERs), by variable slot
  int64_t range_number = -1;
  // The rules must leave what they made (the driver visits results again). A kernel whose graph holds no PARAM and
  // whose ranges come from rangeify (numbered from kFirstRangeNumber) knows them apart from its own nodes: made PARAMs
  // are listed, renumbered ranges are below kFirstRangeNumber. Otherwise (a PARAM in the input could be hash-consed
  // with a made one) they are tagged, as tinygrad does, and the tags are removed afterwards (perf: that removal
  // rebuilt every kernel body a second time, ~5 % of scheduling).
  bool tagged = false;
  detail::NodeSet made;
  Arg tag() const { return tagged ? Arg(true) : Arg(); }  // of what the rules make
  bool is_made(const UOp& u) const { return tagged ? !u.tag().is_none() : made.contains(u.node()); }
  bool is_renumbered(const UOp& range) const {
    return tagged ? !range.tag().is_none() : range.arg().tuple()[0].as_int() < kFirstRangeNumber;
  }
  UOp param(DType dt, std::span<const int64_t> shape, ParamArg p) {
    UOp u = UOp::make(Ops::PARAM, dt, {UOp::shape_arg(shape)}, Arg(std::move(p)), tag());
    if (!tagged) made.insert(u.node());  // kept alive by the rewrite that made it
    return u;
  }
};

// a variable inside a kernel body -> ALU PARAM(slot = its index among the kernel's variables)
inline UOp split_var(SplitCtx& ctx, const UOp& var) {
  size_t i = size_t(std::find(ctx.vars.begin(), ctx.vars.end(), var) - ctx.vars.begin());
  if (i == ctx.vars.size()) ctx.vars.push_back(var);
  ParamArg p = var.arg().param();
  p.slot = int64_t(i);
  return ctx.param(var.dtype(), {}, std::move(p));
}

inline UOp split_buffer(SplitCtx& ctx, const UOp& u) {
  if (ctx.is_made(u)) return UOp();
  if (u.is_variable()) return split_var(ctx, u);
  UOp b = u;
  while (b.op() == Ops::AFTER) b = b.src(0);
  if (!b.arg().is_param() || b.arg().param().addrspace != AddrSpace::GLOBAL) return UOp();
  int64_t slot = std::find(ctx.buffers.begin(), ctx.buffers.end(), b) - ctx.buffers.begin();
  if (size_t(slot) < ctx.buffers.size()) {
    if (u.op() == Ops::AFTER) ctx.call_args[size_t(slot)] = u;
  } else {
    ctx.buffers.push_back(b);
    ctx.call_args.push_back(u);
  }
  ParamArg p = b.arg().param();
  p.slot = slot;
  DType dt = p.dtype;
  const int64_t numel = graft::prod(b.shape());
  return ctx.param(dt, std::span<const int64_t>(&numel, 1), std::move(p));
}

template <class = void> const PatternMatcher& pm_split_graph() {
  static const PatternMatcher pm{
      rule(pat::ops<OpSet{Ops::PARAM, Ops::AFTER, Ops::BUFFER}>().template named<"u">(),
           [](const auto& m, SplitCtx& ctx) { return split_buffer(ctx, m["u"]); }),
      rule(pat::op<Ops::RANGE>().template named<"u">(), [](const auto& m, SplitCtx& ctx) -> UOp {
        const UOp& u = m["u"];
        if (ctx.is_renumbered(u)) return UOp();
        return u.replace({.arg = Arg{Arg(++ctx.range_number), u.arg().tuple().back()}, .tag = ctx.tag()});
      }),
  };
  static const PatternMatcher both = pm_range_migration() + pm;
  return both;
}

template <class = void> UOp split_store(const UOp& x) {
  SplitCtx ctx;
  ctx.tagged = x.slice_ops().has(Ops::PARAM);
  UOp body = graph_rewrite(x, pm_split_graph(), ctx, {.bottom_up = true});
  if (ctx.tagged) body = remove_all_tags(body);
  std::vector<UOp> s{UOp::sink({body})};
  s.insert(s.end(), ctx.call_args.begin(), ctx.call_args.end());
  s.insert(s.end(), ctx.vars.begin(), ctx.vars.end());
  return UOp::make(Ops::CALL, dtypes::void_, s);
}

template <class = void> const PatternMatcher& pm_split_kernels() {
  static const PatternMatcher pm{
      rule(pat::ops<OpSet{Ops::STORE, Ops::END}>().template named<"x">(), [](const auto& m) { return split_store(m["x"]); }),
  };
  return pm;
}

template <class = void> UOp split_kernels(const UOp& tsink) { return graph_rewrite(tsink, pm_split_kernels(), {.bottom_up = true}); }

}  // namespace graft::sched
