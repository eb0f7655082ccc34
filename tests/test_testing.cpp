// graft/testing.hpp: the doctest helpers themselves (their failure reports through the *_mismatch functions).
// check_close(Tensor, ...) is tested in test_tensor.cpp and check_schedule in test_schedule_counts.cpp: those TUs
// already instantiate the engine and the scheduler, so this one stays cheap to compile.
#include <doctest/doctest.h>

#include <graft/graft.hpp>
#include <graft/testing.hpp>

#include <cmath>
#include <limits>

using namespace graft;

namespace {
bool has(const std::string& s, std::string_view needle) { return s.find(needle) != std::string::npos; }
constexpr auto x = pat::var<"x">;
}  // namespace

TEST_CASE("testing: close_mismatch reports the count and the first bad index") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  CHECK(testing::close_mismatch(std::vector<float>{1, 2, 3}, std::vector<double>{1, 2, 3}) == "");
  CHECK(testing::close_mismatch(std::vector<double>{nan, inf, -inf}, std::vector<double>{nan, inf, -inf}) == "");
  CHECK(testing::close_mismatch(std::vector<double>{1.00001}, std::vector<double>{1.0}, 1e-4, 0) == "");
  std::string m = testing::close_mismatch(std::vector<double>{0, 1.5, 2, 9}, std::vector<double>{0, 1, 2, 3});
  CHECK(has(m, "2 of 4 values differ"));
  CHECK(has(m, "first at [1]: got 1.5, want 1"));
  CHECK(has(testing::close_mismatch(std::vector<double>{nan}, std::vector<double>{1}), "got nan"));
  CHECK(has(testing::close_mismatch(std::vector<double>{1}, std::vector<double>{nan}), "1 of 1"));
  CHECK(has(testing::close_mismatch(std::vector<int>{1, 2}, std::vector<int>{1}), "got 2 values, want 1"));
  CHECK(testing::check_close(std::vector<float>{0.5f, 0.25f}, {0.5, 0.25}));
}

TEST_CASE("testing: rewrite_mismatch shows the graphs and the matcher's explanation") {
  PatternMatcher pm{rule(x + 0, [](const auto& m) { return m[x]; })};
  UOp a = UOp::variable("a", 0, 10);
  CHECK(testing::rewrite_mismatch(pm, a + 0, a) == "");
  CHECK_REWRITES(pm, (a + 0) + 0, a);
  CHECK_REWRITES(pm, (a + 0) * 1, a * 1, {.walk = true});
  REQUIRE_REWRITES(pm.dynamic(), a + 0, a);
  std::string m = testing::rewrite_mismatch(pm, a + 1, a);
  CHECK(has(m, "got:\nUOp(Ops.ADD"));
  CHECK(has(m, "want:\nUOp(Ops.BUFFER"));
  CHECK(has(m, "pm.explain(got):\n"));
  CHECK(has(m, "test_testing.cpp:"));  // the rule's location
}
