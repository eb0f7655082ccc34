// expect: a pattern name cannot be 'ctx'
#include <graft/graft.hpp>
using namespace graft;
int main() { constexpr auto p = pat::var<"a">.named<"ctx">(); (void)p; }
