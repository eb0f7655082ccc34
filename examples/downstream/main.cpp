// Smallest program using an installed graft: proves the include path, the
// C++20 flag and the link flags reach a consumer. Deliberately independent of
// the (still moving) API; extend once it is stable.
#include <graft/graft.hpp>

#include <cstdio>

static_assert(__cplusplus >= 202002L, "graft::graft must request C++20");

int main() {
  std::puts("graft downstream consumer: OK");
  return 0;
}
