// graft quickstart: build a small expression graph, write two rewrite rules, run graph_rewrite.
#include <graft/graft.hpp>

#include <iostream>

using namespace graft;

static constexpr auto x = pat::var<"x">;
static constexpr auto c1 = pat::cvar<"c1">;
static constexpr auto c2 = pat::cvar<"c2">;

int main() {
  PatternMatcher rules{
      rule(x + 0, [](const auto& m) { return m[x]; }),                   // x + 0 -> x
      rule(x * 1, [](const auto& m) { return m[x]; }),                   // x * 1 -> x
      rule((x + c1) + c2, [](const auto& m) {                            // (x + c1) + c2 -> x + (c1 + c2)
        return m[x] + UOp::const_int(m[c1].arg().as_int() + m[c2].arg().as_int());
      }),
  };
  UOp a = UOp::variable("a", 0, 9);
  UOp expr = ((a + 0) * 1 + 3) + 4;
  std::cout << "input:\n" << expr << "\n\n";
  UOp out = graph_rewrite(expr, rules);
  std::cout << "rewritten:\n" << out << "\n\n";
  std::cout << "range: [" << out.vmin().str() << ", " << out.vmax().str() << "]\n";
  return out == a + 7 ? 0 : 1;
}
