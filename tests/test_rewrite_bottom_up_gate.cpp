// Port of tinygrad test/null/test_rewrite_bottom_up_gate.py: throwing BottomUpGate from a pre-order (bottom_up)
// rule finishes that node as it is and stops the rewrite from descending into its sources.
// Every case runs with the compiled matcher and with the runtime UPat interpreter (pm.dynamic()).
#include <doctest/doctest.h>

#include <graft/graft.hpp>

#include <string>
#include <vector>

using namespace graft;

namespace {

constexpr auto x = pat::var<"x">;
constexpr auto pa = pat::var<"a">;

struct GateCtx {
  int gates = 0;        // how often the gate rule fired
  int not_reached = 0;  // how often a rule that must never run ran
};

}  // namespace

TEST_CASE("bottom up gate: a gate on the root stops the descent") {
  PatternMatcher pm{
      rule(pat::op<Ops::ADD>(), [](const auto&, GateCtx& ctx) -> UOp {
        ctx.gates++;
        throw BottomUpGate{};
      }),
      rule(pat::op<Ops::MUL>(), [](const auto&, GateCtx& ctx) {
        ctx.not_reached++;
        return UOp();
      }),
  };
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10), c = UOp::variable("c", 0, 10);
  UOp expr = (a * a) + (b * c);
  for (bool dyn : {false, true}) {
    INFO("dynamic=" << dyn);
    GateCtx ctx;
    UOp out = graph_rewrite(expr, dyn ? pm.dynamic() : pm, ctx, {.bottom_up = true});
    CHECK(out == expr);  // the gated node is final as it is
    CHECK(ctx.gates == 1);
    CHECK(ctx.not_reached == 0);
  }
}

TEST_CASE("bottom up gate: a gate after a rewrite keeps the rewritten node") {
  PatternMatcher pm{
      rule(pa + pa, [](const auto& m, GateCtx&) { return 2 * m[pa]; }),
      rule(pat::op<Ops::MUL>(), [](const auto&, GateCtx& ctx) -> UOp {
        ctx.gates++;
        throw BottomUpGate{};
      }),
      rule(pat::op<Ops::CONST>(), [](const auto&, GateCtx& ctx) {
        ctx.not_reached++;
        return UOp();
      }),
  };
  UOp va = UOp::variable("a", 0, 10);
  for (bool dyn : {false, true}) {
    INFO("dynamic=" << dyn);
    GateCtx ctx;
    UOp out = graph_rewrite(va + va, dyn ? pm.dynamic() : pm, ctx, {.bottom_up = true});
    CHECK(out == 2 * va);
    CHECK(out.op() == Ops::MUL);
    CHECK(ctx.gates == 1);
    CHECK(ctx.not_reached == 0);
  }
}

TEST_CASE("bottom up gate: a gate below the root leaves the siblings to the rewrite") {
  // gate every MUL, rename every variable b -> c elsewhere
  PatternMatcher pm{
      rule(pat::op<Ops::MUL>(), [](const auto&, GateCtx& ctx) -> UOp {
        ctx.gates++;
        throw BottomUpGate{};
      }),
      rule(pat::op<Ops::BUFFER>().named<"x">(), [](const auto& m, GateCtx&) {
        return m[x].arg().param().name == "b" ? UOp::variable("c", 0, 10) : UOp();
      }),
  };
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10), c = UOp::variable("c", 0, 10);
  for (bool dyn : {false, true}) {
    INFO("dynamic=" << dyn);
    GateCtx ctx;
    UOp out = graph_rewrite((a * b) + b, dyn ? pm.dynamic() : pm, ctx, {.bottom_up = true});
    CHECK(out == (a * b) + c);  // the b under the gated MUL is untouched
    CHECK(ctx.gates == 1);
  }
}

TEST_CASE("bottom up gate: a gate raised by bpm also keeps the post-order pm out of that subtree") {
  using Log = std::vector<std::string>;
  PatternMatcher bpm{rule(pat::op<Ops::MUL>(), [](const auto&, Log&) -> UOp { throw BottomUpGate{}; })};
  PatternMatcher pm{rule(pat::ops<GroupOp::All>().named<"x">(), [](const auto& m, Log& log) {
    log.push_back(std::string(op_name(m[x].op())));
    return UOp();
  })};
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10), c = UOp::variable("c", 0, 10);
  UOp expr = (a * b) + c;
  for (bool dyn : {false, true}) {
    INFO("dynamic=" << dyn);
    Log log;
    PatternMatcher p = dyn ? pm.dynamic() : pm, bp = dyn ? bpm.dynamic() : bpm;
    CHECK(graph_rewrite(expr, p, log, {.bpm = &bp}) == expr);
    // c's shape STACK, c, the root; nothing of the MUL
    CHECK(log == Log{"STACK", "BUFFER", "ADD"});
  }
}
