#include <doctest/doctest.h>

#include <graft/graft.hpp>

using namespace graft;

TEST_CASE("uop: hash-consing makes structural equality pointer equality") {
  UOp a = UOp::variable("a", 0, 10);
  UOp s1 = a + 3, s2 = a + 3;
  CHECK(s1 == s2);
  CHECK(s1.op() == Ops::ADD);
  CHECK(s1.dtype() == dtypes::weakint);
  CHECK(!(s1 == (a + 4)));
}

TEST_CASE("uop: a 10^6-deep chain is built, rewritten and released without recursion") {
  static constexpr auto x = pat::var<"x">;
  PatternMatcher pm{rule(x + 0, [](const auto& m) { return m[x]; })};
  size_t before = live_uop_count();
  {
    UOp d = UOp::const_int(7);
    for (int i = 0; i < 1000000; i++) d = d + 0;
    CHECK(graph_rewrite(d, pm) == UOp::const_int(7));
  }
  CHECK(live_uop_count() <= before + 2);
}
