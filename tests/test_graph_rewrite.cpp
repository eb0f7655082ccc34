// Port of tinygrad test/null/test_graph_rewrite.py (the cases that need neither the symbolic simplifier nor
// hypothesis; the hypothesis ones loop over the compiled and the runtime matcher instead), plus the graph_rewrite
// and substitute semantics of reference/tinygrad_core.md sections 3.7 and 6.
// Every rule set runs with the compiled matcher and with the runtime UPat interpreter (pm.dynamic()).
#include <doctest/doctest.h>

#include <graft/graft.hpp>
#include <graft/testing.hpp>

#include <source_location>
#include <string>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

using namespace graft;

namespace {

using SubMap = std::unordered_map<UOp, UOp>;
using Log = std::vector<std::string>;

constexpr auto x = pat::var<"x">;
constexpr auto cv = pat::cvar<"c">;
constexpr auto c0 = pat::cvar<"c0">;
constexpr auto c1 = pat::cvar<"c1">;

// tinygrad's _substitute: every op, replaced by ctx.get(x)
const PatternMatcher& substitute_pm() {
  static const PatternMatcher pm{rule(pat::ops<GroupOp::All>().named<"x">(), [](const auto& m, SubMap& ctx) {
    auto it = ctx.find(m[x]);
    return it == ctx.end() ? UOp() : it->second;
  })};
  return pm;
}

// graph_rewrite(root, _substitute, map, options) with both matchers; in bottom_up mode UOp::substitute must agree.
void check_substitute(const UOp& root, SubMap map, RewriteOptions o, const UOp& expected,
                      std::source_location loc = std::source_location::current()) {
  INFO("called from line " << loc.line());
  CHECK(graph_rewrite(root, substitute_pm(), map, o) == expected);
  CHECK(graph_rewrite(root, substitute_pm().dynamic(), map, o) == expected);
  if (o.bottom_up && !o.bpm) CHECK(root.substitute(map, o.walk) == expected);
}

// graph_rewrite with both matchers.
void check_both(const PatternMatcher& pm, const UOp& in, const UOp& expected, RewriteOptions o = {},
                std::source_location loc = std::source_location::current()) {
  INFO("called from line " << loc.line());
  CHECK_REWRITES(pm, in, expected, o);
  CHECK_REWRITES(pm.dynamic(), in, expected, o);
}

std::string label(const UOp& u) { return u.op() == Ops::CONST ? u.arg().str() : std::string(op_name(u.op())); }

// records every node it is tried on, never rewrites
PatternMatcher visit_recorder(std::string tag) {
  return PatternMatcher{rule(pat::ops<GroupOp::All>().named<"x">(), [tag](const auto& m, Log& log) {
    log.push_back(tag.empty() ? label(m[x]) : label(m[x]) + " " + tag);
    return UOp();
  })};
}

// CONST 3 -> 4 and 4 -> 3
PatternMatcher ping_pong() {
  return PatternMatcher{
      rule(pat::op<Ops::CONST>().arg(3).named<"x">(), [](const auto& m) { return UOp::const_(m[x].dtype(), 4); }),
      rule(pat::op<Ops::CONST>().arg(4).named<"x">(), [](const auto& m) { return UOp::const_(m[x].dtype(), 3); }),
  };
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// TestBottomUpRewrite (symbolic_simple is replaced by a local constant folder: rules/ is not part of this test)

TEST_CASE("graph rewrite: bottom_up and the default mode reach the same constant fold") {
  PatternMatcher fold{
      rule(c0 + c1, [](const auto& m) { return UOp::const_(m[c0].dtype(), m[c0].arg().as_int() + m[c1].arg().as_int()); }),
      rule(c0 * c1, [](const auto& m) { return UOp::const_(m[c0].dtype(), m[c0].arg().as_int() * m[c1].arg().as_int()); }),
  };
  UOp a = UOp::const_int(5);
  UOp ret = (a * 3) + (a * 7);
  UOp gt = graph_rewrite(ret, fold);
  CHECK(gt == UOp::const_int(50));
  check_both(fold, ret, gt);
  check_both(fold, ret, gt, {.bottom_up = true});
}

// ---------------------------------------------------------------------------------------------------------------
// TestSubstitute

TEST_CASE("graph rewrite: substitute a leaf") {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10);
  check_substitute(a + 4, {{a, b}}, {.bottom_up = true}, b + 4);
}

TEST_CASE("graph rewrite: substitute two leaves") {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10), c = UOp::variable("c", 0, 10);
  check_substitute((a + 4) + b, {{a, c}, {b, c}}, {.bottom_up = true}, (c + 4) + c);
}

TEST_CASE("graph rewrite: substitute in a diamond") {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10);
  check_substitute((a + 4) + (a + 5), {{a, b}}, {.bottom_up = true}, (b + 4) + (b + 5));
}

TEST_CASE("graph rewrite: substitute an inner node") {
  UOp a = UOp::variable("a", 0, 10, dtypes::float32), b = UOp::variable("b", 0, 10, dtypes::float32);
  check_substitute(sin(sin(a)), {{sin(a), b}}, {.bottom_up = true}, sin(b));
}

TEST_CASE("graph rewrite: substitute sin to sqrt below a parent") {
  UOp a = UOp::variable("a", 0, 10, dtypes::float32);
  check_substitute(sin(sin(a)), {{sin(a), sqrt(a)}}, {.bottom_up = true}, sin(sqrt(a)));
}

TEST_CASE("graph rewrite: substitute matches the outermost node first") {
  UOp a = UOp::variable("a", 0, 10, dtypes::float32);
  UOp n1 = sin(a);
  // sin(sin(a)) -> sqrt(sin(a)) fires first, then sin(a) inside the replacement -> sqrt(a)
  check_substitute(sin(n1), {{sin(a), sqrt(a)}, {sin(n1), sqrt(n1)}}, {.bottom_up = true}, sqrt(sqrt(a)));
}

TEST_CASE("graph rewrite: substitute keeps the tag of a rebuilt node") {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10);
  check_substitute((a + 4).replace({.tag = 1}), {{a, b}}, {.bottom_up = true}, (b + 4).replace({.tag = 1}));
}

// tinygrad skips its test_assert_inf_recurse ("recursion error no longer raised"); it now ends in a KeyError.
TEST_CASE("graph rewrite: a replacement that contains the replaced node is a graft::Error") {
  UOp a = UOp::variable("a", 0, 10, dtypes::float32);
  UOp n1 = sin(a);
  SubMap map{{n1, sqrt(n1)}};
  CHECK_THROWS_AS(graph_rewrite(n1, substitute_pm(), map, {.bottom_up = true}), Error);
  CHECK_THROWS_AS(graph_rewrite(n1, substitute_pm().dynamic(), map, {.bottom_up = true}), Error);
  CHECK_THROWS_AS(n1.substitute(map), Error);
  CHECK_THROWS_AS(graph_rewrite(n1 + 4, substitute_pm(), map, {.bottom_up = true}), Error);
  // the walk driver does not revisit replacements, so there it works
  CHECK(n1.substitute(map, true) == sqrt(n1));
}

// reference/tinygrad_core.md 3.7: identity pairs are dropped, replacements are rewritten again (fixed point) unless walk
TEST_CASE("graph rewrite: substitute semantics") {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10), c = UOp::variable("c", 0, 10),
      d = UOp::variable("d", 0, 10);
  UOp e = a + 4;
  CHECK(e.substitute({}) == e);
  CHECK(e.substitute({{a, a}}) == e);
  CHECK(e.substitute({{a, a}, {b, c}}) == e);
  CHECK(e.substitute({{a, a}, {e, b}}) == b);
  CHECK(e.substitute({{a, b + c}, {b, d}}) == (d + c) + 4);
  CHECK(e.substitute({{a, b + c}, {b, d}}, true) == (b + c) + 4);
  // a chain of replacements is followed to its end
  CHECK(e.substitute({{a, b}, {b, c}, {c, d}}) == d + 4);
  // a node that appears several times is replaced everywhere, shared nodes once
  UOp shared = a * b;
  CHECK((shared + shared * 2).substitute({{shared, c}}) == c + c * 2);
  // values from a substitute map may be any node, including constants
  CHECK((a + b).substitute({{a, UOp::const_int(1)}, {b, UOp::const_int(2)}}) == UOp::const_int(1) + 2);
}

// substitute takes one post-order pass when no value holds a key; these cases pin that pass to the driver's semantics
TEST_CASE("graph rewrite: substitute single pass keeps the fixed-point semantics") {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10), c = UOp::variable("c", 0, 10);
  // a rebuilt node that is itself a key is replaced too
  CHECK(((a + 1) * 2).substitute({{a, b}, {b + 1, c}}) == c * 2);
  // a value that is a key is replaced again (the driver's path): a -> b + 1 -> c
  CHECK(((a + 1) * 2).substitute({{a, b + 1}, {b + 1, c}}) == (c + 1) * 2);
  // a parent's dtype follows its new sources
  UOp f = (a + b).substitute({{a, UOp::const_float(1.5)}});
  CHECK(f.op() == Ops::ADD);
  CHECK(dtypes::is_float(f.dtype()));
  // a CALL's body is not entered, its arguments are
  UOp call = UOp::make(Ops::CALL, dtypes::void_, {UOp::sink({a + 1}), a});
  CHECK(call.substitute({{a, b}}) == UOp::make(Ops::CALL, dtypes::void_, {UOp::sink({a + 1}), b}));
  // a graph without the key's op is returned as it is
  UOp g = a * 3;
  CHECK(g.substitute({{UOp::const_float(2.0), c}}) == g);
}

// ---------------------------------------------------------------------------------------------------------------
// TestRecurse (hypothesis draws PatternMatcher or TrackedPatternMatcher; here: the compiled and the runtime matcher)

TEST_CASE("graph rewrite: a rule returning its input does not loop") {
  PatternMatcher pm{rule(pat::op<Ops::BUFFER>().named<"x">(), [](const auto& m, int& calls) {
    calls++;
    return m[x];
  })};
  UOp a = UOp::variable("a", 0, 10);
  for (bool dyn : {false, true})
    for (bool bottom_up : {false, true}) {
      INFO("dynamic=" << dyn << " bottom_up=" << bottom_up);
      int calls = 0;
      CHECK(graph_rewrite(a, dyn ? pm.dynamic() : pm, calls, {.bottom_up = bottom_up}) == a);
      CHECK(calls == 1);
    }
}

TEST_CASE("graph rewrite: bottom_up rewrites a rebuilt parent again when a rule roots its op, and keeps it otherwise") {
  // pre-order: the ADD is visited while its source is still 1, so only its rebuilt form ADD(a, 2) matches; MAX roots
  // no rule, so its rebuilt form is final without a visit
  PatternMatcher pm{
      rule(pat::op<Ops::CONST>().named<"c">(), [](const auto& m) { return m["c"].arg().as_int() == 1 ? UOp::const_int(2) : UOp(); }),
      rule(pat::op<Ops::ADD>().named<"x">(), [](const auto& m) {
        const UOp& x = m["x"];
        return x.src(1).is_const() && x.src(1).arg().as_int() == 2 ? x.src(0) * 3 : UOp();
      }),
  };
  UOp a = UOp::variable("rebuilt", 0, 9);
  UOp in = UOp::sink({maximum(a + 1, UOp::const_int(0)), a + 1});
  UOp want = UOp::sink({maximum(a * 3, UOp::const_int(0)), a * 3});
  CHECK_REWRITES(pm, in, want, {.bottom_up = true});
  CHECK_REWRITES(pm.dynamic(), in, want, {.bottom_up = true});
}

TEST_CASE("graph rewrite: a 3 -> 4 -> 3 ping-pong is a graft::Error, in walk mode it returns 4") {
  PatternMatcher pm = ping_pong();
  UOp a = UOp::const_int(3);
  for (bool dyn : {false, true}) {
    INFO("dynamic=" << dyn);
    PatternMatcher p = dyn ? pm.dynamic() : pm;
    // the post-order driver finds 3 pending when 4 rewrites back to it (the cycle is named); bottom-up mode names it
    // in its fixed-point loop
    CHECK_THROWS_WITH_AS(graph_rewrite(a, p), doctest::Contains("cycle"), Error);
    CHECK_THROWS_WITH_AS(graph_rewrite(a, p, {.bottom_up = true}), doctest::Contains("cycle"), Error);
    CHECK_REWRITES(p, a, UOp::const_int(4), {.walk = true});
    CHECK_REWRITES(p, a, UOp::const_int(4), {.bottom_up = true, .walk = true});
    // also as the child of another node
    CHECK_THROWS_WITH_AS(graph_rewrite(UOp::variable("v", 0, 10) + a, p), doctest::Contains("cycle"), Error);
    CHECK_REWRITES(p, a + 1, UOp::const_int(4) + 1, {.walk = true});
  }
}

// ---------------------------------------------------------------------------------------------------------------
// TestBidirectional and TestStopEarly

TEST_CASE("graph rewrite: bidirectional pm and bpm visit order") {
  UOp c = UOp::const_int(1) + UOp::const_int(2);
  PatternMatcher pm = visit_recorder("pm"), bpm = visit_recorder("bpm");
  for (bool dyn : {false, true}) {
    INFO("dynamic=" << dyn);
    PatternMatcher p = dyn ? pm.dynamic() : pm, bp = dyn ? bpm.dynamic() : bpm;
    Log log;
    CHECK(graph_rewrite(c, p, log, {.bpm = &bp}) == c);
    CHECK(log == Log{"ADD bpm", "1 bpm", "1 pm", "2 bpm", "2 pm", "ADD pm"});
  }
}

TEST_CASE("graph rewrite: substitute with an extra matcher stops at the replaced node") {
  UOp a = UOp::const_int(3), b = UOp::const_int(4);
  UOp cc = a + b;
  UOp cn = UOp::const_int(7);
  UOp d = UOp::const_int(2);
  std::vector<int64_t> seen;
  PatternMatcher pm_cvisit{rule(cv, [&seen](const auto& m) {
    seen.push_back(m[cv].arg().as_int());
    return UOp();
  })};
  for (bool dyn : {false, true}) {
    INFO("dynamic=" << dyn);
    seen.clear();
    SubMap map{{cc, cn}};
    // UOp.substitute(dvars, extra_pm=...) = graph_rewrite(extra_pm + _substitute, dvars, bottom_up=True)
    PatternMatcher pm = pm_cvisit + substitute_pm();
    UOp ret = graph_rewrite(cc + d, dyn ? pm.dynamic() : pm, map, {.bottom_up = true});
    CHECK(ret == cn + d);
    CHECK(seen == std::vector<int64_t>{7, 2});  // never 3 or 4
  }
}

// ---------------------------------------------------------------------------------------------------------------
// TestWalkRewrite: walk=True is a single pass that does not revisit or re-enter rewritten subtrees.

TEST_CASE("graph rewrite: walk top-down simple substitute") {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10);
  check_substitute(a + 4, {{a, b}}, {.walk = true}, b + 4);
}

TEST_CASE("graph rewrite: walk top-down does not traverse into a replacement") {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10), c = UOp::variable("c", 0, 10),
      d = UOp::variable("d", 0, 10);
  check_substitute(a + 4, {{a, b + c}, {b, d}}, {.walk = true}, (b + c) + 4);
  // contrast: greedy bottom_up does replace b inside the replacement
  check_substitute(a + 4, {{a, b + c}, {b, d}}, {.bottom_up = true}, (d + c) + 4);
}

TEST_CASE("graph rewrite: walk top-down has no fixed point") {
  PatternMatcher pm = ping_pong();
  UOp a = UOp::const_int(3);
  CHECK_THROWS_AS(graph_rewrite(a, pm, {.bottom_up = true}), Error);
  CHECK_THROWS_AS(graph_rewrite(a, pm.dynamic(), {.bottom_up = true}), Error);
  check_both(pm, a, UOp::const_int(4), {.walk = true});
}

TEST_CASE("graph rewrite: walk top-down rewrites children") {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10), c = UOp::variable("c", 0, 10);
  check_substitute((a + 4) + (b + 5), {{a, c}, {b, c}}, {.walk = true}, (c + 4) + (c + 5));
}

TEST_CASE("graph rewrite: walk top-down diamond") {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10);
  check_substitute((a + 4) + (a + 5), {{a, b}}, {.walk = true}, (b + 4) + (b + 5));
}

TEST_CASE("graph rewrite: walk top-down rewrites children before the parent") {
  UOp a = UOp::variable("a", 0, 10, dtypes::float32);
  UOp n1 = sin(a);
  // sin(a) -> sqrt(a) fires first (child); the rebuilt parent sin(sqrt(a)) is not in the map
  check_substitute(sin(n1), {{sin(a), sqrt(a)}, {sin(n1), sqrt(n1)}}, {.walk = true}, sin(sqrt(a)));
}

TEST_CASE("graph rewrite: walk top-down self-referential replacement") {
  UOp a = UOp::variable("a", 0, 10, dtypes::float32);
  check_substitute(sin(a) + 4, {{sin(a), sqrt(sin(a))}}, {.walk = true}, sqrt(sin(a)) + 4);
}

TEST_CASE("graph rewrite: walk top-down visit order") {
  PatternMatcher pm = visit_recorder("");
  for (bool dyn : {false, true}) {
    INFO("dynamic=" << dyn);
    Log visited;
    graph_rewrite(UOp::const_int(1) + UOp::const_int(2), dyn ? pm.dynamic() : pm, visited, {.walk = true});
    CHECK(visited == Log{"1", "2", "ADD"});
  }
}

TEST_CASE("graph rewrite: walk bottom-up simple substitute") {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10);
  check_substitute(a + 4, {{a, b}}, {.bottom_up = true, .walk = true}, b + 4);
}

TEST_CASE("graph rewrite: walk bottom-up does not traverse into a replacement") {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10), c = UOp::variable("c", 0, 10),
      d = UOp::variable("d", 0, 10);
  check_substitute(a + 4, {{a, b + c}, {b, d}}, {.bottom_up = true, .walk = true}, (b + c) + 4);
}

TEST_CASE("graph rewrite: walk bottom-up parent match skips the children") {
  UOp a = UOp::variable("a", 0, 10, dtypes::float32);
  UOp n1 = sin(a);
  // sin(sin(a)) matches first; sin(a) inside the replacement is untouched
  check_substitute(sin(n1), {{sin(a), sqrt(a)}, {sin(n1), sqrt(n1)}}, {.bottom_up = true, .walk = true}, sqrt(sin(a)));
}

TEST_CASE("graph rewrite: walk bottom-up has no fixed point") {
  check_both(ping_pong(), UOp::const_int(3), UOp::const_int(4), {.bottom_up = true, .walk = true});
}

TEST_CASE("graph rewrite: walk bottom-up visit order") {
  PatternMatcher pm = visit_recorder("");
  for (bool dyn : {false, true}) {
    INFO("dynamic=" << dyn);
    Log visited;
    graph_rewrite(UOp::const_int(1) + UOp::const_int(2), dyn ? pm.dynamic() : pm, visited, {.bottom_up = true, .walk = true});
    CHECK(visited == Log{"ADD", "1", "2"});
  }
}

TEST_CASE("graph rewrite: walk bottom-up falls through to the children when the parent does not match") {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10), c = UOp::variable("c", 0, 10);
  check_substitute((a + 4) + (b + 5), {{a, c}, {b, c}}, {.bottom_up = true, .walk = true}, (c + 4) + (c + 5));
}

TEST_CASE("graph rewrite: walk bidirectional visit order") {
  PatternMatcher pm = visit_recorder("pm"), bpm = visit_recorder("bpm");
  for (bool dyn : {false, true}) {
    INFO("dynamic=" << dyn);
    PatternMatcher p = dyn ? pm.dynamic() : pm, bp = dyn ? bpm.dynamic() : bpm;
    Log visited;
    graph_rewrite(UOp::const_int(1) + UOp::const_int(2), p, visited, {.walk = true, .bpm = &bp});
    CHECK(visited == Log{"ADD bpm", "1 bpm", "1 pm", "2 bpm", "2 pm", "ADD pm"});
  }
}

TEST_CASE("graph rewrite: walk bidirectional bpm short-circuits") {
  PatternMatcher bpm{rule(pat::ops<GroupOp::All>().named<"x">(), [](const auto& m, Log& log) {
    log.push_back(label(m[x]) + " bpm");
    // rewrite const(1) -> const(10), short-circuiting its subtree
    if (m[x].op() == Ops::CONST && m[x].arg().as_int() == 1) return UOp::const_(m[x].dtype(), 10);
    return UOp();
  })};
  PatternMatcher pm = visit_recorder("pm");
  UOp a = UOp::const_int(1), b = UOp::const_int(2);
  for (bool dyn : {false, true}) {
    INFO("dynamic=" << dyn);
    PatternMatcher p = dyn ? pm.dynamic() : pm, bp = dyn ? bpm.dynamic() : bpm;
    Log visited;
    UOp ret = graph_rewrite(a + b, p, visited, {.walk = true, .bpm = &bp});
    // pm never fires on const(1) (nor on its replacement), but on const(2) and the rebuilt ADD
    CHECK(visited == Log{"ADD bpm", "1 bpm", "2 bpm", "2 pm", "ADD pm"});
    CHECK(ret == UOp::const_int(10) + b);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// More of reference/tinygrad_core.md section 6

TEST_CASE("graph rewrite: each node is rewritten once per call and children before parents") {
  PatternMatcher pm = visit_recorder("");
  UOp one = UOp::const_int(1), two = UOp::const_int(2);
  UOp s = one + two;
  UOp root = (s * s) + s;  // a DAG: s is shared three times
  for (bool dyn : {false, true}) {
    INFO("dynamic=" << dyn);
    Log visited;
    CHECK(graph_rewrite(root, dyn ? pm.dynamic() : pm, visited) == root);
    CHECK(visited == Log{"1", "2", "ADD", "MUL", "ADD"});
  }
}

TEST_CASE("graph rewrite: results and rebuilt parents are rewritten to a fixed point") {
  // a CONST above 10 loses 10 until it is not: each result is rewritten again, and the rebuilt parent too
  PatternMatcher pm{
      rule(cv, [](const auto& m) {
        int64_t v = m[cv].arg().as_int();
        return v > 10 ? UOp::const_(m[cv].dtype(), v - 10) : UOp();
      }),
      rule(x * 1, [](const auto& m) { return m[x]; }),
  };
  UOp a = UOp::variable("a", 0, 10);
  // 35 -> 25 -> 15 -> 5, and the MUL by 31 -> 21 -> 11 -> 1 is then removed by the second rule
  check_both(pm, (a + 35) * 31, a + 5);
  check_both(pm, (a + 35) * 31, a + 5, {.bottom_up = true});
  // walk: one pass, no fixed point
  check_both(pm, (a + 35) * 31, (a + 25) * 21, {.walk = true});
}

TEST_CASE("graph rewrite: a rebuilt parent re-derives its dtype when a child's dtype changed") {
  PatternMatcher pm{rule(pat::op<Ops::CONST>().named<"x">().dtype(dtypes::weakint),
                         [](const auto& m) { return UOp::const_(dtypes::int32, m[x].arg()); })};
  UOp in = UOp::const_int(1) + UOp::const_int(2);
  UOp out = UOp::make(Ops::ADD, dtypes::int32, {UOp::const_(dtypes::int32, 1), UOp::const_(dtypes::int32, 2)});
  check_both(pm, in, out);
  check_both(pm, in, out, {.walk = true});
  CHECK(graph_rewrite(in, pm).dtype() == dtypes::int32);
}

TEST_CASE("graph rewrite: call bodies are entered only with enter_calls") {
  PatternMatcher pm{rule(pat::op<Ops::CONST>().arg(3), [](const auto&) { return UOp::const_int(4); })};
  UOp body = UOp::sink({UOp::const_int(3)});
  UOp call = UOp::infer(Ops::CALL, {body, UOp::const_int(3)});
  REQUIRE(call.dtype() == dtypes::void_);
  UOp outside = UOp::infer(Ops::CALL, {body, UOp::const_int(4)});
  UOp inside = UOp::infer(Ops::CALL, {UOp::sink({UOp::const_int(4)}), UOp::const_int(4)});
  check_both(pm, call, outside);
  check_both(pm, call, inside, {.enter_calls = true});
  check_both(pm, call, outside, {.walk = true});
  check_both(pm, call, inside, {.walk = true, .enter_calls = true});
}

TEST_CASE("graph rewrite: the ctx reaches every rule unchanged") {
  struct Counter { std::unordered_map<int64_t, int> hits; };
  PatternMatcher pm{rule(pat::op<Ops::CONST>().named<"x">(), [](const auto& m, Counter& ctx) {
    ctx.hits[m[x].arg().as_int()]++;
    return UOp();
  })};
  UOp e = (UOp::const_int(1) + UOp::const_int(2)) * UOp::const_int(1);
  for (bool dyn : {false, true}) {
    INFO("dynamic=" << dyn);
    Counter ctx;
    CHECK(graph_rewrite(e, dyn ? pm.dynamic() : pm, ctx) == e);
    CHECK(ctx.hits.size() == 2);
    CHECK(ctx.hits[1] == 1);
    CHECK(ctx.hits[2] == 1);
  }
}

TEST_CASE("graph rewrite: a fold shortcut runs before matching and instead of building a rebuilt parent") {
  // a deliberately different shortcut (sum) and rule (product) for ADD of two CONSTs show which one produced the node
  static int rule_calls = 0;
  auto sum_fold = [](Ops op, DType dt, std::span<const UOp> src, const Arg&) {
    if (op != Ops::ADD || src.size() != 2 || src[0].op() != Ops::CONST || src[1].op() != Ops::CONST) return UOp();
    return UOp::const_(dt, src[0].arg().as_int() + src[1].arg().as_int());
  };
  PatternMatcher rules{
      rule(c0 + c1, [](const auto& m) { rule_calls++; return UOp::const_(m[c0].dtype(), m[c0].arg().as_int() * m[c1].arg().as_int()); }),
      rule(cv, [](const auto& m) { int64_t v = m[cv].arg().as_int(); return v > 10 ? UOp::const_(m[cv].dtype(), v - 10) : UOp(); }),
  };
  PatternMatcher pm = rules.with_fold(sum_fold);
  CHECK(bool(pm.fold()));
  CHECK_FALSE(bool(rules.fold()));
  CHECK(bool((pm + rules).fold()));  // the left matcher's rules come first, so its shortcut stays sound
  CHECK_FALSE(bool((rules + pm).fold()));
  CHECK_FALSE(bool(pm.dynamic().fold()));  // the runtime matcher is the oracle of the rules alone
  UOp two = UOp::const_int(2), three = UOp::const_int(3);
  rule_calls = 0;
  CHECK(graph_rewrite(two + three, pm) == UOp::const_int(5));                       // before matching: 2+3, not 2*3
  CHECK(graph_rewrite(UOp::const_int(13) + three, pm) == UOp::const_int(6));        // rebuilt parent (3 + 3): a sum
  CHECK(graph_rewrite((two + three) + UOp::const_int(4), pm) == UOp::const_int(9));  // folded results fold again
  CHECK(rule_calls == 0);
  CHECK(graph_rewrite(two + three, rules) == UOp::const_int(6));
  CHECK(graph_rewrite(UOp::const_int(13) + three, rules) == UOp::const_int(9));
  CHECK(rule_calls == 2);
  UOp a = UOp::variable("a", 0, 10);
  CHECK(graph_rewrite(a + three, pm) == a + three);  // not its case: the rules decide
}

TEST_CASE("graph rewrite: leaf rules fire in every mode and other leaves are fixed points") {
  // the driver finishes a leaf whose op roots no rule without visiting it (perf); a leaf op that roots a rule, in the
  // post-order matcher or in a pre-order one, is still rewritten, and the fold shortcut is never asked about a leaf
  static int leaf_folds = 0;
  auto fold = [](Ops, DType, std::span<const UOp> src, const Arg&) {
    if (src.empty()) leaf_folds++;
    return UOp();
  };
  PatternMatcher bump{rule(cv, [](const auto& m) {
    int64_t v = m[cv].arg().as_int();
    return v == 7 ? UOp::const_(m[cv].dtype(), 8) : UOp();
  })};
  PatternMatcher none{rule(pat::op<Ops::MUL>().named<"x">(), [](const auto&) { return UOp(); })};
  UOp a = UOp::variable("leaf_a", 0, 10), seven = UOp::const_int(7);
  UOp e = (a + seven) * (seven + UOp::const_int(2));
  UOp want = (a + UOp::const_int(8)) * (UOp::const_int(8) + UOp::const_int(2));
  leaf_folds = 0;
  CHECK(graph_rewrite(e, bump.with_fold(fold)) == want);
  CHECK(graph_rewrite(e, none.with_fold(fold)) == e);
  CHECK(leaf_folds == 0);
  CHECK(graph_rewrite(e, bump, {.bottom_up = true}) == want);
  // the pre-order matcher reaches leaves the post-order one has no rule for
  CHECK(graph_rewrite(e, none, {.bpm = &bump}) == want);
  CHECK(graph_rewrite(e, bump, {.walk = true}) == want);
  CHECK(graph_rewrite(seven, bump) == UOp::const_int(8));  // a leaf root
  CHECK(graph_rewrite(seven, none) == seven);
}

// ---------------------------------------------------------------------------------------------------------------
// The memo (pattern/rewrite_memo.hpp): entries in the nodes, a side table for nested calls and several threads

namespace {
const PatternMatcher& add0_pm() {  // ADD(x, 0) -> x
  static const PatternMatcher pm{rule(x + 0, [](const auto& m) { return m[x]; })};
  return pm;
}
// records every node it is tried on; MUL(x, 1) -> x; SIN(y) -> SIN(add0(y)): a graph_rewrite inside a rule, over
// nodes the outer call has entries for
const PatternMatcher& nesting_pm() {
  static const PatternMatcher pm{
      rule(pat::ops<GroupOp::All>().named<"x">(), [](const auto& m, std::vector<UOp>& tried) {
        tried.push_back(m[x]);
        return UOp();
      }),
      rule(x * 1, [](const auto& m) { return m[x]; }),
      rule(pat::op<Ops::SIN>().named<"s">(), [](const auto& m) {
        UOp in = m["s"].src(0), out = graph_rewrite(in, add0_pm());
        return out == in ? UOp() : sin(out);
      }),
  };
  return pm;
}
}  // namespace

TEST_CASE("graph rewrite: a nested call leaves the memo entries of the call around it alone") {
  UOp a = UOp::variable("a", 0, 10, dtypes::float32);
  // the outer call rewrites a*1+0 to a+0 (its memo: a+0 -> a+0), then the nested call on sin's new source rewrites
  // a+0 -> a; sqrt's a+0 must still find the outer entry: no node is tried twice
  UOp root = UOp::sink({sin(a * 1 + 0), sqrt(a + 0)});
  UOp want = UOp::sink({sin(a), sqrt(a + 0)});
  for (bool side_only : {false, true}) {
    CAPTURE(side_only);
    std::optional<detail::SideTableOnly> side;
    if (side_only) side.emplace();
    std::vector<UOp> tried;
    CHECK(graph_rewrite(root, nesting_pm(), tried) == want);
    std::unordered_set<UOp> once(tried.begin(), tried.end());
    CHECK(once.size() == tried.size());
    CHECK(once.contains(a + 0));
  }
}

TEST_CASE("graph rewrite: a memo epoch that comes round again finds no entry of its earlier call") {
  using detail::MemoEpochs;
  if (!detail::single_threaded()) {  // a process with several threads keeps no entry in the nodes
    MESSAGE("skipped: this process has several threads (run the case on its own, as ctest does)");
    return;
  }
  PatternMatcher mul1{rule(x * 1, [](const auto& m) { return m[x]; })};
  UOp a = UOp::variable("a", 0, 10, dtypes::float32);
  UOp g = sin(a * 1 + 0);
  const uint32_t saved = MemoEpochs::last;
  MemoEpochs::last = ~uint32_t(0);  // the counter at its end: the next call clears every node's epoch
  CHECK(graph_rewrite(sqrt(a), mul1) == sqrt(a));
  CHECK(MemoEpochs::last == 1);
  CHECK(g.node()->memo_epoch == 0);
  MemoEpochs::last = 6;
  CHECK(graph_rewrite(g, mul1) == sin(a + 0));  // g's nodes hold epoch 7 entries
  CHECK(g.node()->memo_epoch == 7);
  MemoEpochs::last = ~uint32_t(0);  // 2^32 calls later
  CHECK(graph_rewrite(sqrt(a), mul1) == sqrt(a));
  MemoEpochs::last = 6;
  CHECK(graph_rewrite(g, add0_pm()) == sin(a * 1));  // epoch 7 again: the first call's entries are gone
  MemoEpochs::last = std::max(saved, MemoEpochs::last);
}
