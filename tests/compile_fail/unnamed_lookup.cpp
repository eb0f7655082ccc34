// expect: m[p]: this pattern has no name
#include <graft/pattern/matcher.hpp>  // the pattern layer alone: the check parses less
using namespace graft;
static constexpr auto x = pat::var<"x">;
int main() { PatternMatcher pm{rule(x + 0, [](const auto& m) { return m[pat::wild]; })}; }
