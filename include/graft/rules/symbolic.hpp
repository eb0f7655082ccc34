// Symbolic rule sets (tinygrad uop/symbolic.py + uop/divandmod.py): symbolic_simple() and symbolic(), plus
// UOp::simplify() and UOp::render() (tinygrad uop/render.py's index-expression renderer).
// The rule tables are function templates (`template <class = void>`, called as plain `symbolic()`): a translation
// unit that includes graft.hpp but never simplifies does not instantiate the ~100 rules, which keeps compile times
// down for everything else.
//
// What is here (see reference/tinygrad_core.md §8 for the categories):
//   symbolic_simple: pm_data_invalid (Invalid propagation through gates, gated LOAD/STORE), self folding (x+0, x*1, x^0, x//x, x//1, x//-1, (x^y)^y, (x%y)%y, bool &|, x!=False,
//     idempotent, !!x, where(x,True,False), cast(bool)!=c, trunc(int)), zero folding (x<x, x%x, x^x, x&0, masks,
//     x!=x for ints, x*0), constant folding of every ALU op over CONST / CAST(CONST) (exec_alu: Python semantics,
//     integer results not wrapped, floats rounded by the dtype), bool MUL/ADD/MAX, float division identities,
//     cast/bitcast cleanup, pow expansion, where folding, fold_add_divmod_recombine.
//   symbolic: + commutative (weakint canonical order by tinygrad's tuplize) + phase 2 (x|!x, like terms, where
//     rules incl. fold_where_closure, range facts, max folding, two-stage folding, lt rules, lt_folding, simplex, RANGE%end, cast folding,
//     (x+c).cast(sint), AFTER/END with one src) + div_and_mod_symbolic (fast rules, fold_divmod_general).
//   sym (tinygrad's `sym`, what codegen uses): symbolic + pm_simplify_valid (simplify_valid on every AND via
//     uop_given_valid; gated_given_valid on where(cond, weakint index math, Invalid)) + the sym-only rules (CAST pushed
//     into WHERE branches, store-of-own-load -> NOOP, gated stores, reciprocal splitting, const / independent MUL
//     factors moved out of a range-form REDUCE, -1*(x+y) and weakint (x+y)*c distribution) + pm_clean_up_group_sink.
//     Not in sym: the STACK-ALU reorder (vectors), POW -> xpow (transcendentals), the IMAGE-mode skip.
// Helpers live in namespace sym_detail (the name `sym` is the rule-table function).
// Left out: mop_cleanup, bitcast(const), threefry unpacking,
//   long->int demotion, AFTER dependency flattening, STACK (vector) constants.
// Integer arithmetic is int64; a fold that would overflow int64 is skipped (Python ints are unbounded).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graft/core/print.hpp"
#include "graft/core/range.hpp"
#include "graft/core/sugar.hpp"
#include "graft/core/uop.hpp"
#include "graft/pattern/matcher.hpp"
#include "graft/pattern/rewrite.hpp"
#include "graft/pattern/upat.hpp"

namespace graft {

namespace sym_detail {

// ---- integer helpers (Python semantics) ------------------------------------------------------------------------
inline int64_t pfloordiv(int64_t a, int64_t b) { int64_t q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }
inline int64_t pfloormod(int64_t a, int64_t b) { return a - pfloordiv(a, b) * b; }
inline int64_t pgcd(int64_t a, int64_t b) { return std::gcd(a < 0 ? -a : a, b < 0 ? -b : b); }

// ---- exec_alu ----------------------------------------------------------------------------------------------------
// tinygrad exec_alu(op, dtype, operands, truncate_output=False) on scalars. Returns nullopt when Python would raise
// (or when an int64 result would overflow).
inline std::optional<Arg> exec_alu(Ops op, DType dtype, std::span<const Arg> v) {
  using enum Ops;
  (void)dtype;
  bool any_invalid = false;
  for (const Arg& a : v) any_invalid |= a.is<InvalidT>();
  if (any_invalid && GroupOp::Binary.has(op)) return Arg(Invalid);
  if (op == WHERE && v.size() == 3 && v[0].is_number()) return v[0].as_double() != 0 ? v[1] : v[2];
  for (const Arg& a : v)
    if (!a.is_number()) return std::nullopt;
  bool any_float = false, all_bool = true;
  for (const Arg& a : v) any_float |= a.is<double>(), all_bool &= a.is<bool>();
  auto D = [&](size_t i) { return v[i].as_double(); };
  auto I = [&](size_t i) { return v[i].as_int(); };
  auto truthy = [&](size_t i) { return v[i].as_double() != 0; };
  switch (op) {
    // unary (results are floats except NEG / TRUNC on ints)
    case NEG: if (any_float) return Arg(-D(0)); if (I(0) == INT64_MIN) return std::nullopt; return Arg(-I(0));
    case TRUNC: if (any_float) return Arg(std::isfinite(D(0)) ? std::trunc(D(0)) : D(0)); return Arg(I(0));
    case LOG2: { double x = D(0); return Arg(x > 0 ? std::log2(x) : x == 0 ? -INFINITY : NAN); }
    case EXP2: return Arg(std::exp2(D(0)));
    case SQRT: { double x = D(0); return Arg(x >= 0 ? std::sqrt(x) : NAN); }
    case RECIPROCAL: { double x = D(0); return Arg(x != 0 ? 1.0 / x : std::copysign(INFINITY, x)); }
    case SIN: { double x = D(0); return Arg(std::isinf(x) ? NAN : std::sin(x)); }
    // comparisons
    case CMPLT: return Arg(any_float ? D(0) < D(1) : I(0) < I(1));
    case CMPNE: return Arg(any_float ? D(0) != D(1) : I(0) != I(1));
    case CMPEQ: return Arg(any_float ? D(0) == D(1) : I(0) == I(1));
    case WHERE: return truthy(0) ? v[1] : v[2];
    case MAX: {  // Python max(a, b): b only if b > a
      bool bgt = (v[0].is<double>() || v[1].is<double>()) ? D(1) > D(0) : I(1) > I(0);
      return bgt ? v[1] : v[0];
    }
    default: break;
  }
  if (any_float) {
    switch (op) {
      case ADD: return Arg(D(0) + D(1));
      case SUB: return Arg(D(0) - D(1));
      case MUL: return Arg(D(0) * D(1));
      case FDIV: if (D(1) == 0) return std::nullopt; return Arg(D(0) / D(1));
      case MULACC: return Arg(D(0) * D(1) + D(2));
      case FLOORDIV: return Arg(D(1) == 0 ? 0.0 : std::floor(D(0) / D(1)));
      case FLOORMOD: return Arg(D(1) == 0 ? D(0) : D(0) - std::floor(D(0) / D(1)) * D(1));
      case CDIV: return Arg(D(1) == 0 ? 0.0 : std::trunc(D(0) / D(1)));
      case CMOD: return Arg(D(1) == 0 ? D(0) : D(0) - std::trunc(D(0) / D(1)) * D(1));
      case POW: {
        double r = std::pow(D(0), D(1));
        if (std::isnan(r) && !std::isnan(D(0)) && !std::isnan(D(1))) return Arg(D(0) > 0 ? INFINITY : -INFINITY);
        return Arg(r);
      }
      default: return std::nullopt;  // bit ops on floats raise in Python
    }
  }
  int64_t a = I(0), b = v.size() > 1 ? I(1) : 0, r = 0;
  switch (op) {
    case ADD: if (__builtin_add_overflow(a, b, &r)) return std::nullopt; return Arg(r);
    case SUB: if (__builtin_sub_overflow(a, b, &r)) return std::nullopt; return Arg(r);
    case MUL: if (__builtin_mul_overflow(a, b, &r)) return std::nullopt; return Arg(r);
    case MULACC: if (__builtin_mul_overflow(a, b, &r) || __builtin_add_overflow(r, I(2), &r)) return std::nullopt; return Arg(r);
    case XOR: return all_bool ? Arg(bool(a ^ b)) : Arg(a ^ b);
    case OR: return all_bool ? Arg(bool(a | b)) : Arg(a | b);
    case AND: return all_bool ? Arg(bool(a & b)) : Arg(a & b);
    case SHL: if (b < 0 || b > 62 || (a != 0 && (a > (INT64_MAX >> b) || a < (INT64_MIN >> b)))) return std::nullopt; return Arg(a << b);
    case SHR: if (b < 0) return std::nullopt; return Arg(b > 63 ? (a < 0 ? -1 : 0) : a >> b);
    case FLOORDIV: if (b == 0) return Arg(int64_t(0)); if (a == INT64_MIN && b == -1) return std::nullopt; return Arg(pfloordiv(a, b));
    case FLOORMOD: if (b == 0) return Arg(a); if (b == -1) return Arg(int64_t(0)); return Arg(pfloormod(a, b));
    case CDIV: if (b == 0) return Arg(int64_t(0)); if (a == INT64_MIN && b == -1) return std::nullopt; return Arg(a / b);
    case CMOD: if (b == 0) return Arg(a); if (b == -1) return Arg(int64_t(0)); return Arg(a % b);
    case FDIV: if (b == 0) return std::nullopt; return Arg(double(a) / double(b));
    case POW: {
      if (b < 0) { if (a == 0) return Arg(INFINITY); return Arg(std::pow(double(a), double(b))); }
      int64_t acc = 1;
      for (int64_t i = 0; i < b; i++) {
        if (__builtin_mul_overflow(acc, a, &acc)) return std::nullopt;
        if (acc == 0 || acc == 1) break;
      }
      return Arg(acc);
    }
    default: return std::nullopt;
  }
}

// const_arg: the value of a CONST or a CAST of a CONST (STACK constants are not handled)
inline std::optional<Arg> const_arg(const UOp& u) {
  if (u.op() == Ops::CONST) return u.arg();
  if (u.op() == Ops::CAST && u.src(0).op() == Ops::CONST && u.src(0).arg().is_number()) return canonical_const(u.dtype(), u.src(0).arg());
  return std::nullopt;
}

// The common case of constant folding, two int64 CONSTs under an int ALU op or a comparison, without exec_alu's Arg
// copies: the same value exec_alu gives, or nullopt where it would defer (other ops, overflow).
inline std::optional<Arg> fold_int_binary(Ops op, DType dtype, const Arg& x, const Arg& y) {
  const int64_t *pa = std::get_if<int64_t>(&x.value()), *pb = std::get_if<int64_t>(&y.value());
  if (!pa || !pb) return std::nullopt;
  int64_t a = *pa, b = *pb, r = 0;
  if (dtype == dtypes::bool_) {
    switch (op) {
      case Ops::CMPLT: return Arg(a < b);
      case Ops::CMPNE: return Arg(a != b);
      case Ops::CMPEQ: return Arg(a == b);
      default: return std::nullopt;
    }
  }
  if (!dtypes::is_int(dtype)) return std::nullopt;
  switch (op) {
    case Ops::ADD: if (__builtin_add_overflow(a, b, &r)) return std::nullopt; return Arg(r);
    case Ops::SUB: if (__builtin_sub_overflow(a, b, &r)) return std::nullopt; return Arg(r);
    case Ops::MUL: if (__builtin_mul_overflow(a, b, &r)) return std::nullopt; return Arg(r);
    case Ops::MAX: return Arg(b > a ? b : a);
    case Ops::XOR: return Arg(a ^ b);
    case Ops::OR: return Arg(a | b);
    case Ops::AND: return Arg(a & b);
    default: return std::nullopt;
  }
}

// symbolic_simple's fold shortcut (PatternMatcher::with_fold): two int64 CONSTs under an int ALU op or a comparison.
// Every rule ahead of constant folding that fires on such a node (x+0, x*1, max(x,x), x^x, x<x, ...) gives the same
// CONST, so folding before dispatch, or instead of building the node, reaches the node the rules would reach.
inline UOp fold_const_pair(Ops op, DType dtype, std::span<const UOp> src, const Arg&) {
  if (src.size() != 2 || src[0].op() != Ops::CONST || src[1].op() != Ops::CONST) return UOp();
  auto r = fold_int_binary(op, dtype, src[0].arg(), src[1].arg());
  if (!r) return UOp();
  // already canonical for the dtype
  if (const int64_t* v = std::get_if<int64_t>(&r->value())) return UOp::const_int(dtype, *v);
  return UOp::make(Ops::CONST, dtype, {}, std::move(*r));
}

inline UOp fold_const_alu(const UOp& a) {
  if (a.op() == Ops::THREEFRY) return UOp();
  if (!a.src_ops().subset_of(OpSet{Ops::CONST, Ops::CAST})) return UOp();  // perf: tried on every ALU node
  if (a.nsrc() > 3) return UOp();  // ALU ops have at most 3 sources
  if (UOp r = fold_const_pair(a.op(), a.dtype(), a.src(), a.arg())) return r;  // perf: the common case first
  std::array<Arg, 3> vals;  // perf: on the stack (constant folding runs on every all-constant ALU node)
  for (size_t i = 0; i < a.nsrc(); i++) {
    if (a.src(i).op() == Ops::CONST) { vals[i] = a.src(i).arg(); continue; }
    auto c = const_arg(a.src(i));
    if (!c) return UOp();
    vals[i] = std::move(*c);
  }
  auto r = exec_alu(a.op(), a.dtype(), std::span<const Arg>(vals.data(), a.nsrc()));
  if (!r) return UOp();
  return a.const_like(*r);
}

// ---- structural helpers (tinygrad UOp methods) -------------------------------------------------------------------
inline bool is_c(const UOp& u) { return u.op() == Ops::CONST && u.arg().is_number(); }
inline int64_t ival(const UOp& u) { return u.arg().as_int(); }
inline int64_t imin(const UOp& u) { return u.vmin().as_int(); }
inline int64_t imax(const UOp& u) { return u.vmax().as_int(); }
inline UOp cint(int64_t v) { return UOp::const_int(v); }

// A vector with inline room for N elements (perf: the div/mod folding splits small sums on every call; a heap
// vector per split dominated its cost).
template <class T, size_t N> class SmallVec {
 public:
  SmallVec() = default;
  SmallVec(const SmallVec&) = delete;
  SmallVec& operator=(const SmallVec&) = delete;
  void push_back(const T& v) {
    if (n_ < N) { buf_[n_++] = v; return; }
    if (n_ == N) heap_.assign(buf_, buf_ + N);
    heap_.push_back(v), n_++;
  }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const T* data() const { return n_ <= N ? buf_ : heap_.data(); }
  T* data() { return n_ <= N ? buf_ : heap_.data(); }
  const T& operator[](size_t i) const { return data()[i]; }
  T& operator[](size_t i) { return data()[i]; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + n_; }
  operator std::span<const T>() const { return {data(), n_}; }

 private:
  T buf_[N]{};
  std::vector<T> heap_;
  size_t n_ = 0;
};
using Terms = SmallVec<UOp, 8>;

// split_uop(sep): the leaves of a tree of `sep` nodes, left to right, appended to `out` (a std::vector or a SmallVec)
template <class Out> void split_into(const UOp& u, Ops sep, Out& out) {
  if (u.op() != sep) { out.push_back(u); return; }
  thread_local std::vector<const UOp*> st;  // iterative: sums can be arbitrarily deep; not reentrant (no callbacks)
  st.clear();
  st.push_back(&u);
  while (!st.empty()) {
    const UOp* x = st.back();
    st.pop_back();
    if (x->op() == sep) {
      for (size_t i = x->nsrc(); i-- > 0;) st.push_back(&x->src(i));
    } else {
      out.push_back(*x);
    }
  }
}
inline std::vector<UOp> split_uop(const UOp& u, Ops sep) {
  std::vector<UOp> out;
  split_into(u, sep, out);
  return out;
}

// pop_const: (x, c) for x op c with a CONST second source, else (self, identity)
inline std::pair<UOp, int64_t> pop_const(const UOp& u, Ops op = Ops::ADD) {
  if (u.op() == op && u.nsrc() == 2 && is_c(u.src(1)) && u.src(1).arg().is<int64_t>()) return {u.src(0), ival(u.src(1))};
  return {u, op == Ops::MUL ? 1 : 0};
}

inline int64_t const_factor(const UOp& u) {
  switch (u.op()) {
    case Ops::CONST: return u.arg().is_number() ? ival(u) : 1;
    case Ops::ADD: return pgcd(const_factor(u.src(0)), const_factor(u.src(1)));
    case Ops::MUL:
      if (is_c(u.src(0))) return ival(u.src(0));
      if (is_c(u.src(1))) return ival(u.src(1));
      return 1;
    case Ops::PARAM: case Ops::BUFFER:
      if (u.arg().is_param()) return u.arg().param().multiple_of;
      return 1;
    default: return 1;
  }
}

inline UOp usum(std::span<const UOp> xs) {
  UOp r = xs[0];
  for (size_t i = 1; i < xs.size(); i++) r = r + xs[i];
  return r;
}

// divides(v): self / v when provably exact, else empty
// drop_unit: a factor that divides to 1 leaves the other factor (x*4 / 4 -> x where tinygrad builds x*1), for callers
// whose result is rewritten again before anything inspects it (perf: the x*1 node and its rewrite back to x)
inline UOp divides(const UOp& u, int64_t v, bool drop_unit = false) {
  if (v == 1) return u;
  if (v == 0) return UOp();
  auto unit = [&](const UOp& q) { return drop_unit && is_c(q) && ival(q) == 1; };
  switch (u.op()) {
    case Ops::CONST: return u.arg().is_number() && pfloormod(ival(u), v) == 0 ? u.const_like(pfloordiv(ival(u), v)) : UOp();
    case Ops::ADD: {
      UOp d0 = divides(u.src(0), v, drop_unit);
      if (!d0) return UOp();
      UOp d1 = divides(u.src(1), v, drop_unit);
      return d1 ? d0 + d1 : UOp();
    }
    case Ops::MUL: {
      // a CONST factor equal to v leaves the other factor (without building the CONST 1 first)
      auto is_v = [&](const UOp& q) { return drop_unit && is_c(q) && ival(q) == v; };
      if (is_v(u.src(0))) return u.src(1);
      if (UOp d0 = divides(u.src(0), v, drop_unit)) return unit(d0) ? u.src(1) : d0 * u.src(1);
      if (is_v(u.src(1))) return u.src(0);
      if (UOp d1 = divides(u.src(1), v, drop_unit)) return unit(d1) ? u.src(0) : u.src(0) * d1;
      return UOp();
    }
    case Ops::PARAM: case Ops::BUFFER:
      if (u.arg().is_param() && u.arg().param().multiple_of % v == 0) return floordiv(u, v);
      return UOp();
    default: return UOp();
  }
}

// divisible(v): whether divides(v) succeeds, without building the quotient (perf: a failed divides() of an ADD
// builds the quotient of its first source before failing on the second)
inline bool divisible(const UOp& u, int64_t v) {
  if (v == 1) return true;
  if (v == 0) return false;
  switch (u.op()) {
    case Ops::CONST: return u.arg().is_number() && pfloormod(ival(u), v) == 0;
    case Ops::ADD: return divisible(u.src(0), v) && divisible(u.src(1), v);
    case Ops::MUL: return divisible(u.src(0), v) || divisible(u.src(1), v);
    case Ops::PARAM: case Ops::BUFFER: return u.arg().is_param() && u.arg().param().multiple_of % v == 0;
    default: return false;
  }
}

// collections.Counter over UOps: keys in first-insertion order (elements() order matters for the rebuilt products)
struct Counter {
  std::vector<std::pair<UOp, int64_t>> items;
  explicit Counter(const std::vector<UOp>& xs) { for (const UOp& x : xs) add(x, 1); }
  void add(const UOp& x, int64_t n) {
    for (auto& [k, c] : items)
      if (k == x) { c += n; return; }
    items.emplace_back(x, n);
  }
  int64_t get(const UOp& x) const {
    for (const auto& [k, c] : items)
      if (k == x) return c;
    return 0;
  }
  // Counter & Counter: keys of self in order, min counts, positive only
  Counter operator&(const Counter& o) const {
    Counter r({});
    for (const auto& [k, c] : items)
      if (int64_t m = std::min(c, o.get(k)); m > 0) r.items.emplace_back(k, m);
    return r;
  }
  std::vector<UOp> elements() const {
    std::vector<UOp> out;
    for (const auto& [k, c] : items)
      for (int64_t i = 0; i < c; i++) out.push_back(k);
    return out;
  }
};

inline UOp divide_exact(const UOp& u, const UOp& v) {
  if (u == v) return u.const_like(1);
  if (v.op() == Ops::CONST) return divides(u, ival(v));
  if (u.op() == Ops::ADD) {
    UOp s0 = divide_exact(u.src(0), v);
    if (!s0) return UOp();
    UOp s1 = divide_exact(u.src(1), v);
    return s1 ? s0 + s1 : UOp();
  }
  if (u.op() == Ops::MUL) {
    auto [fac, c] = pop_const(u, Ops::MUL);
    auto [dfac, dc] = pop_const(v, Ops::MUL);
    Counter count(split_uop(fac, Ops::MUL));
    for (const UOp& e : split_uop(dfac, Ops::MUL)) count.add(e, -1);
    bool ok = dc != 0 && pfloormod(c, dc) == 0;
    for (const auto& kc : count.items) ok &= kc.second >= 0;
    if (ok) {
      UOp r = u.const_like(pfloordiv(c, dc));
      for (const UOp& e : count.elements()) r = r * e;
      return r;
    }
  }
  return UOp();
}

// UOp.gcd(*uops): common MUL factors times the gcd of the const factors (the const on top)
inline UOp uop_gcd(std::span<const UOp> uops) {
  std::optional<Counter> common;
  int64_t g = 0;
  for (const UOp& x : uops) {
    int64_t f = const_factor(x);
    UOp t = divides(x, f);
    if (!t) t = x;  // f == 0 (a CONST 0): tinygrad's divides(0) would fail; keep the term
    g = std::gcd(g, f < 0 ? -f : f);
    Counter cnt(split_uop(t, Ops::MUL));
    common = common ? (*common & cnt) : cnt;
  }
  UOp r;
  for (const UOp& c : common->elements()) r = r ? r * c : c;
  UOp gc = uops[0].const_like(g);
  return r ? r * gc : gc;
}

// tinygrad's structural order `tuplize`: (op, arg, dtype, *src)
inline int arg_cmp_values(const Arg& a, const Arg& b);
// perf: two missing args (ALU nodes, the common case: the commutative rule compares down the left spines of two
// sums) compare inline, without a call
[[gnu::always_inline]] inline int arg_cmp(const Arg& a, const Arg& b) {
  return (a.value().index() | b.value().index()) == 0 ? 0 : arg_cmp_values(a, b);
}
template <class T> int three_way(const T& x, const T& y) { return x < y ? -1 : y < x ? 1 : 0; }
inline int arg_cmp_values(const Arg& a, const Arg& b) {
  const size_t ia = a.value().index(), ib = b.value().index();
  if (a.is_number() && b.is_number()) {
    if (a.is<double>() || b.is<double>()) return three_way(a.as_double(), b.as_double());
    return three_way(a.as_int(), b.as_int());
  }
  if (ia != ib) return ia < ib ? -1 : 1;
  // one dispatch on the kind (perf: a chain of is<T>() tests ran for every pair of PARAM args)
  return std::visit(
      [&](const auto& x) -> int {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b.value());
        if constexpr (std::is_same_v<T, std::shared_ptr<const ArgTuple>>) {
          for (size_t i = 0; i < std::min(x->size(), y->size()); i++)
            if (int c = arg_cmp((*x)[i], (*y)[i])) return c;
          return three_way(x->size(), y->size());
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const std::string>>) {
          return three_way(x->compare(*y), 0);
        } else if constexpr (std::is_same_v<T, DType>) {
          return three_way(x, y);
        } else if constexpr (std::is_same_v<T, AxisType> || std::is_same_v<T, Ops>) {
          return three_way(int(x), int(y));
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const ParamArg>>) {
          if (x == y) return 0;
          if (x->slot != y->slot) return three_way(x->slot, y->slot);
          if (x->dtype != y->dtype) return three_way(x->dtype, y->dtype);
          if (x->vmin_vmax != y->vmin_vmax) return three_way(x->vmin_vmax, y->vmin_vmax);
          if (x->multiple_of != y->multiple_of) return three_way(x->multiple_of, y->multiple_of);
          if (int c = x->name.compare(y->name)) return three_way(c, 0);
          if (x->addrspace != y->addrspace) return three_way(x->addrspace, y->addrspace);
          return three_way(x->device, y->device);
        } else {
          if (a == b) return 0;
          return a.hash() < b.hash() ? -1 : 1;  // no Python order: any consistent one
        }
      },
      a.value());
}
inline int tuplize_cmp(const UOp& a, const UOp& b) {
  if (a == b) return 0;
  if (a.op() != b.op()) return a.op() < b.op() ? -1 : 1;
  if (int c = arg_cmp(a.arg(), b.arg())) return c;
  if (a.dtype() != b.dtype()) return a.dtype() < b.dtype() ? -1 : 1;
  for (size_t i = 0; i < std::min(a.nsrc(), b.nsrc()); i++)
    if (int c = tuplize_cmp(a.src(i), b.src(i))) return c;
  return a.nsrc() < b.nsrc() ? -1 : a.nsrc() > b.nsrc() ? 1 : 0;
}
inline bool tuplize_less(const UOp& a, const UOp& b) { return tuplize_cmp(a, b) < 0; }

// ---- fold_add_divmod_recombine -------------------------------------------------------------------------------------
inline UOp quotient_base(const UOp& q0, const UOp& base, int64_t div) {
  auto [q, s] = pop_const(q0);
  auto [num, a] = pop_const(base);
  if (q.op() != Ops::FLOORDIV || !is_c(q.src(1))) return UOp();
  int64_t qd = ival(q.src(1)), D;
  if (div > 0 && num.op() == Ops::FLOORDIV && is_c(num.src(1)) && qd == ival(num.src(1)) * div) {
    int64_t c = ival(num.src(1));
    num = num.src(0), a = a * c, D = c * div;
  } else if (qd == div) {
    D = div;
  } else {
    return UOp();
  }
  auto [x, xa] = pop_const(num);
  auto [p, pa] = pop_const(q.src(0));
  int64_t t = xa + a - pa;
  if (!(p == x) || D == 0 || pfloormod(t, D) != 0) return UOp();
  int64_t k = pfloordiv(t, D) - s;
  return k ? base - cint(k * div) : base;
}

// a term can take part in a recombination only if it is (after popping a const MUL) a FLOORMOD, FLOORDIV or ADD
inline bool recombine_candidate(const UOp& t) {
  Ops o = pop_const(t, Ops::MUL).first.op();
  return o == Ops::FLOORMOD || o == Ops::FLOORDIV || o == Ops::ADD;
}

// The graph_rewrite driver only reaches an ADD after its sources are fixed points, so a pair inside one source has
// already been tried there: only pairs across the two sources are searched. When one source is a single term that
// cannot take part, nothing is walked (this keeps long sums linear).
// has_mod_term: some ADD leaf is (after popping a const MUL) a FLOORMOD by a CONST; walked with a reused stack
inline bool has_mod_term(const UOp& u) {
  if (!u.slice_ops().has(Ops::FLOORMOD)) return false;
  thread_local std::vector<const UOp*> st;
  st.clear();
  st.push_back(&u);
  while (!st.empty()) {
    const UOp* t = st.back();
    st.pop_back();
    if (t->op() == Ops::ADD) { for (const UOp& s : t->src()) st.push_back(&s); continue; }
    const UOp& m = pop_const(*t, Ops::MUL).first;
    if (m.op() == Ops::FLOORMOD && is_c(m.src(1))) return true;
  }
  return false;
}

inline UOp fold_add_divmod_recombine(const UOp& x) {
  const UOp &l = x.src(0), &r = x.src(1);
  if (l.op() != Ops::ADD && !recombine_candidate(l)) return UOp();
  if (r.op() != Ops::ADD && !recombine_candidate(r)) return UOp();
  if (!has_mod_term(x)) return UOp();  // perf: every recombination starts from a FLOORMOD term
  std::vector<UOp> terms = split_uop(l, Ops::ADD);
  size_t nl = terms.size();
  for (const UOp& t : split_uop(r, Ops::ADD)) terms.push_back(t);
  for (size_t i = 0; i < terms.size(); i++) {
    auto [mod, mul] = pop_const(terms[i], Ops::MUL);
    if (mod.op() != Ops::FLOORMOD || !is_c(mod.src(1))) continue;
    UOp base = mod.src(0);
    int64_t div = ival(mod.src(1));
    for (size_t j = 0; j < terms.size(); j++) {
      if ((i < nl) == (j < nl)) continue;
      auto [q, scale] = pop_const(terms[j], Ops::MUL);
      if (scale != div * mul) continue;
      auto finish = [&](UOp b) {
        std::vector<UOp> all{b * mul};
        for (size_t k = 0; k < terms.size(); k++)
          if (k != i && k != j) all.push_back(terms[k]);
        return usum(all);
      };
      if (UOp b = quotient_base(q, base, div)) return finish(b);
      if (q.op() == Ops::FLOORMOD && is_c(q.src(1)) && ival(q.src(1)) > 0)
        if (UOp b = quotient_base(q.src(0), base, div)) return finish(b % (div * ival(q.src(1))));
    }
  }
  return UOp();
}

// ---- fold_where_closure: in cond.where(t, f), cond is True within t and False within f ------------------------------
inline bool in_slice(const UOp& root, const UOp& target) {  // target in root's backward slice (with self)?
  if (root == target) return true;
  if (!target.slice_ops().subset_of(root.slice_ops())) return false;
  std::unordered_set<const UOpNode*> seen{root.node()};
  std::vector<const UOp*> st{&root};
  while (!st.empty()) {
    const UOp* x = st.back();
    st.pop_back();
    for (const UOp& s : x->src()) {
      if (s == target) return true;
      if (seen.insert(s.node()).second) st.push_back(&s);
    }
  }
  return false;
}
inline bool has_op_in_slice(const UOp& root, Ops op) { return root.slice_ops().has(op); }
inline UOp fold_where_closure(const UOp& cond, const UOp& t, const UOp& f) {
  if (!in_slice(t, cond) && !in_slice(f, cond)) return UOp();
  // INDEX gates are owned by the valid/store-coalescing machinery, leave them alone
  if (has_op_in_slice(cond, Ops::INDEX) || has_op_in_slice(t, Ops::INDEX) || has_op_in_slice(f, Ops::INDEX)) return UOp();
  return where(cond, t.substitute({{cond, UOp::const_(cond.dtype(), true)}}), f.substitute({{cond, UOp::const_(cond.dtype(), false)}}));
}

// ---- lt folding / simplex -----------------------------------------------------------------------------------------
inline UOp lt_folding(const UOp& x, int64_t c) {
  Terms terms, p, np;  // perf: no heap vectors (tried on every weakint `x < c`)
  split_into(x, Ops::ADD, terms);
  for (const UOp& u : terms) (const_factor(u) == 1 ? p : np).push_back(u);
  if (np.empty()) return UOp();
  int64_t d = c;
  for (const UOp& u : np) d = pgcd(d, const_factor(u));
  if (d <= 1) return UOp();
  int64_t lo = 0, hi = 0;
  for (const UOp& u : p) lo = detail::sat_add(lo, imin(u)), hi = detail::sat_add(hi, imax(u));
  if (!(0 <= lo && hi < d)) return UOp();
  UOp q = divides(usum(np), d, true);  // the result is this rule's, rewritten again
  if (!q) return UOp();
  return q < pfloordiv(c, d);
}

inline UOp canonicalize_simplex(const UOp& X) {
  bool changed = false;
  std::vector<UOp> ret;
  for (UOp u : split_uop(X, Ops::ADD)) {
    if (u.op() == Ops::MUL && is_c(u.src(1)) && u.src(1).arg().as_double() > 0) changed = true, u = u.src(0);
    if (!(GroupOp::Irreducible.has(u.op()) && u.vmin().as_double() >= 0)) return UOp();
    ret.push_back(u);
  }
  return changed ? usum(ret) : UOp();
}

// ---- fold_divmod_general (divandmod.py) -----------------------------------------------------------------------------
template <class = void> UOp simplify_sym(const UOp& u);  // graph_rewrite(u, symbolic())

// bounds of the weakint node `a op b` as cached_minmax would compute them once it is built, without interning it
inline detail::Interval weak_bounds(Ops op, const detail::Interval& a, const detail::Interval& b) {
  if (!a.is_float && !b.is_float)
    if (auto r = detail::int_binary_interval(op, dtypes::weakint, a, b)) return *r;
  return detail::dtype_interval(dtypes::weakint);
}
inline detail::Interval binop_bounds(Ops op, const UOp& a, const UOp& b) {
  return weak_bounds(op, detail::cached_minmax(a), detail::cached_minmax(b));
}
inline detail::Interval const_bounds(int64_t v) { return detail::Interval::ints(v, v); }

// The additive decomposition of x that fold_divmod_general's const-divisor steps use: x = x_peeled + cst,
// x_peeled = sum(uops_no_const), each u = factors[i] * t[i] (once `decomposed`). It depends only on x, so
// nest_by_factor's nested calls on x//f reuse it instead of splitting and dividing again.
// t comes in two forms: as divides() builds it, with its unit factors (x*4 / 4 = x*1, as tinygrad builds it), and
// without them (x). A rule's own result may use the second: the driver would rewrite x*1 straight back to x (perf:
// interning x*1, its CONST 1 and that rewrite were ~10 % of a `(x*4+y)//4`). nest_by_factor ranks its candidates by
// node count, so they use the first, made only when it runs.
struct DivmodTerms {
  UOp x_peeled;
  int64_t cst = 0;
  Terms uops_no_const;
  SmallVec<int64_t, 8> factors;
  bool decomposed = false;
  explicit DivmodTerms(const UOp& x) {
    std::tie(x_peeled, cst) = pop_const(x);
    split_into(x_peeled, Ops::ADD, uops_no_const);
  }
  bool decompose() {  // false when some factor is 0 (a zero term, not a fixed point yet)
    if (decomposed) return true;
    for (const UOp& u : uops_no_const) {
      int64_t f = const_factor(u);
      UOp t = divides(u, f, true);  // succeeds exactly when divides(u, f) does
      if (!t) return false;
      lean_.push_back(t), factors.push_back(f);
    }
    return decomposed = true;
  }
  // the terms t (after decompose()), with their unit factors when `with_units`
  const Terms& terms(bool with_units) {
    if (!with_units) return lean_;
    for (size_t i = full_.size(); i < lean_.size(); i++) full_.push_back(divides(uops_no_const[i], factors[i]));
    return full_;
  }

 private:
  Terms lean_, full_;
};

// fold_divmod_general on `x op y` (op FLOORMOD when is_mod, else FLOORDIV). d is that node when the caller has it
// (the rule), or empty for nest_by_factor's candidates x//f, which are never interned: their bounds come from x's
// and f's. xt is x's decomposition, shared with the caller's.
template <class = void> UOp fold_divmod(bool is_mod, const UOp& x, const UOp& y, const UOp& d, DivmodTerms& xt) {
  auto mk = [&](const UOp& a, const UOp& b) { return is_mod ? a % b : floordiv(a, b); };
  // t*k and a+k: for the rule's own result (d set) without the identity nodes t*1 and a+0, which the driver would
  // intern and rewrite straight back to t and a (`x*1 -> x`, `x+0 -> x` are the first rules on any MUL/ADD). Not for
  // nest_by_factor's candidates: it ranks them by node count
  auto scaled = [&](const UOp& t, int64_t k) { return k == 1 && d ? t : t * k; };
  auto plus = [&](const UOp& a, int64_t k) { return k == 0 && d ? a : a + k; };
  if (imin(y) == 0 && imax(y) == 0)
    throw Error(std::string(is_mod ? "Mod" : "Division") + " by zero trying to rewrite " +
                std::string(op_name(is_mod ? Ops::FLOORMOD : Ops::FLOORDIV)) + " node");
  // x//y is constant (perf: with weakint operands the bounds of x//y follow from x's and y's, so it is not interned)
  const bool weak = x.dtype() == dtypes::weakint && y.dtype() == dtypes::weakint;
  const UOp xdiv = weak ? (is_mod || !d ? UOp() : d) : floordiv(x, y);
  const detail::Interval qi = xdiv ? detail::cached_minmax(xdiv) : binop_bounds(Ops::FLOORDIV, x, y);
  if (!qi.is_float && qi.lo == qi.hi && qi.lo != detail::kI64Min && qi.hi != detail::kI64Max)
    return is_mod ? x - y * qi.lo : xdiv ? xdiv.const_like(qi.lo) : cint(qi.lo);
  // PARAM // c is irreducible
  if (x.op() == Ops::PARAM && is_c(y) && ival(y) != 0 && x.arg().is_param() && x.arg().param().multiple_of % ival(y) == 0)
    return is_mod ? (d ? d.const_like(0) : cint(0)) : UOp();

  const UOp& x_peeled = xt.x_peeled;
  const int64_t cst = xt.cst;
  const Terms& uops_no_const = xt.uops_no_const;

  if (is_c(y) && ival(y) > 0) {
    const int64_t c = ival(y);
    // nested_div: (x%(k*c))//c -> (x//c)%k
    if (!is_mod && x.op() == Ops::FLOORMOD && is_c(x.src(1))) {
      UOp k = divides(x.src(1), c);
      if (k && ival(k) > 0) return floordiv(x.src(0), y) % k;
    }
    // remove_nested_mod: (a%4 + b)%2 -> (a+b)%2
    if (is_mod) {
      bool changed = false;
      for (const UOp& u : uops_no_const) changed |= u.op() == Ops::FLOORMOD && divisible(u.src(1), c);
      if (changed) {
        Terms new_xs;
        for (const UOp& u : uops_no_const) new_xs.push_back(u.op() == Ops::FLOORMOD && divisible(u.src(1), c) ? u.src(0) : u);
        return (usum(new_xs) + cst) % y;
      }
    }
    // decomposition u = f * t
    if (!xt.decompose()) return UOp();
    const Terms& terms = xt.terms(!d);  // nest_by_factor's candidates (no d) keep the unit factors
    const auto& factors = xt.factors;
    const size_t nt = terms.size();
    // fold_divmod_congruence: each factor f becomes its remainder r = f%c or f%c-c (the closer to 0, both when tied
    // or when there is one term); a choice whose remainder sum stays within one period of c gives the answer
    SmallVec<std::array<int64_t, 2>, 8> rem_choices;
    SmallVec<uint8_t, 8> nchoice, idx;
    size_t combos = 1;
    for (int64_t f : factors) {
      int64_t r = pfloormod(f, c);
      if (r * 2 == c || nt == 1) rem_choices.push_back({r, r - c}), nchoice.push_back(2);
      else rem_choices.push_back({std::abs(r) <= std::abs(r - c) ? r : r - c, 0}), nchoice.push_back(1);
      combos *= nchoice[nchoice.size() - 1];
      idx.push_back(0);
    }
    // perf: with weakint terms the bounds of `rem` follow from the terms' bounds (same left fold of ADDs as the built
    // expression), so a candidate is only built when it is the answer
    bool weak_terms = weak;
    for (const UOp& t : terms) weak_terms &= t.dtype() == dtypes::weakint;
    if (combos <= 4096) {
      auto build_rem = [&] {
        UOp rem;
        for (size_t i = 0; i < nt; i++) {
          int64_t r = rem_choices[i][idx[i]];
          if (r == 0) continue;
          UOp t = scaled(terms[i], r);
          rem = rem ? rem + t : t;
        }
        return rem ? plus(rem, pfloormod(cst, c)) : cint(pfloormod(cst, c));
      };
      for (size_t n = 0; n < combos; n++) {
        int64_t lo, hi;
        UOp rem;
        if (weak_terms) {
          std::optional<detail::Interval> acc;
          for (size_t i = 0; i < nt; i++) {
            int64_t r = rem_choices[i][idx[i]];
            if (r == 0) continue;
            detail::Interval t = weak_bounds(Ops::MUL, detail::cached_minmax(terms[i]), const_bounds(r));
            acc = acc ? weak_bounds(Ops::ADD, *acc, t) : t;
          }
          detail::Interval ri = acc ? weak_bounds(Ops::ADD, *acc, const_bounds(pfloormod(cst, c))) : const_bounds(pfloormod(cst, c));
          lo = ri.lo, hi = ri.hi;
        } else {
          rem = build_rem();
          lo = imin(rem), hi = imax(rem);
        }
        if (lo != detail::kI64Min && hi != detail::kI64Max && pfloordiv(lo, c) == pfloordiv(hi, c)) {
          if (is_mod) {
            UOp r = rem ? rem : build_rem();
            int64_t q = pfloordiv(lo, c) * c;
            return q == 0 && d ? r : r - q;
          }
          UOp out;
          for (size_t i = 0; i < nt; i++) {
            int64_t k = (factors[i] - rem_choices[i][idx[i]]) / c;
            if (k == 0) continue;
            UOp t = scaled(terms[i], k);
            out = out ? out + t : t;
          }
          int64_t tail = pfloordiv(cst, c) + pfloordiv(lo, c);
          return out ? plus(out, tail) : cint(tail);
        }
        for (size_t i = nt; i-- > 0;) {  // odometer, last term fastest (itertools.product)
          if (++idx[i] < nchoice[i]) break;
          idx[i] = 0;
        }
      }
    }
    // gcd_with_remainder
    int64_t g = c;
    for (int64_t f : factors) g = pgcd(g, f);
    if (g > 1) {
      UOp dx = divides(x_peeled, g);
      if (dx) {
        UOp new_x = simplify_sym(dx) + pfloormod(pfloordiv(cst, g), c / g);
        if (imin(new_x) >= 0) {
          if (is_mod) return (new_x % (c / g)) * g + pfloormod(cst, g);
          return floordiv(new_x, c / g) + pfloordiv(cst, c);
        }
      }
    }
    // nest_by_factor: x//c -> (x//f)//(c/f) for the factors f dividing c; the candidate with the fewest nodes wins
    SmallVec<int64_t, 8> divs;
    for (size_t i = 0; i < uops_no_const.size(); i++) {
      int64_t af = std::abs(factors[i]);
      if (uops_no_const[i].op() != Ops::CONST && 1 < af && af < c && c % af == 0 &&
          std::find(divs.begin(), divs.end(), af) == divs.end())
        divs.push_back(af);
    }
    std::sort(divs.data(), divs.data() + divs.size());
    UOp best;
    size_t best_n = SIZE_MAX;
    for (int64_t dv : divs) {
      UOp newxs = fold_divmod(false, x, cint(dv), UOp(), xt);  // fold_divmod_general(x // dv)
      if (!newxs) continue;
      if (!is_mod) {
        UOp r = floordiv(newxs, c / dv);
        size_t n = r.slice_size();
        if (n < best_n) best = r, best_n = n;
      } else if (imin(x) >= 0 && imin(newxs) >= 0) {
        UOp b;
        for (size_t i = 0; i < nt; i++)
          if (int64_t fm = pfloormod(factors[i], dv)) { UOp t = xt.terms(true)[i] * fm; b = b ? b + t : t; }
        if (pfloormod(cst, dv)) b = b ? b + pfloormod(cst, dv) : cint(pfloormod(cst, dv));
        if (!b) b = x.const_like(0);
        if (0 <= imin(b) && imax(b) < dv) {
          UOp r = (newxs % (c / dv)) * dv + b;
          size_t n = r.slice_size();
          if (n < best_n) best = r, best_n = n;
        }
      }
    }
    if (best) return best;
  }

  // ** variable denominator / fallback rules **
  // split_uop(x, ADD) is x_peeled's terms plus the popped CONST
  Terms all_uops;
  for (const UOp& u : uops_no_const) all_uops.push_back(u);
  if (!(x_peeled == x)) all_uops.push_back(x.src(1));
  UOp gcd;
  if (weak && is_c(y) && all_uops[0].dtype() == dtypes::weakint) {
    // perf: a CONST divisor splits into the single factor CONST 1, so the common MUL factors are at most {1} and
    // simplify(UOp.gcd(...)) is the CONST gcd of the const factors; computed without building the product
    int64_t g = pgcd(ival(y), 0);
    for (const UOp& u : all_uops) g = pgcd(g, const_factor(u));
    if (g != 1) gcd = y.const_like(g);
  } else {
    std::vector<UOp> gargs(all_uops.begin(), all_uops.end());
    gargs.push_back(y);
    gcd = simplify_sym(uop_gcd(gargs));
    if (is_c(gcd) && ival(gcd) == 1) gcd = UOp();
  }
  if (gcd) {
    if (is_c(gcd) && ival(gcd) == 0) return UOp();
    UOp xe = divide_exact(x, gcd), ye = divide_exact(y, gcd);
    if (xe && ye) {
      UOp ret = mk(xe, ye);
      return is_mod ? ret * gcd : ret;
    }
    return UOp();
  }
  // factor_remainder: (d*x+y)//d -> x+y//d
  if (imin(y) < 0 || imin(x) < 0) return UOp();
  Terms quo, rem;
  for (size_t i = 0; i < all_uops.size(); i++) {
    const UOp& u = all_uops[i];
    if (UOp q = (is_c(y) && u != y && !divisible(u, ival(y))) ? UOp() : divide_exact(u, y)) { quo.push_back(q); continue; }
    if (is_c(y)) {
      int64_t cf = const_factor(u), yv = ival(y);
      if (pfloormod(cf, yv) != cf) {
        // divides(u, cf) is the decomposition's term when there is one (without unit factors in the rule's own result)
        UOp t = xt.decomposed && i < xt.uops_no_const.size() ? xt.terms(!d)[i] : divides(u, cf, bool(d));
        if (t) {
          rem.push_back(t * pfloormod(cf, yv));
          quo.push_back(is_mod ? u.const_like(0) : t * pfloordiv(cf, yv));
          continue;
        }
      }
    }
    rem.push_back(u);
  }
  if (quo.empty()) return UOp();
  UOp new_x = rem.empty() ? x.const_like(0) : usum(rem) + 0;
  if (imin(new_x) < 0) return UOp();
  return is_mod ? new_x % y : floordiv(new_x, y) + usum(quo);
}

template <class = void> UOp fold_divmod_general(const UOp& d) {
  DivmodTerms xt(d.src(0));
  return fold_divmod(d.op() == Ops::FLOORMOD, d.src(0), d.src(1), d, xt);
}

}  // namespace sym_detail

// ---- the rule tables --------------------------------------------------------------------------------------------
namespace sym_pats {
namespace p = pat;
inline constexpr auto x = p::var<"x">;
inline constexpr auto y = p::var<"y">;
inline constexpr auto z = p::var<"z">;
inline constexpr auto c = p::cvar<"c">;
inline constexpr auto c0 = p::cvar<"c0">;
inline constexpr auto c1 = p::cvar<"c1">;
inline constexpr auto c2 = p::cvar<"c2">;
inline constexpr auto d = p::cvar<"d">;
inline constexpr auto a = p::var<"a">;
inline constexpr auto b = p::var<"b">;
inline constexpr auto t = p::var<"t">;
inline constexpr auto f = p::var<"f">;
inline constexpr auto tt = p::var<"tt">;
inline constexpr auto ff = p::var<"ff">;
inline constexpr auto val = p::var<"val">;
inline constexpr auto x2 = p::var<"x2">;
inline constexpr auto cond = p::var<"cond">;
inline constexpr DTypeSet ints_w = dtypes::ints | DTypeSet(dtypes::weakint);
inline constexpr DTypeSet ints_bw = ints_w | DTypeSet(dtypes::bool_);
inline constexpr auto xb = p::var<"x">.dtype(dtypes::bool_);
inline constexpr auto yb = p::var<"y">.dtype(dtypes::bool_);
inline constexpr auto xi = p::var<"x">.dtype(ints_bw);
inline constexpr auto xw = p::var<"x">.dtype(dtypes::weakint);
inline constexpr auto ctrue = p::const_(true).dtype(dtypes::bool_);
inline constexpr auto cfalse = p::const_(false).dtype(dtypes::bool_);
}  // namespace sym_pats

inline UOp sym_bool(bool v) { return UOp::const_(dtypes::bool_, v); }

// Invalid poisons the value: ops move inside the gate so the Invalid reaches the LOAD/STORE and folds there. This runs
// before the arithmetic rules so that 0*maybe_invalid does not become 0 (tinygrad pm_data_invalid).
template <class = void> const PatternMatcher& pm_data_invalid() {
  using namespace sym_pats;
  static constexpr auto inv = p::const_(Invalid).template named<"i">();
  static constexpr auto gate = p::where(cond, x, inv);
  static constexpr OpSet unary_cast = GroupOp::Unary | OpSet{Ops::CAST, Ops::BITCAST};
  static constexpr auto idx = p::op<Ops::INDEX>(p::prefix(p::wild, inv));
  static const PatternMatcher pm{
      rule(p::op<Ops::STACK>(p::each(inv)), [](const auto& m) { return m["i"]; }),
      rule(p::ops<unary_cast>(inv), [](const auto& m) { return m["i"]; }),
      rule(p::ops<unary_cast>(gate).template named<"op">(),
           [](const auto& m) { UOp s[] = {m[x]}; return where(m[cond], m["op"].with_src(s), m["i"]); }),
      // binary ops move inside the gate, with Invalid in the false branch
      rule(p::ops<GroupOp::Binary>(gate, y).template named<"alu">(),
           [](const auto& m) { return where(m[cond], m[x].alu(m["alu"].op(), m[y]), m["i"]); }),
      rule(p::ops<GroupOp::Binary>(y, gate).template named<"alu">(),
           [](const auto& m) { return where(m[cond], m[y].alu(m["alu"].op(), m[x]), m["i"]); }),
      rule(p::ops<GroupOp::Binary - GroupOp::Comparison>(p::perm(inv, p::wild)), [](const auto& m) { return m["i"]; }),
      // an Invalid condition poisons the whole where; a gated Invalid condition lifts the gate out
      rule(p::where(inv, p::wild, p::wild), [](const auto& m) { return m["i"]; }),
      rule(p::where(gate, a, b), [](const auto& m) { return where(m[cond], where(m[x], m[a], m[b]), m["i"]); }),
      // normalize where(cond, Invalid, val) -> where(!cond, val, Invalid)
      rule(p::where(cond, inv, val),
           [](const auto& m) { return m[val].is_invalid() ? m["i"] : where(logical_not(m[cond]), m[val], m["i"]); }),
      // lift Invalid out: a.where(cond.where(x, Invalid), c) -> (!a|cond).where(a.where(x, c), Invalid)
      rule(p::where(a, gate, p::var<"c">),
           [](const auto& m) {
             if (m["c"].is_invalid()) return UOp();
             return where(logical_not(m[a]) | m[cond], where(m[a], m[x], m["c"]), m["i"]);
           }),
      rule(p::where(a, b, gate),
           [](const auto& m) { return m[b].is_invalid() ? UOp() : where(m[a] | m[cond], where(m[a], m[b], m[x]), m["i"]); }),
      // fold gated LOAD/STORE
      rule(p::op<Ops::STORE>(p::any(idx, p::cast(idx)), p::wild), [](const auto&) { return UOp::make(Ops::NOOP, dtypes::void_); }),
      rule(p::op<Ops::LOAD>(p::prefix(p::any(idx, p::cast(idx)))).template named<"x">(),
           [](const auto& m) { const UOp& l = m[x]; return l.nsrc() > 1 ? l.src(1) : l.const_like(0); }),
  };
  return pm;
}

template <class = void> const PatternMatcher& symbolic_simple() {
  using namespace sym_pats;
  using sym_detail::is_c;
  using sym_detail::ival;
  static const PatternMatcher pm = (pm_data_invalid() + PatternMatcher{
      // ** self folding **
      rule(x + 0, [](const auto& m) { return m[x]; }),
      rule(x * 1, [](const auto& m) { return m[x]; }),
      rule(xi ^ 0, [](const auto& m) { return m[x]; }),
      rule(p::floordiv(x, x), [](const auto& m) { return m[x].const_like(1); }),
      rule(p::floordiv(x, 1), [](const auto& m) { return m[x]; }),
      rule(p::floordiv(x, -1), [](const auto& m) { return -m[x]; }),
      rule((x ^ y) ^ y, [](const auto& m) { return m[x]; }),
      rule((p::wild % y).template named<"base">() % y, [](const auto& m) { return m["base"]; }),
      rule(p::op<Ops::ADD>().dtype(dtypes::weakint).template named<"x">(), [](const auto& m) { return sym_detail::fold_add_divmod_recombine(m[x]); }),
      rule(xb & c, [](const auto& m) { return m[c].arg().as_double() != 0 ? m[x] : m[c]; }),
      rule(xb | c, [](const auto& m) { return m[c].arg().as_double() != 0 ? m[c] : m[x]; }),
      rule(p::ne(xb, cfalse), [](const auto& m) { return m[x]; }),
      rule(p::ops<GroupOp::Idempotent>(x, x), [](const auto& m) { return m[x]; }),
      rule(p::logical_not(p::logical_not(xb)), [](const auto& m) { return m[x]; }),
      rule(p::where(xb, ctrue, cfalse), [](const auto& m) { return m[x]; }),
      rule(p::where(xb, cfalse, ctrue), [](const auto& m) { return logical_not(m[x]); }),
      rule(p::ne(p::cast(xb, dtypes::uint8, dtypes::uint16, dtypes::uint32, dtypes::uint64, dtypes::int8, dtypes::int16,
                         dtypes::int32, dtypes::int64, dtypes::weakint), c),
           [](const auto& m) {
             double v = m[c].arg().as_double();
             return v == 0 ? m[x] : v == 1 ? logical_not(m[x]) : sym_bool(true);
           }),
      rule(p::trunc(xi), [](const auto& m) { return m[x]; }),
      // ** zero folding **
      rule(x < x, [](const auto&) { return sym_bool(false); }),
      rule(x % x, [](const auto& m) { return m[x].const_like(0); }),
      rule(x ^ x, [](const auto& m) { return m[x].const_like(0); }),
      rule(x & 0, [](const auto& m) { return m[x].const_like(0); }),
      rule((x & p::cvar<"mask">) >> p::cvar<"k">,
           [](const auto& m) {
             int64_t mask = ival(m["mask"]), k = ival(m["k"]);
             if (k < 0 || k > 62 || (mask | ((int64_t(1) << k) - 1)) != -1) return UOp();
             return m[x] >> k;
           }),
      rule(p::floordiv(x & p::cvar<"mask">, c),
           [](const auto& m) {
             int64_t mask = ival(m["mask"]), cv = ival(m[c]);
             if (!(cv > 0 && (cv & (cv - 1)) == 0 && (mask | (cv - 1)) == -1)) return UOp();
             return floordiv(m[x], cv);
           }),
      rule(p::ne(xi, x), [](const auto&) { return sym_bool(false); }),
      // ** constant folding ** (the source pattern states fold_const_alu's own first test, so the sieve can skip it)
      rule(p::ops<GroupOp::ALU>(p::each(p::ops<OpSet{Ops::CONST, Ops::CAST}>())).template named<"a">(),
           [](const auto& m) { return sym_detail::fold_const_alu(m[a]); }),
      // bool MUL is AND, ADD/MAX is OR
      rule(xb * yb, [](const auto& m) { return m[x] & m[y]; }),
      rule(xb + yb, [](const auto& m) { return m[x] | m[y]; }),
      rule(p::maximum(xb, yb), [](const auto& m) { return m[x] | m[y]; }),
      // ** float division **
      rule(p::cvar<"x">.arg(0) / 0, [](const auto& m) { return m[x].const_like(NAN); }),
      rule((x * 0) / 0, [](const auto& m) { return m[x].const_like(NAN); }),
      rule(x / x, [](const auto& m) { return m[x].const_like(1); }),
      rule((x * x2) / x2, [](const auto& m) { return m[x]; }),
      // x*0 -> 0 (nan for a nan/inf CONST)
      rule(x * 0,
           [](const auto& m) {
             const UOp& v = m[x];
             if (v.op() == Ops::CONST && v.arg().is<double>() && !std::isfinite(v.arg().get<double>())) return v.const_like(NAN);
             return v.const_like(0);
           }),
      // ** cast / bitcast **
      rule(p::ops<OpSet{Ops::CAST, Ops::BITCAST}>().template named<"root">(),
           [](const auto& m) { const UOp& r = m["root"]; return r.dtype() == r.src(0).dtype() ? r.src(0) : UOp(); }),
      rule(p::cast(p::cast(x).template named<"ca">()).template named<"cb">(),
           [](const auto& m) {
             return m[x].dtype() == m["cb"].dtype() && can_lossless_cast(m["cb"].dtype(), m["ca"].dtype()) ? m[x] : UOp();
           }),
      rule(p::cast(x, dtypes::bool_), [](const auto& m) { return ne(m[x], m[x].const_like(0)); }),
      // ** pow **
      rule(p::op<Ops::POW>(x, c),
           [](const auto& m) {
             const UOp& xv = m[x];
             double cv = m[c].arg().as_double();
             auto pw = [&](double e) { return xv.alu(Ops::POW, xv.const_like(e)); };
             if (cv < 0) { UOp r = reciprocal(xv); return r.alu(Ops::POW, r.const_like(-cv)); }
             if (cv == 0) return xv.const_like(1);
             if (double(int64_t(cv - 0.5)) + 0.5 == cv) return pw(cv - 0.5) * sqrt(xv);
             if (double(int64_t(cv)) == cv) {
               UOp y2 = pw(std::floor(cv / 2));
               return int64_t(cv) % 2 == 1 ? y2 * y2 * xv : y2 * y2 * 1;
             }
             return UOp();
           }),
      // positive const ** x
      rule(p::op<Ops::POW>(c, x),
           [](const auto& m) {
             double cv = m[c].arg().as_double();
             if (cv == 1) return m[c];
             return cv > 0 ? exp2(m[x] * std::log2(cv)) : UOp();
           }),
      // ** simple where folding **
      rule(p::where(p::wild, val, val), [](const auto& m) { return m[val]; }),
      rule(p::where(p::cvar<"gate">, p::var<"c0">, p::var<"c1">),
           [](const auto& m) { return m["gate"].arg().as_double() != 0 ? m["c0"] : m["c1"]; }),
      rule(p::where(a, p::where(b, p::var<"c">, p::var<"d">), p::var<"d">),
           [](const auto& m) { return where(m[a] & m[b], m["c"], m["d"]); }),
      rule(p::where(a, p::var<"c">, p::where(b, p::var<"c">, p::var<"d">)),
           [](const auto& m) { return where(m[a] | m[b], m["c"], m["d"]); }),
  }).with_fold(&sym_detail::fold_const_pair);
  return pm;
}

namespace sym_detail {
template <class = void> PatternMatcher make_commutative() {
  using namespace sym_pats;
  return PatternMatcher{
      rule(pat::ops<GroupOp::Commutative>().dtype(dtypes::weakint).template named<"x">(),
           [](const auto& m) {
             const UOp& u = m[x];
             if (u.nsrc() != 2 || !tuplize_less(u.src(1), u.src(0))) return UOp();
             UOp s[] = {u.src(1), u.src(0)};
             return u.with_src(s);
           }),
  };
}
}  // namespace sym_detail

template <class = void> const PatternMatcher& commutative() {
  static const PatternMatcher pm = sym_detail::make_commutative();
  return pm;
}

namespace sym_detail {
template <class = void> PatternMatcher make_phase2() {
  using namespace sym_pats;
  // (x op c1) op c2 -> x op (c1 op c2); skipped when c1 op c2 does not fold (int64 overflow: Python ints would not
  // overflow), otherwise reassociation and the canonical order would cycle
  auto assoc = [](const auto& m) {
    const UOp& fu = m["f"];
    UOp folded = fold_const_alu(m[c1].alu(fu.op(), m[c2]));
    return folded ? m[x].alu(fu.op(), folded) : UOp();
  };
  return PatternMatcher{
      // ** boolean algebra **
      rule(xb | p::logical_not(xb), [](const auto&) { return sym_bool(true); }),
      // ** combine terms **
      rule(x * c0 + x * c1, [](const auto& m) { return m[x] * (m[c0] + m[c1]); }),
      rule((y + x * c0) + x * c1, [](const auto& m) { return m[y] + m[x] * (m[c0] + m[c1]); }),
      rule(x + x * c, [](const auto& m) { return m[x] * (m[c] + 1); }),
      rule((y + x) + x * c, [](const auto& m) { return m[y] + m[x] * (m[c] + 1); }),
      rule((y + x * c) + x, [](const auto& m) { return m[y] + m[x] * (m[c] + 1); }),
      rule(x + x, [](const auto& m) { return m[x] * 2; }),
      rule((y + x) + x, [](const auto& m) { return m[y] + m[x] * 2; }),
      rule((x / x2) / p::var<"x3">, [](const auto& m) { return m[x2] == m["x3"] ? UOp() : m[x] / (m[x2] * m["x3"]); }),
      rule(-1 * (x + c), [](const auto& m) { return (-m[x]) + (-m[c]); }),
      rule(p::cvar<"y"> * (xw + c), [](const auto& m) { return (m[y] * m[x]) + (m[y] * m[c]); }),
      // ** where folding **
      rule(p::where(p::logical_not(cond.dtype(dtypes::bool_)), t, f),
           [](const auto& m) { return m[f].is_invalid() ? UOp() : where(m[cond], m[f], m[t]); }),
      rule(p::where(cond.dtype(dtypes::bool_), t, f), [](const auto& m) { return fold_where_closure(m[cond], m[t], m[f]); }),
      rule(p::ops<GroupOp::Binary>(p::where(p::var<"c">, t, f), p::where(p::var<"c">, tt, ff)).template named<"alu">(),
           [](const auto& m) {
             if (!((m[t].op() == Ops::CONST && m[tt].op() == Ops::CONST) || (m[f].op() == Ops::CONST && m[ff].op() == Ops::CONST))) return UOp();
             Ops o = m["alu"].op();
             return where(m["c"], m[t].alu(o, m[tt]), m[f].alu(o, m[ff]));
           }),
      rule((y + p::where(p::var<"c">, t, f)) + p::where(p::var<"c">, tt, ff),
           [](const auto& m) {
             if (!((m[t].op() == Ops::CONST && m[tt].op() == Ops::CONST) || (m[f].op() == Ops::CONST && m[ff].op() == Ops::CONST))) return UOp();
             return m[y] + where(m["c"], m[t] + m[tt], m[f] + m[ff]);
           }),
      rule(p::where(p::var<"c">, t, 0) + p::where(p::var<"c">, 0, f), [](const auto& m) { return where(m["c"], m[t], m[f]); }),
      // ** range facts **
      rule(p::ops<OpSet{Ops::CMPLT, Ops::CMPNE, Ops::FLOORDIV, Ops::FLOORMOD, Ops::PARAM, Ops::AFTER, Ops::SPECIAL}>().template named<"x">(),
           [](const auto& m) {
             const UOp& u = m[x];
             if (dtypes::is_float(u.dtype()) || u.dtype() == dtypes::void_) return UOp();
             // perf: read the bounds as they are cached (vmin()/vmax() build an Arg each)
             const detail::Interval& iv = detail::cached_minmax(u);
             if (!iv.is_float) {
               if (iv.lo != iv.hi || iv.lo == detail::kI64Min || iv.lo == detail::kI64Max) return UOp();
               return u.const_like(detail::interval_value(iv, u.dtype(), false));
             }
             Arg lo = u.vmin(), hi = u.vmax();
             if (!(lo == hi) || lo.as_int() == detail::kI64Min || lo.as_int() == detail::kI64Max) return UOp();
             return u.const_like(lo);
           }),
      rule(p::op<Ops::RANGE>(p::op<Ops::CONST>()).template named<"x">(),
           [](const auto& m) {
             const UOp& u = m[x];
             return u.vmin() == u.vmax() ? u.const_like(u.vmin()) : UOp();
           }),
      // ** max folding **
      rule(p::where(p::cvar<"a"> < b, b, p::cvar<"c">),
           [](const auto& m) { return m["a"].arg().py_equal(m["c"].arg()) ? maximum(m["a"], m[b]) : UOp(); }),
      rule(p::where(a < p::cvar<"b">, p::cvar<"c">, a),
           [](const auto& m) { return m["b"].arg().py_equal(m["c"].arg()) ? maximum(m[a], m["b"]) : UOp(); }),
      rule(p::maximum(x, y),
           [](const auto& m) {
             const UOp &u = m[x], &v = m[y];
             if (dtypes::is_float(u.dtype())) return UOp();
             if (u.vmin().as_double() >= v.vmax().as_double()) return u;
             if (u.vmax().as_double() <= v.vmin().as_double()) return v;
             return UOp();
           }),
      // ** two stage ALU folding **
      rule(((x + c1) + c2).template named<"f">(), assoc),
      rule(((x * c1) * c2).template named<"f">(), assoc),
      rule(((x & c1) & c2).template named<"f">(), assoc),
      rule(((x | c1) | c2).template named<"f">(), assoc),
      rule(p::maximum(p::maximum(x, c1), c2).template named<"f">(), assoc),
      rule(p::floordiv(p::floordiv(x, c1), c2),
           [](const auto& m) { return m[c2].vmin().as_double() > 0 ? floordiv(m[x], m[c1] * m[c2]) : UOp(); }),
      // ** lt **
      rule((c0 + p::var<"x">.dtype(ints_w)) < c1, [](const auto& m) { return m[x] < (m[c1] - m[c0]); }),
      rule((c0 * xw) < c1,
           [](const auto& m) {
             int64_t v0 = ival(m[c0]), v1 = ival(m[c1]);
             if (std::abs(v0) <= 1) return UOp();
             return (v0 > 0 ? m[x] : -m[x]) < -pfloordiv(-v1, std::abs(v0));
           }),
      rule(p::floordiv(xw, d) < c,
           [](const auto& m) {
             int64_t dv = ival(m[d]), cv = ival(m[c]);
             return dv > 0 ? m[x] < cv * dv : dv < 0 ? m[x] > cv * dv : UOp();
           }),
      // ** move add/mul consts to end **
      rule((x + c1) + y, [](const auto& m) { return m[y].op() == Ops::CONST ? UOp() : (m[x] + m[y]) + m[c1]; }),
      rule((x * c1) * y, [](const auto& m) { return m[y].op() == Ops::CONST ? UOp() : (m[x] * m[y]) * m[c1]; }),
      // ** generic lt folding **
      rule(xw < c, [](const auto& m) { return ival(m[c]) > 0 ? lt_folding(m[x], ival(m[c])) : UOp(); }),
      rule(xw * -1 < y * -1, [](const auto& m) { return m[y] < m[x]; }),
      rule(p::ne(xw < 1, true),
           [](const auto& m) {
             UOp nx = canonicalize_simplex(m[x]);
             return nx ? ne(nx < 1, true) : UOp();
           }),
      rule(p::op<Ops::RANGE>(p::var<"end">).template named<"r">() % p::var<"end">, [](const auto& m) { return m["r"]; }),
      rule(p::floordiv(p::op<Ops::RANGE>(p::var<"end">).template named<"r">(), p::var<"end">), [](const auto& m) { return m["r"].const_like(0); }),
      // ** cast folding **
      rule(p::cast(p::cast(x).template named<"ca">()).template named<"cb">(),
           [](const auto& m) { return can_lossless_cast(m[x].dtype(), m["ca"].dtype()) ? m[x].cast(m["cb"].dtype()) : UOp(); }),
      rule(p::cast(p::cast(p::var<"x">.dtype(ints_w)).dtype(ints_w).template named<"ca">()).template named<"cb">(),
           [](const auto& m) {
             DType ad = m["ca"].dtype();
             if (ad == dtypes::weakint || ad == dtypes::int64 || ad == dtypes::uint64) {  // int64-wide: every value fits
               if (ad == dtypes::uint64 && m[x].vmin().as_int() < 0) return UOp();
               return m[x].cast(m["cb"].dtype());
             }
             return dtypes::imin(ad) <= m[x].vmin().as_int() && m[x].vmax().as_int() <= dtypes::imax(ad) ? m[x].cast(m["cb"].dtype()) : UOp();
           }),
      rule(p::cast(xw + c, dtypes::int8, dtypes::int16, dtypes::int32, dtypes::int64).template named<"cast">(),
           [](const auto& m) { return m[x].cast(m["cast"].dtype()) + m["cast"].const_like(m[c].arg()); }),
      // after/end with 1 src is just src[0]
      rule(p::ops<OpSet{Ops::AFTER, Ops::END}>(p::var<"s">), [](const auto& m) { return m["s"]; }),
  };
}

template <class = void> PatternMatcher make_div_and_mod() {
  using namespace sym_pats;
  return PatternMatcher{
      // (x//c+a)//d -> (x+a*c)//(c*d) for d>0
      rule(p::floordiv(p::floordiv(x, c) + p::cvar<"a">, d),
           [](const auto& m) { return ival(m[d]) > 0 ? floordiv(m[x] + m["a"] * m[c], m[c] * m[d]) : UOp(); }),
      // (x+c)//d -> (x+c%d)//d + c//d ; (x+c)%d -> (x+c%d)%d
      rule(p::ops<OpSet{Ops::FLOORDIV, Ops::FLOORMOD}>(xw + c, d).template named<"n">(),
           [](const auto& m) {
             int64_t cv = ival(m[c]), dv = ival(m[d]);
             if (dv == 0 || pfloormod(cv, dv) == cv) return UOp();
             if (m["n"].op() == Ops::FLOORDIV) return floordiv(m[x] + pfloormod(cv, dv), m[d]) + pfloordiv(cv, dv);
             return (m[x] + pfloormod(cv, dv)) % m[d];
           }),
      rule(p::ops<OpSet{Ops::FLOORDIV, Ops::FLOORMOD}>().dtype(dtypes::weakint).template named<"d">(),
           [](const auto& m) { return fold_divmod_general(m["d"]); }),
  };
}
}  // namespace sym_detail

template <class = void> const PatternMatcher& div_and_mod_symbolic() {
  static const PatternMatcher pm = sym_detail::make_div_and_mod();
  return pm;
}

template <class = void> const PatternMatcher& symbolic() {
  static const PatternMatcher pm = symbolic_simple() + commutative() + sym_detail::make_phase2() + div_and_mod_symbolic();
  return pm;
}

template <class> UOp sym_detail::simplify_sym(const UOp& u) { return u.op() == Ops::CONST ? u : graph_rewrite(u, symbolic()); }

template <class> UOp UOp::simplify() const {
  if (op() == Ops::CONST) return *this;
  if (op() == Ops::SINK &&
      std::all_of(src().begin(), src().end(), [](const UOp& s) { return s.op() == Ops::CONST || (s.op() == Ops::STACK && s.nsrc() == 0); }))
    return *this;
  return graph_rewrite(*this, symbolic());
}

// ---- sym: symbolic + pm_simplify_valid + sym-only rules + pm_clean_up_group_sink (tinygrad uop/symbolic.py `sym`) ----
// Left out of sym (no vectors / transcendentals / image lowering here): the STACK-ALU reorder, POW -> xpow, and the
// IMAGE-only skip in gated_given_valid. REDUCE rules only fire on a range-form REDUCE (arg (op, 0)), as tinygrad's
// `arg=Ops.ADD` pattern does; a tensor-level REDUCE (arg (op, n_axes)) is left alone.
namespace sym_detail {

// parse_valid: X <= c -> (X, true, c); X >= c -> (X, false, c)
struct ParsedValid {
  UOp expr;
  bool upper;
  int64_t c;
};
inline std::optional<ParsedValid> parse_valid(const UOp& v) {
  if (v.op() == Ops::CMPNE && v.src(1).op() == Ops::CONST && v.src(1).arg().is_number() && v.src(1).arg().as_double() == 1 &&
      v.src(0).op() == Ops::CMPLT && dtypes::is_int(v.src(0).src(0).dtype()))
    return ParsedValid{v.src(0).src(0), false, imin(v.src(0).src(1))};  // (X < c) != True -> X >= c
  if (v.op() == Ops::CMPLT && dtypes::is_int(v.src(0).dtype())) {
    if (v.src(0).op() == Ops::CONST) return ParsedValid{v.src(1), false, ival(v.src(0)) + 1};  // c < X -> X >= c+1
    int64_t hi = imax(v.src(1));
    if (hi == detail::kI64Min) return std::nullopt;
    return ParsedValid{v.src(0), true, hi - 1};  // X < c -> X <= c-1
  }
  return std::nullopt;
}

// UOp.variable(name, lo, hi, dtype, param=True): the PARAM form, which the range-fact rule folds to a CONST when
// lo == hi. A bound can be empty (lo > hi) when the valid is unsatisfiable, which UOp::variable rejects, so the
// node is built directly.
inline UOp fake_variable(int64_t i, int64_t lo, int64_t hi, DType dt) {
  ParamArg p{-1, dt, std::pair{lo, hi}, 1, "fake" + std::to_string(i), AddrSpace::ALU, ""};
  return UOp::make(Ops::PARAM, dt, {UOp::shape_arg({})}, Arg(std::move(p)));
}

inline bool all_same(const std::vector<UOp>& xs) {
  for (const UOp& u : xs)
    if (!(u == xs[0])) return false;
  return true;
}

inline UOp uand(std::span<const UOp> xs) {
  UOp r = xs[0];
  for (size_t i = 1; i < xs.size(); i++) r = r & xs[i];
  return r;
}

// uop_given_valid: simplify `uop` knowing that `valid` is True, by substituting each bounded expression with a
// variable of the tightened range, simplifying, and substituting back
template <class = void> UOp uop_given_valid(const UOp& valid, UOp uop, bool try_simplex = true) {
  std::vector<std::pair<UOp, std::array<std::optional<int64_t>, 2>>> bounds;
  for (const UOp& stmt : split_uop(valid, Ops::AND)) {
    auto res = parse_valid(stmt);
    if (!res) continue;
    auto it = std::find_if(bounds.begin(), bounds.end(), [&](const auto& b) { return b.first == res->expr; });
    if (it == bounds.end()) bounds.push_back({res->expr, {}}), it = bounds.end() - 1;
    it->second[res->upper ? 1 : 0] = res->c;
  }
  std::vector<std::pair<UOp, UOp>> all_candidates;
  for (size_t i = 0; i < bounds.size(); i++) {
    const UOp& expr = bounds[i].first;
    int64_t v0 = bounds[i].second[0] ? *bounds[i].second[0] : imin(expr), v1 = bounds[i].second[1] ? *bounds[i].second[1] : imax(expr);
    all_candidates.emplace_back(expr, fake_variable(int64_t(i), v0, v1, expr.dtype()));
    if (!try_simplex) continue;
    std::vector<std::vector<std::pair<UOp, UOp>>> candidates{{all_candidates.back()}};
    if (expr.op() == Ops::ADD && v0 == 1) {
      std::vector<UOp> xs = split_uop(expr, Ops::ADD);
      if (std::all_of(xs.begin(), xs.end(), [](const UOp& u) { return GroupOp::Irreducible.has(u.op()); })) {
        std::vector<std::pair<UOp, UOp>> cand;
        for (const UOp& xi : xs) cand.emplace_back(xi, fake_variable(int64_t(i), 1, imax(xi), xi.dtype()));
        candidates.push_back(std::move(cand));
      }
    }
    for (const auto& candidate : candidates) {
      if (std::any_of(candidate.begin(), candidate.end(), [&](const auto& xn) { return !in_slice(uop, xn.first); })) continue;
      std::vector<UOp> newuops;
      for (const auto& [X, newX] : candidate)
        newuops.push_back(uop.substitute({{X, newX}}).simplify().substitute({{newX, X}}).simplify());
      if (all_same(newuops)) {
        uop = newuops[0];
      } else if (uop.op() == Ops::STACK && uop.nsrc() == 2 &&
                 std::all_of(newuops.begin(), newuops.end(), [](const UOp& n) { return n.op() == Ops::STACK && n.nsrc() == 2; })) {
        std::vector<UOp> s0, s1;
        for (const UOp& n : newuops) s0.push_back(n.src(0)), s1.push_back(n.src(1));
        if (all_same(s0)) { UOp s[] = {newuops[0].src(0), uop.src(1)}; uop = uop.with_src(s); }
        if (all_same(s1)) { UOp s[] = {uop.src(0), newuops[0].src(1)}; uop = uop.with_src(s); }
      }
    }
  }
  // try all the valids together (only the whole expressions)
  std::unordered_map<UOp, UOp> sub, back;
  for (const auto& [X, newX] : all_candidates) sub.emplace(X, newX), back.emplace(newX, X);
  if (UOp s_uop = uop.substitute(sub); !(s_uop == uop)) uop = s_uop.simplify().substitute(back).simplify();
  return uop;
}

// simplify_valid: an AND of clauses, each simplified under the ones before it (clauses whose expression appears in
// other clauses go first). Returns empty when nothing changed.
template <class = void> UOp simplify_valid(const UOp& valid) {
  if (has_op_in_slice(valid, Ops::INDEX)) return UOp();  // only for indexing
  std::vector<UOp> valids = split_uop(valid, Ops::AND);
  std::vector<std::pair<int64_t, UOp>> keyed;
  for (const UOp& v : valids) {
    int64_t pr = 0;
    if (auto res = parse_valid(v))
      for (const UOp& other : valids) pr -= in_slice(other, res->expr) ? 1 : 0;
    keyed.emplace_back(pr, v);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < valids.size(); i++) valids[i] = keyed[i].second;
  std::vector<UOp> ret;
  for (size_t i = 0; i < valids.size(); i++) {
    UOp stmt = valids[i];
    if (std::find(valids.begin(), valids.begin() + ptrdiff_t(i), stmt) != valids.begin() + ptrdiff_t(i)) continue;  // dedup
    if (!ret.empty()) stmt = uop_given_valid(uand(ret), stmt);
    ret.push_back(stmt);
  }
  if (ret == valids) return UOp();
  return uand(ret);
}

// where(cond, x, Invalid) with pure index math x: simplify x under cond (a LOAD in x would run even where cond is false)
template <class = void> UOp gated_given_valid(const UOp& cond, const UOp& x, const UOp& i) {
  if (x.dtype() != dtypes::weakint || has_op_in_slice(x, Ops::INDEX)) return UOp();
  UOp nx = uop_given_valid(cond, x, false);
  return nx == x ? UOp() : where(cond, nx, i);
}

// REDUCE arg (op, n): the reduce op, and whether it is a range-form REDUCE (n == 0)
inline std::optional<Ops> range_reduce_op(const UOp& r) {
  if (r.arg().is<Ops>()) return r.arg().get<Ops>();
  if (!r.arg().is<ArgTuple>()) return std::nullopt;
  const ArgTuple& t = r.arg().tuple();
  if (t.empty() || !t[0].is<Ops>() || (t.size() > 1 && !(t[1].is_number() && t[1].as_int() == 0))) return std::nullopt;
  return t[0].get<Ops>();
}

// reduce_mul_chain: MUL factors that do not depend on the reduce ranges move after the REDUCE
inline UOp reduce_mul_chain(const UOp& r) {
  auto rop = range_reduce_op(r);
  if (!rop || (*rop != Ops::ADD && *rop != Ops::MAX) || r.dtype() != r.src(0).dtype()) return UOp();
  std::vector<UOp> inside, outside;
  for (const UOp& m : split_uop(r.src(0), Ops::MUL)) {
    bool indep = true;
    for (size_t k = 1; k < r.nsrc() && indep; k++) indep = !(m == r.src(k)) && !in_slice(m, r.src(k));
    if (indep && (*rop != Ops::MAX || m.vmin().as_double() >= 0)) outside.push_back(m);
    else inside.push_back(m);
  }
  if (outside.empty()) return UOp();
  std::vector<UOp> srcs(r.src().begin(), r.src().end());
  UOp in = inside.empty() ? r.src(0).const_like(1) : inside[0];
  for (size_t k = 1; k < inside.size(); k++) in = in * inside[k];
  srcs[0] = in;
  UOp out = r.with_src(srcs);
  for (const UOp& m : outside) out = out * m;
  return out;
}

// commit_weak (uop/weak.py): a CONST takes the dtype directly, anything else is cast
inline UOp commit_weak(const UOp& s, DType dt) { return s.op() == Ops::CONST ? UOp::const_(dt, s.arg()) : s.cast(dt); }

inline UOp valid_idx(const UOp& idx, const UOp& cond) { return where(cond, idx, UOp::invalid()); }
inline UOp store(const UOp& index, const UOp& val) { return UOp::make(Ops::STORE, dtypes::void_, {index, val}); }
inline UOp reindex(const UOp& index, const UOp& gate) { return UOp::infer(Ops::INDEX, {index.src(0), valid_idx(index.src(1), gate)}); }

template <class = void> PatternMatcher make_sym_extra() {
  using namespace sym_pats;
  static constexpr auto inv = p::const_(Invalid).template named<"i">();
  static constexpr auto index = p::op<Ops::INDEX>().template named<"index">();
  static constexpr auto rd = p::reciprocal(1 + x).template named<"d">();
  return PatternMatcher{
      // ** where ** push a cast into the branches
      rule(p::cast(p::where(p::var<"s">, a, b)).template named<"cast">(),
           [](const auto& m) {
             if (m[a].is_invalid() || m[b].is_invalid()) return UOp();
             DType dt = m["cast"].dtype();
             return where(m["s"], commit_weak(m[a], dt), commit_weak(m[b], dt));
           }),
      // ** load/store folding **
      rule(p::op<Ops::STORE>(index, p::op<Ops::LOAD>(index)), [](const auto&) { return UOp::make(Ops::NOOP, dtypes::void_); }),
      rule(p::op<Ops::STORE>(index, p::where(p::var<"gate">, p::var<"alt">, p::op<Ops::LOAD>(index))),
           [](const auto& m) { return m["index"].nsrc() < 2 ? UOp() : store(reindex(m["index"], m["gate"]), m["alt"]); }),
      rule(p::op<Ops::STORE>(p::wild, inv), [](const auto&) { return UOp::make(Ops::NOOP, dtypes::void_); }),
      rule(p::op<Ops::STORE>(index, p::where(cond, val, inv)),
           [](const auto& m) { return m["index"].nsrc() < 2 ? UOp() : store(reindex(m["index"], m[cond]), m[val]); }),
      // ** reciprocal splitting **
      rule(p::reciprocal(x * x), [](const auto& m) { return reciprocal(m[x]) * reciprocal(m[x]); }),
      rule(p::reciprocal(x * x * x), [](const auto& m) { return reciprocal(m[x]) * reciprocal(m[x]) * reciprocal(m[x]); }),
      rule(p::reciprocal(x * c), [](const auto& m) { return reciprocal(m[x]) * reciprocal(m[c]); }),
      rule(x * rd, [](const auto& m) { return m["d"].const_like(1) - m["d"]; }),
      rule(x * (rd * y), [](const auto& m) { return m[y] * (m["d"].const_like(1) - m["d"]); }),
      rule(x * (rd + y), [](const auto& m) { return (m["d"].const_like(1) - m["d"]) + m[x] * m[y]; }),
      // ** move a const multiply after a REDUCE(ADD), then independent MUL factors after REDUCE(ADD/MAX) **
      rule(p::op<Ops::REDUCE>(p::prefix(x * c)).template named<"r">(),
           [](const auto& m) {
             const UOp& r = m["r"];
             if (range_reduce_op(r) != std::optional<Ops>(Ops::ADD)) return UOp();
             std::vector<UOp> srcs(r.src().begin(), r.src().end());
             srcs[0] = m[x];
             UOp nr = r.with_src(srcs);
             return nr * nr.const_like(m[c].arg());
           }),
      rule(p::op<Ops::REDUCE>(p::prefix(p::op<Ops::MUL>())).template named<"r">(), [](const auto& m) { return reduce_mul_chain(m["r"]); }),
      // ** combine terms (opinionated) **
      rule(-1 * (x + y), [](const auto& m) { return (-m[x]) + (-m[y]); }),
      rule((xw + y) * c, [](const auto& m) { return m[x] * m[c] + m[y] * m[c]; }),
  };
}
}  // namespace sym_detail

template <class = void> const PatternMatcher& pm_simplify_valid() {
  using namespace sym_pats;
  static const PatternMatcher pm{
      rule(p::op<Ops::AND>().template named<"valid">(), [](const auto& m) { return sym_detail::simplify_valid(m["valid"]); }),
      rule(p::where(cond, x, p::const_(Invalid).template named<"i">()),
           [](const auto& m) { return sym_detail::gated_given_valid(m[cond], m[x], m["i"]); }),
  };
  return pm;
}

template <class = void> const PatternMatcher& pm_clean_up_group_sink() {
  using namespace sym_pats;
  static const PatternMatcher pm{
      rule(p::op<Ops::GROUP>(x), [](const auto& m) { return m[x]; }),
      rule(p::ops<OpSet{Ops::SINK, Ops::GROUP}>().template named<"root">(),
           [](const auto& m) {
             static constexpr OpSet flat{Ops::NOOP, Ops::STACK, Ops::SINK, Ops::GROUP};
             const UOp& root = m["root"];
             if (!std::any_of(root.src().begin(), root.src().end(), [](const UOp& s) { return flat.has(s.op()); })) return UOp();
             std::vector<UOp> srcs;
             for (const UOp& s : root.src()) {
               if (flat.has(s.op())) srcs.insert(srcs.end(), s.src().begin(), s.src().end());
               else srcs.push_back(s);
             }
             return UOp::make(root.op(), dtypes::void_, srcs, root.arg());
           }),
  };
  return pm;
}

// tinygrad's `sym` (what codegen uses): symbolic + pm_simplify_valid + the sym-only rules + pm_clean_up_group_sink
template <class = void> const PatternMatcher& sym() {
  static const PatternMatcher pm = symbolic() + pm_simplify_valid() + sym_detail::make_sym_extra() + pm_clean_up_group_sink();
  return pm;
}

// ---- render (tinygrad uop/render.py `renderer`) --------------------------------------------------------------------
namespace sym_detail {
inline std::string py_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  for (int prec = 1; prec <= 17; prec++) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (auto e = s.find('e'); e != std::string::npos) {  // Python: 1e+20, 1e-05
    std::string mant = s.substr(0, e), ex = s.substr(e + 1);
    char sign = ex[0];
    std::string digits = ex.substr(1);
    while (digits.size() > 2 && digits[0] == '0') digits.erase(0, 1);
    return mant + "e" + sign + digits;
  }
  if (s.find('.') == std::string::npos) s += ".0";
  return s;
}
inline std::string const_str(const Arg& a) {
  if (a.is<bool>()) return a.get<bool>() ? "True" : "False";
  if (a.is<int64_t>()) return std::to_string(a.get<int64_t>());
  if (a.is<double>()) return py_float_repr(a.get<double>());
  if (a.is<InvalidT>()) return "Invalid";
  return a.str();
}
inline bool is_balanced(std::string_view s) {
  int d = 0;
  for (char ch : s) {
    d += (ch == '(') - (ch == ')');
    if (d < 0) return false;
  }
  return d == 0;
}
inline std::string strip_parens(const std::string& s) {
  if (s.size() >= 2 && s.front() == '(' && s.back() == ')' && is_balanced(std::string_view(s).substr(1, s.size() - 2)))
    return s.substr(1, s.size() - 2);
  return s;
}
inline int precedence(Ops o) {
  switch (o) {
    case Ops::MUL: case Ops::FLOORDIV: case Ops::FLOORMOD: return 1;
    case Ops::ADD: case Ops::SUB: return 2;
    case Ops::SHL: case Ops::SHR: return 3;
    case Ops::AND: return 4;
    case Ops::XOR: return 5;
    case Ops::OR: return 6;
    default: return 99;
  }
}
inline const char* binop_sym(Ops o) {
  switch (o) {
    case Ops::ADD: return "+"; case Ops::SUB: return "-"; case Ops::FLOORDIV: return "//"; case Ops::FLOORMOD: return "%";
    case Ops::SHL: return "<<"; case Ops::SHR: return ">>"; case Ops::MUL: return "*"; case Ops::CMPLT: return "<";
    case Ops::CMPNE: return "!="; case Ops::AND: return "&"; case Ops::OR: return "|"; case Ops::XOR: return "^";
    default: return nullptr;
  }
}
inline std::string render_node(const UOp& x, const std::unordered_map<const UOpNode*, std::string>& ctx) {
  auto S = [&](size_t i) -> const std::string& { return ctx.at(x.src(i).node()); };
  switch (x.op()) {
    case Ops::PARAM:
      if (x.arg().is_param()) return x.arg().param().name.empty() ? "p" + std::to_string(x.arg().param().slot) : x.arg().param().name;
      break;
    case Ops::BUFFER:
      if (x.arg().is_param() && !x.arg().param().name.empty()) return x.arg().param().name;
      if (x.arg().is_param()) return "b" + std::to_string(x.arg().param().slot);
      break;
    case Ops::AFTER: return S(0);
    case Ops::SPECIAL: return x.arg().is<std::string>() ? x.arg().get<std::string>() : x.arg().str();
    case Ops::RANGE: {
      const ArgTuple& t = x.arg().tuple();
      if (x.dtype() == dtypes::void_) return "loop" + t[0].str();
      std::string s = "r";
      for (size_t i = 0; i + 1 < t.size(); i++) {
        int64_t v = t[i].as_int();
        s += (i ? "_" : "") + (v >= 0 ? std::to_string(v) : "m" + std::to_string(-v));
      }
      return s;
    }
    case Ops::CONST: return const_str(x.arg());
    case Ops::CAST: return "(" + std::string(x.dtype().py_name()) + ")(" + S(0) + ")";
    case Ops::NEG: return "(-" + S(0) + ")";
    case Ops::RECIPROCAL: return "(1/" + S(0) + ")";
    case Ops::MAX: return "max(" + S(0) + ", " + S(1) + ")";
    case Ops::MULACC: return "(" + S(0) + "*" + S(1) + "+" + S(2) + ")";
    case Ops::WHERE: return "(" + S(1) + " if " + S(0) + " else " + S(2) + ")";
    case Ops::CDIV: return "cdiv(" + S(0) + ", " + S(1) + ")";
    case Ops::CMOD: return "cmod(" + S(0) + ", " + S(1) + ")";
    case Ops::STACK: {
      std::string s = "{";
      for (size_t i = 0; i < x.nsrc(); i++) s += (i ? "," : "") + S(i);
      return s + "}";
    }
    case Ops::INDEX: case Ops::STAGE: {
      std::string s;
      for (size_t i = 1; i < x.nsrc(); i++) s += "[" + strip_parens(S(i)) + "]";
      return s;
    }
    default: break;
  }
  if (const char* sy = binop_sym(x.op()); sy && x.nsrc() == 2) {
    std::string l = S(0), r = S(1);
    int pr = precedence(x.op());
    if (pr != 99) {
      if (precedence(x.src(0).op()) <= pr) l = strip_parens(l);
      if (precedence(x.src(1).op()) < pr) r = strip_parens(r);
    }
    return "(" + l + sy + r + ")";
  }
  return x.str();
}
}  // namespace sym_detail

template <class> std::string UOp::render() const {
  UOp s = simplify();
  std::unordered_map<const UOpNode*, std::string> ctx;
  for (const UOp& u : s.toposort()) ctx[u.node()] = sym_detail::render_node(u, ctx);
  return ctx.at(s.node());
}

}  // namespace graft
