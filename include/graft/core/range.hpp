// vmin / vmax: interval arithmetic over UOps (tinygrad `_min_max`). Python ints are unbounded; here integer bounds
// are int64 with saturating arithmetic, so weakint's +-2^799 becomes INT64_MIN/INT64_MAX. Float Binary ops are not
// evaluated (NaN); their bounds are the dtype's (-inf, inf). Computed iteratively and cached per node.
#pragma once
#include <optional>

#include "graft/core/uop.hpp"

namespace graft {
namespace detail {

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min(), kI64Max = std::numeric_limits<int64_t>::max();
inline int64_t sat_add(int64_t a, int64_t b) { int64_t r; return __builtin_add_overflow(a, b, &r) ? (b > 0 ? kI64Max : kI64Min) : r; }
inline int64_t sat_sub(int64_t a, int64_t b) { int64_t r; return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? kI64Max : kI64Min) : r; }
inline int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? kI64Min : kI64Max) : r;
}
// Python floor division / modulo and C truncating division
inline int64_t floordiv(int64_t a, int64_t b) { int64_t q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }
inline int64_t floormod(int64_t a, int64_t b) { int64_t m = a % b; return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m; }
inline int64_t cdiv(int64_t a, int64_t b) { return a / b; }
inline int64_t cmod(int64_t a, int64_t b) { return a % b; }

inline Interval dtype_interval(DType d) {
  if (dtypes::is_float(d)) return Interval::floats(-INFINITY, INFINITY);
  return Interval::ints(dtypes::imin(d), dtypes::imax(d));
}
inline Interval const_interval(const Arg& a, DType d) {
  if (a.is<double>()) return Interval::floats(a.get<double>(), a.get<double>());
  if (a.is<int64_t>() || a.is<bool>()) return Interval::ints(a.as_int(), a.as_int());
  return dtype_interval(d);
}

// interval of `a op b` for integer intervals under a non-float dtype (the int cases of tinygrad's _min_max);
// nullopt: the op has no rule for these bounds (the caller falls back to the dtype's range). Also used by the
// div/mod folding to bound candidate expressions without building them.
inline std::optional<Interval> int_binary_interval(Ops op, DType dt, const Interval& a, const Interval& b) {
  using enum Ops;
  int64_t a0 = a.lo, a1 = a.hi, b0 = b.lo, b1 = b.hi;
  auto minmax4 = [](int64_t w, int64_t x, int64_t y, int64_t z) {
    return Interval::ints(std::min({w, x, y, z}), std::max({w, x, y, z}));
  };
  switch (op) {
    case ADD: return Interval::ints(sat_add(a0, b0), sat_add(a1, b1));
    case SUB: return Interval::ints(sat_sub(a0, b1), sat_sub(a1, b0));
    case AND:
      if (dtypes::is_int(dt) && b0 == b1 && b0 >= 0) return Interval::ints(0, a0 < 0 ? b1 : std::min(a1, b1));
      if (dt == dtypes::bool_) return Interval::ints(a0 && b0, a1 && b1);
      break;
    case MUL: return minmax4(sat_mul(a0, b0), sat_mul(a0, b1), sat_mul(a1, b0), sat_mul(a1, b1));
    case SHL: if (b0 == b1 && b0 >= 0 && b0 < 63) return Interval::ints(sat_mul(a0, int64_t(1) << b0), sat_mul(a1, int64_t(1) << b0)); break;
    case SHR: if (b0 == b1 && b0 >= 0 && b0 < 64) return Interval::ints(a0 >> b0, a1 >> b0); break;
    case CMOD:
      if (b0 == b1 && b0 > 0) {
        int64_t c = b0;
        return Interval::ints(a0 > 0 ? 0 : (a0 > -c ? a0 : -(b1 - 1)), a1 < 0 ? 0 : (a1 < c ? a1 : c - 1));
      }
      if (b0 > 0) return a0 >= 0 ? Interval::ints(0, b1 - 1) : a1 <= 0 ? Interval::ints(-(b1 - 1), 0) : Interval::ints(-(b1 - 1), b1 - 1);
      if (b1 < 0) return a0 >= 0 ? Interval::ints(0, -b0 - 1) : a1 <= 0 ? Interval::ints(-(-b0 - 1), 0) : Interval::ints(-(-b0 - 1), -b0 - 1);
      break;
    case CDIV:
      if ((b0 > 0 && b1 > 0) || (b0 < 0 && b1 < 0)) return minmax4(cdiv(a0, b0), cdiv(a0, b1), cdiv(a1, b0), cdiv(a1, b1));
      break;
    case FLOORDIV:
      if (a0 > a1) return Interval::ints(0, 0);
      if ((b0 > 0 && b1 > 0) || (b0 < 0 && b1 < 0))
        return minmax4(floordiv(a0, b0), floordiv(a0, b1), floordiv(a1, b0), floordiv(a1, b1));
      break;
    case FLOORMOD:
      if (a0 > a1) return Interval::ints(0, 0);
      if (b0 == b1 && b0 > 0) return floordiv(a0, b0) == floordiv(a1, b0) ? Interval::ints(floormod(a0, b0), floormod(a1, b0)) : Interval::ints(0, b0 - 1);
      if (b0 == b1 && b0 < 0) return floordiv(a0, b0) == floordiv(a1, b0) ? Interval::ints(floormod(a0, b0), floormod(a1, b0)) : Interval::ints(b0 + 1, 0);
      if (b0 > 0) return Interval::ints(0, b1 - 1);
      if (b1 < 0) return Interval::ints(b0 + 1, 0);
      break;
    case XOR: if (b0 == -1 && b1 == -1) return Interval::ints(~a1, ~a0); break;
    case MAX: return Interval::ints(std::max(a0, b0), std::max(a1, b1));
    case CMPLT: return Interval::ints(a1 < b0, a0 < b1);
    case CMPNE: return Interval::ints((a1 < b0) || (b1 < a0), !(a0 == a1 && a1 == b0 && b0 == b1));
    case OR: if (dt == dtypes::bool_) return Interval::ints(a0 || b0, a1 || b1); break;
    default: break;
  }
  return std::nullopt;
}

template <class Lookup> Interval compute_minmax(const UOp& u, const Lookup& mm) {
  using enum Ops;
  Ops op = u.op();
  DType dt = u.dtype();
  if (GroupOp::Binary.has(op) && !dtypes::is_float(dt) && u.nsrc() == 2) {
    const Interval &a = mm(u.src(0)), &b = mm(u.src(1));
    if (!a.is_float && !b.is_float) {
      if (auto r = int_binary_interval(op, dt, a, b)) return *r;
    } else {  // mixed float operands under a non-float dtype (comparisons of floats)
      switch (op) {
        case CMPLT: return Interval::ints(a.dhi() < b.dlo(), a.dlo() < b.dhi());
        case CMPNE: return Interval::ints((a.dhi() < b.dlo()) || (b.dhi() < a.dlo()), !(a.dlo() == a.dhi() && a.dhi() == b.dlo() && b.dlo() == b.dhi()));
        default: break;
      }
    }
  }
  if (op == WHERE && dtypes::is_int(dt)) {
    const Interval &t = mm(u.src(1)), &f = mm(u.src(2));
    if (!t.is_float && !f.is_float) return Interval::ints(std::min(t.lo, f.lo), std::max(t.hi, f.hi));
  }
  if ((op == PARAM || op == BUFFER) && u.arg().is_param() && u.arg().param().vmin_vmax)
    return Interval::ints(u.arg().param().vmin_vmax->first, u.arg().param().vmin_vmax->second);
  if ((op == RANGE || op == SPECIAL) && dt != dtypes::void_) {
    const Interval& e = mm(u.src(0));
    return e.is_float ? Interval::floats(0, e.fhi - 1) : Interval::ints(0, sat_sub(e.hi, 1));
  }
  if (op == AFTER || op == INDEX) return mm(u.src(0));
  if (op == STACK && u.nsrc()) {
    Interval r = mm(u.src(0));
    for (const UOp& s : u.src()) {
      const Interval& x = mm(s);
      if (r.is_float || x.is_float) r = Interval::floats(std::min(r.dlo(), x.dlo()), std::max(r.dhi(), x.dhi()));
      else r = Interval::ints(std::min(r.lo, x.lo), std::max(r.hi, x.hi));
    }
    return r;
  }
  if (op == CONST && !u.arg().is<InvalidT>()) return const_interval(u.arg(), dt);
  if (op == CAST) {
    const Interval& s = mm(u.src(0));
    if (dtypes::is_float(dt)) {
      double lo = s.dlo(), hi = s.dhi();
      if (std::isfinite(lo) && std::isfinite(hi)) lo = truncate_float(dt, lo), hi = truncate_float(dt, hi);
      return Interval::floats(lo, hi);
    }
    if (dtypes::is_int(dt) || dt == dtypes::bool_) {
      double lo = s.dlo(), hi = s.dhi();
      if (std::isfinite(lo) && std::isfinite(hi)) lo = std::trunc(lo), hi = std::trunc(hi);
      double dmin = double(dtypes::imin(dt)), dmax = double(dtypes::imax(dt));
      if (dtypes::is_unsigned(dt) && 0 <= lo && hi <= dmax) return Interval::ints(int64_t(lo), int64_t(hi));
      if (!dtypes::is_unsigned(dt) && dt != dtypes::bool_) {
        if (!s.is_float) return Interval::ints(std::max(dtypes::imin(dt), s.lo), std::min(s.hi, dtypes::imax(dt)));
        return Interval::ints(lo <= dmin ? dtypes::imin(dt) : int64_t(lo), hi >= dmax ? dtypes::imax(dt) : int64_t(hi));
      }
    }
  }
  return dtype_interval(dt);
}

inline const Interval& cached_minmax(const UOp& u);

inline const Interval* peek_minmax(const UOp& u) {
  NodeCaches* c = u.node()->caches.load(std::memory_order_acquire);
  return c && c->minmax_state.load(std::memory_order_acquire) == 2 ? &c->minmax : nullptr;
}
inline const Interval& store_minmax(const UOp& u, Interval iv) {
  NodeCaches& c = caches_of(u.node());
  uint8_t expected = 0;
  if (claim(c.minmax_state, expected, uint8_t(1), std::memory_order_acquire)) {
    c.minmax = iv;
    c.minmax_state.store(2, std::memory_order_release);
  } else {
    while (c.minmax_state.load(std::memory_order_acquire) != 2) {}  // another thread is storing the same value
  }
  return c.minmax;
}

inline const Interval& cached_minmax(const UOp& u) {
  if (const Interval* p = peek_minmax(u)) return *p;
  auto lookup = [](const UOp& y) -> const Interval& { return *peek_minmax(y); };
  bool children_ready = true;
  for (const UOp& s : u.src()) children_ready &= peek_minmax(s) != nullptr;
  if (children_ready) return store_minmax(u, compute_minmax(u, lookup));
  // post-order over the nodes without bounds yet, on an explicit stack (perf: a toposort built a vector, a visited
  // set and a std::function filter for every fresh candidate node of the div/mod folding). A node is expanded when
  // first seen without bounds and computed when it comes back to the top with all sources ready.
  thread_local std::vector<const UOp*> st;  // not reentrant: compute_minmax only reads the sources' bounds
  st.clear();
  st.push_back(&u);
  while (!st.empty()) {
    const UOp* x = st.back();
    if (peek_minmax(*x)) { st.pop_back(); continue; }
    bool ready = true;
    for (const UOp& s : x->src())
      if (!peek_minmax(s)) st.push_back(&s), ready = false;
    if (ready) st.pop_back(), store_minmax(*x, compute_minmax(*x, lookup));
  }
  return *peek_minmax(u);
}

inline Arg interval_value(const Interval& iv, DType dt, bool hi) {
  if (iv.is_float) return hi ? iv.fhi : iv.flo;
  int64_t v = hi ? iv.hi : iv.lo;
  if (dt == dtypes::bool_) return Arg(v != 0);
  return Arg(v);
}

}  // namespace detail

inline Arg UOp::vmin() const { return detail::interval_value(detail::cached_minmax(*this), dtype(), false); }
inline Arg UOp::vmax() const { return detail::interval_value(detail::cached_minmax(*this), dtype(), true); }

}  // namespace graft
