// The one translation unit of a GRAFT_SEPARATE_COMPILATION program that compiles graft's pipeline: a .cpp whose
// only line is `#include <graft/instantiate.hpp>` (see separate_compilation.hpp).
#pragma once
#include "graft/graft.hpp"

#define GRAFT_INSTANTIATE_(decl) template decl;
namespace graft {
GRAFT_ENTRY_POINTS(GRAFT_INSTANTIATE_)
}  // namespace graft
#undef GRAFT_INSTANTIATE_
