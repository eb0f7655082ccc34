// Separate compilation: build graft's pipeline once per program instead of once per translation unit.
//
// Header-only use instantiates the scheduler, codegen, the three runtimes and the rule tables in every TU that
// realizes a tensor or simplifies an expression: about a minute of g++ each (bench/README.md section 2.1).
// These entry points are `template <class = void>` so that a TU which never calls them pays nothing; with
// GRAFT_SEPARATE_COMPILATION defined (in every TU of the program), graft.hpp declares them `extern template`, and
// exactly one TU instantiates them:
//     // graft_instantiate.cpp
//     #include <graft/instantiate.hpp>
// Everything else stays inline in the headers. graft's own tests, benchmarks and examples build this way (CMake
// target graft_instantiations, and in meson.build); the downstream consumer checks build header-only.
#pragma once

// Each entry point as it would be written in an explicit instantiation, inside namespace graft.
#define GRAFT_ENTRY_POINTS(X)                                                                                          \
  X(Schedule schedule<void>(const std::vector<Tensor>&))                                                               \
  X(std::vector<std::shared_ptr<HostStorage>> detail::realize_impl<void>(const std::vector<Tensor>&,                   \
                                                                           const std::string&, bool))                  \
  X(std::vector<std::shared_ptr<HostStorage>> engine::run<void>(const Schedule&, std::shared_ptr<rt::Device>,          \
                                                                  engine::RunStats*))                                  \
  X(codegen::LoweredKernel codegen::lower<void>(const UOp&))                                                           \
  X(UOp sched::get_kernel_graph<void>(const UOp&, const UOpSet&))                                                      \
  X(UOp sched::rangeify<void>(const UOp&, sched::RangeCtx&))                                                           \
  X(UOp sched::split_kernels<void>(const UOp&))                                                                        \
  X(UOp sched::simplify_index<void>(const UOp&))                                                                       \
  X(UOp UOp::simplify<void>() const)                                                                                   \
  X(std::string UOp::render<void>() const)                                                                             \
  X(UOp sym_detail::simplify_sym<void>(const UOp&))                                                                    \
  X(const PatternMatcher& symbolic_simple<void>())                                                                     \
  X(const PatternMatcher& symbolic<void>())                                                                            \
  X(const PatternMatcher& sym<void>())                                                                                 \
  X(const PatternMatcher& commutative<void>())                                                                         \
  X(const PatternMatcher& div_and_mod_symbolic<void>())                                                                \
  X(const PatternMatcher& pm_simplify_valid<void>())                                                                   \
  X(const PatternMatcher& pm_clean_up_group_sink<void>())                                                              \
  X(const PatternMatcher& pm_data_invalid<void>())                                                                     \
  X(UOp sym_detail::uop_given_valid<void>(const UOp&, UOp, bool))                                                      \
  X(UOp sym_detail::simplify_valid<void>(const UOp&))

#if defined(GRAFT_SEPARATE_COMPILATION)
#define GRAFT_EXTERN_TEMPLATE_(decl) extern template decl;
namespace graft {
GRAFT_ENTRY_POINTS(GRAFT_EXTERN_TEMPLATE_)
}  // namespace graft
#undef GRAFT_EXTERN_TEMPLATE_
#endif
