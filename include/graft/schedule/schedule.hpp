// graft::schedule(tensors): prepare -> consumer counting + STAGEs -> range creation/migration -> stage-removal loop
// -> STAGE -> BUFFER -> split kernels. A Schedule lists the kernels (CALLs) in dependency order.
// Everything that reaches a rule table is a `template <class = void>` function (the symbolic.hpp convention), so a
// translation unit that includes this header but never schedules does not instantiate the rule tables.
#pragma once
#include "graft/schedule/prepare.hpp"
#include "graft/schedule/rangeify.hpp"
#include "graft/schedule/split.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <queue>

namespace graft {

struct Kernel {
  UOp call;  // CALL(SINK(body), args...)
  const UOp& sink() const { return call.src(0); }
  std::vector<UOp> args() const { return {call.src().begin() + 1, call.src().end()}; }
  // the arguments are the buffers (by slot), then the Variables (by variable slot; values in Schedule::var_vals)
  std::vector<UOp> buffers() const {
    std::vector<UOp> r;
    for (const UOp& a : call.src().subspan(1)) if (!a.is_variable()) r.push_back(a);
    return r;
  }
  std::vector<UOp> vars() const {
    std::vector<UOp> r;
    for (const UOp& a : call.src().subspan(1)) if (a.is_variable()) r.push_back(a);
    return r;
  }
};

struct Schedule {
  std::vector<Kernel> kernels;
  UOp graph;  // the kernel graph: SINK(AFTER(buf, CALL(...)), ...)
  std::vector<UOp> outputs;  // each output tensor's buffer (empty handle when it already was one)
  std::vector<UOp> writes;   // buffers of the tensor graphs that kernels write (assign targets, Tensor::full buffers)
  std::map<std::string, int64_t> var_vals;  // bound Variables by name (tinygrad var_vals): the kernels' variable values
  size_t size() const { return kernels.size(); }
  const Kernel& operator[](size_t i) const { return kernels.at(i); }
  auto begin() const { return kernels.begin(); }
  auto end() const { return kernels.end(); }
};

namespace sched {
// the tensor graph of SINK(AFTER...) -> kernel graph (tinygrad get_kernel_graph)
// `persistent`: the buffers of the tensor graphs (assign targets), for force_stage
template <class = void> UOp get_kernel_graph(const UOp& prepared, const UOpSet& persistent = {}) {
  UOp t = add_stages(prepared, persistent);
  RangeCtx rctx;
  t = rangeify(t, rctx);
  RangeCache rc;  // one for the passes below (perf: most of the graph survives each pass, and so do its entries)
  t = reduce_simplify(t, false, rc);  // pre-fusion reduce simplify
  t = remove_stages(t, rc);
  t = remove_stage(t, rc);  // with the reduce simplify after the loop; size-1 ranges fold away
  return split_kernels(t);
}
}  // namespace sched

namespace sched {

// tinygrad _check_state_cycles (seed): every node carries the buffers it reads in their first (raw) state and the
// buffers it reads after an assign that overwrote them without reading them; an ALU combining a raw read of B with
// an overwritten B cannot be ordered (the raw read must run before the write, the other read after it).
inline void check_state_cycles(const UOp& sink) {
  if (!sink.slice_ops().has(Ops::AFTER)) return;  // no write (assign, Tensor::full): every read sees the first state
  // a sorted set of buffers, shared between nodes (perf: most nodes carry exactly one child's sets, and a copy per
  // node was most of this pass's allocations); null is the empty set
  using Set = std::shared_ptr<const std::vector<const UOpNode*>>;
  auto unite = [](const Set& a, const Set& b) -> Set {
    if (!a || a == b) return b;
    if (!b) return a;
    if (std::includes(a->begin(), a->end(), b->begin(), b->end())) return a;
    if (std::includes(b->begin(), b->end(), a->begin(), a->end())) return b;
    auto r = std::make_shared<std::vector<const UOpNode*>>();
    std::set_union(a->begin(), a->end(), b->begin(), b->end(), std::back_inserter(*r));
    return r;
  };
  auto meets = [](const Set& a, const Set& b) {
    if (!a || !b) return false;
    for (size_t i = 0, j = 0; i < a->size() && j < b->size();)
      if ((*a)[i] == (*b)[j]) return true;
      else if ((*a)[i] < (*b)[j]) i++;
      else j++;
    return false;
  };
  auto has = [](const Set& a, const UOpNode* x) { return a && std::binary_search(a->begin(), a->end(), x); };
  auto one = [](const UOpNode* x) -> Set { return std::make_shared<std::vector<const UOpNode*>>(1, x); };
  NodeMap<std::pair<Set, Set>> st;  // node -> (raw, assigned); the toposort keeps the keys alive
  // perf: a subgraph without a BUFFER or PARAM (index math, constants) reads no buffer: its sets are empty, unvisited
  static const std::pair<Set, Set> none;
  auto at = [&](const UOp& x) -> const std::pair<Set, Set>& {
    const auto* v = st.find(x.node());
    return v ? *v : none;
  };
  auto reads_storage = [](const UOp& x) { return !(x.slice_ops() & OpSet{Ops::BUFFER, Ops::PARAM}).empty(); };
  for (const UOp& u : sink.toposort(reads_storage)) {
    std::pair<Set, Set> s;
    if (u.op() == Ops::BUFFER) {
      s.first = one(u.node());
    } else if (u.op() == Ops::AFTER && buf_uop(u)) {
      const UOpNode* key = buf_uop(u).node();
      bool stores = false, self_update = false;
      for (size_t i = 1; i < u.src().size(); i++) {
        const UOp& x = u.src(i);
        if (x.op() != Ops::STORE || !buf_uop(x.src(0)) || buf_uop(x.src(0)).node() != key) continue;
        stores = true;
        const auto& v = at(x.src(1));
        self_update |= has(v.first, key) || has(v.second, key);
      }
      s = !stores || self_update ? at(u.src(0)) : std::pair<Set, Set>{nullptr, one(key)};
    } else {
      for (const UOp& x : u.src()) {
        const auto& v = at(x);
        s.first = unite(s.first, v.first), s.second = unite(s.second, v.second);
      }
      if (u.op() == Ops::CONTIGUOUS) s.first = nullptr;  // a snapshot: its raw reads happen before any later write
    }
    if (GroupOp::ALU.has(u.op()))
      for (size_t i = 0; i < u.src().size(); i++)
        for (size_t j = i + 1; j < u.src().size(); j++) {
          const auto &a = at(u.src(i)), &b = at(u.src(j));
          if (meets(a.first, b.second) || meets(a.second, b.first))
            throw Error("cycle detected while combining buffer states: " + std::string(op_name(u.op())) +
                        " reads a buffer both before and after an assign to it");
        }
    st.try_emplace(u.node(), std::move(s));
  }
}

// Kernel order (tinygrad create_schedule): a kernel runs after the kernels whose results it reads (the AFTER edges of
// the kernel graph: RAW) and before any other kernel that overwrites a buffer state it reads (WAR); ties keep the
// graph's order. A cycle (two kernels that each read what the other overwrites) is an error.
inline std::vector<UOp> order_kernels(const UOp& graph) {
  std::vector<UOp> calls;
  NodeMap<uint32_t> id;  // CALL -> its index in calls
  // the kernel bodies (SINKs under the CALLs) hold no CALL: not walked (perf: they are most of the graph)
  for (const UOp& u : graph.toposort([&](const UOp& x) { return x.op() != Ops::SINK || x == graph; }))
    if (u.op() == Ops::CALL) id.try_emplace(u.node(), uint32_t(calls.size())), calls.push_back(u);
  size_t n = calls.size(), words = (n + 63) / 64;
  std::vector<std::vector<size_t>> succ(n);
  std::vector<uint64_t> anc(n * words, 0);  // row k: the kernels that must run before k
  auto anc_of = [&](size_t k) { return anc.data() + k * words; };
  std::vector<size_t> indeg(n, 0);
  auto edge = [&](size_t a, size_t b) { succ[a].push_back(b), indeg[b]++; };
  std::vector<std::pair<const UOpNode*, size_t>> writers;  // (buffer, kernel writing it), sorted below
  detail::Scratch<const UOpNode*> stack_buf;  // the graph keeps every node alive: plain pointers
  std::vector<const UOpNode*>& stack = *stack_buf;
  for (size_t k = 0; k < n; k++) {
    // RAW: the CALLs reachable through the arguments' AFTER chains
    for (const UOp& a : calls[k].src().subspan(1)) stack.push_back(a.node());
    detail::NodeSet seen;
    while (!stack.empty()) {
      const UOpNode* const n = stack.back();  // (a local: borrow() views the pointer where it is stored)
      stack.pop_back();
      const UOp& u = UOp::borrow(n);
      if (!seen.insert(u.node())) continue;
      if (u.op() == Ops::CALL) {
        size_t p = *id.find(u.node());
        edge(p, k);
        anc_of(k)[p / 64] |= uint64_t(1) << (p % 64);
        for (size_t w = 0; w < words; w++) anc_of(k)[w] |= anc_of(p)[w];
        continue;
      }
      for (const UOp& x : u.src()) stack.push_back(x.node());
    }
    if (calls[k].src().size() > 1)
      if (UOp b = buf_uop(calls[k].src(1))) writers.emplace_back(b.node(), k);
  }
  std::sort(writers.begin(), writers.end());
  // WAR: a kernel reading buffer B precedes every writer of B that is not already before it
  for (size_t r = 0; r < n; r++)
    for (size_t i = 2; i < calls[r].src().size(); i++) {
      UOp b = buf_uop(calls[r].src(i));
      if (!b) continue;
      auto first = std::lower_bound(writers.begin(), writers.end(), std::pair<const UOpNode*, size_t>(b.node(), 0));
      for (auto it = first; it != writers.end() && it->first == b.node(); ++it) {
        size_t w = it->second;
        if (w == r) continue;
        bool before = (anc_of(r)[w / 64] >> (w % 64)) & 1;
        // r reads B as it was before any write, yet must run after w (it reads w's results through another buffer)
        if (before && calls[r].src(i).op() == Ops::BUFFER)
          throw Error("stale read in assign graph: a kernel reads a buffer as it was before an assign, but also needs a "
                      "result computed after that assign (realize the early read first, or read it through .contiguous())");
        if (!before) edge(r, w);
      }
    }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t k = 0; k < n; k++)
    if (indeg[k] == 0) ready.push(k);
  std::vector<UOp> order;
  order.reserve(n);
  while (!ready.empty()) {
    size_t k = ready.top();
    ready.pop();
    order.push_back(calls[k]);
    for (size_t s : succ[k])
      if (--indeg[s] == 0) ready.push(s);
  }
  if (order.size() != n)
    throw Error("cycle detected in assign graph: " + std::to_string(n - order.size()) +
                " kernels each read a buffer another one overwrites (realize them separately or add .contiguous())");
  return order;
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
  UOp big_sink = UOp::sink(outs);
  // bound Variables: the values go to var_vals and the graph keeps the bare variable (a 0-d ALU BUFFER, which kernels
  // read as a scalar PARAM), so the bind's STORE never becomes a kernel and kernels do not depend on the values
  std::unordered_map<UOp, UOp> unbind;
  UOpSet persistent, written;  // the buffers of the tensor graphs (unbinding leaves them as they are)
  for (const UOp& u : big_sink.toposort()) {
    if (u.op() == Ops::BUFFER && !u.is_variable()) persistent.insert(u);
    if (!u.is_bound_var()) continue;
    const std::string& name = u.src(0).arg().param().name;
    auto [it, fresh] = s.var_vals.try_emplace(name, u.bound_value());
    if (!fresh && it->second != u.bound_value())
      throw Error("variable '" + name + "' is bound to both " + std::to_string(it->second) + " and " +
                  std::to_string(u.bound_value()) + " in one schedule");
    unbind.try_emplace(u, u.src(0));
  }
  if (!unbind.empty()) {
    big_sink = big_sink.substitute(unbind);
    outs.assign(big_sink.src().begin(), big_sink.src().end());
  }
  sched::check_state_cycles(big_sink);
  std::vector<UOp> prepared_outputs;
  UOp prepared = sched::prepare(outs, &prepared_outputs);
  for (size_t i = 0; i < tensors.size(); i++)
    if (out_of[i] != SIZE_MAX) s.outputs[i] = prepared_outputs.at(out_of[i]);
  s.graph = sched::get_kernel_graph(prepared, persistent);
  for (const UOp& c : sched::order_kernels(s.graph)) s.kernels.push_back(Kernel{c});
  // buffers of the tensor graphs that some kernel writes: their bytes go back to host storage
  for (const Kernel& k : s.kernels)
    if (k.call.src().size() > 1)
      if (UOp b = sched::buf_uop(k.call.src(1)); b && persistent.contains(b) && written.insert(b)) s.writes.push_back(b);
  return s;
}

}  // namespace graft
