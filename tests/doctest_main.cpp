// The doctest runner's main(). Kept in its own TU so this expensive part is
// compiled once (CMake: OBJECT library); test files just #include <doctest/doctest.h>.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
