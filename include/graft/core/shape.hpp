// Shape inference for tensor-graph UOps (tinygrad `_shape`). Shapes are concrete int64 dims here; a missing shape
// (SINK, GROUP, ...) is "no shape". Computed iteratively (children first), cached per node.
#pragma once
#include <algorithm>
#include <array>
#include <numeric>
#include <optional>
#include <span>

#include "graft/core/uop.hpp"

namespace graft {

using Shape = std::vector<int64_t>;

inline std::string shape_str(std::span<const int64_t> s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); i++) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}
inline int64_t prod(std::span<const int64_t> s) { return std::accumulate(s.begin(), s.end(), int64_t(1), std::multiplies<>()); }

// the elements of a shape-like source as UOps (a SHRINK's offsets may be Variables or bound Variables)
inline std::vector<UOp> shape_arg_uops(const UOp& u) {
  if (u.op() == Ops::STACK) return {u.src().begin(), u.src().end()};
  return {u};
}

// STACK/CONST shape source -> dims
inline Shape as_shape(const UOp& u) {
  if (u.op() == Ops::CONST) return {u.arg().as_int()};
  if (u.op() != Ops::STACK) throw Error("shape source must be a CONST or STACK, got " + std::string(op_name(u.op())));
  Shape s;
  s.reserve(u.nsrc());
  for (const UOp& d : u.src()) {
    if (d.op() != Ops::CONST) throw Error("symbolic shapes are not supported (dim is " + std::string(op_name(d.op())) + ")");
    s.push_back(d.arg().as_int());
  }
  return s;
}

namespace detail {

inline Shape broadcast_shapes(Ops op, std::span<const Shape* const> shapes) {
  size_t n = 0;
  for (auto* s : shapes) n = std::max(n, s->size());
  Shape out(n, 1);
  for (auto* s : shapes)
    for (size_t i = 0; i < s->size(); i++) {
      int64_t d = (*s)[s->size() - 1 - i], &o = out[n - 1 - i];
      if (d == o || d == 1) continue;
      if (o == 1) { o = d; continue; }
      std::string msg = std::string(op_name(op)) + ": shapes do not broadcast:";
      for (auto* t : shapes) msg += ' ', msg += shape_str(*t);  // not " " + string&&: GCC 12 -O3 -Wrestrict false positive
      throw Error(msg);
    }
  return out;
}

// shape of one node given that its sources' shapes are known (sh: nullptr = no shape). Returns nullptr (no shape),
// a source's shape when the node passes it through (perf: no copy, the node keeps that source alive), or `out` filled.
inline const Shape* compute_shape(const UOp& u, const std::function<const Shape*(const UOp&)>& sh, Shape& out) {
  using enum Ops;
  Ops op = u.op();
  auto fresh = [&](Shape s) -> const Shape* { out = std::move(s); return &out; };
  auto src_shape = [&](size_t i) -> const Shape& {
    const Shape* s = sh(u.src(i));
    if (!s) throw Error(std::string(op_name(op)) + ": source " + std::to_string(i) + " (" + std::string(op_name(u.src(i).op())) + ") has no shape");
    return *s;
  };
  auto mop_err = [&](const std::string& what, const Shape& in) {
    return Error(std::string(op_name(op)) + ": " + what + " (input shape " + shape_str(in) + ")");
  };
  switch (op) {
    case IF: case BARRIER: case SINK: case REWRITE_ERROR: case ENDIF: case GROUP: case LINEAR: case PROGRAM: case SOURCE:
    case TUPLE: case FUNCTION: case CUSTOM_FUNCTION: case CUSTOM: case CUSTOMI: case INS:
      return nullptr;
    case CALL: return u.dtype() == dtypes::void_ ? nullptr : fresh({});
    case CONST: case RANGE: case SPECIAL: case GETADDR: return fresh({});
    case BUFFER: return fresh(u.nsrc() ? as_shape(u.src(0)) : Shape{});
    case PARAM: return u.nsrc() && u.src(0).op() != NOOP ? fresh(as_shape(u.src(0))) : nullptr;
    case NOOP: return u.nsrc() ? sh(u.src(0)) : nullptr;
    case STACK: {
      if (u.nsrc() == 0) return fresh({});
      Shape s{int64_t(u.nsrc())};
      const Shape* inner = sh(u.src(0));
      if (inner) s.insert(s.end(), inner->begin(), inner->end());
      return fresh(std::move(s));
    }
    case INDEX: {
      const Shape& buf = src_shape(0);
      size_t nidx = u.nsrc() - 1, dims = 0;
      if (nidx > buf.size()) throw mop_err("more indices than dims", buf);
      for (size_t i = 1; i < u.nsrc(); i++)
        if (const Shape* is = sh(u.src(i))) dims += is->size();
      Shape s;
      s.reserve(dims + buf.size() - nidx);  // perf: no allocation for a full index by scalars (the usual case)
      for (size_t i = 1; dims && i < u.nsrc(); i++)
        if (const Shape* is = sh(u.src(i))) s.insert(s.end(), is->begin(), is->end());
      s.insert(s.end(), buf.begin() + long(nidx), buf.end());
      return fresh(std::move(s));
    }
    case STAGE: {
      Shape s;
      s.reserve(u.nsrc() - 1 + src_shape(0).size());
      for (size_t i = 1; i < u.nsrc(); i++) s.push_back(u.src(i).vmax().as_int() + 1);
      const Shape& in = src_shape(0);
      s.insert(s.end(), in.begin(), in.end());
      return fresh(std::move(s));
    }
    case MSTACK: case MSELECT: case DETACH: case CONTIGUOUS: case CONTIGUOUS_BACKWARD: case AFTER: case LOAD: case COPY:
    case ALLREDUCE: case STORE: case END: case CAST:
      return sh(u.src(0));
    case BITCAST: {
      const Shape* in = sh(u.src(0));
      int a = u.src(0).dtype().itemsize(), b = u.dtype().itemsize();
      if (!in || a == b || in->empty()) return in;
      Shape s = *in;
      if ((s.back() * a) % b) throw mop_err("bitcast does not divide the last dim", *in);
      s.back() = s.back() * a / b;
      return fresh(std::move(s));
    }
    case RESHAPE: {
      const Shape& in = src_shape(0);
      Shape s = as_shape(u.src(1));
      for (int64_t d : s)
        if (d < 0) throw mop_err("negative dim in " + shape_str(s), in);
      if (prod(s) != prod(in)) throw mop_err("size mismatch reshaping to " + shape_str(s), in);
      return fresh(std::move(s));
    }
    case EXPAND: {
      const Shape& in = src_shape(0);
      Shape s = as_shape(u.src(1));  // EXPAND prepends dims
      s.insert(s.end(), in.begin(), in.end());
      return fresh(std::move(s));
    }
    case PERMUTE: {
      const Shape& in = src_shape(0);
      const ArgTuple& p = u.arg().tuple();
      if (p.size() != in.size()) throw mop_err("permutation " + u.arg().str() + " has the wrong length", in);
      std::vector<bool> used(in.size() > 64 ? in.size() : 0, false);  // perf: a bit mask up to 64 dims
      uint64_t used_mask = 0;
      auto first_use = [&](size_t i) {  // marks dim i; false if it was marked before
        bool fresh = in.size() > 64 ? !used[i] : !((used_mask >> i) & 1);
        if (in.size() > 64) used[i] = true;
        else used_mask |= uint64_t(1) << i;
        return fresh;
      };
      Shape s;
      s.reserve(p.size());
      for (const Arg& a : p) {
        int64_t i = a.as_int();
        if (i < 0 || i >= int64_t(in.size()) || !first_use(size_t(i))) throw mop_err("not a permutation: " + u.arg().str(), in);
        s.push_back(in[size_t(i)]);
      }
      return fresh(std::move(s));
    }
    case SHRINK: {  // offsets may be symbolic: every value they can take must keep the window inside
      const Shape& in = src_shape(0);
      std::vector<UOp> off = shape_arg_uops(u.src(1));
      Shape size = as_shape(u.src(2));
      if (off.size() != in.size() || size.size() != in.size()) throw mop_err("arg rank does not match", in);
      for (size_t i = 0; i < in.size(); i++) {
        int64_t lo = off[i].vmin().as_int(), hi = off[i].vmax().as_int();
        if (lo < 0 || size[i] < 0 || hi > in[i] - size[i])
          throw mop_err("bad (offset, size) (" + (lo == hi ? std::to_string(lo) : "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]") +
                            ", " + std::to_string(size[i]) + ") on axis " + std::to_string(i), in);
      }
      return fresh(std::move(size));
    }
    case PAD: {
      const Shape& in = src_shape(0);
      Shape off = as_shape(u.src(1)), size = as_shape(u.src(2));
      if (off.size() != in.size() || size.size() != in.size()) throw mop_err("arg rank does not match", in);
      for (size_t i = 0; i < in.size(); i++) {
        bool ok = op == PAD ? off[i] >= 0 && off[i] + in[i] <= size[i] : off[i] >= 0 && size[i] >= 0 && off[i] + size[i] <= in[i];
        if (!ok) throw mop_err("bad (offset, size) (" + std::to_string(off[i]) + ", " + std::to_string(size[i]) + ") on axis " + std::to_string(i), in);
      }
      return fresh(std::move(size));
    }
    case FLIP: {
      const Shape& in = src_shape(0);
      if (u.arg().tuple().size() != in.size()) throw mop_err("flip arg has the wrong length", in);
      return &in;
    }
    case REDUCE: {
      const Shape& in = src_shape(0);
      int64_t n = u.arg().tuple().at(1).as_int();
      if (n > int64_t(in.size())) throw mop_err("reducing more axes than the input has", in);
      if (u.nsrc() > 1) return &in;  // after rangeify the ranges are sources; shape passes through
      return fresh(Shape(in.begin() + n, in.end()));
    }
    default:
      if (GroupOp::ALU.has(op)) {
        // perf: up to 3 sources (every ALU op) gathered on the stack; equal shapes (the usual case) need no broadcast
        std::array<const Shape*, 3> few;
        std::vector<const Shape*> many(u.nsrc() > 3 ? u.nsrc() : 0);
        const Shape** shapes = u.nsrc() > 3 ? many.data() : few.data();
        size_t n = 0;
        bool same = true;
        for (const UOp& s : u.src()) {
          const Shape* p = sh(s);
          if (!p) continue;
          same &= n == 0 || *p == *shapes[0];
          shapes[n++] = p;
        }
        if (n == 0) return nullptr;
        if (same) return shapes[0];
        return fresh(broadcast_shapes(op, std::span<const Shape* const>(shapes, n)));
      }
      return u.nsrc() ? sh(u.src(0)) : nullptr;
  }
}

inline void fill_shape(const UOp& x) {
  NodeCaches& xc = caches_of(x.node());
  if (xc.shape_state.load(std::memory_order_acquire) == 0) {
    Shape own;
    const Shape* s = compute_shape(x, [](const UOp& y) -> const Shape* {
      NodeCaches& yc = caches_of(y.node());
      return yc.shape_state.load(std::memory_order_acquire) == 1 ? yc.shape : nullptr;
    }, own);
    uint8_t expected = 0;
    if (claim(xc.shape_state, expected, uint8_t(3), std::memory_order_acquire)) {
      if (s == &own) xc.own_shape = std::move(own), s = &xc.own_shape;
      xc.shape = s;
      xc.shape_state.store(s ? 1 : 2, std::memory_order_release);
      return;
    }
  }
  while (xc.shape_state.load(std::memory_order_acquire) == 3) {}  // another thread is storing the same shape
}

inline const Shape* cached_shape(const UOp& u) {
  NodeCaches& c = caches_of(u.node());
  uint8_t st = c.shape_state.load(std::memory_order_acquire);
  if (st == 1) return c.shape;
  if (st == 2) return nullptr;
  auto unknown = [](const UOp& x) {  // not ready yet (fill_shape waits for a shape another thread is storing)
    NodeCaches* cc = x.node()->caches.load(std::memory_order_acquire);
    uint8_t st = cc ? cc->shape_state.load(std::memory_order_acquire) : 0;
    return st == 0 || st == 3;
  };
  // perf: a node built from nodes whose shapes are known (the usual case) needs no walk
  if (std::none_of(u.src().begin(), u.src().end(), unknown)) {
    fill_shape(u);
  } else {  // fill children first, iteratively
    post_order(u.node(), [&](const UOpNode* n) { return unknown(UOp::borrow(n)); },
               [&](const UOpNode* n) { fill_shape(UOp::borrow(n)); });
  }
  return c.shape_state.load(std::memory_order_acquire) == 1 ? c.shape : nullptr;
}

}  // namespace detail

inline bool UOp::has_shape() const { return detail::cached_shape(*this) != nullptr; }
inline const std::vector<int64_t>& UOp::shape() const {
  const Shape* s = detail::cached_shape(*this);
  if (!s) throw Error(std::string(op_name(op())) + " has no shape");
  return *s;
}

}  // namespace graft
