// Compile-time UPat: patterns are constexpr expression-template values whose *types* carry the structure (root op
// set, names as fixed_string NTTPs, source form), so each rule instantiates straight-line matching code. Runtime
// payloads are tiny (dtype mask, arg value). Semantics are tinygrad's UPat (see reference/tinygrad_core.md §4):
//   src forms: none (any children) / ordered (tuple, exact length or prefix with any_len) / permuted (list: every
//   permutation, itertools order) / repeat (every child matches one pattern); pat::any = alternatives; a repeated name
//   must bind the same node (pointer compare, thanks to hash-consing).
// Permutations and alternatives are choice points of a backtracking matcher (continuation passing, see `match`),
// visited in the same order as tinygrad's list of matches, so "first result wins" agrees.
#pragma once
#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

#include "graft/core/uop.hpp"

namespace graft {

// A string usable as a template argument: pat::var<"x">.
template <size_t N> struct fixed_string {
  char data[N]{};
  constexpr fixed_string(const char (&s)[N]) { std::copy_n(s, N, data); }
  constexpr std::string_view view() const { return {data, N - 1}; }
  constexpr size_t size() const { return N - 1; }
};

namespace pat {

// ---- payloads --------------------------------------------------------------------------------------------------
// A constexpr-friendly arg constraint with Python `==` semantics for numbers (0 == 0.0 == False).
struct ArgMatch {
  enum Kind : uint8_t { None, Int, Float, Bool, Invalid_, DType_, Op_, Axis_ } kind = None;
  int64_t i = 0;
  double d = 0;
  constexpr ArgMatch() = default;
  constexpr ArgMatch(int v) : kind(Int), i(v) {}
  constexpr ArgMatch(long v) : kind(Int), i(v) {}
  constexpr ArgMatch(long long v) : kind(Int), i(v) {}
  constexpr ArgMatch(double v) : kind(Float), d(v) {}
  constexpr ArgMatch(bool v) : kind(Bool), i(v) {}
  constexpr ArgMatch(InvalidT) : kind(Invalid_) {}
  constexpr ArgMatch(DType t) : kind(DType_), i(t.index()) {}
  constexpr ArgMatch(Ops o) : kind(Op_), i(int64_t(o)) {}
  constexpr ArgMatch(AxisType a) : kind(Axis_), i(int64_t(a)) {}
  constexpr bool any() const { return kind == None; }
  Arg to_arg() const {
    switch (kind) {
      case Int: return Arg(i);
      case Float: return Arg(d);
      case Bool: return Arg(i != 0);
      case Invalid_: return Arg(Invalid);
      case DType_: return Arg(DType(DTypeId(i)));
      case Op_: return Arg(Ops(i));
      case Axis_: return Arg(AxisType(i));
      default: return Arg();
    }
  }
  bool matches(const Arg& a) const {
    switch (kind) {
      case None: return true;
      case Int: case Bool:
        if (a.is<int64_t>()) return a.get<int64_t>() == i;
        if (a.is<bool>()) return int64_t(a.get<bool>()) == i;
        if (a.is<double>()) return a.get<double>() == double(i);
        return false;
      case Float:
        if (a.is<double>()) return a.get<double>() == d || (d != d && a.get<double>() != a.get<double>());
        if (a.is<int64_t>() || a.is<bool>()) return double(a.as_int()) == d;
        return false;
      case Invalid_: return a.is<InvalidT>();
      case DType_: return a.is<DType>() && a.get<DType>().index() == i;
      case Op_: return a.is<Ops>() && int64_t(a.get<Ops>()) == i;
      case Axis_: return a.is<AxisType>() && int64_t(a.get<AxisType>()) == i;
    }
    return false;
  }
  // matches() with the common case inline: an int constraint on an int arg (CONST 0, 1, -1 in the rule tables)
  [[gnu::always_inline]] bool matches_inline(const Arg& a) const {
    if (kind == Int && a.is<int64_t>()) return a.get<int64_t>() == i;
    return matches(a);
  }
  constexpr bool same(const ArgMatch& o) const { return kind == o.kind && i == o.i && (d == o.d || (d != d && o.d != o.d)); }
  // the arg class (arg_class in core/arg.hpp) of every arg this constraint matches: numbers that compare equal
  // (0 == 0.0 == False) share a class, so equal classes are a necessary condition for a match
  constexpr uint8_t arg_class() const {
    switch (kind) {
      case Int: case Bool: return number_class(i);
      case Float: return number_class(d);
      case Invalid_: return kArgInvalid;
      default: return kArgOther;
    }
  }
};

// ---- structure ------------------------------------------------------------------------------------------------
// A light tuple (no std::tuple in hot templates).
template <class... Ps> struct List;
template <> struct List<> {
  static constexpr size_t size = 0;
};
template <class P, class... Rest> struct List<P, Rest...> {
  static constexpr size_t size = 1 + sizeof...(Rest);
  P head;
  List<Rest...> tail{};
  template <size_t I> constexpr const auto& get() const {
    if constexpr (I == 0) return head;
    else return tail.template get<I - 1>();
  }
};

struct NoSrc {};                                                    // src=None: any children
template <bool AnyLen, class... Ps> struct Ordered { List<Ps...> ps; };  // src=(a, b): in order
template <class... Ps> struct Permuted {                            // src=[a, b]: any order
  List<Ps...> ps;
  bool all_same = false;  // tinygrad tries a single ordering when every element is the same pattern
};
template <class P> struct Repeat { P p; };                          // src=UPat: every child matches p

inline constexpr fixed_string<1> no_name{""};

template <OpSet Ops_, fixed_string Name, class Src> struct Pat {
  static constexpr OpSet ops = Ops_;
  static constexpr std::string_view name = Name.view();
  DTypeSet dtypes{};
  ArgMatch arg_{};
  ArgMatch tag_{};  // None = any tag
  Src src{};

  template <class... D> constexpr Pat dtype(D... ds) const { Pat r = *this; r.dtypes = DTypeSet{DType(ds)...}; return r; }
  constexpr Pat dtype(DTypeSet s) const { Pat r = *this; r.dtypes = s; return r; }
  constexpr Pat arg(ArgMatch a) const { Pat r = *this; r.arg_ = a; return r; }
  constexpr Pat tag(ArgMatch a) const { Pat r = *this; r.tag_ = a; return r; }
  template <fixed_string N> constexpr Pat<Ops_, N, Src> named() const {
    static_assert(N.view() != "ctx", "a pattern name cannot be 'ctx' (tinygrad reserves it)");
    return {dtypes, arg_, tag_, src};
  }
};

template <fixed_string Name, class... Alts> struct AnyPat {
  static constexpr std::string_view name = Name.view();
  List<Alts...> alts;
  template <fixed_string N> constexpr AnyPat<N, Alts...> named() const { return {alts}; }
};

template <class T> struct is_pattern_t : std::false_type {};
template <OpSet O, fixed_string N, class S> struct is_pattern_t<Pat<O, N, S>> : std::true_type {};
template <fixed_string N, class... A> struct is_pattern_t<AnyPat<N, A...>> : std::true_type {};
template <class T> concept Pattern = is_pattern_t<std::remove_cvref_t<T>>::value;

// ---- vocabulary -----------------------------------------------------------------------------------------------
template <fixed_string N> inline constexpr Pat<OpSet{}, N, NoSrc> var{};
template <fixed_string N> inline constexpr Pat<OpSet{Ops::CONST}, N, NoSrc> cvar{};
inline constexpr Pat<OpSet{}, no_name, NoSrc> wild{};  // UPat() / UPat.var() without a name

// a CONST with this arg (tinygrad UPat.const(v)); also how scalars in operator sugar become patterns
constexpr Pat<OpSet{Ops::CONST}, no_name, NoSrc> const_(ArgMatch v) { return {DTypeSet{}, v, ArgMatch{}, NoSrc{}}; }

template <Pattern... Ps> constexpr Permuted<std::remove_cvref_t<Ps>...> perm(Ps... ps);
template <Pattern... Ps> constexpr Ordered<true, Ps...> prefix(Ps... ps) { return {List<Ps...>{ps...}}; }  // allow_any_len
// exactly these sources, in order; exact() with no argument is tinygrad's src=() (matches only a node without sources)
template <Pattern... Ps> constexpr Ordered<false, Ps...> exact(Ps... ps) { return {List<Ps...>{ps...}}; }
template <Pattern P> constexpr Repeat<P> each(P p) { return {p}; }

namespace detail {
template <class A, class B> constexpr bool same_pattern(const A&, const B&) { return false; }
template <OpSet O, fixed_string N, class S> constexpr bool same_pattern(const Pat<O, N, S>& a, const Pat<O, N, S>& b);
template <class... Ps> constexpr bool same_list(const List<Ps...>& a, const List<Ps...>& b) {
  if constexpr (sizeof...(Ps) == 0) return true;
  else return same_pattern(a.head, b.head) && same_list(a.tail, b.tail);
}
template <class S> constexpr bool same_src(const S& a, const S& b) {
  if constexpr (std::is_same_v<S, NoSrc>) return true;
  else if constexpr (requires { a.p; }) return same_pattern(a.p, b.p);
  else return same_list(a.ps, b.ps);
}
template <OpSet O, fixed_string N, class S> constexpr bool same_pattern(const Pat<O, N, S>& a, const Pat<O, N, S>& b) {
  return a.dtypes == b.dtypes && a.arg_.same(b.arg_) && a.tag_.same(b.tag_) && same_src(a.src, b.src);
}
template <class P0, class... Ps> constexpr bool all_same(const P0& p0, const Ps&... ps) {
  return (same_pattern(p0, ps) && ...);
}
}  // namespace detail

template <Pattern... Ps> constexpr Permuted<std::remove_cvref_t<Ps>...> perm(Ps... ps) {
  static_assert(sizeof...(Ps) >= 1 && sizeof...(Ps) <= 5, "a permuted source list holds 1 to 5 patterns");
  Permuted<std::remove_cvref_t<Ps>...> r{List<Ps...>{ps...}};
  r.all_same = detail::all_same(ps...);
  return r;
}

// pat::op<Ops::ADD>(a, b) ordered sources; pat::op<Ops::ADD>() any sources; pat::op<Ops::ADD>(perm(a, b)) / each(p)
// / prefix(a, ...) / exact() for the other forms. pat::ops<GroupOp::ALU>(...) takes an op set.
template <OpSet S, class... Args> constexpr auto ops(Args... args) {
  static_assert(!S.empty(), "a pattern op set cannot be empty");
  if constexpr (sizeof...(Args) == 0) return Pat<S, no_name, NoSrc>{};
  else if constexpr (sizeof...(Args) == 1 && !(Pattern<Args> && ...)) return Pat<S, no_name, Args...>{{}, {}, {}, args...};
  else {
    static_assert((Pattern<Args> && ...), "pat::op sources must be patterns (or one perm()/each()/prefix() form)");
    return Pat<S, no_name, Ordered<false, Args...>>{{}, {}, {}, {List<Args...>{args...}}};
  }
}
template <Ops... O> constexpr auto op(auto... args) { return ops<OpSet{O...}>(args...); }

template <fixed_string N = no_name, Pattern... Alts> constexpr AnyPat<N, Alts...> any(Alts... alts) {
  static_assert(sizeof...(Alts) >= 1 && sizeof...(Alts) <= 8, "pat::any takes 1 to 8 alternatives");
  return {List<Alts...>{alts...}};
}

// ---- operator sugar with tinygrad's meaning (mixin/elementwise.py on UPat) -----------------------------------
namespace detail {
template <class T> constexpr auto lift(const T& x) {
  if constexpr (Pattern<T>) return x;
  else return const_(ArgMatch(x));
}
template <class P> constexpr DTypeSet dtypes_of(const P& p) {
  if constexpr (requires { p.dtypes; }) return p.dtypes;
  else return DTypeSet{};
}
// UPat.alu: commutative ops get a permuted list, others a tuple; dtype is the LAST operand's (bool for compares)
template <Ops O, class... Ps> constexpr auto alu(Ps... ps) {
  DTypeSet dt = (O == Ops::CMPLT || O == Ops::CMPNE || O == Ops::CMPEQ) ? DTypeSet(dtypes::bool_) : (DTypeSet{}, ..., dtypes_of(ps));
  if constexpr (GroupOp::Commutative.has(O)) {
    auto src = perm(ps...);
    return Pat<OpSet{O}, no_name, decltype(src)>{dt, {}, {}, src};
  } else {
    return Pat<OpSet{O}, no_name, Ordered<false, Ps...>>{dt, {}, {}, {List<Ps...>{ps...}}};
  }
}
template <class A, class B> concept SugarPair = (Pattern<A> || Pattern<B>) &&
    (Pattern<A> || std::is_arithmetic_v<A>) && (Pattern<B> || std::is_arithmetic_v<B>);
}  // namespace detail

#define GRAFT_PAT_BINOP(sym, OP)                                                                              \
  template <class A, class B> requires detail::SugarPair<A, B> constexpr auto operator sym(const A& a, const B& b) { \
    return detail::alu<Ops::OP>(detail::lift(a), detail::lift(b));                                             \
  }
GRAFT_PAT_BINOP(+, ADD)
GRAFT_PAT_BINOP(*, MUL)
GRAFT_PAT_BINOP(%, FLOORMOD)
GRAFT_PAT_BINOP(^, XOR)
GRAFT_PAT_BINOP(&, AND)
GRAFT_PAT_BINOP(|, OR)
GRAFT_PAT_BINOP(<<, SHL)
GRAFT_PAT_BINOP(>>, SHR)
GRAFT_PAT_BINOP(<, CMPLT)
GRAFT_PAT_BINOP(!=, CMPNE)
#undef GRAFT_PAT_BINOP

template <Pattern A> constexpr auto operator-(const A& a) { return detail::alu<Ops::MUL>(a, const_(-1)); }
template <class A, class B> requires detail::SugarPair<A, B> constexpr auto operator-(const A& a, const B& b) {
  return detail::alu<Ops::ADD>(detail::lift(a), -detail::lift(b));
}
template <class A, class B> requires detail::SugarPair<A, B> constexpr auto operator>(const A& a, const B& b) {
  return detail::alu<Ops::CMPLT>(detail::lift(b), detail::lift(a));
}
template <Pattern A> constexpr auto logical_not(const A& a) { return detail::alu<Ops::CMPNE>(a, const_(true)); }
template <class A, class B> requires detail::SugarPair<A, B> constexpr auto operator>=(const A& a, const B& b) {
  return logical_not(detail::lift(a) < detail::lift(b));
}
template <class A, class B> requires detail::SugarPair<A, B> constexpr auto operator<=(const A& a, const B& b) {
  return logical_not(detail::lift(b) < detail::lift(a));
}
template <class A, class B> requires detail::SugarPair<A, B> constexpr auto ne(const A& a, const B& b) { return detail::lift(a) != detail::lift(b); }
template <class A, class B> requires detail::SugarPair<A, B> constexpr auto eq(const A& a, const B& b) { return logical_not(ne(a, b)); }
template <class A, class B> requires detail::SugarPair<A, B> constexpr auto maximum(const A& a, const B& b) {
  return detail::alu<Ops::MAX>(detail::lift(a), detail::lift(b));
}
template <class A, class B> requires detail::SugarPair<A, B> constexpr auto floordiv(const A& a, const B& b) {
  return detail::alu<Ops::FLOORDIV>(detail::lift(a), detail::lift(b));
}
template <Pattern A> constexpr auto reciprocal(const A& a) { return Pat<OpSet{Ops::RECIPROCAL}, no_name, Ordered<false, A>>{detail::dtypes_of(a), {}, {}, {List<A>{a}}}; }
template <class A, class B> requires detail::SugarPair<A, B> constexpr auto operator/(const A& a, const B& b) {
  return detail::lift(a) * reciprocal(detail::lift(b));
}
template <Pattern C, class T, class F> constexpr auto where(const C& c, const T& t, const F& f) {
  return detail::alu<Ops::WHERE>(c, detail::lift(t), detail::lift(f));
}
#define GRAFT_PAT_UNARY(fn, OP) \
  template <Pattern A> constexpr auto fn(const A& a) { return Pat<OpSet{Ops::OP}, no_name, Ordered<false, A>>{detail::dtypes_of(a), {}, {}, {List<A>{a}}}; }
GRAFT_PAT_UNARY(sqrt, SQRT)
GRAFT_PAT_UNARY(exp2, EXP2)
GRAFT_PAT_UNARY(log2, LOG2)
GRAFT_PAT_UNARY(sin, SIN)
GRAFT_PAT_UNARY(trunc, TRUNC)
#undef GRAFT_PAT_UNARY
// x.cast(dtype) / x.bitcast(dtype): dtype constraint on the CAST node (any dtype when none is given)
template <Pattern A, class... D> constexpr auto cast(const A& a, D... ds) {
  return Pat<OpSet{Ops::CAST}, no_name, Ordered<false, A>>{DTypeSet{DType(ds)...}, {}, {}, {List<A>{a}}};
}
template <Pattern A, class... D> constexpr auto bitcast(const A& a, D... ds) {
  return Pat<OpSet{Ops::BITCAST}, no_name, Ordered<false, A>>{DTypeSet{DType(ds)...}, {}, {}, {List<A>{a}}};
}
// UPat.or_casted / or_after
template <fixed_string N, Pattern A> constexpr auto or_casted(const A& a) { return any<N>(a, cast(a)); }

// ---- compile-time analysis ------------------------------------------------------------------------------------
namespace detail {

inline constexpr size_t kMaxNames = 32;
struct NameTable {
  std::array<std::string_view, kMaxNames> names{};
  size_t count = 0;
  constexpr void add(std::string_view n) {
    if (n.empty()) return;
    for (size_t i = 0; i < count; i++)
      if (names[i] == n) return;
    if (count == kMaxNames) throw "a rule binds more than 32 names";
    names[count++] = n;
  }
  constexpr int index(std::string_view n) const {
    for (size_t i = 0; i < count; i++)
      if (names[i] == n) return int(i);
    return -1;
  }
};

template <class P> constexpr void collect_names(NameTable& t);
template <class... Ps> constexpr void collect_list(NameTable& t, List<Ps...>*) { (collect_names<Ps>(t), ...); }
template <class S> constexpr void collect_src(NameTable& t) {
  if constexpr (requires { &S::p; }) collect_names<decltype(S::p)>(t);
  else if constexpr (requires { &S::ps; }) collect_list(t, static_cast<decltype(S::ps)*>(nullptr));
}
template <class P> constexpr void collect_names(NameTable& t) {
  if constexpr (requires { &P::alts; }) {
    t.add(P::name);
    collect_list(t, static_cast<decltype(P::alts)*>(nullptr));
  } else {
    t.add(P::name);
    collect_src<decltype(P::src)>(t);
  }
}
template <class P> constexpr NameTable names_of() {
  NameTable t;
  collect_names<P>(t);
  return t;
}
template <class P> inline constexpr NameTable names_v = names_of<P>();


// early_reject: ops of the direct child patterns that have exactly one op
template <class P> constexpr OpSet early_reject() {
  OpSet r;
  if constexpr (requires { P::ops; }) {
    using S = decltype(P::src);
    auto one = [&]<class C>() {
      if constexpr (requires { C::ops; })
        if (C::ops.size() == 1) r = r | C::ops;
    };
    if constexpr (requires { &S::p; }) one.template operator()<decltype(S::p)>();
    else if constexpr (requires { &S::ps; }) {
      [&]<class... Cs>(List<Cs...>*) { (one.template operator()<Cs>(), ...); }(static_cast<decltype(S::ps)*>(nullptr));
    }
  }
  return r;
}

// repeat_depth<P>(): where a repeated name forces a node to appear twice under the root. A repeated name binds one
// node at two distinct positions of the matched node's tree (the matcher maps pattern children to distinct sources),
// so a rule whose repeated name sits at depths <= D cannot match a node whose children and grandchildren down to
// depth D are all distinct nodes. Returns the smallest such D (1: two children, x + x; 2: a child and a grandchild or
// two grandchildren, x*c0 + x*c1, (y+x)+x), or 0 when no repeated name lies that shallow or the pattern has
// alternatives or a repeat form (not analysed). The matcher checks the node once and skips every such rule.
inline constexpr uint8_t kMaxRepeatDepth = 2;
struct NameDepths {
  std::array<std::string_view, 32> name{};
  std::array<uint8_t, 32> depth{};
  size_t n = 0;
  bool opaque = false;
};
template <class P> constexpr void collect_depths(NameDepths& t, uint8_t d) {
  if constexpr (requires { &P::alts; }) {
    t.opaque = true;
  } else {
    if (!P::name.empty()) {
      if (t.n == t.name.size()) t.opaque = true;
      else t.name[t.n] = P::name, t.depth[t.n++] = d;
    }
    using S = decltype(P::src);
    if constexpr (requires { &S::p; }) t.opaque = true;
    else if constexpr (requires { &S::ps; })
      [&]<class... C>(List<C...>*) { (collect_depths<C>(t, uint8_t(d + 1)), ...); }(static_cast<decltype(S::ps)*>(nullptr));
  }
}
template <class P> constexpr uint8_t repeat_depth() {
  NameDepths t;
  collect_depths<P>(t, 0);
  if (t.opaque) return 0;
  uint8_t best = 0;
  for (size_t i = 0; i < t.n; i++)
    for (size_t j = i + 1; j < t.n; j++)
      if (t.name[i] == t.name[j]) {
        uint8_t d = std::max(t.depth[i], t.depth[j]);
        if (!best || d < best) best = d;
      }
  return best <= kMaxRepeatDepth ? best : 0;
}

// the shallowest depth (1 or 2) at which a node appears twice among u's children and grandchildren, or 3 when none
// does: rules with repeat_depth below it cannot match u. Looks no deeper than max_depth (a result above it only
// says that there is no repeat down to max_depth).
inline uint8_t first_repeat_depth(const UOp& u, uint8_t max_depth = 2) {
  const size_t n = u.nsrc();
  if (n == 2 && u.src(0).nsrc() <= 2 && u.src(1).nsrc() <= 2) {  // a binary node over binary nodes or leaves, mostly
    const UOp &a = u.src(0), &b = u.src(1);
    if (a == b) return 1;
    if (max_depth < 2) return 2;
    // the grandchildren, absent ones as distinct addresses that are no node's
    auto at = [](const UOp& c, size_t i, uintptr_t none) {
      return i < c.nsrc() ? static_cast<const void*>(c.src(i).node()) : reinterpret_cast<const void*>(none);
    };
    const void *a0 = at(a, 0, 1), *a1 = at(a, 1, 2), *b0 = at(b, 0, 3), *b1 = at(b, 1, 4);
    const void *pa = a.node(), *pb = b.node();  // a grandchild that is also a child (never its own parent)
    bool rep = a0 == pb || a1 == pb || b0 == pa || b1 == pa || a0 == a1 || a0 == b0 || a0 == b1 || a1 == b0 ||
               a1 == b1 || b0 == b1;
    return rep ? 2 : 3;
  }
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (u.src(i) == u.src(j)) return 1;
  if (max_depth < 2 || n > 16) return 2;
  const UOpNode* seen[16];
  size_t k = 0;
  for (size_t i = 0; i < n; i++) seen[k++] = u.src(i).node();
  for (size_t i = 0; i < n; i++)
    for (const UOp& g : u.src(i).src()) {
      if (k == 16) return 2;  // too many to compare: no claim about depth 2
      for (size_t j = 0; j < k; j++)
        if (seen[j] == g.node()) return 2;
      seen[k++] = g.node();
    }
  return 3;
}

// nth permutation of k items in lexicographic (itertools.permutations) order
template <size_t K> constexpr std::array<std::array<uint8_t, K>, [] { size_t f = 1; for (size_t i = 2; i <= K; i++) f *= i; return f; }()>
    perm_table = [] {
      constexpr size_t F = [] { size_t f = 1; for (size_t i = 2; i <= K; i++) f *= i; return f; }();
      std::array<std::array<uint8_t, K>, F> t{};
      std::array<uint8_t, K> p{};
      for (size_t i = 0; i < K; i++) p[i] = uint8_t(i);
      for (size_t n = 0; n < F; n++) {
        t[n] = p;
        std::next_permutation(p.begin(), p.end());
      }
      return t;
    }();

}  // namespace detail

// ---- matching -------------------------------------------------------------------------------------------------
// Backtracking by continuation passing: match(p, u, s, k) matches u against p and then calls k() (the rest of the
// match, ending in the rule's callback); when k() fails, the next permutation/alternative is tried from this choice
// point, with the bindings made after it undone. Choices are visited depth first, earlier children outermost: the
// order of tinygrad's list of matches, so "first result wins" agrees. The matched prefix is not matched again.
struct MatchState {
  const UOp* slots[detail::kMaxNames];
  uint32_t bound = 0;  // bit i: slots[i] holds a binding (a failed branch restores the mask; slots are overwritten)
};

template <const detail::NameTable& Names, class P, class K> bool match(const P& p, const UOp& u, MatchState& s, K&& k);

namespace detail {
template <class S> inline constexpr bool is_prefix = false;
template <class... Ps> inline constexpr bool is_prefix<Ordered<true, Ps...>> = true;

template <const NameTable& Names, class P> [[gnu::always_inline]] inline bool bind(const UOp& u, MatchState& s) {
  if constexpr (P::name.empty()) return true;
  else {
    constexpr int slot = Names.index(P::name);
    static_assert(slot >= 0);
    constexpr uint32_t bit = 1u << slot;
    if (s.bound & bit) return s.slots[slot]->node() == u.node();
    s.slots[slot] = &u;
    s.bound |= bit;
    return true;
  }
}

// children I.. of u against patterns Perm[I].. (Perm: a permutation of the pattern list, identity when ordered)
template <const NameTable& Names, size_t I, auto Perm, class L, class K>
inline bool match_children(const L& ps, const UOp& u, MatchState& s, K& k) {
  if constexpr (I == Perm.size()) return k();
  else
    return match<Names>(ps.template get<Perm[I]>(), u.src(I), s,
                        [&] { return match_children<Names, I + 1, Perm>(ps, u, s, k); });
}
template <size_t N> inline constexpr std::array<uint8_t, N> identity_perm = [] {
  std::array<uint8_t, N> a{};
  for (size_t i = 0; i < N; i++) a[i] = uint8_t(i);
  return a;
}();
// every child against one pattern (repeat): a run-time count, so a run-time recursion
template <const NameTable& Names, class Q, class K>
bool match_repeat(const Q& q, const UOp& u, size_t i, MatchState& s, K& k) {
  if (i == u.nsrc()) return k();
  return match<Names>(q, u.src(i), s, [&] { return match_repeat<Names>(q, u, i + 1, s, k); });
}
template <const NameTable& Names, class L, class K, size_t... J>
inline bool match_permutations(const L& ps, const UOp& u, MatchState& s, K& k, std::index_sequence<J...>) {
  constexpr auto& table = perm_table<L::size>;
  const uint32_t saved = s.bound;
  return ((match_children<Names, 0, table[J]>(ps, u, s, k) || (s.bound = saved, false)) || ...);
}
template <const NameTable& Names, class P, class K, size_t... I>
inline bool match_alternatives(const P& p, const UOp& u, MatchState& s, K& k, std::index_sequence<I...>) {
  const uint32_t saved = s.bound;
  auto then_bind = [&] { return bind<Names, P>(u, s) && k(); };
  return ((match<Names>(p.alts.template get<I>(), u, s, then_bind) || (s.bound = saved, false)) || ...);
}
}  // namespace detail

// shape_ok<P>(u): a necessary condition for match: the pattern tree's op sets and source counts, which the type
// carries, checked without bindings or backtracking (perf: most tries of a rule fail here in a few compares, not in
// the matcher's continuations; names, dtypes and args are left to names_ok, children_ok and match).
namespace detail {
template <size_t I, class... Ts> struct nth;  // (declared for any pack, so an empty one is not an error until used)
template <size_t I, class T, class... Ts> struct nth<I, T, Ts...> { using type = typename nth<I - 1, Ts...>::type; };
template <class T, class... Ts> struct nth<0, T, Ts...> { using type = T; };
template <size_t I, class... Ts> using nth_t = typename nth<I, Ts...>::type;

// a pattern's op set as a test: one compare for a single op, none for "any op"
template <OpSet O> [[gnu::always_inline]] inline bool op_in(Ops op) {
  if constexpr (O.size() == 1) return op == O.first();
  else if constexpr (!O.empty()) return O.has(op);
  else return true;
}

template <class P> inline constexpr bool shape_free = false;  // no op or source constraint anywhere: always true
template <OpSet O, fixed_string N> inline constexpr bool shape_free<Pat<O, N, NoSrc>> = O.empty();

template <class P> [[gnu::always_inline]] inline bool shape_ok(const UOp& u);
template <class Q> [[gnu::always_inline]] inline bool shape_ok_at(const UOp& u, size_t i) {
  if constexpr (shape_free<Q>) return true;
  else return shape_ok<Q>(u.src(i));
}
template <class P> [[gnu::always_inline]] inline bool shape_ok(const UOp& u) {
  if constexpr (shape_free<P>) {
    return true;
  } else if constexpr (requires { &P::alts; }) {
    return []<class... A>(const UOp& v, List<A...>*) {
      return (shape_ok<A>(v) || ...);
    }(u, static_cast<decltype(P::alts)*>(nullptr));
  } else {
    if (!op_in<P::ops>(u.op())) return false;
    using S = decltype(P::src);
    if constexpr (std::is_same_v<S, NoSrc>) {
      return true;
    } else if constexpr (requires { &S::p; }) {  // repeat
      using Q = decltype(S::p);
      if constexpr (!shape_free<Q>)
        for (size_t i = 0; i < u.nsrc(); i++)
          if (!shape_ok<Q>(u.src(i))) return false;
      return true;
    } else {
      return []<class... C>(const UOp& v, List<C...>*) {
        constexpr size_t n = sizeof...(C);
        if constexpr (requires { &S::all_same; }) {  // permuted: two sources in either order, more only counted
          if (v.nsrc() != n) return false;
          if constexpr (n == 2) {
            using C0 = nth_t<0, C...>;
            using C1 = nth_t<1, C...>;
            return (shape_ok_at<C0>(v, 0) && shape_ok_at<C1>(v, 1)) || (shape_ok_at<C0>(v, 1) && shape_ok_at<C1>(v, 0));
          } else if constexpr (n == 1) {
            return (shape_ok_at<C>(v, 0) && ...);
          } else {
            return true;
          }
        } else {  // ordered
          if (is_prefix<S> ? v.nsrc() < n : v.nsrc() != n) return false;
          return [&]<size_t... I>(std::index_sequence<I...>) {
            return (shape_ok_at<C>(v, I) && ...);
          }(std::make_index_sequence<n>{});
        }
      }(u, static_cast<decltype(S::ps)*>(nullptr));
    }
  }
}
}  // namespace detail

// names_ok<P>(u): a necessary condition for match on each name that two children of the root share (x*c0 + x*c1,
// (y+x)+x): under some assignment of the children, a node is a candidate binding on both sides. Like shape_ok it
// makes no bindings (perf: a shared name fails only after the matcher has enumerated every permutation below it;
// on a sum of products that was a quarter of the rewrite).
namespace detail {
// the nodes a name can bind below one child: at most 8, else `all` (no information)
struct Cands {
  const UOpNode* n[8];
  uint8_t size = 0;
  bool all = false;
  void add(const UOpNode* p) {
    if (size == 8) all = true;
    else n[size++] = p;
  }
  bool meets(const Cands& o) const {
    if (all || o.all) return true;
    for (uint8_t i = 0; i < size; i++)
      for (uint8_t j = 0; j < o.size; j++)
        if (n[i] == o.n[j]) return true;
    return false;
  }
};

template <class Q, const NameTable& Names, int Slot>
inline constexpr bool mentions = names_v<Q>.index(Names.names[size_t(Slot)]) >= 0;

// adds every node that name Slot could bind when Q matches v (a superset: only ops and source counts are checked)
template <class Q, const NameTable& Names, int Slot> void reach(const UOp& v, Cands& out) {
  if constexpr (mentions<Q, Names, Slot>) {
    if (!shape_ok<Q>(v)) return;  // Q cannot match v
    if constexpr (Names.index(Q::name) == Slot) out.add(v.node());
    if constexpr (requires { &Q::alts; }) {
      [&]<class... A>(List<A...>*) { (reach<A, Names, Slot>(v, out), ...); }(static_cast<decltype(Q::alts)*>(nullptr));
    } else {
      using S = decltype(Q::src);
      if constexpr (requires { &S::p; }) {  // repeat
        for (size_t i = 0; i < v.nsrc(); i++) reach<decltype(S::p), Names, Slot>(v.src(i), out);
      } else if constexpr (requires { &S::ps; }) {
        [&]<class... C>(List<C...>*) {
          if constexpr (requires { &S::all_same; } && sizeof...(C) == 2) {  // permuted pair: each viable order
            using C0 = nth_t<0, C...>;
            using C1 = nth_t<1, C...>;
            for (size_t j = 0; j < 2; j++)
              if (shape_ok_at<C0>(v, j) && shape_ok_at<C1>(v, 1 - j))
                reach<C0, Names, Slot>(v.src(j), out), reach<C1, Names, Slot>(v.src(1 - j), out);
          } else if constexpr (requires { &S::all_same; }) {  // any child may take any pattern
            for (size_t j = 0; j < v.nsrc(); j++) (reach<C, Names, Slot>(v.src(j), out), ...);
          } else {
            [&]<size_t... I>(std::index_sequence<I...>) {
              (reach<C, Names, Slot>(v.src(I), out), ...);
            }(std::make_index_sequence<sizeof...(C)>{});
          }
        }(static_cast<decltype(S::ps)*>(nullptr));
      }
    }
  }
}

// the (name, child, child) triples of P's root: names two children both mention
struct SharedName { int slot; uint8_t i, j; };
template <class P> constexpr auto shared_names() {
  struct R { std::array<SharedName, 8> t{}; size_t n = 0; } r;
  if constexpr (requires { &decltype(P::src)::ps; }) {
    constexpr const NameTable& names = names_v<P>;
    [&]<class... C>(List<C...>*) {
      const std::array<const NameTable*, sizeof...(C)> kids{&names_v<C>...};
      for (size_t s = 0; s < names.count; s++)
        for (size_t i = 0; i < kids.size(); i++)
          for (size_t j = i + 1; j < kids.size(); j++)
            if (r.n < r.t.size() && kids[i]->index(names.names[s]) >= 0 && kids[j]->index(names.names[s]) >= 0)
              r.t[r.n++] = {int(s), uint8_t(i), uint8_t(j)};
    }(static_cast<decltype(decltype(P::src)::ps)*>(nullptr));
  }
  return r;
}
template <class P> inline constexpr auto shared_names_v = shared_names<P>();

template <class P, size_t K> bool shared_name_ok(const UOp& u) {
  static constexpr SharedName sn = shared_names_v<P>.t[K];
  using S = decltype(P::src);
  return []<class... C>(const UOp& v, List<C...>*) {
    using A = nth_t<sn.i, C...>;
    using B = nth_t<sn.j, C...>;
    auto meet = [&](size_t ia, size_t ib) {
      Cands a, b;
      reach<A, names_v<P>, sn.slot>(v.src(ia), a);
      if (!a.all && a.size == 0) return false;
      reach<B, names_v<P>, sn.slot>(v.src(ib), b);
      return a.meets(b);
    };
    if constexpr (!requires { &S::all_same; }) return meet(sn.i, sn.j);  // ordered
    else if constexpr (sizeof...(C) == 2) return meet(0, 1) || meet(1, 0);
    else return true;  // a longer permuted list: not analysed
  }(u, static_cast<decltype(S::ps)*>(nullptr));
}

// payload_ok(c, v): a pattern's own dtype, arg and tag constraints (runtime values of the pattern, which shape_ok
// cannot see) against one node; match() checks them the same way on every node it visits.
// children_ok(p, u): payload_ok of the root's children against u's sources, in either order for a permuted pair
// (perf: x*1, x*0 and the Invalid rules tried on a product with another constant fail here in a few compares instead
// of in every permutation).
template <class C> [[gnu::always_inline]] inline bool payload_ok(const C& c, const UOp& v) {
  if constexpr (requires { &C::alts; }) {
    return true;
  } else {
    return (c.dtypes.empty() || c.dtypes.has(v.dtype())) && (c.arg_.any() || c.arg_.matches_inline(v.arg())) &&
           (c.tag_.any() || c.tag_.matches(v.tag()));
  }
}
// call after shape_ok<P>(u) (the source counts are checked there)
template <class P> [[gnu::always_inline]] inline bool children_ok(const P& p, const UOp& u) {
  using S = decltype(P::src);
  if constexpr (!requires { &S::ps; }) {
    return true;  // no sources, or a repeat
  } else {
    return [&]<class... C>(List<C...>*) {
      constexpr size_t n = sizeof...(C);
      auto fits = [&]<size_t I>(size_t j) {
        return shape_ok<nth_t<I, C...>>(u.src(j)) && payload_ok(p.src.ps.template get<I>(), u.src(j));
      };
      if constexpr (requires { &S::all_same; }) {
        if constexpr (n == 2) return (fits.template operator()<0>(0) && fits.template operator()<1>(1)) ||
                                     (fits.template operator()<0>(1) && fits.template operator()<1>(0));
        else return true;  // a longer permuted list: not analysed
      } else {
        return [&]<size_t... I>(std::index_sequence<I...>) {
          return (fits.template operator()<I>(I) && ...);
        }(std::make_index_sequence<n>{});
      }
    }(static_cast<decltype(S::ps)*>(nullptr));
  }
}

// sieve_ok(p, key): a necessary condition for match that reads only a node's sieve key (sieve_key: the root's
// dtype, arg class and source count, and op, dtype and arg class of its first two sources), so one answer holds for
// every node with that key and the PatternMatcher caches it per key (perf: most of a node's candidate rules failed on
// these facts inside their own call).
inline constexpr unsigned kSieveChildBits = 14;  // op 7 bits, dtype 4, arg class 3
static_assert(num_ops <= 128 && size_t(DTypeId::count_) <= 16, "the sieve key holds an op in 7 bits, a dtype in 4");
constexpr unsigned sieve_code(Ops op, DType dt, uint8_t arg_class) {
  return unsigned(op) | unsigned(dt.index()) << 7 | unsigned(arg_class) << 11;
}
// key layout: the root's code, 3 bits of source count (7 = 7 or more), then the codes of sources 0 and 1
constexpr unsigned sieve_child_shift(size_t i) { return kSieveChildBits + 3 + kSieveChildBits * unsigned(i); }
inline uint64_t sieve_key(const UOp& u) {
  const UOpNode* n = u.node();
  uint64_t k = sieve_code(n->op, n->dtype, n->arg_class) | uint64_t(std::min<uint32_t>(n->nsrc, 7)) << kSieveChildBits;
  for (uint32_t i = 0; i < std::min<uint32_t>(n->nsrc, 2); i++) {
    const UOpNode* c = n->srcs()[i].node();
    k |= uint64_t(sieve_code(c->op, c->dtype, c->arg_class)) << sieve_child_shift(i);
  }
  return k;
}
template <class C> bool sieve_node_ok(const C& c, unsigned code) {
  if constexpr (requires { &C::alts; }) {
    return true;
  } else {
    return op_in<C::ops>(Ops(code & 127)) && (c.dtypes.empty() || c.dtypes.has(DType(DTypeId((code >> 7) & 15)))) &&
           (c.arg_.any() || c.arg_.arg_class() == (code >> 11));
  }
}
template <class P> bool sieve_ok(const P& p, uint64_t key) {
  constexpr unsigned mask = (1u << kSieveChildBits) - 1;
  if (!sieve_node_ok(p, unsigned(key) & mask)) return false;  // the root (its op is the dispatch op)
  const unsigned nsrc = unsigned(key >> kSieveChildBits) & 7;
  auto child = [&](size_t i) { return unsigned(key >> sieve_child_shift(i)) & mask; };
  using S = decltype(P::src);
  if constexpr (std::is_same_v<S, NoSrc>) {
    return true;
  } else if constexpr (requires { &S::p; }) {  // repeat: every source
    for (size_t i = 0; i < std::min<size_t>(nsrc, 2); i++)
      if (!sieve_node_ok(p.src.p, child(i))) return false;
    return true;
  } else {
    return [&]<class... C>(List<C...>*) {
      constexpr size_t n = sizeof...(C);
      constexpr unsigned want = n < 7 ? unsigned(n) : 7u;
      if (is_prefix<S> ? nsrc < want : nsrc != want) return false;
      const auto& ps = p.src.ps;
      if constexpr (requires { &S::all_same; }) {  // permuted
        if constexpr (n == 2)
          return (sieve_node_ok(ps.template get<0>(), child(0)) && sieve_node_ok(ps.template get<1>(), child(1))) ||
                 (sieve_node_ok(ps.template get<0>(), child(1)) && sieve_node_ok(ps.template get<1>(), child(0)));
        else if constexpr (n == 1) return sieve_node_ok(ps.template get<0>(), child(0));
        else return true;  // a longer permuted list: only counted
      } else {
        if constexpr (n >= 1) if (!sieve_node_ok(ps.template get<0>(), child(0))) return false;
        if constexpr (n >= 2) if (!sieve_node_ok(ps.template get<1>(), child(1))) return false;
        return true;
      }
    }(static_cast<decltype(S::ps)*>(nullptr));
  }
}

// call after shape_ok<P>(u) (the source counts are checked there)
template <class P> [[gnu::always_inline]] inline bool names_ok(const UOp& u) {
  return [&]<size_t... K>(std::index_sequence<K...>) {
    return (shared_name_ok<P, K>(u) && ...);
  }(std::make_index_sequence<shared_names_v<P>.n>{});
}
}  // namespace detail

template <const detail::NameTable& Names, class P, class K> bool match(const P& p, const UOp& u, MatchState& s, K&& k) {
  if constexpr (requires { &P::alts; }) {  // pat::any
    return detail::match_alternatives<Names>(p, u, s, k, std::make_index_sequence<decltype(p.alts)::size>{});
  } else {
    if (!detail::op_in<P::ops>(u.op()) || !detail::payload_ok(p, u)) return false;
    if (!detail::bind<Names, P>(u, s)) return false;
    using S = decltype(p.src);
    if constexpr (std::is_same_v<S, NoSrc>) {
      return k();
    } else if constexpr (requires { &S::p; }) {  // repeat
      return detail::match_repeat<Names>(p.src.p, u, 0, s, k);
    } else if constexpr (requires { p.src.all_same; }) {  // permuted
      constexpr size_t n = decltype(p.src.ps)::size;
      if (u.nsrc() != n) return false;
      if (n == 1 || p.src.all_same) return detail::match_children<Names, 0, detail::identity_perm<n>>(p.src.ps, u, s, k);
      return detail::match_permutations<Names>(p.src.ps, u, s, k, std::make_index_sequence<detail::perm_table<n>.size()>{});
    } else {  // ordered
      constexpr size_t n = decltype(p.src.ps)::size;
      if constexpr (detail::is_prefix<S>) {
        if (u.nsrc() < n) return false;
      } else {
        if (u.nsrc() != n) return false;
      }
      return detail::match_children<Names, 0, detail::identity_perm<n>>(p.src.ps, u, s, k);
    }
  }
}

}  // namespace pat
}  // namespace graft
