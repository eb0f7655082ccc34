// UOp core: interning identity, dtype inference, replace, toposort, shape inference, vmin/vmax, printing, DOT,
// memory reclamation and thread safety. Expected strings/orders were produced by tinygrad (branch rewrite_rangeify2)
// with tests/tools/gen_core_golden.py; the vmin/vmax cases are ported from tinygrad test/null/test_uop_vmin_vmax.py.
#include <doctest/doctest.h>

#include <graft/graft.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

using namespace graft;

namespace {

template <class F> std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no graft::Error thrown>";
}
bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

std::string ops_of(const std::vector<UOp>& v) {
  std::string s;
  for (const UOp& u : v) {
    if (!s.empty()) s += ' ';
    s += op_name(u.op());
  }
  return s;
}

UOp param(int64_t slot, DType dt, std::initializer_list<int64_t> shape) {
  return UOp::make(Ops::PARAM, dt, {UOp::shape_arg(shape)}, ParamArg{slot, dt});
}
UOp reshape(const UOp& x, std::initializer_list<int64_t> s) { return UOp::infer(Ops::RESHAPE, {x, UOp::shape_arg(s)}); }
UOp expand(const UOp& x, std::initializer_list<int64_t> s) { return UOp::infer(Ops::EXPAND, {x, UOp::shape_arg(s)}); }
UOp permute(const UOp& x, Arg order) { return UOp::infer(Ops::PERMUTE, {x}, std::move(order)); }
UOp flip(const UOp& x, Arg axes) { return UOp::infer(Ops::FLIP, {x}, std::move(axes)); }
// PAD/SHRINK take (offset, size) per axis, as two shape sources (the branch's encoding)
UOp pad(const UOp& x, std::initializer_list<int64_t> off, std::initializer_list<int64_t> size) {
  return UOp::infer(Ops::PAD, {x, UOp::shape_arg(off), UOp::shape_arg(size)});
}
UOp shrink(const UOp& x, std::initializer_list<int64_t> off, std::initializer_list<int64_t> size) {
  return UOp::infer(Ops::SHRINK, {x, UOp::shape_arg(off), UOp::shape_arg(size)});
}
using S = std::vector<int64_t>;

int64_t imin(const UOp& u) { return u.vmin().as_int(); }
int64_t imax(const UOp& u) { return u.vmax().as_int(); }
UOp minimum(const UOp& a, const UOp& b) { return -maximum(-a, -b); }  // tinygrad's minimum

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// interning identity

TEST_CASE("uop identity: equal op dtype src arg tag give the same node") {
  UOp a = UOp::variable("a", 0, 10);
  CHECK(UOp::variable("a", 0, 10) == a);
  CHECK(UOp::const_int(3) == UOp::const_int(3));
  CHECK((a + 3).node() == (a + 3).node());
  CHECK(UOp::make(Ops::ADD, dtypes::weakint, {a, UOp::const_int(3)}) == a + 3);
  UOp s1 = UOp::sink({a, a + 1}), s2 = UOp::sink({a, a + 1});
  CHECK(s1 == s2);
  CHECK(std::hash<UOp>{}(s1) == std::hash<UOp>{}(s2));
}

TEST_CASE("uop identity: each of op dtype src arg tag distinguishes nodes") {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10);
  UOp c = UOp::const_int(2);
  // op
  CHECK_FALSE(UOp::make(Ops::ADD, dtypes::weakint, {a, c}) == UOp::make(Ops::MUL, dtypes::weakint, {a, c}));
  // dtype
  CHECK_FALSE(UOp::const_(dtypes::int32, 2) == UOp::const_(dtypes::int64, 2));
  CHECK_FALSE(UOp::make(Ops::ADD, dtypes::int32, {a, c}) == UOp::make(Ops::ADD, dtypes::weakint, {a, c}));
  // src: children and their order (constructors do not canonicalize commutative operands)
  CHECK_FALSE(a + b == b + a);
  CHECK_FALSE(a + c == b + c);
  CHECK_FALSE(UOp::sink({a}) == UOp::sink({a, a}));
  // arg (also the variable's ParamArg: name and range)
  CHECK_FALSE(UOp::const_int(2) == UOp::const_int(3));
  CHECK_FALSE(UOp::variable("a", 0, 10) == UOp::variable("a", 0, 11));
  CHECK_FALSE(a == b);
  CHECK_FALSE(UOp::range(10, 0) == UOp::range(10, 1));
  CHECK_FALSE(UOp::range(10, 0) == UOp::range(10, 0, AxisType::REDUCE));
  // graft keeps the arg kind: int 1, float 1.0 and True are different args
  CHECK_FALSE(UOp::make(Ops::CONST, dtypes::weakint, {}, Arg(1)) == UOp::make(Ops::CONST, dtypes::weakint, {}, Arg(1.0)));
  CHECK_FALSE(UOp::make(Ops::CONST, dtypes::weakint, {}, Arg(1)) == UOp::make(Ops::CONST, dtypes::weakint, {}, Arg(true)));
  // tag
  CHECK_FALSE(a.rtag() == a);
  CHECK(a.rtag() == a.rtag(true));
  CHECK_FALSE(a.rtag(1) == a.rtag(true));
  CHECK_FALSE(a.rtag("x") == a.rtag("y"));
  CHECK(a.rtag("x").tag().get<std::string>() == "x");
  CHECK(a.rtag("x").rtag(Arg()) == a);
}

TEST_CASE("uop identity: float consts by bit pattern, -0.0 vs 0.0 distinct, NaN consts equal") {
  CHECK_FALSE(UOp::const_float(0.0) == UOp::const_float(-0.0));
  CHECK_FALSE(UOp::const_(dtypes::float32, 0.0) == UOp::const_(dtypes::float32, -0.0));
  CHECK(std::signbit(UOp::const_float(-0.0).arg().get<double>()));
  CHECK(UOp::const_float(NAN) == UOp::const_float(NAN));
  CHECK(UOp::const_float(std::nan("1")) == UOp::const_float(-std::nan("2")));  // all NaNs are one value
  CHECK(UOp::const_(dtypes::float16, NAN) == UOp::const_(dtypes::float16, std::nan("7")));
  CHECK_FALSE(UOp::const_float(NAN) == UOp::const_(dtypes::float32, NAN));
  // values that round to the same dtype value intern to one node
  CHECK(UOp::const_(dtypes::float16, 1.0001) == UOp::const_(dtypes::float16, 1.0));
  CHECK(UOp::const_(dtypes::float32, 0.1) == UOp::const_(dtypes::float32, 0.10000000149011612));
  CHECK_FALSE(UOp::const_(dtypes::float64, 0.1) == UOp::const_(dtypes::float64, 0.10000000149011612));
}

TEST_CASE("uop identity: const canonicalization per dtype") {
  CHECK(UOp::const_(dtypes::bool_, 5).arg().is<bool>());
  CHECK(UOp::const_(dtypes::bool_, 5) == UOp::const_bool(true));
  CHECK(UOp::const_(dtypes::bool_, 0.0) == UOp::const_bool(false));
  CHECK(UOp::const_(dtypes::int32, 3.7).arg().get<int64_t>() == 3);
  CHECK(UOp::const_(dtypes::int32, true).arg().get<int64_t>() == 1);
  CHECK(UOp::const_(dtypes::float32, 2).arg().get<double>() == 2.0);
  CHECK(UOp::invalid().dtype() == dtypes::bool_);
  CHECK(UOp::invalid().is_invalid());
  CHECK(UOp::const_(dtypes::int32, Invalid) == UOp::invalid());
  CHECK(contains(error_of([] { UOp::const_(dtypes::int32, "x"); }), "value must be a number"));
  CHECK(contains(error_of([] { UOp::const_(dtypes::void_, 1); }), "void"));
}

TEST_CASE("uop replace: returns the same node when nothing changes, else a new interned node") {
  UOp a = UOp::variable("a", 0, 10);
  UOp x = a + 1;
  CHECK(x.replace({}) == x);
  CHECK(x.replace({.op = Ops::ADD, .dtype = dtypes::weakint}) == x);
  CHECK(x.replace({.src = std::vector<UOp>{a, UOp::const_int(1)}}) == x);
  CHECK(x.replace({.op = Ops::MUL}) == a * 1);
  CHECK(x.replace({.src = std::vector<UOp>{a, UOp::const_int(2)}}) == a + 2);
  UOp xi = x.replace({.dtype = dtypes::int32});
  CHECK(xi.dtype() == dtypes::int32);
  CHECK(xi.op() == Ops::ADD);
  CHECK(xi.src(0) == a);
  CHECK(xi.replace({.dtype = dtypes::weakint}) == x);
  UOp r = UOp::range(10, 0);
  CHECK(r.replace({.arg = Arg{Arg(int64_t(1)), Arg(AxisType::WEAK)}}) == UOp::range(10, 1));
  CHECK(x.replace({.tag = Arg("t")}) == x.rtag("t"));
  CHECK(x.rtag("t").replace({.tag = Arg()}) == x);
  CHECK(x.with_src(std::vector<UOp>{a, UOp::const_int(1)}) == x);
  CHECK(x.with_src(std::vector<UOp>{UOp::const_int(1), a}) == UOp::const_int(1) + a);
}

TEST_CASE("uop fields and small helpers") {
  UOp a = UOp::variable("a", 2, 9, dtypes::int32);
  CHECK(a.op() == Ops::BUFFER);
  CHECK(a.is_variable());
  CHECK(a.arg().param().name == "a");
  CHECK(a.dtype() == dtypes::int32);
  CHECK(a.nsrc() == 1);
  CHECK(a.src(0).op() == Ops::STACK);
  CHECK(a.src(0).nsrc() == 0);
  CHECK(contains(error_of([] { UOp::variable("e", 5, 4); }), "empty range"));
  UOp x = a + 1;
  CHECK(x.src_ops().has(Ops::BUFFER));
  CHECK(x.src_ops().has(Ops::CONST));
  CHECK_FALSE(x.src_ops().has(Ops::ADD));
  CHECK(UOp::const_int(4).val().as_int() == 4);
  CHECK(contains(error_of([&] { (void)x.val(); }), "ADD"));
  UOp p = param(0, dtypes::float32, {2, 3});
  UOp m = flip(reshape(p, {3, 2}), Arg{true, false});
  CHECK(m.base() == p);
  CHECK(UOp::infer(Ops::DETACH, {m}).base() == p);
  CHECK(UOp().empty());
  CHECK(contains(error_of([] { UOp::make(Ops::ADD, dtypes::weakint, {UOp(), UOp::const_int(1)}); }), "empty source"));
}

// ---------------------------------------------------------------------------------------------------------------
// dtype inference (tinygrad dtype_from_uop)

TEST_CASE("uop dtype inference: void, passthrough, comparison and float ops") {
  UOp i = UOp::variable("i", 0, 10, dtypes::int32);
  UOp h = UOp::const_(dtypes::float16, 1.5);
  UOp w = UOp::const_int(3);
  for (Ops o : {Ops::SINK, Ops::GROUP, Ops::STORE, Ops::END, Ops::BARRIER, Ops::LINEAR, Ops::TUPLE, Ops::NOOP})
    CHECK(UOp::infer(o, {i}).dtype() == dtypes::void_);
  for (Ops o : {Ops::NEG, Ops::TRUNC, Ops::CONTIGUOUS, Ops::DETACH, Ops::AFTER, Ops::LOAD, Ops::INDEX, Ops::COPY})
    CHECK(UOp::infer(o, {h}).dtype() == dtypes::float16);
  for (Ops o : {Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ}) {
    CHECK(UOp::infer(o, {i, i}).dtype() == dtypes::bool_);
    CHECK(UOp::infer(o, {h, h}).dtype() == dtypes::bool_);
  }
  for (Ops o : {Ops::SIN, Ops::LOG2, Ops::EXP2, Ops::SQRT, Ops::RECIPROCAL}) {
    CHECK(UOp::infer(o, {i}).dtype() == dtypes::float32);      // least_upper_float(int32)
    CHECK(UOp::infer(o, {w}).dtype() == dtypes::weakfloat);    // weakint -> weakfloat
    CHECK(UOp::infer(o, {h}).dtype() == dtypes::float16);      // floats stay
    CHECK(UOp::infer(o, {UOp::const_(dtypes::uint64, 1)}).dtype() == dtypes::float32);
  }
  CHECK(UOp::range(10, 0).dtype() == dtypes::weakint);
  CHECK(UOp::range(UOp::const_(dtypes::int32, 4), 0).dtype() == dtypes::int32);
  CHECK(UOp::special(16, "gidx0").dtype() == dtypes::weakint);
  CHECK(UOp::infer(Ops::GETADDR, {i}).dtype() == dtypes::uint64);
  CHECK(UOp::infer(Ops::BINARY).dtype() == dtypes::uint8);
  CHECK(UOp::infer(Ops::WMMA, {h, h, i}).dtype() == dtypes::int32);
}

TEST_CASE("uop dtype inference: binary promotion, WHERE, STACK, CAST, CONST, BUFFER") {
  UOp i8 = UOp::variable("a", 0, 3, dtypes::int8), u8 = UOp::variable("b", 0, 3, dtypes::uint8);
  UOp f16 = UOp::const_(dtypes::float16, 1), bf = UOp::const_(dtypes::bfloat16, 1);
  CHECK(UOp::infer(Ops::ADD, {i8, u8}).dtype() == dtypes::int16);
  CHECK(UOp::infer(Ops::MUL, {f16, bf}).dtype() == dtypes::float32);
  CHECK(UOp::infer(Ops::MAX, {i8, i8}).dtype() == dtypes::int8);
  CHECK(UOp::infer(Ops::ADD, {i8, UOp::const_int(1)}).dtype() == dtypes::int8);          // weakint joins anything int
  CHECK(UOp::infer(Ops::ADD, {i8, UOp::const_float(1)}).dtype() == dtypes::weakfloat);
  CHECK(UOp::infer(Ops::MULACC, {f16, f16, bf}).dtype() == dtypes::float32);
  UOp c = UOp::const_bool(true);
  CHECK(UOp::infer(Ops::WHERE, {c, i8, f16}).dtype() == dtypes::float16);
  CHECK(UOp::infer(Ops::WHERE, {c, i8, u8}).dtype() == dtypes::int16);
  CHECK(UOp::infer(Ops::STACK, {}).dtype() == dtypes::void_);
  CHECK(UOp::infer(Ops::STACK, {UOp::const_int(1), UOp::const_int(2)}).dtype() == dtypes::weakint);
  CHECK(UOp::infer(Ops::STACK, {u8, i8}).dtype() == dtypes::int16);
  CHECK(UOp::infer(Ops::CAST, {i8}, dtypes::float64).dtype() == dtypes::float64);
  CHECK(UOp::infer(Ops::BITCAST, {f16}, dtypes::int16).dtype() == dtypes::int16);
  CHECK(i8.cast(dtypes::int8) == i8);  // cast to the same dtype is a no-op
  CHECK(i8.cast(dtypes::int32).op() == Ops::CAST);
  CHECK(i8.cast(dtypes::int32).arg().get<DType>() == dtypes::int32);
  CHECK(UOp::infer(Ops::CONST, {}, Arg(int64_t(3))).dtype() == dtypes::weakint);
  CHECK(UOp::infer(Ops::CONST, {}, Arg(2.5)).dtype() == dtypes::weakfloat);
  CHECK(UOp::infer(Ops::CONST, {}, Arg(false)).dtype() == dtypes::bool_);
  CHECK(UOp::infer(Ops::CONST, {}, Arg(Invalid)).dtype() == dtypes::bool_);
  CHECK(param(0, dtypes::float16, {4}).dtype() == dtypes::float16);
  CHECK(UOp::infer(Ops::PARAM, {UOp::shape_arg({4})}, ParamArg{1, dtypes::uint8}).dtype() == dtypes::uint8);
  // GETTUPLE picks the element's dtype
  UOp t = UOp::infer(Ops::TUPLE, {i8, f16});
  CHECK(UOp::infer(Ops::GETTUPLE, {t}, Arg(int64_t(1))).dtype() == dtypes::float16);
  // CALL of a void body is void
  CHECK(UOp::infer(Ops::CALL, {UOp::sink({i8})}).dtype() == dtypes::void_);
}

TEST_CASE("uop dtype inference: errors name the op and the dtype") {
  UOp i = UOp::variable("i", 0, 10, dtypes::int32);
  UOp f = UOp::const_(dtypes::float32, 1.0);
  std::string e = error_of([&] { UOp::infer(Ops::WHERE, {i, f, f}); });
  CHECK(contains(e, "WHERE"));
  CHECK(contains(e, "dtypes.int"));
  CHECK(contains(error_of([&] { UOp::infer(Ops::WHERE, {f, i, i}); }), "dtypes.float"));
  // sugar goes through the same check
  CHECK(contains(error_of([&] { where(i, f, f); }), "WHERE"));
  std::string s = error_of([&] { UOp::infer(Ops::SHL, {f, UOp::const_int(1)}); });
  CHECK(contains(s, "SHL"));
  CHECK(contains(s, "dtypes.float"));
  CHECK(contains(error_of([&] { UOp::infer(Ops::SHR, {i, f}); }), "SHR"));
  CHECK(contains(error_of([&] { UOp::infer(Ops::SHL, {UOp::const_bool(true), i}); }), "dtypes.bool"));
  CHECK(contains(error_of([&] { (void)(f << 2); }), "SHL"));
  CHECK(UOp::infer(Ops::SHL, {UOp::variable("b", 0, 3, dtypes::int8), UOp::const_int(1)}).dtype() == dtypes::int8);
  CHECK(contains(error_of([&] { UOp::infer(Ops::CAST, {i}); }), "CAST"));
  CHECK(contains(error_of([&] { UOp::infer(Ops::BUFFER, {}); }), "BUFFER"));
  CHECK(contains(error_of([&] { UOp::infer(Ops::ADD, {}); }), "ADD"));
  CHECK(contains(error_of([&] { UOp::infer(Ops::WHERE, {UOp::const_bool(true)}); }), "WHERE"));
  CHECK(contains(error_of([&] { UOp::infer(Ops::CALL, {i}); }), "CALL"));
  CHECK(contains(error_of([&] { UOp::infer(Ops::ADD, {i, UOp::sink({i})}); }), "void"));
}

TEST_CASE("uop sugar: tinygrad's meaning of the operators") {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10);
  UOp i = UOp::variable("i", 0, 10, dtypes::int32);
  CHECK(a - b == a + b * -1);
  CHECK(-a == a * -1);
  CHECK((a > b) == (b < a));
  CHECK(floordiv(a, 4).op() == Ops::FLOORDIV);
  CHECK((a % 4).op() == Ops::FLOORMOD);
  CHECK(cdiv(a, 4).op() == Ops::CDIV);
  CHECK(cmod(a, 4).op() == Ops::CMOD);
  // a weak CONST stays weak next to a strong operand; the node takes the strong dtype
  UOp s = i + 1;
  CHECK(s.dtype() == dtypes::int32);
  CHECK(s.src(1) == UOp::const_int(1));
  // a strong operand of another dtype gets a CAST
  UOp h = UOp::const_(dtypes::float16, 2);
  UOp m = i * h;
  CHECK(m.dtype() == dtypes::float16);
  CHECK(m.src(0).op() == Ops::CAST);
  CHECK(m.src(1) == h);
  // int division goes through float reciprocal
  UOp d = i / 2;
  CHECK(d.op() == Ops::MUL);
  CHECK(d.dtype() == dtypes::float32);
  CHECK(d.src(1).op() == Ops::RECIPROCAL);
  // bool negation is logical not; comparisons give bool
  UOp c = a < 3;
  CHECK(c.dtype() == dtypes::bool_);
  CHECK(-c == UOp::infer(Ops::CMPNE, {c, UOp::const_bool(true)}));
  CHECK(ne(a, 3).op() == Ops::CMPNE);
  CHECK(eq(a, 3).op() == Ops::CMPNE);  // NOT(a != 3)
  CHECK((a >= 3) == logical_not(a < 3));
  CHECK((a <= 3) == logical_not(UOp::const_int(3) < a));
  CHECK(maximum(a, 3).op() == Ops::MAX);
  CHECK(where(c, a, 1).dtype() == dtypes::weakint);
  CHECK(sqrt(i).dtype() == dtypes::float32);
}

// ---------------------------------------------------------------------------------------------------------------
// toposort

TEST_CASE("uop toposort: children first in source order, shared nodes once, same order as tinygrad") {
  UOp a = UOp::variable("a", 0, 10);
  UOp g = UOp::sink({a + 1, a * 2, where(a < 3, a, a + 1)});
  auto t = g.toposort();
  // tinygrad: " ".join(u.op.name for u in g.toposort())
  CHECK(ops_of(t) == "STACK BUFFER CONST ADD CONST MUL CONST CMPLT WHERE SINK");
  CHECK(t.back() == g);
  CHECK(t[1] == a);
  CHECK(t[3] == a + 1);
  // every node comes after all its sources
  for (size_t k = 0; k < t.size(); k++)
    for (const UOp& s : t[k].src()) CHECK(std::find(t.begin(), t.begin() + long(k), s) != t.begin() + long(k));
  auto bs = g.backward_slice();
  CHECK(bs.size() == t.size() - 1);
  CHECK(std::find(bs.begin(), bs.end(), g) == bs.end());
}

TEST_CASE("uop toposort: a false gate skips the node and what is only reachable through it") {
  UOp a = UOp::variable("a", 0, 10);
  UOp g = UOp::sink({a + 1, a * 2, where(a < 3, a, a + 1)});
  auto t = g.toposort([](const UOp& u) { return u.op() != Ops::WHERE; });
  // tinygrad: g.toposort(gate=lambda u: u.op is not Ops.WHERE)
  CHECK(ops_of(t) == "STACK BUFFER CONST ADD CONST MUL SINK");
  // gating the root gives nothing
  CHECK(g.toposort([](const UOp&) { return false; }).empty());
  // gating a leaf removes only that leaf (and what is reachable only through it: its STACK source)
  auto t2 = g.toposort([&](const UOp& u) { return !(u == a); });
  CHECK(ops_of(t2) == "CONST ADD CONST MUL CONST CMPLT WHERE SINK");  // tinygrad: gate=lambda u: u is not a
  CHECK(std::find(t2.begin(), t2.end(), a) == t2.end());
  CHECK(t2.back() == g);
}

TEST_CASE("uop toposort: a 10^5-deep chain does not recurse") {
  UOp x = UOp::variable("x", 0, 1);
  UOp first = x;
  for (int k = 0; k < 100000; k++) x = x + 1;
  auto t = x.toposort();
  CHECK(t.size() == 100000 + 3);  // STACK, BUFFER, CONST 1, then the ADDs
  CHECK(t.back() == x);
  CHECK(t[1] == first);
}

// ---------------------------------------------------------------------------------------------------------------
// shape inference

TEST_CASE("uop shape: leaves, STACK, INDEX and nodes without a shape") {
  CHECK(UOp::const_int(3).shape().empty());
  CHECK(UOp::range(10, 0).shape().empty());
  CHECK(UOp::variable("a", 0, 4).shape().empty());
  UOp p = param(0, dtypes::float32, {4, 5});
  CHECK(p.shape() == S{4, 5});
  CHECK(param(1, dtypes::float32, {7}).shape() == S{7});
  CHECK(UOp::make(Ops::BUFFER, dtypes::int32, {UOp::shape_arg({2, 2, 2})}, ParamArg{3, dtypes::int32}).shape() == S{2, 2, 2});
  CHECK(UOp::stack(std::vector<UOp>{UOp::const_int(1), UOp::const_int(2), UOp::const_int(3)}).shape() == S{3});
  CHECK(UOp::infer(Ops::STACK, {p, p}).shape() == S{2, 4, 5});
  CHECK(UOp::infer(Ops::INDEX, {p, UOp::const_int(1)}).shape() == S{5});
  CHECK(UOp::infer(Ops::INDEX, {p, UOp::const_int(1), UOp::const_int(2)}).shape().empty());
  UOp idx = UOp::stack(std::vector<UOp>{UOp::const_int(0), UOp::const_int(3)});
  CHECK(UOp::infer(Ops::INDEX, {p, idx}).shape() == S{2, 5});  // index shapes, then the rest of the buffer
  UOp s = UOp::sink({p});
  CHECK_FALSE(s.has_shape());
  CHECK(contains(error_of([&] { (void)s.shape(); }), "SINK has no shape"));
  CHECK(p.has_shape());
  CHECK(contains(error_of([&] { (void)UOp::infer(Ops::NEG, {s}).shape(); }), "no shape"));
}

TEST_CASE("uop shape: every movement op") {
  UOp p = param(0, dtypes::float32, {2, 3});
  CHECK(reshape(p, {3, 2}).shape() == S{3, 2});
  CHECK(reshape(p, {6}).shape() == S{6});
  CHECK(reshape(p, {1, 6, 1}).shape() == S{1, 6, 1});
  CHECK(expand(p, {4}).shape() == S{4, 2, 3});  // EXPAND prepends dims
  CHECK(expand(p, {5, 4}).shape() == S{5, 4, 2, 3});
  CHECK(permute(p, Arg{1, 0}).shape() == S{3, 2});
  CHECK(permute(expand(p, {4}), Arg{2, 0, 1}).shape() == S{3, 4, 2});
  CHECK(pad(p, {1, 0}, {3, 5}).shape() == S{3, 5});  // (offset, new size) per axis
  CHECK(shrink(p, {0, 1}, {2, 2}).shape() == S{2, 2});  // (offset, size) per axis
  CHECK(flip(p, Arg{true, false}).shape() == S{2, 3});
  CHECK(UOp::infer(Ops::REDUCE, {p}, Arg{Ops::ADD, 1}).shape() == S{3});  // reduces leading axes
  CHECK(UOp::infer(Ops::REDUCE, {p}, Arg{Ops::MAX, 2}).shape().empty());
  CHECK(UOp::infer(Ops::REDUCE, {p}, Arg{Ops::ADD, 0}).shape() == S{2, 3});
  CHECK(UOp::infer(Ops::CONTIGUOUS, {p}).shape() == S{2, 3});
  CHECK(UOp::infer(Ops::DETACH, {p}).shape() == S{2, 3});
  CHECK(p.cast(dtypes::float16).shape() == S{2, 3});
  CHECK(p.bitcast(dtypes::float16).shape() == S{2, 6});
  CHECK(param(1, dtypes::float32, {2, 4}).bitcast(dtypes::float64).shape() == S{2, 2});
  CHECK(param(1, dtypes::float32, {2, 4}).bitcast(dtypes::int32).shape() == S{2, 4});
  // chains of movement ops
  UOp m = expand(flip(shrink(pad(permute(reshape(p, {3, 2}), Arg{1, 0}), {1, 0}, {3, 5}), {0, 1}, {2, 3}), Arg{true, false}), {4});
  CHECK(m.shape() == S{4, 2, 3});
  CHECK(m.src(0).shape() == S{2, 3});
  CHECK(m.src(0).src(0).src(0).shape() == S{3, 5});
}

TEST_CASE("uop shape: movement errors name the op and the shapes") {
  UOp p = param(0, dtypes::float32, {2, 3});
  std::string e = error_of([&] { (void)reshape(p, {4, 2}).shape(); });
  CHECK(contains(e, "RESHAPE"));
  CHECK(contains(e, "(4, 2)"));
  CHECK(contains(e, "(2, 3)"));
  e = error_of([&] { (void)UOp::infer(Ops::RESHAPE, {p, UOp::stack(std::vector<UOp>{UOp::const_int(-2), UOp::const_int(-3)})}).shape(); });
  CHECK(contains(e, "negative"));
  e = error_of([&] { (void)permute(p, Arg{0, 0}).shape(); });
  CHECK(contains(e, "PERMUTE"));
  CHECK(contains(e, "(0, 0)"));
  CHECK(contains(e, "(2, 3)"));
  CHECK(contains(error_of([&] { (void)permute(p, Arg{0}).shape(); }), "wrong length"));
  CHECK(contains(error_of([&] { (void)permute(p, Arg{0, 2}).shape(); }), "not a permutation"));
  e = error_of([&] { (void)pad(p, {1, 0}, {2, 5}).shape(); });  // 1 + 2 > 2 on axis 0
  CHECK(contains(e, "PAD"));
  CHECK(contains(e, "axis 0"));
  CHECK(contains(e, "(2, 3)"));
  CHECK(contains(error_of([&] { (void)pad(p, {-1, 0}, {3, 3}).shape(); }), "PAD"));
  e = error_of([&] { (void)shrink(p, {0, 2}, {2, 2}).shape(); });  // 2 + 2 > 3 on axis 1
  CHECK(contains(e, "SHRINK"));
  CHECK(contains(e, "axis 1"));
  CHECK(contains(error_of([&] { (void)shrink(p, {0}, {1}).shape(); }), "rank"));
  CHECK(contains(error_of([&] { (void)flip(p, Arg{true}).shape(); }), "FLIP"));
  e = error_of([&] { (void)UOp::infer(Ops::REDUCE, {p}, Arg{Ops::ADD, 3}).shape(); });
  CHECK(contains(e, "REDUCE"));
  CHECK(contains(e, "(2, 3)"));
  CHECK(contains(error_of([&] { (void)p.bitcast(dtypes::float64).shape(); }), "BITCAST"));
  CHECK(contains(error_of([&] { (void)UOp::infer(Ops::INDEX, {UOp::const_int(1), UOp::const_int(0)}).shape(); }), "INDEX"));
  // a movement op on something without a shape
  CHECK(contains(error_of([&] { (void)reshape(UOp::sink({p}), {1}).shape(); }), "has no shape"));
}

TEST_CASE("uop shape: elementwise broadcasting (numpy style, right aligned)") {
  UOp a = param(0, dtypes::float32, {3, 1});
  UOp b = param(1, dtypes::float32, {4});
  UOp c = param(2, dtypes::float32, {2, 3});
  UOp d = param(3, dtypes::float32, {3});
  CHECK((a + b).shape() == S{3, 4});
  CHECK((c * d).shape() == S{2, 3});
  CHECK((c + UOp::const_(dtypes::float32, 1)).shape() == S{2, 3});  // scalars broadcast
  CHECK(sqrt(c).shape() == S{2, 3});
  CHECK((c < d).shape() == S{2, 3});
  CHECK(where(a < b, c.cast(dtypes::float32), 0.0).op() == Ops::WHERE);
  UOp w = UOp::infer(Ops::WHERE, {UOp::infer(Ops::CMPLT, {a, b}), param(4, dtypes::float32, {2, 1, 1}), b});
  CHECK(w.shape() == S{2, 3, 4});
  CHECK(UOp::infer(Ops::ADD, {param(5, dtypes::float32, {1, 5}), param(6, dtypes::float32, {7, 1})}).shape() == S{7, 5});
  std::string e = error_of([&] { (void)(c + b).shape(); });
  CHECK(contains(e, "ADD"));
  CHECK(contains(e, "(2, 3)"));
  CHECK(contains(e, "(4,)"));
  e = error_of([&] { (void)UOp::infer(Ops::WHERE, {UOp::infer(Ops::CMPLT, {c, d}), c, b}).shape(); });
  CHECK(contains(e, "WHERE"));
  CHECK(contains(e, "(4,)"));
}

TEST_CASE("uop shape: computed iteratively and cached on a 10^5-deep chain") {
  UOp x = param(0, dtypes::float32, {8, 2});
  for (int k = 0; k < 100000; k++) x = UOp::infer(k % 2 ? Ops::NEG : Ops::CONTIGUOUS, {x});
  CHECK(x.shape() == S{8, 2});
  CHECK(&x.shape() == &x.shape());  // cached: the same vector
}

// ---------------------------------------------------------------------------------------------------------------
// vmin / vmax (ported from tinygrad test/null/test_uop_vmin_vmax.py, construction-only cases)

TEST_CASE("vmin vmax: constants, cmpne, add, sub") {
  UOp c = UOp::const_int(42);
  CHECK(imin(c) == 42);
  CHECK(imax(c) == 42);
  auto both = [](const UOp& u, bool v) {
    CHECK(u.vmin().is<bool>());
    CHECK(u.vmin().get<bool>() == v);
    CHECK(u.vmax().get<bool>() == v);
  };
  both(ne(c, 42), false);
  both(ne(c, 43), true);
  both(ne(c, 41), true);
  UOp x = UOp::variable("x", 10, 20);
  CHECK(imin(x + 5) == 15);
  CHECK(imax(x + 5) == 25);
  CHECK(imin(x - 5) == 5);
  CHECK(imax(x - 5) == 15);
  CHECK(imin(5 - x) == -15);
  CHECK(imax(5 - x) == -5);
}

TEST_CASE("vmin vmax: and with a constant mask") {
  UOp x = UOp::variable("x", 10, 20);
  CHECK(imin(x & 5) == 0);
  CHECK(imax(x & 5) == 5);
  CHECK(imin(x & 15) == 0);
  CHECK(imax(x & 15) == 15);
  CHECK(imin(x & 32) == 0);
  CHECK(imax(x & 32) == 20);  // tinygrad: "TODO: this can be improved" (should be 0)
  UOp y = UOp::variable("y", -100, 100, dtypes::int32);
  CHECK((y & 511).dtype() == dtypes::int32);
  CHECK(imin(y & 511) == 0);
  CHECK(imax(y & 511) == 511);
  CHECK(imin(y & 0x7FFFFFFF) == 0);
  CHECK(imax(y & 0x7FFFFFFF) == 0x7FFFFFFF);
  CHECK(imin(y & -1) == dtypes::imin(dtypes::int32));
  CHECK(imax(y & -1) == dtypes::imax(dtypes::int32));
}

TEST_CASE("vmin vmax: mul, special, float mul, max min, where") {
  UOp x = UOp::variable("x", -3, 4);
  CHECK(imin(x * 2) == -6);
  CHECK(imax(x * 2) == 8);
  UOp sp = UOp::infer(Ops::SPECIAL, {UOp::variable("i", 1, 10, dtypes::int32)}, "gidx0");
  CHECK(imin(sp) == 0);
  CHECK(imax(sp) == 9);
  // float Binary ops are not evaluated (NaN): 0.0 * load -> (-inf, inf)
  UOp ld = UOp::infer(Ops::LOAD, {UOp::infer(Ops::INDEX, {param(0, dtypes::float32, {1}), UOp::const_int(0)})});
  UOp fm = UOp::const_float(0.0) * ld;
  CHECK(fm.dtype() == dtypes::float32);
  CHECK(fm.vmin().as_double() == -INFINITY);
  CHECK(fm.vmax().as_double() == INFINITY);
  UOp y = UOp::variable("y", 2, 5);
  CHECK(imin(y * -3) == -15);
  CHECK(imax(y * -3) == -6);
  UOp z = UOp::variable("z", -2, 5);
  CHECK(imin(z * -3) == -15);
  CHECK(imax(z * -3) == 6);
  UOp v = UOp::variable("v", 0, 10);
  UOp mm = minimum(maximum(v, 5), UOp::const_int(8));
  CHECK(imin(mm) == 5);
  CHECK(imax(mm) == 8);
  UOp wy = UOp::variable("wy", 1, 11), wz = UOp::variable("wz", 2, 12);
  UOp w = where(v < 5, wy, wz);
  CHECK(imin(w) == 1);
  CHECK(imax(w) == 12);
}

TEST_CASE("vmin vmax: shifts, xor -1, casts") {
  UOp x = UOp::variable("x", 0, 10);
  CHECK(imin(x << 5) == 0);
  CHECK(imax(x << 5) == (10 << 5));
  CHECK(imin(x >> 2) == 0);
  CHECK(imax(x >> 2) == (10 >> 2));
  UOp a = UOp::variable("a", 3, 7);
  CHECK(imin(a ^ -1) == ~7);
  CHECK(imax(a ^ -1) == ~3);
  UOp b = UOp::variable("b", -10, -3);
  CHECK(imin(b ^ -1) == ~(-3));
  CHECK(imax(b ^ -1) == ~(-10));
  UOp c = UOp::variable("c", -5, 6);
  CHECK(imin(c ^ -1) == ~6);
  CHECK(imax(c ^ -1) == ~(-5));
  // cast to unsigned: exact when the source fits, else the dtype's range
  CHECK(imin(UOp::variable("u", 5, 10).cast(dtypes::uint8)) == 5);
  CHECK(imax(UOp::variable("u", 5, 10).cast(dtypes::uint8)) == 10);
  CHECK(imin(UOp::variable("u", -1, 10).cast(dtypes::uint8)) == 0);
  CHECK(imax(UOp::variable("u", -1, 10).cast(dtypes::uint8)) == 255);
  CHECK(imin(UOp::variable("u", 250, 260).cast(dtypes::uint8)) == 0);
  CHECK(imax(UOp::variable("u", 250, 260).cast(dtypes::uint8)) == 255);
  UOp xi = UOp::variable("xi", -10, 10, dtypes::int32);
  UOp xf = xi.cast(dtypes::float32);
  CHECK(xf.vmin().is<double>());
  CHECK(xf.vmin().get<double>() == -10.0);
  CHECK(xf.vmax().get<double>() == 10.0);
  UOp xb = xi.cast(dtypes::bool_);
  CHECK(xb.vmin().get<bool>() == false);
  CHECK(xb.vmax().get<bool>() == true);
  UOp xu = xi.cast(dtypes::uint32);
  CHECK(imin(xu) == 0);
  CHECK(imax(xu) == 4294967295LL);
  UOp f2i = UOp::const_float(4.5).cast(dtypes::float32).cast(dtypes::int32);
  CHECK(imin(f2i) == 4);
  CHECK(imax(f2i) == 4);
  // a cast to float rounds the bounds onto the float grid (also a regression test for a GCC 12 -O2 SLP miscompile of
  // two adjacent (double)(float)x roundings, worked around in dtype.hpp truncate_float)
  UOp grid = UOp::variable("g", 0, 16777219, dtypes::int32).cast(dtypes::float32);
  CHECK(grid.vmin().get<double>() == 0.0);
  CHECK(grid.vmax().get<double>() == 16777220.0);
  // Invalid has no single value
  CHECK_FALSE(UOp::invalid().vmin() == UOp::invalid().vmax());
}

TEST_CASE("vmin vmax: floor division and modulo by constants") {
  UOp x = UOp::variable("x", 10, 20);
  CHECK(imin(floordiv(x, 2)) == 5);
  CHECK(imax(floordiv(x, 2)) == 10);
  CHECK(imin(floordiv(x, -2)) == -10);
  CHECK(imax(floordiv(x, -2)) == -5);
  CHECK(imin(floordiv(x, -3)) == -7);
  CHECK(imax(floordiv(x, -3)) == -4);
  UOp n = UOp::variable("n", -20, -10);
  CHECK(imin(floordiv(n, -2)) == 5);
  CHECK(imax(floordiv(n, -2)) == 10);
  CHECK(imin(floordiv(n, -3)) == 3);
  CHECK(imax(floordiv(n, -3)) == 6);
  UOp s = UOp::variable("s", -7, 7);
  UOp fd = s.alu(Ops::FLOORDIV, UOp::const_int(3)), fm = s.alu(Ops::FLOORMOD, UOp::const_int(3));
  CHECK(imin(fd) == -3);
  CHECK(imax(fd) == 2);
  CHECK(imin(fm) == 0);
  CHECK(imax(fm) == 2);
  UOp fmn = s.alu(Ops::FLOORMOD, UOp::const_int(-3));
  CHECK(imin(fmn) == -2);
  CHECK(imax(fmn) == 0);
  UOp cz = UOp::variable("cz", -10, 10);
  CHECK(imin(floordiv(cz, -2)) == -5);
  CHECK(imax(floordiv(cz, -2)) == 5);
  CHECK(imin(floordiv(cz, -3)) == -4);
  CHECK(imax(floordiv(cz, -3)) == 3);
  // empty numerator range (RANGE with end 0) short-circuits to (0, 0)
  UOp rng = UOp::range(0, 0);
  CHECK(imin(rng) == 0);
  CHECK(imax(rng) == -1);
  CHECK(imin(floordiv(rng, 4)) == 0);
  CHECK(imax(floordiv(rng, 4)) == 0);
  CHECK(imin(rng % 4) == 0);
  CHECK(imax(rng % 4) == 0);
  for (const char* nm : {"p", "q", "r"}) {
    int64_t lo = nm[0] == 'p' ? 10 : nm[0] == 'q' ? -20 : -20, hi = nm[0] == 'p' ? 20 : nm[0] == 'q' ? -10 : 20;
    UOp v = UOp::variable(nm, lo, hi);
    INFO("variable " << nm << " in [" << lo << ", " << hi << "]");
    CHECK(imin(v % 3) == 0);
    CHECK(imax(v % 3) == 2);
    CHECK(imin(v % -3) == -2);
    CHECK(imax(v % -3) == 0);
  }
}

TEST_CASE("vmin vmax: floor division by a symbolic divisor") {
  UOp x = UOp::variable("x", 1, 10), y = UOp::variable("y", 3, 5);
  CHECK(imin(floordiv(x, y)) == 0);
  CHECK(imax(floordiv(x, y)) == 3);
  CHECK(imin(floordiv(-x, y)) == -4);
  CHECK(imax(floordiv(-x, y)) == -1);
  CHECK(imin(floordiv(x, -y)) == -4);
  CHECK(imax(floordiv(x, -y)) == -1);
  CHECK(imin(floordiv(-x, -y)) == 0);
  CHECK(imax(floordiv(-x, -y)) == 3);
  CHECK(imin(floordiv(100, y)) == 20);
  CHECK(imax(floordiv(100, y)) == 33);
  CHECK(imin(floordiv(-100, y)) == -34);
  CHECK(imax(floordiv(-100, y)) == -20);
  CHECK(imin(floordiv(100, -y)) == -34);
  CHECK(imax(floordiv(100, -y)) == -20);
  CHECK(imin(floordiv(-100, -y)) == 20);
  CHECK(imax(floordiv(-100, -y)) == 33);
}

TEST_CASE("vmin vmax: stacks of constants and loads") {
  auto stack = [](std::vector<UOp> v) { return UOp::stack(v); };
  UOp one = stack({UOp::const_int(42)});
  CHECK(imin(one) == 42);
  CHECK(imax(one) == 42);
  UOp many = stack({UOp::const_int(10), UOp::const_int(20), UOp::const_int(-5), UOp::const_int(7)});
  CHECK(imin(many) == -5);
  CHECK(imax(many) == 20);
  UOp same = stack({UOp::const_int(7), UOp::const_int(7), UOp::const_int(7)});
  CHECK(imin(same) == 7);
  CHECK(imax(same) == 7);
  UOp neg = stack({UOp::const_int(-10), UOp::const_int(-20), UOp::const_int(-5), UOp::const_int(-15)});
  CHECK(imin(neg) == -20);
  CHECK(imax(neg) == -5);
  UOp fl = stack({UOp::const_(dtypes::float32, 1.5), UOp::const_(dtypes::float32, -3.2), UOp::const_(dtypes::float32, 0.0)});
  CHECK(fl.vmin().get<double>() == truncate_float(dtypes::float32, -3.2));
  CHECK(fl.vmax().get<double>() == 1.5);
  UOp bl = stack({UOp::const_bool(true), UOp::const_bool(false), UOp::const_bool(false)});
  CHECK(bl.vmin().is<bool>());
  CHECK(bl.vmin().get<bool>() == false);
  CHECK(bl.vmax().get<bool>() == true);
  UOp val = UOp::infer(Ops::LOAD, {UOp::infer(Ops::INDEX, {param(1, dtypes::int32, {1}), UOp::const_int(0)})});
  UOp q = floordiv(val, 32);
  CHECK(q.dtype() == dtypes::int32);
  CHECK(imin(q) == -67108864);
  CHECK(imax(q) == 67108863);
}

TEST_CASE("vmin vmax: ranges, comparisons and a 10^5-deep chain") {
  UOp r = UOp::range(10, 0);
  CHECK(imin(r) == 0);
  CHECK(imax(r) == 9);
  UOp e = r * 4 + UOp::range(4, 1);
  CHECK(imin(e) == 0);
  CHECK(imax(e) == 39);
  UOp lt = r < 10;
  CHECK(lt.vmin().get<bool>() == true);  // always true
  CHECK((r < 5).vmin().get<bool>() == false);
  CHECK((r < 5).vmax().get<bool>() == true);
  CHECK(imin(maximum(r, 3)) == 3);
  CHECK(imax(maximum(r, 3)) == 9);
  // weakint without bounds saturates at int64
  UOp ld = UOp::infer(Ops::LOAD, {UOp::infer(Ops::INDEX, {param(2, dtypes::int64, {1}), UOp::const_int(0)})});
  CHECK(imax(ld + 1) == std::numeric_limits<int64_t>::max());
  // a void node (tinygrad: void.min/max are False/True); reached e.g. through a variable's empty shape STACK
  CHECK(imin(UOp::sink({r})) == 0);
  CHECK(imax(UOp::sink({r})) == 1);
  CHECK(imin(UOp::variable("vv", 0, 5).src(0)) == 0);
  CHECK(imax(UOp::variable("vv", 0, 5).src(0)) == 1);
  UOp x = UOp::variable("deep", 0, 1);
  for (int k = 0; k < 100000; k++) x = x + 1;
  CHECK(imin(x) == 100000);
  CHECK(imax(x) == 100001);
}

// ---------------------------------------------------------------------------------------------------------------
// printing (expected strings are tinygrad's repr of the same graphs)

TEST_CASE("uop print: matches tinygrad repr, with shared nodes as x<n>:=") {
  UOp a = UOp::variable("a", 0, 10);
  CHECK(((a + 3) * (a + 3)).str() == R"(UOp(Ops.MUL, dtypes.weakint, arg=None, src=(
  x0:=UOp(Ops.ADD, dtypes.weakint, arg=None, src=(
    UOp(Ops.BUFFER, dtypes.weakint, arg=ParamArg(-1, dtypes.weakint, vmin_vmax=(0, 10), multiple_of=1, name='a', addrspace=AddrSpace.ALU), src=(
      UOp(Ops.STACK, dtypes.void, arg=None, src=()),)),
    UOp(Ops.CONST, dtypes.weakint, arg=3, src=()),)),
  x0,)))");
  UOp g = UOp::sink({a + 1, a * 2, where(a < 3, a, a + 1)});
  CHECK(g.str() == R"(UOp(Ops.SINK, dtypes.void, arg=None, src=(
  x0:=UOp(Ops.ADD, dtypes.weakint, arg=None, src=(
    x1:=UOp(Ops.BUFFER, dtypes.weakint, arg=ParamArg(-1, dtypes.weakint, vmin_vmax=(0, 10), multiple_of=1, name='a', addrspace=AddrSpace.ALU), src=(
      UOp(Ops.STACK, dtypes.void, arg=None, src=()),)),
    UOp(Ops.CONST, dtypes.weakint, arg=1, src=()),)),
  UOp(Ops.MUL, dtypes.weakint, arg=None, src=(
    x1,
    UOp(Ops.CONST, dtypes.weakint, arg=2, src=()),)),
  UOp(Ops.WHERE, dtypes.weakint, arg=None, src=(
    UOp(Ops.CMPLT, dtypes.bool, arg=None, src=(
      x1,
      UOp(Ops.CONST, dtypes.weakint, arg=3, src=()),)),
    x1,
    x0,)),)))");
  std::ostringstream os;
  os << (a + 3);
  CHECK(os.str() == (a + 3).str());
  CHECK(UOp().str() == "UOp()");
}

TEST_CASE("uop print: float consts, casts, bools, Invalid, small ints") {
  UOp f = (UOp::const_(dtypes::float32, 1.5) * UOp::const_(dtypes::float32, -0.0)).cast(dtypes::float16) +
          UOp::const_(dtypes::float16, 1e-4);
  CHECK(f.str() == R"(UOp(Ops.ADD, dtypes.half, arg=None, src=(
  UOp(Ops.CAST, dtypes.half, arg=dtypes.half, src=(
    UOp(Ops.MUL, dtypes.float, arg=None, src=(
      UOp(Ops.CONST, dtypes.float, arg=ConstFloat(1.5), src=()),
      UOp(Ops.CONST, dtypes.float, arg=ConstFloat(-0.0), src=()),)),)),
  UOp(Ops.CONST, dtypes.half, arg=ConstFloat(0.00010001659393310547), src=()),)))");
  UOp b = UOp::sink({UOp::const_bool(true), UOp::invalid(), UOp::const_(dtypes::int8, -5), UOp::const_(dtypes::uint64, 7)});
  CHECK(b.str() == R"(UOp(Ops.SINK, dtypes.void, arg=None, src=(
  UOp(Ops.CONST, dtypes.bool, arg=True, src=()),
  UOp(Ops.CONST, dtypes.bool, arg=Invalid, src=()),
  UOp(Ops.CONST, dtypes.char, arg=-5, src=()),
  UOp(Ops.CONST, dtypes.ulong, arg=7, src=()),)))");
}

TEST_CASE("uop print: movement ops, REDUCE, RANGE and tags") {
  UOp p = param(0, dtypes::float32, {2, 3});
  UOp m = expand(flip(shrink(pad(permute(reshape(p, {3, 2}), Arg{1, 0}), {1, 0}, {3, 5}), {0, 1}, {2, 3}), Arg{true, false}), {4});
  CHECK(m.str() == R"(UOp(Ops.EXPAND, dtypes.float, arg=None, src=(
  UOp(Ops.FLIP, dtypes.float, arg=(True, False), src=(
    UOp(Ops.SHRINK, dtypes.float, arg=None, src=(
      UOp(Ops.PAD, dtypes.float, arg=None, src=(
        UOp(Ops.PERMUTE, dtypes.float, arg=(1, 0), src=(
          UOp(Ops.RESHAPE, dtypes.float, arg=None, src=(
            UOp(Ops.PARAM, dtypes.float, arg=ParamArg(0, dtypes.float), src=(
              x6:=UOp(Ops.STACK, dtypes.weakint, arg=None, src=(
                x7:=UOp(Ops.CONST, dtypes.weakint, arg=2, src=()),
                x8:=UOp(Ops.CONST, dtypes.weakint, arg=3, src=()),)),)),
            UOp(Ops.STACK, dtypes.weakint, arg=None, src=(
              x8,
              x7,)),)),)),
        UOp(Ops.STACK, dtypes.weakint, arg=None, src=(
          x11:=UOp(Ops.CONST, dtypes.weakint, arg=1, src=()),
          x12:=UOp(Ops.CONST, dtypes.weakint, arg=0, src=()),)),
        UOp(Ops.STACK, dtypes.weakint, arg=None, src=(
          x8,
          UOp(Ops.CONST, dtypes.weakint, arg=5, src=()),)),)),
      UOp(Ops.STACK, dtypes.weakint, arg=None, src=(
        x12,
        x11,)),
      x6,)),)),
  UOp(Ops.CONST, dtypes.weakint, arg=4, src=()),)))");
  CHECK(UOp::infer(Ops::REDUCE, {p}, Arg{Ops::ADD, 1}).str() == R"(UOp(Ops.REDUCE, dtypes.float, arg=(Ops.ADD, 1), src=(
  UOp(Ops.PARAM, dtypes.float, arg=ParamArg(0, dtypes.float), src=(
    UOp(Ops.STACK, dtypes.weakint, arg=None, src=(
      UOp(Ops.CONST, dtypes.weakint, arg=2, src=()),
      UOp(Ops.CONST, dtypes.weakint, arg=3, src=()),)),)),)))");
  UOp r = UOp::range(10, 0) * 4 + UOp::range(4, 1, AxisType::REDUCE);
  CHECK(r.str() == R"(UOp(Ops.ADD, dtypes.weakint, arg=None, src=(
  UOp(Ops.MUL, dtypes.weakint, arg=None, src=(
    UOp(Ops.RANGE, dtypes.weakint, arg=(0, AxisType.WEAK), src=(
      UOp(Ops.CONST, dtypes.weakint, arg=10, src=()),)),
    x3:=UOp(Ops.CONST, dtypes.weakint, arg=4, src=()),)),
  UOp(Ops.RANGE, dtypes.weakint, arg=(1, AxisType.REDUCE), src=(
    x3,)),)))");
  UOp a = UOp::variable("a", 0, 10);
  UOp t = (a.rtag(true) + a.rtag("mark")).rtag(Arg{1, "x"});
  CHECK(t.str() == R"(UOp(Ops.ADD, dtypes.weakint, arg=None, tag=(1, 'x'), src=(
  UOp(Ops.BUFFER, dtypes.weakint, arg=ParamArg(-1, dtypes.weakint, vmin_vmax=(0, 10), multiple_of=1, name='a', addrspace=AddrSpace.ALU), tag=True, src=(
    x1:=UOp(Ops.STACK, dtypes.void, arg=None, src=()),)),
  UOp(Ops.BUFFER, dtypes.weakint, arg=ParamArg(-1, dtypes.weakint, vmin_vmax=(0, 10), multiple_of=1, name='a', addrspace=AddrSpace.ALU), tag=mark, src=(
    x1,)),)))");
}

TEST_CASE("uop print: a deep chain prints without recursion") {
  // the format indents by depth, so the output is quadratic in depth: 4000 levels is ~16 MB
  UOp x = UOp::const_int(0);
  for (int k = 0; k < 4000; k++) x = UOp::infer(Ops::NEG, {x});
  std::string s = x.str();
  CHECK(s.rfind("UOp(Ops.NEG", 0) == 0);
  CHECK(s.find("UOp(Ops.CONST, dtypes.weakint, arg=0, src=())") != std::string::npos);
}

TEST_CASE("uop to_dot: a digraph with one node per UOp and one edge per source") {
  UOp a = UOp::variable("a", 0, 10);
  UOp g = UOp::sink({a + 1, a * 2, where(a < 3, a, a + 1)});
  std::string d = to_dot(g);
  CHECK(d.rfind("digraph", 0) == 0);
  CHECK(d.back() == '\n');
  CHECK(d.find("}\n") == d.size() - 2);
  size_t nodes = 0, edges = 0;
  for (size_t p = d.find("[label="); p != std::string::npos; p = d.find("[label=", p + 1)) nodes++;
  for (size_t p = d.find(" -> "); p != std::string::npos; p = d.find(" -> ", p + 1)) edges++;
  auto topo = g.toposort();
  size_t srcs = 0;
  for (const UOp& u : topo) srcs += u.nsrc();
  CHECK(edges == srcs);
  CHECK(nodes == topo.size() + edges);  // node lines and edge lines both carry a label
  CHECK(d.find("SINK") != std::string::npos);
  CHECK(d.find("name='a'") != std::string::npos);  // args are shown (quotes escaped for DOT)
  CHECK(d.find("\\'") == std::string::npos);
}

// ---------------------------------------------------------------------------------------------------------------
// memory and threads

TEST_CASE("uop memory: 1000 graphs of 1000 nodes are reclaimed") {
  size_t start = live_uop_count();
  size_t peak = 0;
  for (int g = 0; g < 1000; g++) {
    std::string name = "v";
    name += std::to_string(g);
    UOp x = UOp::variable(name, 0, 100);
    // BUFFER + its STACK + 499 x (CONST, ADD) = 1000 distinct nodes
    for (int k = 0; k < 499; k++) x = x + UOp::const_int(int64_t(g) * 1000 + k);
    if (g % 100 == 0) {
      CHECK(x.toposort().size() == 1000);
      CHECK(imin(x) > 0);              // fills the per-node caches, which must be freed too
      CHECK(x.shape().empty());
      peak = std::max(peak, live_uop_count());
    }
  }
  CHECK(peak >= start + 1000);
  CHECK(live_uop_count() == start);
  // a node kept alive by one handle keeps its whole subgraph
  {
    UOp keep;
    {
      UOp a = UOp::variable("keep", 0, 1);
      keep = (a + 1) * (a + 2);
    }
    CHECK(keep.toposort().size() == 7);  // STACK BUFFER CONST1 ADD CONST2 ADD MUL
    CHECK(live_uop_count() > start);
    CHECK(live_uop_count() <= start + 7);
    CHECK(keep.src(0).src(0).is_variable());
  }
  CHECK(live_uop_count() == start);
}

TEST_CASE("uop memory: handle copies share the node and count uses") {
  size_t start = live_uop_count();
  UOp a = UOp::variable("rc", 0, 1);
  CHECK(a.use_count() == 1);
  {
    UOp b = a, c = a;
    CHECK(a.use_count() == 3);
    UOp s = a + a;  // the ADD holds two references
    CHECK(a.use_count() == 5);
  }
  CHECK(a.use_count() == 1);
  UOp moved = std::move(a);
  CHECK(moved.use_count() == 1);
  CHECK(a.empty());
  moved = UOp();
  CHECK(live_uop_count() == start);
}

TEST_CASE("uop threads: 4 threads building the same expressions get identical nodes") {
  constexpr int kThreads = 4, kExprs = 300;
  size_t start = live_uop_count();
  {
    std::vector<std::vector<UOp>> results(kThreads);
    std::vector<std::vector<int64_t>> bounds(kThreads);
    std::atomic<int> ready{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; t++)
      ts.emplace_back([&, t] {
        ready++;
        while (ready.load() < kThreads) std::this_thread::yield();
        UOp a = UOp::variable("ta", 0, 100), b = UOp::variable("tb", -5, 5);
        UOp p = param(0, dtypes::float32, {4, 8});
        for (int k = 0; k < kExprs; k++) {
          UOp e = (floordiv(a * (k + 1) + b, 3) % 7) + maximum(a, k);
          UOp m = reshape(permute(p, Arg{1, 0}), {32}) * UOp::const_(dtypes::float32, double(k));
          results[size_t(t)].push_back(UOp::sink({e, m}));
          bounds[size_t(t)].push_back(imin(e) * 1000003 + imax(e));  // concurrent cache fills
          (void)m.shape();
        }
      });
    for (auto& th : ts) th.join();
    for (int t = 1; t < kThreads; t++)
      for (int k = 0; k < kExprs; k++) {
        CHECK(results[size_t(t)][size_t(k)].node() == results[0][size_t(k)].node());
        CHECK(bounds[size_t(t)][size_t(k)] == bounds[0][size_t(k)]);
      }
    CHECK(results[0][5].src(1).shape() == S{32});
  }
  CHECK(live_uop_count() == start);
}

// Reference counts and intern locks skip their atomic instructions while the process has one thread
// (detail::single_threaded). ctest runs each case in its own process, so the nodes below are counted the plain way,
// then shared by threads that count them atomically.
TEST_CASE("uop threads: counts made before the first thread stay exact when threads then share the nodes") {
  size_t start = live_uop_count();
  {
    UOp a = UOp::variable("pre_thread", 0, 9);
    UOp s = a + 1;
    CHECK(a.use_count() == 2);  // a and the ADD's source
    std::atomic<int> single_in_thread{0}, single_in_main{0}, bad{0};
    std::atomic<int> started{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; t++)
      ts.emplace_back([&] {
        single_in_thread += detail::single_threaded();
        started++;
        while (started.load() < 4) std::this_thread::yield();
        for (int it = 0; it < 20000; it++) {
          std::vector<UOp> copies(3, s);  // copies and drops from four threads at once
          UOp again = a + 1;              // interned: the same node, revived through the shared count
          if (again != s) bad++;
        }
      });
    while (started.load() < 4) std::this_thread::yield();
    single_in_main += detail::single_threaded();
    for (auto& th : ts) th.join();
#if defined(__GLIBC__) && __has_include(<sys/single_threaded.h>)
    CHECK(single_in_thread.load() == 0);  // glibc clears the flag at the first pthread_create
    CHECK(single_in_main.load() == 0);
#endif
    CHECK(bad.load() == 0);
    CHECK(a.use_count() == 2);
    CHECK(s.use_count() == 1);
  }
  CHECK(live_uop_count() == start);
}

TEST_CASE("uop threads: concurrent build and release of shared subgraphs does not crash or leak") {
  size_t start = live_uop_count();
  {
    UOp anchor = UOp::variable("churn", 0, 9) + 1;  // a node that stays alive throughout
    std::vector<std::thread> ts;
    std::atomic<int> mismatches{0};
    for (int t = 0; t < 4; t++)
      ts.emplace_back([&, t] {
        for (int it = 0; it < 2000; it++) {
          UOp x = UOp::variable("churn", 0, 9) + 1;
          if (!(x == anchor)) mismatches++;
          // "free" nodes have no other owner: they die and are re-created while other threads look them up
          UOp y = UOp::variable("free", 0, 9) * (it % 7) + UOp::const_int(t % 2) + x;
          UOp z = UOp::sink({y, x, y + 3});
          if (z.src(1) != anchor) mismatches++;
        }
      });
    for (auto& th : ts) th.join();
    CHECK(mismatches.load() == 0);
  }
  CHECK(live_uop_count() == start);
}

// Node memory (detail::BlockPool): the blocks a thread frees stay on its free list, and pass to the next thread that
// needs blocks when it exits. Not under ASan, where every node comes from operator new.
TEST_CASE("uop threads: the node blocks a thread freed are reused by the next thread after it exits") {
  size_t start = live_uop_count();
  std::unordered_set<const void*> freed;
  std::thread([&] {
    UOp a = UOp::variable("pool_a", 0, 9);
    std::vector<UOp> nodes;
    for (int k = 0; k < 2000; k++) nodes.push_back(a + (k + 1000000));
    for (const UOp& u : nodes) freed.insert(u.node());
  }).join();  // the 2000 ADDs die with `nodes`: their blocks are on the thread's list when it exits
  CHECK(freed.size() == 2000);
  size_t reused = 0, correct = 0;
  std::thread([&] {
    UOp b = UOp::variable("pool_b", 0, 9);
    std::vector<UOp> nodes;
    for (int k = 0; k < 2000; k++) {
      nodes.push_back(b * (k + 2000000));
      reused += freed.count(nodes.back().node());
      correct += nodes.back().op() == Ops::MUL && nodes.back().src(0) == b && nodes.back().src(1).arg().as_int() == k + 2000000;
    }
  }).join();
  CHECK(correct == 2000);
#if !defined(__SANITIZE_ADDRESS__)
  CHECK(reused == 2000);  // every MUL (two sources, the ADDs' size class) took a block the first thread left
#endif
  CHECK(live_uop_count() == start);
}

TEST_CASE("uop threads: 4 threads asking the shapes of the same fresh nodes all see the full shape") {
  // made without inference, so no shape is known until the threads race to fill them (one writes, the others wait)
  std::vector<UOp> chain{param(0, dtypes::float32, {4, 8})};
  for (int k = 0; k < 400; k++)
    chain.push_back(UOp::make(Ops::PERMUTE, dtypes::float32, {chain.back()}, Arg{1, 0}));
  std::vector<std::thread> ts;
  std::atomic<int> ready{0}, wrong{0};
  for (int t = 0; t < 4; t++)
    ts.emplace_back([&, t] {
      ready++;
      while (ready.load() < 4) std::this_thread::yield();
      for (size_t j = 0; j < chain.size(); j++) {
        size_t i = t % 2 ? chain.size() - 1 - j : j;  // two threads from each end: the deep walk meets the shallow one
        if (chain[i].shape() != (i % 2 ? S{8, 4} : S{4, 8})) wrong++;
      }
    });
  for (auto& th : ts) th.join();
  CHECK(wrong.load() == 0);
}

TEST_CASE("scratch lists: every list starts empty and nested lists are distinct") {
  {
    detail::Scratch<int> a;
    a->assign(1000, 7);
  }
  detail::Scratch<int> b;  // may reuse a's memory, never its contents
  CHECK(b->empty());
  b->push_back(1);
  {
    detail::Scratch<int> c;  // b is still in use: c is another list
    CHECK(c->empty());
    c->push_back(2);
    CHECK(c->data() != b->data());
  }
  CHECK(*b == std::vector<int>{1});
}

TEST_CASE("node tables: dropped tables come back empty, and live tables of one size are distinct") {
  std::vector<UOp> nodes;
  for (int i = 0; i < 100; i++) nodes.push_back(UOp::const_int(1000 + i));
  {
    NodeMap<uint32_t> m;
    detail::NodeSet s;
    for (uint32_t i = 0; i < nodes.size(); i++) m.try_emplace(nodes[i].node(), i), s.insert(nodes[i].node());
    CHECK(m.size() == 100);
  }
  // the same sizes again: may reuse the dropped blocks, never their entries
  NodeMap<uint32_t> m;
  detail::NodeSet s;
  for (const UOp& n : nodes) {
    CHECK_FALSE(m.contains(n.node()));
    CHECK_FALSE(s.contains(n.node()));
  }
  for (uint32_t i = 0; i < nodes.size(); i++) CHECK(m.try_emplace(nodes[i].node(), i).second);
  NodeMap<uint32_t> other;  // m is alive: other's table is another block
  for (uint32_t i = 0; i < nodes.size(); i++) other.try_emplace(nodes[i].node(), 7);
  for (uint32_t i = 0; i < nodes.size(); i++) {
    CHECK(*m.find(nodes[i].node()) == i);
    CHECK(*other.find(nodes[i].node()) == 7);
  }
  detail::NodeSet moved = std::move(s);  // a moved-from set is empty and usable
  CHECK(moved.insert(nodes[0].node()));
  CHECK_FALSE(s.contains(nodes[0].node()));
  CHECK(s.insert(nodes[0].node()));
}

TEST_CASE("uop shape: a node that passes its source's shape through shares it, and it outlives the user's handles") {
  UOp e, b;
  {
    UOp p = param(0, dtypes::float32, {2, 3});
    UOp x = p * p;
    e = x.cast(dtypes::int32);
    b = UOp::make(Ops::BITCAST, dtypes::int16, {x});  // another itemsize: a shape of its own
    CHECK(&e.shape() == &p.shape());  // CAST of an ALU of p: p's shape object
  }
  // the user's handles to p and x are gone; e and b keep them alive, and so the shapes they point at
  CHECK(e.shape() == S{2, 3});
  CHECK(b.shape() == S{2, 6});
  CHECK(&b.shape() != &e.shape());
  CHECK(&e.src(0).shape() == &e.shape());
}

TEST_CASE("small handle lists: the first 8 on the stack, then all of them on the heap, in order") {
  for (size_t n : {size_t(0), size_t(3), size_t(8), size_t(9), size_t(20)}) {
    detail::SmallUOps<> l;
    for (size_t i = 0; i < n; i++) l.push_back(UOp::const_int(int64_t(i)));
    CHECK(l.size() == n);
    CHECK(l.empty() == (n == 0));
    std::span<const UOp> s = l;
    REQUIRE(s.size() == n);
    for (size_t i = 0; i < n; i++) CHECK(s[i] == UOp::const_int(int64_t(i)));
    size_t k = 0;
    for (const UOp& u : l) CHECK(u.arg().as_int() == int64_t(k++));
    CHECK(k == n);
  }
}

TEST_CASE("intern table: nodes stay unique through growth, deletions, churn and shrinking") {
  const size_t start = live_uop_count();
  const int64_t n = 50000;  // ~780 per shard: each shard's table grows twice
  std::vector<UOp> all;
  for (int64_t i = 0; i < n; i++) all.push_back(UOp::const_int(i * 7919 + 13));
  CHECK(live_uop_count() == start + size_t(n));
  for (int64_t i = 0; i < n; i += 97) CHECK(UOp::const_int(i * 7919 + 13).node() == all[size_t(i)].node());
  // drop every other node: the survivors are still found, the dropped keys make one new node each
  for (int64_t i = 1; i < n; i += 2) all[size_t(i)] = UOp();
  CHECK(live_uop_count() == start + size_t(n / 2));
  for (int64_t i = 0; i < n; i += 2) CHECK(UOp::const_int(i * 7919 + 13).node() == all[size_t(i)].node());
  for (int64_t i = 1; i < n; i += 2) {
    all[size_t(i)] = UOp::const_int(i * 7919 + 13);
    CHECK(UOp::const_int(i * 7919 + 13).node() == all[size_t(i)].node());
  }
  CHECK(live_uop_count() == start + size_t(n));
  // churn: one key made and dropped many times beside the live ones (tombstones, rehash at the same size)
  size_t distinct_from_live = 0;
  for (int k = 0; k < 200000; k++) distinct_from_live += UOp::const_int(-1 - (k % 1000)).node() != all[0].node();
  CHECK(distinct_from_live == 200000);
  CHECK(live_uop_count() == start + size_t(n));
  for (int64_t i = 0; i < n; i += 101) CHECK(UOp::const_int(i * 7919 + 13).node() == all[size_t(i)].node());
  // drop all: the tables shrink back as they fill with tombstones, and what is made afterwards is unique again
  all.clear();
  CHECK(live_uop_count() == start);
  for (int k = 0; k < 3; k++) {
    std::vector<UOp> again;
    for (int64_t i = 0; i < 2000; i++) again.push_back(UOp::const_int(i * 7919 + 13));
    for (int64_t i = 0; i < 2000; i++) CHECK(UOp::const_int(i * 7919 + 13).node() == again[size_t(i)].node());
    CHECK(live_uop_count() == start + 2000);
  }
  CHECK(live_uop_count() == start);
}
