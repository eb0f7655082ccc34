// expect: m[p]: this pattern has no name
#include <graft/graft.hpp>
using namespace graft;
static constexpr auto x = pat::var<"x">;
int main() { PatternMatcher pm{rule(x + 0, [](const auto& m) { return m[pat::wild]; })}; }
