// Port of tinygrad test/null/test_pattern_matcher.py (branch rewrite_rangeify2), plus checks of the C++-only parts of
// the pattern engine (binding enumeration order, operator sugar vs UOp sugar, ctx typing).
// Every compile-time rule runs twice: through its compiled matcher and through the runtime UPat interpreter
// (pm.dynamic()); both must give the same answer.
#include <doctest/doctest.h>

#include <graft/graft.hpp>
#include <graft/testing.hpp>

#include <source_location>
#include <string>
#include <thread>
#include <vector>

using namespace graft;

namespace {

// pattern variables (namespace scope, so rule lambdas need no capture)
constexpr auto x = pat::var<"x">;
constexpr auto y = pat::var<"y">;
constexpr auto z = pat::var<"z">;
constexpr auto pa = pat::var<"a">;
constexpr auto pb = pat::var<"b">;
constexpr auto pc = pat::var<"c">;
constexpr auto ps = pat::var<"s">;
constexpr auto cv = pat::cvar<"c">;
constexpr auto cy = pat::cvar<"y">;
constexpr auto pc0 = pat::cvar<"c0">;
constexpr auto pc1 = pat::cvar<"c1">;

// PatternMatcher.rewrite on one node (tinygrad's matcher.rewrite(u)); an empty UOp is tinygrad's None.
void check_rewrite(const PatternMatcher& pm, const UOp& in, const UOp& expected,
                   std::source_location loc = std::source_location::current()) {
  INFO("called from line " << loc.line());
  CHECK(pm.rewrite(in) == expected);
  CHECK(pm.dynamic().rewrite(in) == expected);
}

// graph_rewrite with the compiled and the runtime matcher.
void check_both(const PatternMatcher& pm, const UOp& in, const UOp& expected, RewriteOptions o = {},
                std::source_location loc = std::source_location::current()) {
  INFO("called from line " << loc.line());
  CHECK_REWRITES(pm, in, expected, o);
  CHECK_REWRITES(pm.dynamic(), in, expected, o);
}

UOp noop(std::initializer_list<UOp> src = {}) { return UOp::make(Ops::NOOP, dtypes::void_, src); }
UOp node(Ops op, std::initializer_list<UOp> src) { return UOp::infer(op, src); }
std::string vname(const UOp& v) { return v.arg().param().name; }  // the name of a variable

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// TestPatternMatcher

TEST_CASE("pattern matcher: simple match on op and dtype") {
  PatternMatcher matcher{
      rule(pat::op<Ops::CONST>().named<"x">().dtype(dtypes::weakfloat), [](const auto& m) { return m[x].rtag(); })};
  UOp c1 = UOp::const_float(1.0);
  UOp c2 = UOp::const_int(1);
  check_rewrite(matcher, c1, c1.rtag());
  check_rewrite(matcher, c2, UOp());
  check_both(matcher, c1, c1.rtag());
  check_both(matcher, c2, c2);
}

TEST_CASE("pattern matcher: UPat.any binds the alternative that matched") {
  PatternMatcher matcher{rule(pa + pat::any(x, y, z), [](const auto& m) {
    if (m[y]) return (m[pa] + m[y]).rtag();
    return UOp();
  })};
  UOp v1 = UOp::variable("a", 0, 10);
  UOp v2 = UOp::variable("b", 0, 10);
  UOp c1 = v1 + v2;
  check_rewrite(matcher, c1, c1.rtag());
}

TEST_CASE("pattern matcher: allow_any_len sets a minimum length") {
  PatternMatcher matcher{rule(pat::op<Ops::NOOP>(pat::prefix(pat::op<Ops::NOOP>(), pat::op<Ops::NOOP>())),
                              [](const auto&) { return UOp::const_bool(true); })};
  check_rewrite(matcher, noop({noop(), noop(), noop()}), UOp::const_bool(true));
  check_rewrite(matcher, noop({noop(), noop()}), UOp::const_bool(true));
  check_rewrite(matcher, noop({noop()}), UOp());
}

// tinygrad skips this one because Python pattern matchers reject closures; C++ rules may capture.
TEST_CASE("pattern matcher: src=() matches only a node without sources (closure)") {
  int match_cnt = 0;
  PatternMatcher matcher{rule(pat::op<Ops::CONST>(pat::exact()).named<"x">(), [&match_cnt](const auto& m) {
    match_cnt++;
    CHECK(m[x].nsrc() == 0);
    return UOp::make(Ops::CONST, dtypes::void_, {UOp::make(Ops::CONST, dtypes::void_)});
  })};
  for (bool dyn : {false, true}) {
    INFO("dynamic=" << dyn);
    match_cnt = 0;
    PatternMatcher pm = dyn ? matcher.dynamic() : matcher;
    UOp c1 = UOp::make(Ops::CONST, dtypes::float32, {}, 1.0);
    c1 = pm.rewrite(c1);
    REQUIRE(c1);
    CHECK(c1.nsrc() == 1);
    // the second rewrite must not match anything
    CHECK(!pm.rewrite(c1));
    CHECK(match_cnt == 1);
  }
}

TEST_CASE("pattern matcher: src=() with a ctx") {
  PatternMatcher matcher{rule(pat::op<Ops::NOOP>(pat::exact()).named<"x">(), [](const auto& m, std::vector<bool>& ctx) {
    ctx.push_back(true);
    CHECK(m[x].nsrc() == 0);
    return m[x].replace({.src = std::vector<UOp>{noop()}});
  })};
  for (bool dyn : {false, true}) {
    INFO("dynamic=" << dyn);
    PatternMatcher pm = dyn ? matcher.dynamic() : matcher;
    UOp c1 = noop();
    std::vector<bool> ctx;
    c1 = pm.rewrite(c1, CtxRef(ctx));
    REQUIRE(c1);
    CHECK(c1 == noop({noop()}));
    // the second rewrite must not match anything
    CHECK(!pm.rewrite(c1, CtxRef(ctx)));
    CHECK(ctx.size() == 1);
  }
}

TEST_CASE("pattern matcher: match on a single op") {
  PatternMatcher matcher{rule(pat::op<Ops::CONST>().named<"x">(), [](const auto& m) { return m[x].rtag(); })};
  UOp c1 = UOp::const_float(1.0);
  UOp c2 = node(Ops::ADD, {c1, c1});
  check_rewrite(matcher, c1, c1.rtag());
  check_rewrite(matcher, c2, UOp());
  // through graph_rewrite the CONST children get tagged and the ADD is rebuilt around them
  check_both(matcher, c2, node(Ops::ADD, {c1.rtag(), c1.rtag()}));
}

TEST_CASE("pattern matcher: match on a set of ops") {
  PatternMatcher matcher{rule(pat::op<Ops::CONST, Ops::CAST>().named<"x">(), [](const auto& m) { return m[x].rtag(); })};
  UOp c1 = UOp::const_bool(false);
  UOp c2 = UOp::infer(Ops::CAST, {c1}, dtypes::int32);
  UOp c3 = UOp::const_float(1.0);
  UOp c4 = node(Ops::ADD, {c3, c3});
  CHECK(c2.dtype() == dtypes::int32);
  check_rewrite(matcher, c1, c1.rtag());
  check_rewrite(matcher, c2, c2.rtag());
  check_rewrite(matcher, c4, UOp());
  check_both(matcher, c2, UOp::infer(Ops::CAST, {c1.rtag()}, dtypes::int32).rtag());
}

TEST_CASE("pattern matcher: arg matching uses Python equality") {
  PatternMatcher matcher{
      rule(pat::op<Ops::CONST>().arg(0).named<"x">(), [](const auto& m) { return m[x].rtag(); }),
      rule(pat::op<Ops::CONST>().arg(false).named<"x">(), [](const auto& m) { return m[x].rtag(); }),
      rule(pat::op<Ops::MAX>().named<"x">(), [](const auto& m) { return m[x].rtag(); }),
  };
  UOp c1 = UOp::const_float(0.0);
  UOp c2 = UOp::const_bool(false);
  UOp c3 = node(Ops::MAX, {c1, c1});
  UOp c4 = node(Ops::MUL, {c1, c1});
  UOp c5 = UOp::const_int(-1);
  check_rewrite(matcher, c1, c1.rtag());
  check_rewrite(matcher, c2, c2.rtag());
  check_rewrite(matcher, c3, c3.rtag());
  check_rewrite(matcher, c4, UOp());
  check_rewrite(matcher, c5, UOp());
  // -0.0 == 0 as well, and arg=0 does not match 1
  check_rewrite(matcher, UOp::const_float(-0.0), UOp::const_float(-0.0).rtag());
  check_rewrite(matcher, UOp::const_int(1), UOp());
}

TEST_CASE("pattern matcher: a callback can filter on the arg and the next permutation is tried") {
  PatternMatcher matcher{rule(pat::op<Ops::MUL>(pat::perm(cv, pat::const_(2))).named<"x">(), [](const auto& m) {
    int64_t v = m[cv].arg().as_int();
    return v == 1 || v == -1 ? m[x].rtag() : UOp();
  })};
  UOp y1 = UOp::const_int(1);
  UOp y2 = UOp::const_int(2);
  UOp y3 = UOp::const_int(-1);
  UOp c1 = node(Ops::MUL, {y1, y2});
  UOp c2 = node(Ops::MUL, {y2, y2});
  UOp c3 = node(Ops::MUL, {y3, y2});
  UOp c4 = node(Ops::MUL, {y2, y1});
  UOp c5 = node(Ops::MUL, {y2, y3});
  check_rewrite(matcher, c1, c1.rtag());
  check_rewrite(matcher, c2, UOp());
  check_rewrite(matcher, c3, c3.rtag());
  check_rewrite(matcher, c4, c4.rtag());
  check_rewrite(matcher, c5, c5.rtag());
}

TEST_CASE("pattern matcher: a repeated name must bind the same node") {
  PatternMatcher matcher{rule(pat::ops<GroupOp::ALU>(cy, cy).named<"x">(), [](const auto& m) { return m[x].rtag(); })};
  UOp y1 = UOp::const_float(1.0);
  UOp y2 = UOp::const_float(1.0);
  UOp c1 = node(Ops::ADD, {y1, y1});
  UOp c2 = node(Ops::ADD, {y1, y2});
  check_rewrite(matcher, c1, c1.rtag());
  check_rewrite(matcher, c2, c1.rtag());  // hash-consing: y1 and y2 are the same node
  // different children do not match
  check_rewrite(matcher, node(Ops::ADD, {y1, UOp::const_float(2.0)}), UOp());
}

TEST_CASE("pattern matcher: dtype constraint") {
  PatternMatcher matcher{rule(pat::op<Ops::CAST>().named<"x">().dtype(dtypes::float32), [](const auto& m) { return m[x].rtag(); })};
  UOp c1 = UOp::const_float(1.0).cast(dtypes::float32);
  UOp c2 = UOp::const_float(1.0).cast(dtypes::float64);
  check_rewrite(matcher, c1, c1.rtag());
  check_rewrite(matcher, c2, UOp());
}

TEST_CASE("pattern matcher: dtype set constraint") {
  PatternMatcher matcher{rule(pat::op<Ops::CAST>().named<"x">().dtype(dtypes::float32, dtypes::float64),
                              [](const auto& m) { return m[x].rtag(); })};
  UOp c1 = UOp::const_float(1.0).cast(dtypes::float32);
  UOp c2 = UOp::const_float(1.0).cast(dtypes::float64);
  UOp c3 = UOp::const_float(1.0).cast(dtypes::float16);
  UOp c4 = UOp::const_int(1).cast(dtypes::int32);
  check_rewrite(matcher, c1, c1.rtag());
  check_rewrite(matcher, c2, c2.rtag());
  check_rewrite(matcher, c3, UOp());
  check_rewrite(matcher, c4, UOp());
}

TEST_CASE("pattern matcher: ordered sources") {
  PatternMatcher matcher{rule(pat::ops<GroupOp::ALU>(pat::op<Ops::CONST>(), pat::op<Ops::CONST>()).named<"x">(),
                              [](const auto& m) { return m[x].rtag(); })};
  UOp c1 = UOp::const_float(1.0);
  UOp c2 = UOp::const_float(2.0);
  UOp c3 = node(Ops::ADD, {c1, c2});
  check_rewrite(matcher, c3, c3.rtag());
  check_rewrite(matcher, c2, UOp());
  // a tuple src is order sensitive and length strict
  check_rewrite(matcher, node(Ops::ADD, {c3, c1}), UOp());
  check_rewrite(matcher, node(Ops::WHERE, {UOp::const_bool(true), c1, c2}), UOp());
}

TEST_CASE("pattern matcher: permuted sources") {
  PatternMatcher matcher{rule(pat::ops<GroupOp::ALU>(pat::perm(pat::op<Ops::CONST>(), pat::ops<GroupOp::ALU>())).named<"x">(),
                              [](const auto& m) { return m[x].rtag(); })};
  UOp c1 = UOp::const_float(1.0);
  UOp c2 = UOp::const_float(2.0);
  UOp c3 = node(Ops::ADD, {c1, c2});
  UOp c4 = node(Ops::ADD, {c3, c2});
  UOp c5 = node(Ops::ADD, {c2, c3});
  UOp c6 = node(Ops::ADD, {c3, c4});
  check_rewrite(matcher, c3, UOp());
  check_rewrite(matcher, c4, c4.rtag());
  check_rewrite(matcher, c5, c5.rtag());
  check_rewrite(matcher, c6, UOp());
}

TEST_CASE("pattern matcher: repeated source pattern") {
  PatternMatcher matcher{rule(pat::ops<GroupOp::ALU>(pat::each(pat::op<Ops::CONST>())).named<"x">(),
                              [](const auto& m) { return m[x].rtag(); })};
  UOp c1 = UOp::const_float(1.0);
  UOp c2 = UOp::const_float(2.0);
  UOp c3 = node(Ops::ADD, {c1, c2});
  UOp c4 = node(Ops::ADD, {c2, c3});
  check_rewrite(matcher, c3, c3.rtag());
  check_rewrite(matcher, c4, UOp());
  // any number of children
  check_rewrite(matcher, node(Ops::EXP2, {c1}), node(Ops::EXP2, {c1}).rtag());
  check_rewrite(matcher, node(Ops::MULACC, {c1, c2, c1}), node(Ops::MULACC, {c1, c2, c1}).rtag());
}

TEST_CASE("pattern matcher: allow_any_len matches a prefix") {
  PatternMatcher matcher{rule(pat::op<Ops::MULACC>(pat::prefix(pat::op<Ops::CONST>())).named<"x">(),
                              [](const auto& m) { return m[x].rtag(); })};
  UOp c1 = UOp::const_float(1.0);
  UOp c2 = UOp::const_float(2.0);
  UOp c3 = UOp::const_float(3.0);
  UOp c4 = node(Ops::EXP2, {c1});
  UOp c5 = node(Ops::ADD, {c1, c2});
  UOp c6 = node(Ops::MULACC, {c1, c2, c3});
  check_rewrite(matcher, c4, UOp());
  check_rewrite(matcher, c5, UOp());
  check_rewrite(matcher, c6, c6.rtag());
  check_rewrite(matcher, node(Ops::MULACC, {c5, c1, c2}), UOp());
}

TEST_CASE("pattern matcher: nested permutations with a shared name") {
  PatternMatcher matcher{rule(pat::ops<GroupOp::ALU>(pat::perm(pat::ops<GroupOp::ALU>(pat::perm(pa, pb)), pb)),
                              [](const auto& m) { return m[pb]; })};
  UOp c1 = UOp::const_float(1.0);
  UOp c2 = UOp::const_float(2.0);
  UOp u1 = (c1 + c2) + c1;
  UOp u2 = (c2 + c1) + c1;
  check_rewrite(matcher, u1, c1);
  check_rewrite(matcher, u2, c1);
  // no shared operand: no match
  check_rewrite(matcher, (c1 + c2) + UOp::const_float(3.0), UOp());
}

// ---------------------------------------------------------------------------------------------------------------
// The semantics of reference/tinygrad_core.md sections 4 and 5 that the tinygrad tests above do not pin down.

TEST_CASE("pattern matcher: both matchers enumerate bindings in tinygrad's order") {
  using Log = std::vector<std::string>;
  UOp a = UOp::variable("a", 0, 10);
  UOp b = UOp::variable("b", 0, 10);
  auto run = [](const PatternMatcher& pm, const UOp& u) {
    Log log;
    CHECK(!pm.rewrite(u, CtxRef(log)));  // every callback declines
    return log;
  };
  SUBCASE("x*c0 + x*c1: 8 orderings, 2 consistent") {
    PatternMatcher pm{rule(x * pc0 + x * pc1, [](const auto& m, Log& log) {
      log.push_back(m[pc0].arg().str() + "," + m[pc1].arg().str());
      return UOp();
    })};
    UOp u = a * 2 + a * 3;
    Log expected{"2,3", "3,2"};
    CHECK(run(pm, u) == expected);
    CHECK(run(pm.dynamic(), u) == expected);
    // UPat.match returns the same stores
    const UPat& up = *pm.rules()[0].upat;
    auto stores = up.match(u, {});
    REQUIRE(stores.size() == 2);
    CHECK(UPat::lookup(stores[0], "c0")->arg().as_int() == 2);
    CHECK(UPat::lookup(stores[1], "c0")->arg().as_int() == 3);
  }
  SUBCASE("permutations x alternatives") {
    PatternMatcher pm{rule(pat::op<Ops::ADD>(pat::perm(x, pat::any(y, z))), [](const auto& m, Log& log) {
      log.push_back("x=" + vname(m[x]) + (m[y] ? " y=" + vname(m[y]) : " z=" + vname(m[z])));
      return UOp();
    })};
    UOp u = a + b;
    Log expected{"x=a y=b", "x=a z=b", "x=b y=a", "x=b z=a"};
    CHECK(run(pm, u) == expected);
    CHECK(run(pm.dynamic(), u) == expected);
  }
  SUBCASE("three-element list: six orderings in itertools order") {
    UOp c = UOp::variable("c", 0, 10);
    PatternMatcher pm{rule(pat::op<Ops::SINK>(pat::perm(x, y, z)), [](const auto& m, Log& log) {
      log.push_back(vname(m[x]) + vname(m[y]) + vname(m[z]));
      return UOp();
    })};
    // permutation p of the patterns is zipped with the sources: source i is matched by pattern p[i]
    Log expected{"abc", "acb", "bac", "cab", "bca", "cba"};
    CHECK(run(pm, UOp::sink({a, b, c})) == expected);
    CHECK(run(pm.dynamic(), UOp::sink({a, b, c})) == expected);
  }
  SUBCASE("all-same list tries one ordering") {
    PatternMatcher pm{rule(x + x, [](const auto& m, Log& log) {
      log.push_back(vname(m[x]));
      return UOp();
    })};
    Log expected{"a"};
    CHECK(run(pm, a + a) == expected);
    CHECK(run(pm.dynamic(), a + a) == expected);
    CHECK(run(pm, a + b).empty());
    CHECK(run(pm.dynamic(), a + b).empty());
  }
  SUBCASE("repeat form with a name binds the same node for every child") {
    PatternMatcher pm{rule(pat::op<Ops::SINK>(pat::each(x)), [](const auto& m, Log& log) {
      log.push_back(vname(m[x]));
      return UOp();
    })};
    CHECK(run(pm, UOp::sink({a, a, a})) == Log{"a"});
    CHECK(run(pm.dynamic(), UOp::sink({a, a, a})) == Log{"a"});
    CHECK(run(pm, UOp::sink({a, b})).empty());
    CHECK(run(pm.dynamic(), UOp::sink({a, b})).empty());
  }
}

TEST_CASE("pattern matcher: a named pat::any binds the node it matched") {
  // UPat.or_casted(name) = UPat.any(self.named(name), UPat(Ops.CAST, name=name, src=(self,)))
  PatternMatcher unnamed_inner{rule(pat::op<Ops::SINK>(pat::or_casted<"y">(pat::op<Ops::CONST>())),
                                    [](const auto& m) { return m[y].rtag(); })};
  UOp one = UOp::const_int(1);
  UOp cast = one.cast(dtypes::int32);
  check_rewrite(unnamed_inner, UOp::sink({one}), one.rtag());
  check_rewrite(unnamed_inner, UOp::sink({cast}), cast.rtag());
  check_rewrite(unnamed_inner, UOp::sink({UOp::const_bool(true).cast(dtypes::int32).cast(dtypes::float32)}), UOp());
  // the alternatives may bind names of their own: both the inner and the outer name are bound
  PatternMatcher named_inner{rule(pat::op<Ops::SINK>(pat::or_casted<"y">(cv)), [](const auto& m) {
    return m[y] && m[cv] ? UOp::sink({m[y], m[cv]}) : UOp();
  })};
  check_rewrite(named_inner, UOp::sink({one}), UOp::sink({one, one}));
  check_rewrite(named_inner, UOp::sink({cast}), UOp::sink({cast, one}));
}

TEST_CASE("pattern matcher: a repeat-form pattern never matches zero children through early reject") {
  PatternMatcher pm{rule(pat::op<Ops::STACK>(pat::each(pat::op<Ops::INDEX>())).named<"s">(), [](const auto& m) { return m[ps].rtag(); })};
  UOp empty_stack = UOp::make(Ops::STACK, dtypes::void_);
  // UPat.match alone accepts it ...
  CHECK(pm.rules()[0].upat->match(empty_stack, {}).size() == 1);
  // ... but the PatternMatcher skips the rule (tinygrad's early_reject subset test)
  check_rewrite(pm, empty_stack, UOp());
}

TEST_CASE("pattern matcher: a rule that returns its input counts as no match") {
  PatternMatcher pm{
      rule(pat::op<Ops::CONST>().named<"x">(), [](const auto& m) { return m[x]; }),
      rule(pat::op<Ops::CONST>().named<"x">(), [](const auto& m) { return m[x].rtag(); }),
  };
  UOp c = UOp::const_int(5);
  check_rewrite(pm, c, c.rtag());
  check_both(pm, c, c.rtag());
}

TEST_CASE("pattern matcher: earlier rules have priority and + concatenates") {
  PatternMatcher first{rule(pat::op<Ops::CONST>().named<"x">(), [](const auto& m) { return m[x].rtag(1); })};
  PatternMatcher second{rule(pat::op<Ops::CONST>().named<"x">(), [](const auto& m) { return m[x].rtag(2); })};
  UOp c = UOp::const_int(5);
  CHECK((first + second).size() == 2);
  check_rewrite(first + second, c, c.rtag(1));
  check_rewrite(second + first, c, c.rtag(2));
  // a declining callback falls through to the next rule
  PatternMatcher decline{rule(pat::op<Ops::CONST>(), [](const auto&) { return UOp(); })};
  check_rewrite(decline + second, c, c.rtag(2));
  check_rewrite(decline, c, UOp());
}

TEST_CASE("pattern matcher: tag constraint") {
  PatternMatcher pm{rule(pat::op<Ops::CONST>().tag(1).named<"x">(), [](const auto& m) { return m[x].replace({.tag = Arg()}); })};
  UOp c = UOp::const_int(5);
  check_rewrite(pm, c.rtag(1), c);
  check_rewrite(pm, c, UOp());
  check_rewrite(pm, c.rtag(2), UOp());
}

TEST_CASE("pattern matcher: a ctx of the wrong type is a graft::Error") {
  PatternMatcher pm{rule(pat::op<Ops::CONST>().named<"x">(), [](const auto& m, std::vector<int>& ctx) {
    ctx.push_back(int(m[x].arg().as_int()));
    return UOp();
  })};
  UOp c = UOp::const_int(5);
  for (bool dyn : {false, true}) {
    INFO("dynamic=" << dyn);
    PatternMatcher p = dyn ? pm.dynamic() : pm;
    CHECK_THROWS_AS(p.rewrite(c), Error);
    std::vector<long> wrong;
    CHECK_THROWS_AS(graph_rewrite(c, p, wrong), Error);
    std::vector<int> right;
    CHECK(graph_rewrite(c, p, right) == c);
    CHECK(right == std::vector<int>{5});
  }
}

TEST_CASE("pattern matcher: dyn_rule builds a rule at run time") {
  // UPat(Ops.ADD, src=[UPat.var("x"), UPat.const(0)]) -> x
  UPat p = UPat::ops(Ops::ADD, {UPat::var("x"), UPat::const_(0)}, UPat::SrcKind::List);
  PatternMatcher pm{dyn_rule(p, [](const DynMatch& m, const CtxRef&) { return m["x"]; })};
  UOp a = UOp::variable("a", 0, 10);
  CHECK(pm.rewrite(a + 0) == a);
  CHECK(pm.rewrite(0 + a) == a);
  CHECK(!pm.rewrite(a + 1));
  CHECK_REWRITES(pm, (a + 0) + 0, a);
  // src=() at run time: an explicit empty tuple
  UPat leaf = UPat::ops(Ops::NOOP);
  leaf.src_kind = UPat::SrcKind::Tuple;
  CHECK(leaf.match(noop(), {}).size() == 1);
  CHECK(leaf.match(noop({noop()}), {}).empty());
  CHECK(UPat::ops(Ops::NOOP).match(noop({noop()}), {}).size() == 1);
}

// ---------------------------------------------------------------------------------------------------------------
// Pattern operator sugar must build the same shape as UOp operator sugar (tinygrad's mixins on UPat vs UOp).

TEST_CASE("pattern matcher: pattern operator sugar matches the UOp operator sugar") {
  auto pair = [](const auto& m) { return UOp::sink({m[x], m[y]}); };
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10);
  UOp fa = UOp::variable("fa", 0, 10, dtypes::float32), fb = UOp::variable("fb", 0, 10, dtypes::float32);
  UOp ab = UOp::sink({a, b}), fab = UOp::sink({fa, fb});
  // each pattern built with operators must match the node built with the same UOp operators and bind x, y in order
  check_rewrite(PatternMatcher{rule(x + y, pair)}, a + b, ab);
  check_rewrite(PatternMatcher{rule(x * y, pair)}, a * b, ab);
  check_rewrite(PatternMatcher{rule(x - y, pair)}, a - b, ab);
  check_rewrite(PatternMatcher{rule(x - y, pair)}, fa - fb, fab);
  check_rewrite(PatternMatcher{rule(-x, [](const auto& m) { return m[x]; })}, -a, a);
  check_rewrite(PatternMatcher{rule(x / y, pair)}, fa / fb, fab);
  // int division: only the numerator is cast to float, the int (or weak) denominator goes into RECIPROCAL as it is
  check_rewrite(PatternMatcher{rule(x / y, pair)}, a / b, UOp::sink({a.cast(dtypes::float32), b}));
  check_rewrite(PatternMatcher{rule(x / y, pair)}, a / 2, UOp::sink({a.cast(dtypes::float32), UOp::const_int(2)}));
  check_rewrite(PatternMatcher{rule(x / y, pair)}, fa / 2, UOp::sink({fa, UOp::const_float(2.0)}));
  check_rewrite(PatternMatcher{rule(x % y, pair)}, a % b, ab);
  check_rewrite(PatternMatcher{rule(x % y, pair)}, b % a, UOp::sink({b, a}));
  check_rewrite(PatternMatcher{rule(pat::floordiv(x, y), pair)}, floordiv(a, b), ab);
  check_rewrite(PatternMatcher{rule(x < y, pair)}, a < b, ab);
  check_rewrite(PatternMatcher{rule(x > y, pair)}, a > b, ab);
  check_rewrite(PatternMatcher{rule(x <= y, pair)}, a <= b, ab);
  check_rewrite(PatternMatcher{rule(x >= y, pair)}, a >= b, ab);
  check_rewrite(PatternMatcher{rule(x != y, pair)}, ne(a, b), ab);
  check_rewrite(PatternMatcher{rule(pat::ne(x, y), pair)}, ne(a, b), ab);
  check_rewrite(PatternMatcher{rule(pat::eq(x, y), pair)}, eq(a, b), ab);
  check_rewrite(PatternMatcher{rule(x ^ y, pair)}, a ^ b, ab);
  check_rewrite(PatternMatcher{rule(x & y, pair)}, a & b, ab);
  check_rewrite(PatternMatcher{rule(x | y, pair)}, a | b, ab);
  check_rewrite(PatternMatcher{rule(x << y, pair)}, a << b, ab);
  check_rewrite(PatternMatcher{rule(x >> y, pair)}, a >> b, ab);
  check_rewrite(PatternMatcher{rule(pat::maximum(x, y), pair)}, maximum(a, b), ab);
  check_rewrite(PatternMatcher{rule(pat::where(pc, x, y), pair)}, where(a < b, a, b), ab);
  check_rewrite(PatternMatcher{rule(pat::cast(x, dtypes::float32), [](const auto& m) { return m[x]; })}, a.cast(dtypes::float32), a);
  check_rewrite(PatternMatcher{rule(pat::cast(x, dtypes::float32), [](const auto& m) { return m[x]; })}, a.cast(dtypes::int32), UOp());
  check_rewrite(PatternMatcher{rule(pat::sqrt(x), [](const auto& m) { return m[x]; })}, sqrt(fa), fa);
  // a scalar operand becomes UPat.cvar(arg=value), matched with Python equality
  check_rewrite(PatternMatcher{rule(x + 1, [](const auto& m) { return m[x]; })}, a + 1, a);
  check_rewrite(PatternMatcher{rule(x + 1, [](const auto& m) { return m[x]; })}, 1 + a, a);
  check_rewrite(PatternMatcher{rule(x * 2, [](const auto& m) { return m[x]; })}, fa * 2, fa);
  check_rewrite(PatternMatcher{rule(x + 1, [](const auto& m) { return m[x]; })}, a + 2, UOp());
  // commutative ops match either order, the others only one
  check_rewrite(PatternMatcher{rule(x + y, pair)}, b + a, UOp::sink({b, a}));
  check_rewrite(PatternMatcher{rule(x + 1, [](const auto& m) { return m[x]; })}, node(Ops::ADD, {UOp::const_int(1), a}), a);
  check_rewrite(PatternMatcher{rule(x < 1, [](const auto& m) { return m[x]; })}, 1 < a, UOp());
  check_rewrite(PatternMatcher{rule(x < 1, [](const auto& m) { return m[x]; })}, a < 1, a);
}

TEST_CASE("pattern matcher: operator sugar takes the dtype of the last operand") {
  UOp a = UOp::variable("a", 0, 10, dtypes::int32), fa = UOp::variable("fa", 0, 10, dtypes::float32);
  // x + c(int32): the ADD must be int32
  PatternMatcher last{rule(x + cv.dtype(dtypes::int32), [](const auto& m) { return m[x]; })};
  check_rewrite(last, a + UOp::const_(dtypes::int32, 1), a);
  check_rewrite(last, node(Ops::ADD, {fa, UOp::const_(dtypes::int32, 1)}), UOp());
  // x(int32) + c: the ADD dtype is not constrained (tinygrad's quirk)
  PatternMatcher first{rule(x.dtype(dtypes::int32) + cv, [](const auto& m) { return m[x]; })};
  check_rewrite(first, a + 1, a);
  check_rewrite(first, node(Ops::ADD, {a, UOp::const_(dtypes::float32, 1.0)}), a);
  // comparisons are bool
  PatternMatcher cmp{rule(x < cv, [](const auto& m) { return m[x]; })};
  check_rewrite(cmp, a < 3, a);
}

// The compiled matcher first tests the pattern tree's op sets and source counts (pat::detail::shape_ok), the root's
// children's own dtype/arg/tag constraints (children_ok) and, for a name that two children of the root share, whether
// some node can bind it on both sides (names_ok); before that the PatternMatcher's sieve tests the root's and its
// first two children's op, dtype and arg class (sieve_ok on the node's sieve key). All are necessary conditions
// without bindings, which must never reject a node the full match accepts. Every pattern below against every node of
// a small pool: all four hold wherever the runtime interpreter matches, and both matchers agree.
TEST_CASE("pattern matcher: the sieve, shape, payload and shared-name pre-checks never reject a match") {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10), c3 = UOp::const_int(3), c5 = UOp::const_int(5);
  std::vector<UOp> pool = {a, b, c3, c5}, more;
  for (size_t round = 0; round < 2; round++) {  // two levels of ADD/MUL/MAX/WHERE, plus CMPLTs and SINKs
    std::vector<UOp> next = pool;
    for (size_t i = 0; i < pool.size(); i++)
      for (size_t j = 0; j < pool.size(); j += 1 + 2 * round) {
        const UOp &p = pool[i], &q = pool[j];
        next.push_back(p + q), next.push_back(p * q), next.push_back(maximum(p, q));
        more.push_back(p < q);
        if (round == 0) next.push_back(where(p < q, p, q)), more.push_back(UOp::sink({p, q, p}));
      }
    pool = std::move(next);
  }
  pool.insert(pool.end(), more.begin(), more.end());
  UOp fa = UOp::variable("fa", 0, 10, dtypes::float32);
  for (const UOp& u : {a * 3 + a * 5, a * 3 + b * 5, (a + b) * (b + a), (a + b) * (a + c3), (b + a) + a, (b + a) + b * 1,
                       a * 1, UOp::const_int(1) * b, a * -1, a * 0, fa * 1.0, fa * 0.0, fa * -1.0, fa * 2.5,
                       where(a < b, a, UOp::invalid()), where(a < b, UOp::invalid(), a), UOp::const_bool(true) & (a < b),
                       UOp::const_bool(false) | (a < b), a.cast(dtypes::int32) + UOp::const_(dtypes::int32, 1)})
    pool.push_back(u);
  auto first = [](const auto& m) { return UOp::sink({m[x]}); };
  // nodes of the right shape that names_ok / children_ok turn away; nodes of the root op that the sieve turns away;
  // nodes of the right shape without the repeat a repeated name needs (first_repeat_depth)
  size_t name_rejects = 0, payload_rejects = 0, sieve_rejects = 0, repeat_rejects = 0;
  auto check_pattern = [&](const auto& pattern, std::source_location loc = std::source_location::current()) {
    INFO("pattern at line " << loc.line());
    using P = std::remove_cvref_t<decltype(pattern)>;
    PatternMatcher pm{rule(pattern, first)};
    // the same rule among enough candidates of its root ops for the sieve and the shared repeat check to run
    auto never = [](const auto&) { return UOp(); };
    PatternMatcher padded{rule(pattern, first), rule(pat::ops<P::ops>(), never), rule(pat::ops<P::ops>(), never),
                          rule(pat::ops<P::ops>(), never)};
    constexpr uint8_t repeat = pat::detail::repeat_depth<P>();
    size_t matched = 0;
    for (const UOp& u : pool) {
      UOp dyn = pm.dynamic().rewrite(u);
      CHECK(pm.rewrite(u) == dyn);
      CHECK(padded.rewrite(u) == dyn);
      bool repeat_ok = !repeat || pat::detail::first_repeat_depth(u) <= repeat;
      repeat_rejects += pat::detail::shape_ok<P>(u) && !repeat_ok;
      bool shape = pat::detail::shape_ok<P>(u), names = shape && pat::detail::names_ok<P>(u);
      bool payload = shape && pat::detail::children_ok(pattern, u);
      name_rejects += shape && !names;
      payload_rejects += shape && !payload;
      bool sieve = !P::ops.has(u.op()) || pat::detail::sieve_ok(pattern, pat::detail::sieve_key(u));
      sieve_rejects += !sieve;
      if (pm.rules()[0].upat->match(u, {}).empty()) continue;
      CHECK(shape);
      CHECK(names);
      CHECK(payload);
      CHECK(sieve);
      CHECK(repeat_ok);
      matched++;
    }
    CHECK(matched > 0);  // each pattern matches something in the pool, so the implication is not vacuous
  };
  check_pattern(x + (pat::wild * cv));                                    // permuted, nested op in either position
  check_pattern((x + pat::wild) + (pat::wild * x));                       // nested permutations sharing a name
  check_pattern((x * pat::wild) < pat::wild);                             // CMPLT: ordered
  check_pattern(pat::ops<OpSet{Ops::ADD, Ops::MUL}>(pat::perm(x, cv)));   // an op set at the root
  check_pattern(pat::where(x < pat::wild, pat::wild, pat::wild));         // ordered three sources
  check_pattern(pat::op<Ops::SINK>(pat::prefix(x, pat::wild)));           // a prefix of the sources
  check_pattern(pat::op<Ops::SINK>(pat::each(pat::ops<OpSet{Ops::ADD, Ops::BUFFER}>())).named<"x">());  // repeat
  // alternatives
  check_pattern(pat::ops<OpSet{Ops::ADD, Ops::MAX}>(pat::any(x * pat::wild, pat::op<Ops::BUFFER>().named<"x">()), pat::wild));
  // names shared by two children of the root (names_ok): permuted pairs, ordered sources, alternatives, a prefix
  auto y = pat::var<"y">;
  check_pattern(x * pat::cvar<"c0"> + x * pat::cvar<"c1">);               // x*c0 + x*c1
  check_pattern((y + x) + x);                                              // one side deeper than the other
  check_pattern(x + x);                                                    // the children themselves
  check_pattern((x + y) * (y + x));                                        // two shared names
  check_pattern(pat::where(x < y, x, y));                                  // ordered, three sources
  check_pattern(pat::maximum(pat::any(x * cv, x + cv), x));                // alternatives on one side
  check_pattern(pat::op<Ops::SINK>(pat::prefix(x, pat::wild, x)));         // a prefix
  check_pattern(pat::op<Ops::SINK>(x, pat::wild, x));                     // ordered, exact
  // payloads of the root's children (children_ok): an arg, a dtype, in either order
  check_pattern(x * 1);
  check_pattern(pat::maximum(x, pat::const_(5)));
  check_pattern(x.dtype(dtypes::weakint) < cv);
  // arg classes: -1, 0 and a float constraint that also matches ints (Python equality), Invalid, bools, dtypes
  check_pattern(x * -1);
  check_pattern(x * 0);
  check_pattern(x * 1.0);
  check_pattern(x * 2.5);
  check_pattern(pat::where(pat::wild, x, pat::const_(Invalid)));
  check_pattern(pat::where(pat::wild, pat::const_(Invalid), x));
  check_pattern(pat::ops<OpSet{Ops::AND, Ops::OR}>(pat::perm(pat::const_(true), x)));
  check_pattern(pat::ops<OpSet{Ops::AND, Ops::OR}>(pat::perm(pat::const_(false), x)));
  check_pattern(x.dtype(dtypes::int32) + pat::cvar<"c">.dtype(dtypes::int32));
  check_pattern(pat::ops<GroupOp::ALU>(pat::each(pat::ops<OpSet{Ops::CONST, Ops::CAST}>())).named<"x">());
  CHECK(name_rejects > 0);  // and the checks do reject: pool nodes of the right shape without a shared binding,
  CHECK(payload_rejects > 0);  // or with another constant
  CHECK(sieve_rejects > 0);
  CHECK(repeat_rejects > 0);
}

// repeat_depth: how deep the second binding of a repeated name lies (0: no repeated name that shallow, or a form the
// analysis leaves alone); first_repeat_depth: where a node first repeats among a node's children and grandchildren
TEST_CASE("pattern matcher: the depth of a repeated name, and of a repeated node") {
  auto y = pat::var<"y">;
  auto depth = [](const auto& p) { return pat::detail::repeat_depth<std::remove_cvref_t<decltype(p)>>(); };
  CHECK(depth(x + x) == 1);
  CHECK(depth(pat::op<Ops::SINK>(x, pat::wild, x)) == 1);
  CHECK(depth(x * pat::cvar<"c0"> + x * pat::cvar<"c1">) == 2);
  CHECK(depth((y + x) + x) == 2);
  CHECK(depth((x + y) * (y + x)) == 2);
  CHECK(depth(x + y) == 0);                                         // no repeated name
  CHECK(depth((y + x * pat::cvar<"c">) + x) == 0);                  // the second x is a great-grandchild: not checked
  CHECK(depth(pat::maximum(pat::any(x * cv, x + cv), x)) == 0);      // alternatives: not analysed
  CHECK(depth(pat::op<Ops::SINK>(pat::each(x))) == 0);               // a repeat form: not analysed
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10), c = UOp::variable("c", 0, 10);
  CHECK(pat::detail::first_repeat_depth(a + a) == 1);
  CHECK(pat::detail::first_repeat_depth((a + b) + a) == 2);                // a child and a grandchild
  CHECK(pat::detail::first_repeat_depth((a + b) * (b + c)) == 2);          // two grandchildren
  CHECK(pat::detail::first_repeat_depth((a + b) * (c + 3)) == 3);          // none
  CHECK(pat::detail::first_repeat_depth((a + b) * (c + 3), 1) == 2);       // only the children looked at
  CHECK(pat::detail::first_repeat_depth(UOp::const_int(1)) == 3);
  // a node with more than 16 children and grandchildren: no claim past the children
  std::vector<UOp> wide;
  for (int i = 0; i < 9; i++) wide.push_back(UOp::variable("w" + std::to_string(i), 0, 10) + i);
  CHECK(pat::detail::first_repeat_depth(UOp::sink(wide)) == 2);
}

// The sieve's per-thread cache: a matcher with enough rules on one op to use it, nodes whose keys differ in each part
// of the key (source ops, dtypes, arg classes, source count), visited in an interleaved order (hits and misses), on
// two threads at once: every answer is the runtime matcher's, and every rule fires somewhere.
TEST_CASE("pattern matcher: the sieve cache gives every node the rules of its own key") {
  auto tag = [](int k) { return [k](const auto& m) { return UOp::sink({m[x], UOp::const_int(k)}); }; };
  PatternMatcher pm{rule(x * 0, tag(0)), rule(x * 1, tag(1)), rule(x * -1, tag(2)), rule(x * 2.5, tag(3)),
                    rule(x.dtype(dtypes::bool_) * y, tag(4)), rule(pat::op<Ops::MUL>(x, pat::op<Ops::ADD>()), tag(5)),
                    rule(pat::op<Ops::MUL>(pat::prefix(x, y, pat::wild)), tag(6)), rule(x * y, tag(7))};
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10), fa = UOp::variable("fa", 0, 10, dtypes::float32);
  std::vector<UOp> nodes = {a * 0, 0 * a, a * 1, a * -1, fa * 2.5, fa * 0.0, (a < b) * (b < a), a * (a + b), (a + b) * a,
                            UOp::make(Ops::MUL, dtypes::weakint, {a, b, a}), a * b, a * 3, fa * 1.0};
  const PatternMatcher dyn = pm.dynamic();
  std::vector<UOp> want;
  for (const UOp& u : nodes) want.push_back(dyn.rewrite(u));
  auto run = [&](int offset, std::vector<int>& fired, bool& same) {
    for (int round = 0; round < 3; round++)
      for (size_t i = 0; i < nodes.size(); i++) {
        size_t k = (i * 5 + size_t(offset + round)) % nodes.size();  // 5 is coprime to the size: every node, mixed order
        UOp got = pm.rewrite(nodes[k]);
        same &= got == want[k];
        if (got) fired[size_t(got.src(1).arg().as_int())]++;
      }
  };
  std::vector<int> f1(8), f2(8);
  bool s1 = true, s2 = true;
  std::thread t([&] { run(1, f2, s2); });
  run(0, f1, s1);
  t.join();
  CHECK(s1);
  CHECK(s2);
  for (int k = 0; k < 8; k++) {
    INFO("rule " << k);
    CHECK(f1[size_t(k)] > 0);
    CHECK(f1[size_t(k)] == f2[size_t(k)]);
  }
}

// An arg's class (graft::arg_class) and a pattern constraint's (ArgMatch::arg_class) agree wherever the constraint
// matches the arg: the sieve rejects by class alone.
TEST_CASE("pattern matcher: arg classes agree with Python equality") {
  std::vector<Arg> args = {Arg(), Arg(int64_t(0)), Arg(int64_t(1)), Arg(int64_t(-1)), Arg(int64_t(7)), Arg(0.0), Arg(-0.0),
                           Arg(1.0), Arg(-1.0), Arg(2.5), Arg(NAN), Arg(true), Arg(false), Arg(Invalid), Arg(dtypes::int32),
                           Arg(Ops::ADD), Arg(std::string("s")), Arg(ArgTuple{Arg(1)})};
  std::vector<pat::ArgMatch> ms = {pat::ArgMatch(0), pat::ArgMatch(1), pat::ArgMatch(-1), pat::ArgMatch(7), pat::ArgMatch(0.0),
                                   pat::ArgMatch(1.0), pat::ArgMatch(-1.0), pat::ArgMatch(2.5), pat::ArgMatch(double(NAN)),
                                   pat::ArgMatch(true), pat::ArgMatch(false), pat::ArgMatch(Invalid),
                                   pat::ArgMatch(dtypes::int32), pat::ArgMatch(Ops::ADD)};
  size_t matches = 0, class_rejects = 0;
  for (const pat::ArgMatch& m : ms)
    for (const Arg& a : args) {
      INFO(m.to_arg().str() << " vs " << a.str());
      if (m.matches(a)) {
        CHECK(m.arg_class() == arg_class(a));
        matches++;
      } else {
        class_rejects += m.arg_class() != arg_class(a);
      }
    }
  CHECK(matches >= ms.size());  // every constraint matches at least one arg of the list
  CHECK(class_rejects > 0);
  CHECK(arg_class(Arg(int64_t(5))) == arg_class(Arg(2.5)));  // one class for the other numbers
  CHECK(arg_class(Arg(int64_t(1))) != arg_class(Arg(int64_t(0))));
}
