// Writing your own rewrite rules: pattern variables, pattern operators, permuted (commutative) matching, callbacks that
// decline, a rule with a typed context, combining matchers with `+`, and bottom_up vs the default graph_rewrite.
// Every result is checked; the exit code is non-zero on a wrong result, so CI runs this as a test.
#include <graft/graft.hpp>

#include <bit>
#include <iostream>
#include <map>
#include <string>
#include <vector>

using namespace graft;

// Pattern variables. The name is a compile-time string: each rule resolves it to a slot, so m[x] costs nothing.
static constexpr auto x = pat::var<"x">;
static constexpr auto y = pat::var<"y">;
static constexpr auto c = pat::cvar<"c">;    // cvar only matches a CONST
static constexpr auto c1 = pat::cvar<"c1">;
static constexpr auto c2 = pat::cvar<"c2">;
static constexpr DTypeSet int_dtypes = dtypes::ints | DTypeSet(dtypes::weakint);
static constexpr auto xi = pat::var<"x">.dtype(int_dtypes);        // same name "x", constrained to integer dtypes
static constexpr auto var_node = pat::op<Ops::BUFFER>().named<"v">();  // UOp::variable builds a BUFFER node
static constexpr auto alu = pat::ops<GroupOp::ALU>().named<"n">();     // any ALU op, any sources

// UOp::render() runs the symbolic simplifier first (like tinygrad's render()), which would undo or redo our rewrites.
// To show a graph exactly as it is, print it without simplifying.
static std::string show(const UOp& u) {
  if (u.is_const()) return u.arg().str();
  if (u.is_variable()) return u.arg().param().name;
  const char* s = u.op() == Ops::ADD ? "+" : u.op() == Ops::MUL ? "*" : u.op() == Ops::SHL ? "<<"
                : u.op() == Ops::MAX ? " max " : u.op() == Ops::FLOORDIV ? "//" : nullptr;
  if (!s || u.nsrc() != 2) return "<" + std::string(op_name(u.op())) + ">";
  return "(" + show(u.src(0)) + s + show(u.src(1)) + ")";
}

static bool all_ok = true;
static void check(bool ok, const std::string& what) {
  std::cout << (ok ? "  ok   " : "  FAIL ") << what << "\n";
  all_ok = all_ok && ok;
}

// A typed context: graph_rewrite(root, pm, env) hands `env` to every rule that takes a second parameter.
struct Env {
  std::map<std::string, int64_t> values;
  int substituted = 0;
};
// Another context type, used to watch the order in which graph_rewrite offers nodes to the rules.
struct Trace {
  std::vector<std::string> order;
};

int main() {
  UOp a = UOp::variable("a", 0, 100), b = UOp::variable("b", 0, 100);

  // ---- 1a. constant folding and identities ---------------------------------------------------------------------
  // `c1 + c2` is pattern sugar for pat::op<Ops::ADD>(pat::perm(c1, c2)): ADD is commutative, so both orders are tried.
  // `x + 0` matches a CONST 0 on either side. The callback returns the replacement node.
  PatternMatcher fold{
      rule(c1 + c2, [](const auto& m) { return m[c1].const_like(m[c1].arg().as_int() + m[c2].arg().as_int()); }),
      rule(c1 * c2, [](const auto& m) { return m[c1].const_like(m[c1].arg().as_int() * m[c2].arg().as_int()); }),
      rule(x + 0, [](const auto& m) { return m[x]; }),
      rule(x * 1, [](const auto& m) { return m[x]; }),
      // FLOORDIV is not commutative: pat::op with two sources matches them in order, so `1 // x` is left alone.
      rule(pat::op<Ops::FLOORDIV>(x, pat::const_(1)), [](const auto& m) { return m[x]; }),
      // a repeated name must bind the same node: thanks to hash-consing that is a pointer compare
      rule(x + x, [](const auto& m) { return m[x] * 2; }),
  };

  // ---- 1b. strength reduction, with a callback that declines --------------------------------------------------
  // x * 2^k -> x << k. The pattern can't say "power of two", so the callback checks and returns an empty UOp() to
  // decline: graph_rewrite then tries the next operand order, then the next rule, exactly as tinygrad does when a
  // callback returns None.
  PatternMatcher strength{
      rule(xi * c, [](const auto& m) {
        int64_t v = m[c].arg().as_int();
        if (v <= 0 || !std::has_single_bit(uint64_t(v))) return UOp();  // not a power of two: no match
        return m[x] << int64_t(std::countr_zero(uint64_t(v)));
      }),
  };

  std::cout << "1. folding and strength reduction\n";
  UOp e = ((a + 0) * (UOp::const_int(2) + 2)) + floordiv(b, 1);  // const_int: C++ would fold 2 + 2 itself
  std::cout << "before (tinygrad repr):\n" << e << "\n";
  // Combining matchers with `+` concatenates the rule lists: rule order is priority, so fold's rules come first.
  PatternMatcher both = fold + strength;
  UOp r = graph_rewrite(e, both);
  std::cout << "after:\n" << r << "\n";
  std::cout << "before: " << show(e) << "\nafter:  " << show(r) << "\n";
  check(r == (a << 2) + b, "((a+0)*(2+2)) + b//1  ->  (a<<2) + b");  // == is pointer identity: same graph, same node

  // Permuted matching: the constant may be on either side of the MUL.
  check(graph_rewrite(8 * a, strength) == (a << 3), "8*a -> a<<3 (constant on the left)");
  check(graph_rewrite(a * 6, strength) == a * 6, "a*6 is left alone (the callback declines)");
  // Declining moves on to the next operand order: 4*6 first binds x=4, c=6 (declined), then x=6, c=4.
  check(graph_rewrite(UOp::const_int(4) * 6, strength) == UOp::const_int(6) << 2, "4*6 -> 6<<2 (second operand order)");
  // The ordered FLOORDIV pattern does not match with the sources swapped.
  check(graph_rewrite(floordiv(1, a), fold) == floordiv(1, a), "1//a is not x//1");
  check(graph_rewrite(b + b, both) == b << 1, "b+b -> b*2 -> b<<1 (rewrites run to a fixed point)");
  // explain() says, rule by rule, why the pattern does not match a node (a declining callback is not visible here:
  // for a*6 it says "matches").
  std::cout << "why a*b does not match:\n" << strength.explain(a * b);

  // ---- 2. a rule with a typed context --------------------------------------------------------------------------
  // The ctx type comes from the callback's second parameter and is checked at run time against what graph_rewrite
  // was given: a missing or different ctx raises graft::Error naming the rule.
  PatternMatcher bind{
      rule(var_node, [](const auto& m, Env& env) {
        const UOp& v = m[var_node];
        if (!v.is_variable()) return UOp();
        auto it = env.values.find(v.arg().param().name);
        if (it == env.values.end()) return UOp();  // unbound variable: leave it
        env.substituted++;
        return UOp::const_(v.dtype(), it->second);
      }),
  };
  std::cout << "\n2. binding variables through a ctx\n";
  Env env{{{"a", 5}}};
  UOp f = a * 4 + b;
  UOp bound = graph_rewrite(f, bind + fold, env);
  std::cout << show(f) << " with a=5: " << show(bound) << "\n";
  check(bound == 20 + b && env.substituted == 1, "a*4 + b with a=5 -> 20 + b");
  bool threw = false;
  try {
    graph_rewrite(f, bind);  // no ctx given
  } catch (const Error& err) {
    threw = true;
    std::cout << "  without a ctx: " << err.what() << "\n";
  }
  check(threw, "a ctx rule without a ctx raises graft::Error");

  // A rule built at run time (dyn_rule with a runtime UPat) mixes with compile-time rules.
  PatternMatcher dyn{dyn_rule(UPat::ops(OpSet{Ops::MAX}, {UPat::var("x"), UPat::var("x")}),
                              [](const DynMatch& m, const CtxRef&) { return m["x"]; })};
  check(graph_rewrite(maximum(a, a) + 0, dyn + fold) == a, "max(a, a) + 0 -> a (dyn_rule + compile-time rules)");

  // ---- 3. bottom_up vs the default ------------------------------------------------------------------------------
  // tinygrad's naming trap, kept as is: bottom_up=True means a rule sees a node BEFORE its children are rewritten
  // (pre-order, top of the graph first). The default runs rules on a node AFTER its children (post-order).
  // A rule that always declines, with a ctx, shows the order in which nodes are offered.
  PatternMatcher trace{
      rule(alu, [](const auto& m, Trace& t) {
        t.order.push_back(show(m[alu]));
        return UOp();
      }),
  };
  std::cout << "\n3. bottom_up vs default\n";
  UOp g = (a + 1) * 2;
  Trace post, pre;
  graph_rewrite(g, trace, post);
  graph_rewrite(g, trace, pre, {.bottom_up = true});
  std::cout << "default visits:   " << post.order[0] << ", then " << post.order[1] << "\n";
  std::cout << "bottom_up visits: " << pre.order[0] << ", then " << pre.order[1] << "\n";
  check(post.order == std::vector<std::string>{"(a+1)", "((a+1)*2)"}, "default: children first");
  check(pre.order == std::vector<std::string>{"((a+1)*2)", "(a+1)"}, "bottom_up: the node before its children");

  // With rules that don't commute, the order changes the result. Both modes still iterate to a fixed point.
  PatternMatcher distribute{
      rule((x + y) * c, [](const auto& m) { return m[x] * m[c] + m[y] * m[c]; }),
      rule(x + x, [](const auto& m) { return m[x] * 2; }),
  };
  UOp h = (a + a) * 3;
  UOp h_post = graph_rewrite(h, distribute);                         // a+a -> a*2 first; then (a*2)*3 has no ADD
  UOp h_pre = graph_rewrite(h, distribute, {.bottom_up = true});     // (a+a)*3 -> a*3 + a*3 -> (a*3)*2
  std::cout << show(h) << ": default " << show(h_post) << ", bottom_up " << show(h_pre) << "\n";
  check(h_post == (a * 2) * 3, "default: ((a*2)*3)");
  check(h_pre == (a * 3) * 2, "bottom_up: ((a*3)*2)");

  // The same rules run through the runtime UPat interpreter (pm.dynamic()) give the same node.
  check(graph_rewrite(e, both.dynamic()) == r, "compile-time and runtime matchers agree");

  std::cout << (all_ok ? "all checks passed\n" : "SOME CHECKS FAILED\n");
  return all_ok ? 0 : 1;
}
