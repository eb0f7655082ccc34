// rangeify2 preparation (seed tinygrad/schedule/prepare.py + rangeify2.py `pm_lil_prepare_graph`), first cut:
//   transform_to_call-lite: every output of schedule() gets a fresh BUFFER and `AFTER(buf, STORE(buf.reshape(shape),
//   value))`; CONTIGUOUS inside the graph likewise (its consumers read `AFTER(...).reshape(shape)`); DETACH and
//   CONTIGUOUS_BACKWARD are dropped.
//   expand_broadcast: STORE sources of different shapes get an explicit expand here (RESHAPE + EXPAND +
//   PERMUTE, as Tensor.expand builds it) so one index tuple fits every source; Binary/Ternary sources get theirs when
//   rangeify first indexes the ALU (add_stages counts the consumers those expands add).
//   STORE of shape () is reshaped to (1,).
//   mop_cleanup-lite (RESHAPE chains merged, no-op RESHAPEs dropped) and movement ops under AFTER moved above it.
// Not here (yet): COPY, CALL/FUNCTION args, multi-device, size-0 folding, store hazards, movement ops in SINK/AFTER deps.
#pragma once
#include <unordered_map>
#include <vector>

#include "graft/core/map_graph.hpp"
#include "graft/core/shape.hpp"
#include "graft/core/uop.hpp"
#include "graft/core/uop_map.hpp"
#include "graft/tensor/tensor.hpp"

namespace graft::sched {

// The BUFFER (or PARAM) below a buffer view: through AFTER, BITCAST and the movement ops; a null handle otherwise.
// (The scheduler's "which buffer does this read or write", and the engine's "which buffer is this kernel argument".)
inline UOp buf_uop(UOp u) {
  while (u.op() == Ops::AFTER || u.op() == Ops::BITCAST || GroupOp::Movement.has(u.op())) u = u.src(0);
  return u.is_storage() ? u : UOp();
}

// RESHAPE unless the shape is already right
inline UOp reshape_to(const UOp& u, const Shape& s) {
  if (u.shape() == s) return u;
  return UOp::make(Ops::RESHAPE, u.dtype(), {u, UOp::shape_arg(s)});
}
// broadcast as Tensor.expand builds it
inline UOp expand_to(const UOp& u, const Shape& s) { return detail::tensor_::broadcast_uop(u, s); }
// op(first, rest...): up to 8 sources gathered as borrowed handles on the stack (perf: a heap vector per INDEX/END)
inline UOp make_with_first(Ops op, DType dt, const UOp& first, std::span<const UOp> rest, Arg arg = {}) {
  constexpr size_t kInline = 8;
  if (rest.size() < kInline) {
    const UOpNode* p[kInline];
    p[0] = first.node();
    for (size_t i = 0; i < rest.size(); i++) p[i + 1] = rest[i].node();
    return UOp::make(op, dt, UOp::borrow(std::span<const UOpNode* const>(p, rest.size() + 1)), std::move(arg));
  }
  std::vector<UOp> s{first};
  s.insert(s.end(), rest.begin(), rest.end());
  return UOp::make(op, dt, s, std::move(arg));
}
inline UOp make_index(const UOp& x, std::span<const UOp> idx) { return make_with_first(Ops::INDEX, x.dtype(), x, idx); }
inline UOp make_after(const UOp& buf, const UOp& dep) { return UOp::make(Ops::AFTER, buf.dtype(), {buf, dep}); }
inline UOp make_store(const UOp& dst, const UOp& val) { return UOp::make(Ops::STORE, dtypes::void_, {dst, val}); }
inline UOp make_end(const UOp& body, std::span<const UOp> rngs) { return make_with_first(Ops::END, dtypes::void_, body, rngs); }

using graft::kAllOps;
using graft::map_graph;

inline UOp remove_all_tags(const UOp& root) {
  return map_graph(root, [](const UOp& x) { return x.tag().is_none() ? x : x.replace({.tag = Arg()}); });
}

// buffer identity (tinygrad has_buffer_identity(after_ok=True)): PARAM/BUFFER, through RESHAPE and AFTER
inline bool has_buffer_identity(const UOp& u) {
  UOp x = u;
  while (x.op() == Ops::RESHAPE || x.op() == Ops::AFTER) x = x.src(0);
  return x.is_storage();
}

inline bool is_realized_tensor(const UOp& u) {
  UOp x = u;
  while (x.op() == Ops::RESHAPE) x = x.src(0);
  return x.is_storage();
}

// value -> AFTER(buf, STORE(buf.reshape(shape), value)) with a fresh buffer (the AFTER is flat: shape (numel,))
inline UOp store_to_new_buffer(const UOp& value) {
  const Shape& s = value.shape();
  UOp buf = new_buffer_uop(graft::prod(s), dtypes::strong(value.dtype()));
  UOp v = value.dtype() == buf.dtype() ? value : value.cast(buf.dtype());
  return make_after(buf, make_store(reshape_to(buf, s), v));
}

// An ALU that broadcasts implicitly (Binary/Ternary with sources of different shapes) gets the explicit expands of its
// sources when rangeify first indexes it (perf: expanding them in prepare_graph rebuilt the whole tensor graph above
// its leaves, ~5 % of scheduling); add_stages counts the reads those expands add.
inline constexpr OpSet kImplicitBroadcast = GroupOp::Binary | GroupOp::Ternary;
inline bool broadcasts(const UOp& x, const UOp& s) { return kImplicitBroadcast.has(x.op()) && !(s.shape() == x.shape()); }
// how many times x reads each element of s, an expand (EXPAND, or an implicit broadcast) of s to x's shape
inline int64_t broadcast_factor(const UOp& x, const UOp& s) { return graft::prod(x.shape()) / std::max<int64_t>(1, graft::prod(s.shape())); }

// x's sources expanded to the shape of x
inline std::vector<UOp> expand_sources(const UOp& x) {
  std::vector<const Shape*> shapes;
  for (const UOp& s : x.src()) shapes.push_back(&s.shape());
  Shape bs = detail::broadcast_shapes(x.op(), shapes);
  std::vector<UOp> ns;
  for (const UOp& s : x.src()) ns.push_back(expand_to(s, bs));
  return ns;
}

// STORE sources broadcast to one shape + STORE () -> (1,)
inline UOp prepare_graph(const UOp& sink) {
  return map_graph(sink, [](const UOp& x) -> UOp {
    if (x.op() != Ops::STORE) return x;
    UOp r = x;
    if (!(x.src(0).shape() == x.src(1).shape())) r = x.with_src(expand_sources(x));
    if (r.src(1).shape().empty()) r = make_store(reshape_to(r.src(0), {1}), reshape_to(r.src(1), {1}));
    return r;
  }, OpSet{Ops::STORE});
}

// Store rules on the tensor graph (tinygrad rangeify.py "store rules"), one post-order pass before lowering:
//   fix_store_hazard: a STORE whose value reads its own destination through a PERMUTE or FLIP (or through another
//     SHRINK when the destination is shrunk) would read elements it already overwrote: the value is made contiguous;
//   STORE(BITCAST(target), v) -> STORE(target, BITCAST(v));
// and after lowering (dedup_stores):
//   AFTER(AFTER(b, STORE(b, v)) = a1, STORE(a1, v)) -> a1 (the same store twice) and
//   AFTER(b, STORE(b, AFTER(b, STORE(b, v)) = a1)) -> a1 (a buffer's own current contents stored back).
inline UOp store_hazard_value(const UOp& target, const UOp& src) {
  UOp base = target;
  while (GroupOp::Movement.has(base.op())) base = base.src(0);
  OpSet unsafe = OpSet{Ops::PERMUTE, Ops::FLIP} | (target.slice_ops().has(Ops::SHRINK) ? OpSet{Ops::SHRINK} : OpSet{});
  std::unordered_map<const UOpNode*, bool> reaches;
  bool hazard = false;
  for (const UOp& x : src.toposort([](const UOp& u) { return u.op() != Ops::CONTIGUOUS; })) {
    bool r = x == base;
    for (const UOp& c : x.src())
      if (auto it = reaches.find(c.node()); it != reaches.end()) r |= it->second;
    reaches[x.node()] = r;
    if (r && unsafe.has(x.op()) && !(x == target && x.op() == Ops::SHRINK)) hazard = true;
  }
  return hazard ? UOp::make(Ops::CONTIGUOUS, src.dtype(), {src}) : src;
}

inline UOp store_rules(const UOp& root) {
  return map_graph(root, [](const UOp& x) -> UOp {
    if (x.op() == Ops::STORE) {
      UOp target = x.src(0), v = x.src(1);
      if (target.op() == Ops::BITCAST) v = UOp::make(Ops::BITCAST, target.src(0).dtype(), {v}), target = target.src(0);
      v = store_hazard_value(target, v);
      return target == x.src(0) && v == x.src(1) ? x : make_store(target, v);
    }
    return x;
  }, OpSet{Ops::STORE});
}

// after lowering (CONTIGUOUS of a buffer state is that state): a store repeated, or a buffer stored back into itself
inline UOp dedup_stores(const UOp& root) {
  auto bare = [](UOp u) {  // lowering moved RESHAPEs above AFTERs: compare buffer views without them
    while (u.op() == Ops::RESHAPE) u = u.src(0);
    return u;
  };
  auto same = [&](const UOp& a, const UOp& b) { return bare(a) == bare(b); };
  auto is_store_after = [&](const UOp& a) {  // AFTER(b, STORE(b, v))
    return a.op() == Ops::AFTER && a.src().size() == 2 && a.src(1).op() == Ops::STORE && same(a.src(1).src(0), a.src(0));
  };
  return map_graph(root, [&](const UOp& x) -> UOp {
    if (x.op() != Ops::AFTER || x.src().size() != 2 || x.src(1).op() != Ops::STORE) return x;
    UOp a1 = bare(x.src(0)), st = x.src(1);
    // AFTER(a1 = AFTER(b, STORE(b, v)), STORE(a1, v)) -> a1
    if (is_store_after(a1) && same(st.src(0), a1) && a1.src(1).src(1) == st.src(1)) return x.src(0);
    // AFTER(b, STORE(b, a1 = AFTER(b, STORE(b, v)))) -> a1
    UOp v = bare(st.src(1));
    if (same(st.src(0), x.src(0)) && is_store_after(v) && same(v.src(0), x.src(0))) return st.src(1);
    return x;
  }, OpSet{Ops::AFTER});
}

// transform_to_call-lite + prepare: the tensor graphs of `outs` -> SINK(AFTER(buf, STORE(...)), ...). Outputs that
// already are buffers add nothing; `out_bufs` gets each output's storage (nullptr handle when it was a buffer).
inline UOp prepare(const std::vector<UOp>& outs, std::vector<UOp>* out_bufs = nullptr) {
  std::vector<UOp> stores;
  auto lower = [&](const UOp& root) {
    return map_graph(root, [&](const UOp& x) -> UOp {
      if (x.op() == Ops::DETACH || x.op() == Ops::CONTIGUOUS_BACKWARD) return x.src(0);
      // mop_cleanup-lite: RESHAPE(RESHAPE(x)) -> RESHAPE(x), RESHAPE to the same shape -> x
      if (x.op() == Ops::RESHAPE) {
        UOp r = x.src(0).op() == Ops::RESHAPE ? reshape_to(x.src(0).src(0), x.shape()) : x;
        return r.op() == Ops::RESHAPE && r.src(0).shape() == r.shape() ? r.src(0) : r;
      }
      // movement ops under AFTER move above it: AFTER(mop(x), deps) -> mop(AFTER(x, deps)) (Tensor::full builds these)
      if (x.op() == Ops::AFTER && GroupOp::Movement.has(x.src(0).op())) {
        std::vector<UOp> mops;
        UOp b = x.src(0);
        while (GroupOp::Movement.has(b.op())) mops.push_back(b), b = b.src(0);
        std::vector<UOp> ns(x.src().begin(), x.src().end());
        ns[0] = b;
        UOp r = x.with_src(ns);
        for (size_t i = mops.size(); i-- > 0;) {
          std::vector<UOp> ms(mops[i].src().begin(), mops[i].src().end());
          ms[0] = r;
          r = mops[i].with_src(ms);
        }
        return r;
      }
      if (x.op() == Ops::CONTIGUOUS) {
        if (has_buffer_identity(x.src(0))) return x.src(0);  // a buffer (or its state after assigns) already is one
        return reshape_to(store_to_new_buffer(x.src(0)), x.shape());
      }
      return x;
    }, OpSet{Ops::DETACH, Ops::CONTIGUOUS_BACKWARD, Ops::RESHAPE, Ops::AFTER, Ops::CONTIGUOUS});
  };
  // one pass over all outputs, so a CONTIGUOUS they share becomes one buffer
  UOp all = dedup_stores(lower(store_rules(UOp::sink(outs))));
  // Each output that is not a buffer (or a view of one) realizes its base (the value under its RESHAPEs) in place,
  // as tinygrad tags the bases of its outputs CONTIGUOUS: outputs with the same base share one buffer, and every
  // other output that reads a base reads its buffer instead of computing it again.
  enum class Kind { realized, view, assigned, stored };
  std::vector<Kind> kinds;
  UOpSet bases;
  OpSet base_ops;
  auto strip_reshapes = [](UOp u) {
    while (u.op() == Ops::RESHAPE) u = u.src(0);
    return u;
  };
  for (const UOp& v : all.src()) {
    UOp base = strip_reshapes(v), vb = v;
    while (GroupOp::Movement.has(vb.op())) vb = vb.src(0);
    if (is_realized_tensor(v)) kinds.push_back(Kind::realized);
    // a view (movement ops) of a buffer is not copied (tinygrad test_view_does_not_realize); of an assigned buffer,
    // the assign is what runs. The tensor stays a view of the buffer.
    else if (!(vb == base) && has_buffer_identity(vb)) kinds.push_back(Kind::view);
    else if (base.op() == Ops::AFTER && has_buffer_identity(base) && graft::prod(v.shape()) == graft::prod(base.shape()))
      kinds.push_back(Kind::assigned);
    else kinds.push_back(Kind::stored), bases.insert(base), base_ops.add(base.op());
  }
  // bases are found by their original nodes; their rebuilt values are stored (a subgraph without a base's op holds
  // no base and is not visited)
  UOp realized = map_graph(all, [&](const UOp& x, const UOp& r) {
    return bases.contains(x) ? reshape_to(store_to_new_buffer(r), x.shape()) : r;
  }, base_ops);
  UOpSet emitted;
  for (size_t i = 0; i < kinds.size(); i++) {
    UOp after = realized.src(i);
    switch (kinds[i]) {
      case Kind::realized: if (out_bufs) out_bufs->push_back(UOp()); continue;
      case Kind::view:
        if (out_bufs) out_bufs->push_back(UOp());
        while (GroupOp::Movement.has(after.op())) after = after.src(0);
        if (after.op() != Ops::AFTER) continue;
        break;
      case Kind::assigned: case Kind::stored:  // the AFTER under the output's RESHAPEs
        after = strip_reshapes(after);
        if (out_bufs) out_bufs->push_back(after.src(0));
        break;
    }
    if (emitted.insert(after)) stores.push_back(after);
  }
  return prepare_graph(UOp::sink(stores));
}

}  // namespace graft::sched
