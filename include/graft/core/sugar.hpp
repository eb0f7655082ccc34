// Operator sugar on UOps with tinygrad's meaning (mixin/elementwise.py): scalars become weak CONSTs, both sides are
// promoted to least_upper_dtype (a weak CONST stays weak at weak_dtype(out); other operands get a CAST).
// `a - b` is `a + b*-1`, `-a` is `a*-1` (logical not for bool), `a / b` is `a * b.reciprocal()`.
// == and != stay pointer identity (hash-consing); use ne()/eq() to build CMPNE / CMPEQ-style nodes.
#pragma once
#include "graft/core/uop.hpp"

namespace graft {

namespace detail {
template <class T> concept Scalar = std::is_arithmetic_v<T>;
template <Scalar T> UOp scalar_const(T v) {
  if constexpr (std::is_same_v<T, bool>) return UOp::const_bool(v);
  else if constexpr (std::is_floating_point_v<T>) return UOp::const_float(double(v));
  else return UOp::const_int(int64_t(v));
}
inline UOp lift(const UOp& u) { return u; }
template <Scalar T> UOp lift(T v) { return scalar_const(v); }

inline UOp promote_to(const UOp& t, DType out) {
  if (t.dtype() == out || t.is_invalid()) return t;  // perf: a weak CONST of dtype out would be looked up again
  if (dtypes::is_weak(t.dtype()) && t.op() == Ops::CONST) return UOp::const_(dtypes::weak(out), t.arg());
  return t.cast(out);
}
inline std::pair<UOp, UOp> broadcasted(const UOp& x, const UOp& y) {
  DType out = least_upper_dtype(x.dtype(), y.dtype());
  return {promote_to(x, out), promote_to(y, out)};
}
inline UOp binop(Ops op, const UOp& x, const UOp& y) {
  if (x.dtype() == y.dtype()) return x.alu(op, y);  // perf: nothing to promote (most index math), no copies
  auto [a, b] = broadcasted(x, y);
  return a.alu(op, b);
}
template <class A, class B> concept UOpPair =
    (std::is_same_v<A, UOp> || std::is_same_v<B, UOp>) && (std::is_same_v<A, UOp> || Scalar<A>) && (std::is_same_v<B, UOp> || Scalar<B>);
}  // namespace detail

inline UOp operator-(const UOp& a) {
  if (a.dtype() == dtypes::bool_) return a.alu(Ops::CMPNE, UOp::const_bool(true));
  return detail::binop(Ops::MUL, a, UOp::const_int(-1));
}
#define GRAFT_UOP_BINOP(sym, OP)                                                                                  \
  template <class A, class B> requires detail::UOpPair<A, B> UOp operator sym(const A& a, const B& b) {           \
    return detail::binop(Ops::OP, detail::lift(a), detail::lift(b));                                               \
  }
GRAFT_UOP_BINOP(+, ADD)
GRAFT_UOP_BINOP(*, MUL)
GRAFT_UOP_BINOP(^, XOR)
GRAFT_UOP_BINOP(&, AND)
GRAFT_UOP_BINOP(|, OR)
GRAFT_UOP_BINOP(<, CMPLT)
#undef GRAFT_UOP_BINOP
template <class A, class B> requires detail::UOpPair<A, B> UOp operator-(const A& a, const B& b) {
  auto [x, y] = detail::broadcasted(detail::lift(a), detail::lift(b));
  return x.alu(Ops::ADD, -y);
}
template <class A, class B> requires detail::UOpPair<A, B> UOp operator>(const A& a, const B& b) {
  return detail::binop(Ops::CMPLT, detail::lift(b), detail::lift(a));
}
// Python //, % on ints (FLOORDIV/FLOORMOD); C-style truncation is cdiv/cmod
template <class A, class B> requires detail::UOpPair<A, B> UOp operator%(const A& a, const B& b) {
  return detail::binop(Ops::FLOORMOD, detail::lift(a), detail::lift(b));
}
template <class A, class B> requires detail::UOpPair<A, B> UOp floordiv(const A& a, const B& b) {
  return detail::binop(Ops::FLOORDIV, detail::lift(a), detail::lift(b));
}
template <class A, class B> requires detail::UOpPair<A, B> UOp cdiv(const A& a, const B& b) {
  return detail::binop(Ops::CDIV, detail::lift(a), detail::lift(b));
}
template <class A, class B> requires detail::UOpPair<A, B> UOp cmod(const A& a, const B& b) {
  return detail::binop(Ops::CMOD, detail::lift(a), detail::lift(b));
}
template <class A, class B> requires detail::UOpPair<A, B> UOp operator<<(const A& a, const B& b) {
  return detail::binop(Ops::SHL, detail::lift(a), detail::lift(b));
}
template <class A, class B> requires detail::UOpPair<A, B> UOp operator>>(const A& a, const B& b) {
  return detail::binop(Ops::SHR, detail::lift(a), detail::lift(b));
}
inline UOp reciprocal(const UOp& a) { return a.alu(Ops::RECIPROCAL); }
// tinygrad div: promote both, then cast only an int (or bool) numerator to default_float; the reciprocal of an int
// denominator is already float (a weak one stays weak)
template <class A, class B> requires detail::UOpPair<A, B> UOp operator/(const A& a, const B& b) {
  auto [p, q] = detail::broadcasted(detail::lift(a), detail::lift(b));
  if (dtypes::is_int(p.dtype()) || p.dtype() == dtypes::bool_) p = p.cast(dtypes::default_float);
  return p.alu(Ops::MUL, reciprocal(q));
}
template <class A, class B> requires detail::UOpPair<A, B> UOp ne(const A& a, const B& b) {
  return detail::binop(Ops::CMPNE, detail::lift(a), detail::lift(b));
}
inline UOp logical_not(const UOp& a) { return a.cast(dtypes::bool_).alu(Ops::CMPNE, UOp::const_bool(true)); }
template <class A, class B> requires detail::UOpPair<A, B> UOp eq(const A& a, const B& b) { return logical_not(ne(a, b)); }
template <class A, class B> requires detail::UOpPair<A, B> UOp operator>=(const A& a, const B& b) {
  return logical_not(detail::lift(a) < detail::lift(b));
}
template <class A, class B> requires detail::UOpPair<A, B> UOp operator<=(const A& a, const B& b) {
  return logical_not(detail::lift(b) < detail::lift(a));
}
template <class A, class B> requires detail::UOpPair<A, B> UOp maximum(const A& a, const B& b) {
  return detail::binop(Ops::MAX, detail::lift(a), detail::lift(b));
}
template <class T, class F> UOp where(const UOp& c, const T& t, const F& f) {
  auto [x, y] = detail::broadcasted(detail::lift(t), detail::lift(f));
  return c.alu(Ops::WHERE, x, y);
}
inline UOp sqrt(const UOp& a) { return a.alu(Ops::SQRT); }
inline UOp exp2(const UOp& a) { return a.alu(Ops::EXP2); }
inline UOp log2(const UOp& a) { return a.alu(Ops::LOG2); }
inline UOp sin(const UOp& a) { return a.alu(Ops::SIN); }
inline UOp trunc(const UOp& a) { return a.alu(Ops::TRUNC); }

}  // namespace graft
