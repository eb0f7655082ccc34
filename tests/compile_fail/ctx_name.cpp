// expect: a pattern name cannot be 'ctx'
#include <graft/pattern/matcher.hpp>  // the pattern layer alone: the check parses less
using namespace graft;
int main() { constexpr auto p = pat::var<"a">.named<"ctx">(); (void)p; }
