// expect: m[p]: the name is not bound by this rule's pattern
#include <graft/pattern/matcher.hpp>  // the pattern layer alone: the check parses less
using namespace graft;
static constexpr auto x = pat::var<"x">;
static constexpr auto y = pat::var<"y">;
int main() { PatternMatcher pm{rule(x + 0, [](const auto& m) { return m[y]; })}; }
