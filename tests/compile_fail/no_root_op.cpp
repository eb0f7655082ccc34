// expect: a rule's root pattern needs an op
#include <graft/pattern/matcher.hpp>  // the pattern layer alone: the check parses less
using namespace graft;
static constexpr auto x = pat::var<"x">;
int main() { PatternMatcher pm{rule(x, [](const auto& m) { return m[x]; })}; }
