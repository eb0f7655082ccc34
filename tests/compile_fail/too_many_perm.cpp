// expect: a permuted source list holds 1 to 5 patterns
#include <graft/pattern/matcher.hpp>  // the pattern layer alone: the check parses less
using namespace graft;
static constexpr auto x = pat::var<"x">;
int main() { constexpr auto p = pat::op<Ops::ADD>(pat::perm(x, x, x, x, x, x)); (void)p; }
