// expect: a rule's root pattern needs an op
#include <graft/graft.hpp>
using namespace graft;
static constexpr auto x = pat::var<"x">;
int main() { PatternMatcher pm{rule(x, [](const auto& m) { return m[x]; })}; }
