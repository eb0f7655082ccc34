// graft::Error: every failure the library reports (bad shapes, dtypes, patterns, drivers, compilers).
#pragma once
#include <stdexcept>
#include <string>

namespace graft {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace graft
