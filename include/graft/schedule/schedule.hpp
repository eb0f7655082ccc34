// graft::schedule(tensors): prepare -> consumer counting + STAGEs -> range creation/migration -> stage-removal loop
// -> STAGE -> BUFFER -> split kernels. A Schedule lists the kernels (CALLs) in dependency order.
// Everything that reaches a rule table is a `template <class = void>` function (the symbolic.hpp convention), so a
// translation unit that includes this header but never schedules does not instantiate the rule tables.
#pragma once
#include "graft/schedule/prepare.hpp"
#include "graft/schedule/rangeify.hpp"
#include "graft/schedule/split.hpp"

namespace graft {

struct Kernel {
  UOp call;  // CALL(SINK(body), args...)
  const UOp& sink() const { return call.src(0); }
  std::vector<UOp> args() const { return {call.src().begin() + 1, call.src().end()}; }
};

struct Schedule {
  std::vector<Kernel> kernels;
  UOp graph;  // the kernel graph: SINK(AFTER(buf, CALL(...)), ...)
  std::vector<UOp> outputs;  // each output tensor's buffer (empty handle when it already was one)
  size_t size() const { return kernels.size(); }
  const Kernel& operator[](size_t i) const { return kernels.at(i); }
  auto begin() const { return kernels.begin(); }
  auto end() const { return kernels.end(); }
};

namespace sched {
// the tensor graph of SINK(AFTER...) -> kernel graph (tinygrad get_kernel_graph)
template <class = void> UOp get_kernel_graph(const UOp& prepared) {
  UOp t = add_stages(prepared);
  RangeCtx rctx;
  t = rangeify(t, rctx);
  t = reduce_simplify(t, false);  // pre-fusion reduce simplify
  t = remove_stages(t);
  t = reduce_simplify(t, false);
  t = remove_stage(t);
  t = reduce_simplify(t, true);  // size-1 ranges (incl. the new stores') fold away
  return split_kernels(t);
}
}  // namespace sched

template <class = void> Schedule schedule(const std::vector<Tensor>& tensors) {
  // a tensor with no elements needs no kernel: it gets a fresh empty buffer (tinygrad: size-0 realizes to nothing)
  // the same graph asked for twice is computed once (outputs share the buffer)
  std::vector<UOp> outs;
  std::vector<size_t> out_of(tensors.size(), SIZE_MAX);
  std::unordered_map<UOp, size_t> seen;
  for (size_t i = 0; i < tensors.size(); i++) {
    if (tensors[i].numel() == 0) continue;
    auto [it, fresh] = seen.try_emplace(tensors[i].uop(), outs.size());
    if (fresh) outs.push_back(tensors[i].uop());
    out_of[i] = it->second;
  }
  Schedule s;
  s.outputs.assign(tensors.size(), UOp());
  for (size_t i = 0; i < tensors.size(); i++)
    if (tensors[i].numel() == 0) s.outputs[i] = new_buffer_uop(0, dtypes::strong(tensors[i].dtype()));
  if (outs.empty()) {
    s.graph = UOp::sink({});
    return s;
  }
  std::vector<UOp> prepared_outputs;
  UOp prepared = sched::prepare(outs, &prepared_outputs);
  for (size_t i = 0; i < tensors.size(); i++)
    if (out_of[i] != SIZE_MAX) s.outputs[i] = prepared_outputs.at(out_of[i]);
  s.graph = sched::get_kernel_graph(prepared);
  for (const UOp& u : s.graph.toposort())
    if (u.op() == Ops::CALL) s.kernels.push_back(Kernel{u});
  return s;
}

}  // namespace graft
