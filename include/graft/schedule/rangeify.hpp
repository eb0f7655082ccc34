// rangeify2 (seed tinygrad/schedule/rangeify2.py), the passes between preparation and kernel splitting:
//   add_stages:       consumer counting (fan-out adds, EXPAND and implicit broadcasts multiply, STORE resets to 1)
//                     and STAGE insertion on every ALU/REDUCE with a device that is consumed more than once.
//   pm_range_creation + pm_range_migration (one bottom-up rewrite, ctx RangeCtx): RANGEs on STORE/STAGE/REDUCE, INDEX
//                     pushed through movement ops (apply_movement_op, PAD validity) and elementwise ops.
//   remove_stages:    the stage-removal loop (recompute_cost, MAX_RECOMPUTE=8, MAX_SCALAR_RECOMPUTE=64, inlining and
//                     range replacement).
//   remove_stage:     STAGE(val, r...) -> BUFFER + AFTER(buf, END(STORE(INDEX(buf.reshape(shape), r...), val), r...)),
//                     in one pass with the last reduce simplify.
// STAGE arg (tinygrad BufferizeOpts) is the tuple (device, removable).
//   reduce_simplify:  unparented REDUCE ranges (ADD/MAX) and size-1 ranges (a subset of symbolic + pm_reduce_simplify).
// Not here (yet): pm_reduce_simplify's closed-form collapse (reduce_collapse), the whole-graph symbolic passes around
// the loop, STACK indexing, force_stage, materialize_call_args, THREEFRY (no such op in the tensor front end yet).
#pragma once
#include <algorithm>
#include <map>
#include <optional>
#include <unordered_set>

#include "graft/core/uop_map.hpp"
#include "graft/pattern/matcher.hpp"
#include "graft/pattern/rewrite.hpp"
#include "graft/pattern/upat.hpp"
#include "graft/rules/symbolic.hpp"
#include "graft/schedule/prepare.hpp"

namespace graft::sched {

inline constexpr int64_t MAX_RECOMPUTE = 8;
inline constexpr int64_t MAX_SCALAR_RECOMPUTE = 64;

inline Arg stage_opts(const std::string& device, bool removable = true) { return Arg{Arg(device), Arg(removable)}; }
inline bool stage_removable(const UOp& stage) {
  return !stage.arg().is<ArgTuple>() || stage.arg().tuple().size() < 2 || stage.arg().tuple()[1].as_int() != 0;
}
inline std::string stage_device(const UOp& stage) {
  return stage.arg().is<ArgTuple>() && !stage.arg().tuple().empty() ? stage.arg().tuple()[0].get<std::string>() : "CPU";
}
inline UOp make_stage(const UOp& x, const Arg& opts, std::span<const UOp> rngs = {}) {
  return make_with_first(Ops::STAGE, x.dtype(), x, rngs, opts);
}

// ---- consumer counting + STAGE insertion ------------------------------------------------------------------------
// `persistent`: the buffers of the tensor graphs (tinygrad's PARAM destinations: assign targets)
inline UOp add_stages(const UOp& tsink, const UOpSet& persistent = {}) {
  std::vector<UOp> topo = tsink.toposort();  // keeps the nodes alive for the node-keyed maps below
  // device: a BUFFER/PARAM with a device somewhere below (CONST-only graphs have none); points into a node's arg
  static const std::string no_device;
  NodeMap<const std::string*> device(topo.size());
  for (const UOp& u : topo) {
    const std::string* d = &no_device;
    if ((u.op() == Ops::BUFFER || u.op() == Ops::PARAM) && u.arg().is_param()) d = &u.arg().param().device;
    for (const UOp& s : u.src())
      if (d->empty()) d = *device.find(s.node());
    device.try_emplace(u.node(), d);
  }
  auto device_of = [&](const UOp& u) -> const std::string& { return **device.find(u.node()); };
  // force_stage (seed): two stores into existing buffers that each read the other's destination (a swap) cannot be
  // ordered; the second one's value, when it reduces, is computed into its own buffer first (never removed again)
  UOpSet force_stage;
  std::vector<UOp> param_writes;
  for (const UOp& u : topo)
    if (u.op() == Ops::STORE)
      if (UOp b = buf_uop(u.src(0)); b && persistent.contains(b)) param_writes.push_back(u);
  if (param_writes.size() == 2) {  // perf: the reads of every node are only needed for a possible swap
    std::unordered_map<const UOpNode*, std::vector<const UOpNode*>> reads;  // node -> buffers it reads (sorted)
    for (const UOp& u : topo) {
      std::vector<const UOpNode*> r;
      UOp b = buf_uop(u);
      if (b && (u.op() == Ops::AFTER || u.op() == Ops::RESHAPE || u == b)) r = {b.node()};
      else
        for (const UOp& x : u.src()) {
          const auto& xr = reads[x.node()];
          std::vector<const UOpNode*> m;
          std::set_union(r.begin(), r.end(), xr.begin(), xr.end(), std::back_inserter(m));
          r = std::move(m);
        }
      reads[u.node()] = std::move(r);
    }
    const UOp &si = param_writes[0], &sj = param_writes[1];
    const UOpNode *di = buf_uop(si.src(0)).node(), *dj = buf_uop(sj.src(0)).node();
    auto reads_of = [&](const UOp& v, const UOpNode* b) { const auto& r = reads[v.node()]; return std::binary_search(r.begin(), r.end(), b); };
    if (sj.src(1).slice_ops().has(Ops::REDUCE) && di && di != dj && reads_of(sj.src(1), di) && reads_of(si.src(1), dj))
      force_stage.insert(sj.src(1));
  }
  NodeMap<Arg> stage_opts_of;  // node -> the options of the STAGE that wraps it
  NodeMap<int64_t> consumes(topo.size());
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const UOp& u = *it;
    int64_t c = *consumes.try_emplace(u.node(), 0).first;  // the root has no consumer
    if (force_stage.contains(u)) {
      stage_opts_of.try_emplace(u.node(), stage_opts(device_of(u), false));
      c = 1;
    } else if ((GroupOp::ALU.has(u.op()) || u.op() == Ops::REDUCE) && c > 1 && !device_of(u).empty()) {
      stage_opts_of.try_emplace(u.node(), stage_opts(device_of(u)));
      c = 1;
    }
    if (u.op() == Ops::STORE) c = 1;
    if (u.op() == Ops::EXPAND) c *= broadcast_factor(u, u.src(0));
    for (size_t i = 0; i < u.nsrc(); i++)  // a source broadcast implicitly counts as its expand would
      if (u.op() != Ops::STORE || i > 0)
        *consumes.try_emplace(u.src(i).node(), 0).first += broadcasts(u, u.src(i)) ? c * broadcast_factor(u, u.src(i)) : c;
  }
  if (stage_opts_of.size() == 0) return tsink;
  // each chosen node, rebuilt on its staged sources, gets its STAGE (perf: one pass; tinygrad substitutes tagged
  // STAGEs and strips the tags, two passes of the rewrite driver)
  return map_graph(tsink, [&](const UOp& x, const UOp& r) {
    const Arg* o = stage_opts_of.find(x.node());
    return o ? make_stage(r, *o) : r;
  });
}

// ---- open ranges (tinygrad UOp.ranges): union of the sources' minus the ones REDUCE/END/STAGE close ----------------
// A node's set is a row of bits, one bit per RANGE the cache has met (perf: sorted vectors merged with
// std::includes/sort cost ~600 instructions a node, ~7 % of an attention schedule; a row is an OR of the sources' rows).
struct RangeCache {
  // a node's open ranges; valid until the next get() (a later insert may move the rows)
  class Ranges {
   public:
    bool contains(const UOp& r) const {
      const uint32_t* b = rc_->bit_.find(r.node());
      return b && (row_[*b / 64] >> (*b % 64) & 1);
    }
    class iterator {
     public:
      iterator(const Ranges* s, size_t bit) : s_(s), bit_(bit) { skip(); }
      const UOp& operator*() const { return s_->rc_->ranges_[bit_]; }
      iterator& operator++() { ++bit_; skip(); return *this; }
      bool operator!=(const iterator& o) const { return bit_ != o.bit_; }
     private:
      void skip() {
        const size_t end = s_->rc_->ranges_.size();
        while (bit_ < end && !(s_->row_[bit_ / 64] >> (bit_ % 64) & 1)) bit_++;
      }
      const Ranges* s_;
      size_t bit_;
    };
    iterator begin() const { return {this, 0}; }
    iterator end() const { return {this, rc_->ranges_.size()}; }

   private:
    friend struct RangeCache;
    Ranges(const RangeCache* rc, const uint64_t* row) : rc_(rc), row_(row) {}
    const RangeCache* rc_;
    const uint64_t* row_;
  };

  Ranges get(const UOp& u) {
    if (const uint32_t* id = m_.find(u)) return {this, row(*id)};
    // perf: a node whose sources are all known needs no walk
    if (std::all_of(u.src().begin(), u.src().end(), [&](const UOp& s) { return m_.contains(s); })) add(u);
    else
      detail::post_order(u.node(), [&](const UOpNode* n) { return !m_.contains(UOp::borrow(n)); },
                         [&](const UOpNode* n) { add(UOp::borrow(n)); });
    return {this, row(*m_.find(u))};
  }

 private:
  // Nodes share rows: most nodes have the row of one of their sources, so they cost a map entry and no row.
  UOpMap<uint32_t> m_{256};  // node -> row id (handles: keys must not die and be reused while cached); sized
                             // for a schedule's graph (perf: growing from 16 slots was half of this cache's cost)
  NodeMap<uint32_t> bit_;    // RANGE -> its bit (ranges_ keeps the key alive)
  std::vector<UOp> ranges_;  // bit -> RANGE
  size_t words_ = 1;         // words per row: grows (and the rows are re-laid) when a range needs a new word
  std::vector<uint64_t> rows_ = std::vector<uint64_t>(1, 0);  // row id -> words_ words; row 0 is the empty set
  std::vector<uint64_t> tmp_;
  const uint64_t* row(uint32_t id) const { return rows_.data() + size_t(id) * words_; }
  uint32_t bit_of(const UOp& r) {
    auto [b, fresh] = bit_.try_emplace(r.node(), uint32_t(ranges_.size()));
    if (!fresh) return *b;
    uint32_t bit = *b;
    ranges_.push_back(r);
    if (ranges_.size() > words_ * 64) {  // one more word per row
      std::vector<uint64_t> wider(rows_.size() / words_ * (words_ + 1), 0);
      for (size_t i = 0; i < rows_.size() / words_; i++)
        std::copy_n(rows_.begin() + long(i * words_), words_, wider.begin() + long(i * (words_ + 1)));
      rows_.swap(wider);
      words_++;
    }
    return bit;
  }
  void add(const UOp& x) {
    const bool closes = x.op() == Ops::REDUCE || x.op() == Ops::END || x.op() == Ops::STAGE;
    const bool is_range = x.op() == Ops::RANGE;
    const uint32_t own = is_range ? bit_of(x) : 0;  // before the rows are read: it may widen them
    tmp_.assign(words_, 0);
    for (const UOp& s : x.src()) {
      const uint64_t* r = row(*m_.find(s));
      for (size_t w = 0; w < words_; w++) tmp_[w] |= r[w];
    }
    if (is_range) tmp_[own / 64] |= uint64_t(1) << (own % 64);
    if (closes)
      for (size_t i = 1; i < x.nsrc(); i++)
        if (const uint32_t* b = bit_.find(x.src(i).node())) tmp_[*b / 64] &= ~(uint64_t(1) << (*b % 64));
    uint32_t id = 0;  // the empty row, or a source's row when the result equals it, or a new row
    if (std::any_of(tmp_.begin(), tmp_.end(), [](uint64_t w) { return w != 0; })) {
      const uint32_t fresh = uint32_t(rows_.size() / words_);
      id = fresh;
      for (const UOp& s : x.src())
        if (uint32_t sid = *m_.find(s); std::equal(tmp_.begin(), tmp_.end(), row(sid))) { id = sid; break; }
      if (id == fresh) rows_.insert(rows_.end(), tmp_.begin(), tmp_.end());
    }
    m_.try_emplace(x, id);
  }
};

// ---- movement op -> input indices (tinygrad indexing.apply_movement_op) -----------------------------------------
// index math is simplified with symbolic + pm_simplify_valid (tinygrad uses symbolic+pm_simplify_valid(+drop_and_clauses))
template <class = void> const PatternMatcher& pm_index_simplify() {
  static const PatternMatcher pm = symbolic() + pm_simplify_valid();
  return pm;
}
template <class = void> UOp simplify_index(const UOp& x) { return graph_rewrite(x, pm_index_simplify()); }
// a CONST number or a RANGE over a constant end above 1 is already simplified (no rule of pm_index_simplify matches it)
inline bool is_simple_index(const UOp& x) {
  if (x.op() == Ops::CONST) return x.arg().is_number() && dtypes::is_int(x.dtype());
  return x.op() == Ops::RANGE && x.nsrc() == 1 && x.src(0).op() == Ops::CONST && x.src(0).arg().is_number() &&
         x.src(0).arg().as_int() > 1;
}
// a RANGE over a constant end of 1 simplifies to 0 (symbolic's RANGE rule: vmin == vmax)
inline bool is_unit_range(const UOp& x) {
  return x.op() == Ops::RANGE && x.nsrc() == 1 && x.src(0).op() == Ops::CONST && x.src(0).arg().is_number() &&
         x.src(0).arg().as_int() == 1;
}
// perf: no rewrite (memo set-up, a dispatch per node) when every index is simple or a unit range, as for about half
// of the reshapes
template <class = void> std::vector<UOp> simplify_all(std::span<const UOp> xs) {
  if (std::all_of(xs.begin(), xs.end(), [](const UOp& x) { return is_simple_index(x) || is_unit_range(x); })) {
    std::vector<UOp> r;
    r.reserve(xs.size());
    for (const UOp& x : xs) r.push_back(is_unit_range(x) ? x.const_like(0) : x);
    return r;
  }
  UOp s = simplify_index(UOp::sink(xs));
  return {s.src().begin(), s.src().end()};
}

// tinygrad's reshape: flatten the output index (sum of idx[k] * stride) and unflatten it with %/ over the input shape,
// then simplify. When every index is provably in [0, dim), the flat index splits into groups of adjacent dims whose
// sizes multiply to the same number on both sides, and each group unflattens on its own (perf: a conv2d's pool reshape
// took ~200k instructions simplifying nested div/mod chains over all dims; a group of one dim on each side is just its
// index, a merge is one sum). Index math with an Invalid or unknown bound takes the flat path, as tinygrad does.
// A merge of distinct RANGEs (every buffer a kernel reads or writes through its shape) is built already simplified:
// symbolic changes such a sum only by its commutative order, which the sum is given as it is built (perf: a
// simplifying rewrite per kernel buffer was ~5 % of scheduling; the schedule tests compare the two).
template <class = void> std::vector<UOp> apply_reshape_flat(const Shape& in_shape, const Shape& out_shape, std::span<const UOp> rngs) {
  UOp combined = UOp::const_int(0);
  int64_t acc = 1;
  for (size_t k = out_shape.size(); k-- > 0;) {
    combined = combined + (acc == 1 ? rngs[k] : rngs[k] * acc);
    acc *= out_shape[k];
  }
  std::vector<UOp> axes(in_shape.size());
  for (size_t j = in_shape.size(); j-- > 0;) {
    axes[j] = combined % in_shape[j];
    combined = floordiv(combined, in_shape[j]);
  }
  return simplify_all(axes);
}

template <class = void> std::vector<UOp> apply_reshape(const Shape& in_shape, const Shape& out_shape, std::span<const UOp> idx) {
  std::vector<UOp> simplified;  // perf: filled only when an index needs it (most are ranges and constants already)
  std::span<const UOp> rngs = idx;
  if (!std::all_of(idx.begin(), idx.end(), is_simple_index)) rngs = simplified = simplify_all(idx);
  auto in_bounds = [&](size_t k) {
    const detail::Interval& iv = detail::cached_minmax(rngs[k]);
    return dtypes::is_int(rngs[k].dtype()) && !iv.is_float && iv.lo >= 0 && iv.hi < out_shape[k];
  };
  bool grouped = std::all_of(in_shape.begin(), in_shape.end(), [](int64_t d) { return d > 0; }) &&
                 graft::prod(in_shape) == graft::prod(out_shape);  // the groups need equal, nonzero sizes
  for (size_t k = 0; grouped && k < out_shape.size(); k++) grouped = in_bounds(k);
  if (!grouped) return apply_reshape_flat(in_shape, out_shape, rngs);
  std::vector<UOp> axes(in_shape.size());
  std::vector<size_t> fresh;  // axes built here that still need simplifying
  size_t i = 0, o = 0;
  while (i < in_shape.size() || o < out_shape.size()) {
    size_t i0 = i, o0 = o;
    int64_t pi = 1, po = 1;
    do {  // grow the group on the side with the smaller size until both sides cover the same elements
      if (i < in_shape.size() && (pi <= po || o == out_shape.size())) pi *= in_shape[i++];
      else po *= out_shape[o++];
    } while (pi != po);
    if (i - i0 == 1 && o - o0 == 1) { axes[i0] = rngs[o0]; continue; }  // the same dim on both sides
    size_t outermost = i0;  // the group's first dim above 1: the flat index is already below its size times the rest
    while (outermost + 1 < i && in_shape[outermost] == 1) outermost++;
    // a merge into one dim (the dims after the outermost are 1) of distinct RANGEs: the sum is simplified once each
    // ADD has symbolic's commutative order
    bool merge = std::all_of(in_shape.begin() + long(outermost) + 1, in_shape.begin() + long(i), [](int64_t d) { return d == 1; });
    for (size_t k = o0; merge && k < o; k++)
      merge = out_shape[k] == 1 || (rngs[k].op() == Ops::RANGE && is_simple_index(rngs[k]) &&
                                    std::none_of(rngs.begin() + long(o0), rngs.begin() + long(k), [&](const UOp& r) { return r == rngs[k]; }));
    UOp flat;
    int64_t acc = 1;
    for (size_t k = o; k-- > o0;) {
      if (out_shape[k] == 1) continue;  // its index is provably 0
      UOp t = acc == 1 ? rngs[k] : rngs[k] * acc;
      flat = !flat ? t : merge && sym_detail::tuplize_less(t, flat) ? t + flat : flat + t;
      acc *= out_shape[k];
    }
    if (!flat) flat = UOp::const_int(0);
    for (size_t j = i; j-- > i0;) {
      if (in_shape[j] == 1 && j != outermost) { axes[j] = UOp::const_int(0); continue; }  // (all 1: flat is 0)
      axes[j] = j == outermost ? flat : flat % in_shape[j];
      if (!merge) fresh.push_back(j);
      if (j != outermost) flat = floordiv(flat, in_shape[j]);
    }
  }
  if (!fresh.empty()) {
    std::vector<UOp> todo;
    for (size_t j : fresh) todo.push_back(axes[j]);
    std::vector<UOp> done = simplify_all(todo);
    for (size_t q = 0; q < fresh.size(); q++) axes[fresh[q]] = done[q];
  }
  return axes;
}

template <class = void> std::vector<UOp> apply_movement_op(const UOp& r, std::span<const UOp> idx) {
  const Shape& in = r.src(0).shape();
  std::vector<UOp> out;
  switch (r.op()) {
    case Ops::SHRINK: {
      std::vector<UOp> off = shape_arg_uops(r.src(1));  // a Variable offset stays symbolic: the kernel reads it
      for (size_t i = 0; i < idx.size(); i++)
        out.push_back(off[i].is_const() && off[i].arg().as_int() == 0 ? idx[i] : idx[i] + off[i]);
      break;
    }
    case Ops::PERMUTE: {
      const ArgTuple& p = r.arg().tuple();
      out.resize(p.size());
      for (size_t k = 0; k < p.size(); k++) out[size_t(p[k].as_int())] = idx[k];  // out dim k reads input dim p[k]
      break;
    }
    case Ops::FLIP: {
      const ArgTuple& f = r.arg().tuple();
      for (size_t i = 0; i < idx.size(); i++) out.push_back(f[i].as_int() ? (in[i] - 1) - idx[i] : idx[i]);
      break;
    }
    case Ops::EXPAND: {  // the prepended dims (a CONST is one)
      size_t n = r.src(1).op() == Ops::STACK ? r.src(1).nsrc() : 1;
      out.assign(idx.begin() + long(n), idx.end());
      break;
    }
    case Ops::PAD: {
      Shape off = as_shape(r.src(1)), sz = as_shape(r.src(2));
      for (size_t i = 0; i < idx.size(); i++) {
        if (sz[i] == in[i] && off[i] == 0) { out.push_back(idx[i]); continue; }
        UOp valid = simplify_index((idx[i] >= off[i]) & (idx[i] < in[i] + off[i]));
        out.push_back(where(valid, idx[i] + (-off[i]), UOp::invalid()));
      }
      break;
    }
    case Ops::RESHAPE: return apply_reshape(in, r.shape(), idx);
    default: throw Error("apply_movement_op: " + std::string(op_name(r.op())) + " is not a movement op");
  }
  return out;
}

// INDEX(expand_to(s, shape), idx) for a full index of `shape`, as the migration rules leave it once they have pushed
// it through the expand's RESHAPE, EXPAND and PERMUTE (each a plain index map, then the reshape's index math), built
// without those nodes (perf: the expands of a broadcasting ALU and their pushes were ~6 % of an attention schedule).
// An expand of every dim (RESHAPE to ()) leaves a RESHAPE node, not an INDEX: that one is built the long way.
template <class = void> UOp broadcast_index(const UOp& s, const Shape& shape, std::span<const UOp> idx) {
  const Shape& in = s.shape();
  if (in == shape) return make_index(s, idx);
  const size_t n_left = shape.size() - std::min(shape.size(), in.size());
  Shape kept_shape;
  detail::SmallUOps<> kept;  // the indices of the dims the expand keeps (not 1 -> n)
  bool ok = in.size() <= shape.size();
  for (size_t i = 0; ok && i < in.size(); i++) {
    ok = in[i] == shape[n_left + i] || in[i] == 1;
    if (!(in[i] == 1 && shape[n_left + i] != 1)) kept_shape.push_back(in[i]), kept.push_back(idx[n_left + i]);
  }
  if (!ok || kept.empty()) return make_index(expand_to(s, shape), idx);
  return kept_shape == in ? make_index(s, kept) : make_index(s, apply_reshape(in, kept_shape, kept));
}

// INDEX(movement op, idx...) (tinygrad _mop_index)
template <class = void> UOp mop_index(const UOp& r, const UOp& idx) {
  std::span<const UOp> idxs = idx.src().subspan(1);
  if (idxs.size() == r.shape().size()) {
    UOp ret = make_index(r.src(0), apply_movement_op(r, idxs));
    if (r.op() == Ops::PAD) {
      UOp zero = UOp::const_(ret.dtype(), 0);
      UOp a;
      for (const UOp& s : simplify_all(ret.src().subspan(1))) {
        if (s.is_invalid()) return zero;
        if (s.op() == Ops::WHERE && s.src(2).is_invalid()) a = a ? (a & s.src(0)) : s.src(0);
      }
      if (a) ret = where(a, ret, zero);
    }
    return ret;
  }
  if (r.op() == Ops::RESHAPE) {
    const Shape &in = r.src(0).shape(), &outs = r.shape();
    int64_t prefix = int64_t(in.size()) - int64_t(outs.size() - idxs.size());
    if (prefix >= 0 && std::equal(in.begin() + prefix, in.end(), outs.begin() + long(idxs.size()))) {
      if (prefix == 0) return r.src(0);
      Shape ins(in.begin(), in.begin() + prefix), os(outs.begin(), outs.begin() + long(idxs.size()));
      UOp ret = make_index(r.src(0), apply_reshape(ins, os, idxs));
      return ret.shape() == idx.shape() ? ret : UOp();
    }
  }
  return UOp();
}

// ---- range creation / migration rule tables ---------------------------------------------------------------------
// rangeify numbers its ranges from here: split_kernels renumbers each kernel's ranges 0, 1, ... without tagging
// them, and a renumbered range must never be hash-consed into one of the ranges still waiting to be renumbered
inline constexpr int64_t kFirstRangeNumber = int64_t(1) << 40;
struct RangeCtx {
  int64_t next = kFirstRangeNumber;
};

inline UOp rangeify_on_reduce(RangeCtx& ctx, const UOp& red, const UOp& idx) {
  if (red.nsrc() != 1 || red.arg().tuple()[1].as_int() == 0) return UOp();
  if (!idx && !red.shape().empty()) return UOp();
  const UOp& inp = red.src(0);
  size_t n = size_t(red.arg().tuple()[1].as_int());
  detail::SmallUOps<> rngs, all;
  for (size_t i = 0; i < n; i++) {
    UOp r = UOp::range(inp.shape()[i], ctx.next++, AxisType::REDUCE);
    rngs.push_back(r), all.push_back(std::move(r));
  }
  if (idx) for (const UOp& i : idx.src().subspan(1)) all.push_back(i);
  return make_with_first(Ops::REDUCE, red.dtype(), make_index(inp, all), rngs, Arg{red.arg().tuple()[0], Arg(int64_t(0))});
}

inline UOp rangeify_on_stage(RangeCtx& ctx, const UOp& x) {
  if (x.nsrc() != 1 || x.src(0).shape().empty()) return UOp();
  const Shape& s = x.shape();
  Shape sq;
  for (int64_t d : s)
    if (d != 1) sq.push_back(d);
  if (!sq.empty() && sq.size() < s.size()) {
    UOp inner = rangeify_on_stage(ctx, make_stage(reshape_to(x.src(0), sq), x.arg()));
    return reshape_to(inner, s);
  }
  std::vector<UOp> rngs;
  for (int64_t d : s) rngs.push_back(UOp::range(d, ctx.next++));
  return make_stage(make_index(x.src(0), rngs), x.arg(), rngs);
}

template <class = void> const PatternMatcher& pm_range_migration() {
  static const PatternMatcher pm{
      // STAGE on shape () is nothing
      rule(pat::op<Ops::STAGE>(pat::var<"x">), [](const auto& m) { return m["x"].shape().empty() ? m["x"] : UOp(); }),
      // a (1,) value reshaped to () is an INDEX (the target shape read off the arg: perf, the shapes of a rebuilt
      // subgraph below every RESHAPE were computed only for this test)
      rule(pat::op<Ops::RESHAPE>().template named<"x">(), [](const auto& m) {
        const UOp& x = m["x"];
        bool to_scalar = x.src(1).op() == Ops::STACK && x.src(1).nsrc() == 0;
        return to_scalar && x.src(0).shape() == Shape{1} ? make_index(x.src(0), std::vector<UOp>{UOp::const_int(0)}) : UOp();
      }),
      rule(pat::op<Ops::INDEX>().template named<"idx">(), [](const auto& m) -> UOp {
        const UOp& idx = m["idx"];
        const UOp& b = idx.src(0);
        if (idx.nsrc() == 1) return b;  // INDEX without indices is nothing
        if (GroupOp::Movement.has(b.op())) return mop_index(b, idx);
        if (b.op() == Ops::BITCAST && b.src(0).shape() != b.shape()) throw Error("shape changing bitcast not allowed in rangeify");
        if (GroupOp::Elementwise.has(b.op())) {
          std::span<const UOp> ix = idx.src().subspan(1);
          bool expand = std::any_of(b.src().begin(), b.src().end(), [&](const UOp& s) { return broadcasts(b, s); });
          detail::SmallUOps<4> ns;
          if (!expand) for (const UOp& s : b.src()) ns.push_back(make_index(s, ix));
          else if (ix.size() == b.shape().size()) for (const UOp& s : b.src()) ns.push_back(broadcast_index(s, b.shape(), ix));
          else  // an index of fewer dims than the ALU has: the expands are built
            for (const UOp& s : expand_sources(b)) ns.push_back(make_index(s, ix));
          return b.with_src(ns);
        }
        return UOp();
      }),
  };
  return pm;
}

template <class = void> const PatternMatcher& pm_range_creation() {
  static const PatternMatcher pm{
      rule(pat::op<Ops::INDEX>(pat::prefix(pat::op<Ops::REDUCE>().template named<"red">())).template named<"idx">(),
           [](const auto& m, RangeCtx& ctx) { return rangeify_on_reduce(ctx, m["red"], m["idx"]); }),
      rule(pat::op<Ops::REDUCE>().template named<"red">(), [](const auto& m, RangeCtx& ctx) { return rangeify_on_reduce(ctx, m["red"], UOp()); }),
      rule(pat::op<Ops::STORE>().template named<"x">(), [](const auto& m, RangeCtx& ctx) -> UOp {
        const UOp& x = m["x"];
        if (x.shape().empty()) return UOp();
        std::vector<UOp> rngs;
        for (int64_t d : x.shape()) rngs.push_back(UOp::range(d, ctx.next++));
        return make_end(make_store(make_index(x.src(0), rngs), make_index(x.src(1), rngs)), rngs);
      }),
      rule(pat::op<Ops::STAGE>().template named<"x">(), [](const auto& m, RangeCtx& ctx) { return rangeify_on_stage(ctx, m["x"]); }),
  };
  static const PatternMatcher both = pm + pm_range_migration();
  return both;
}

template <class = void> UOp rangeify(const UOp& tsink, RangeCtx& ctx) { return graph_rewrite(tsink, pm_range_creation(), ctx, {.bottom_up = true}); }

// ---- stage-removal loop ------------------------------------------------------------------------------------------
// `seen`: nodes already counted (the graph keeps them alive)
inline std::optional<int64_t> recompute_cost(const UOp& x, detail::NodeSet& seen) {
  if (seen.contains(x.node()) || x.op() == Ops::STAGE || has_buffer_identity(x)) return 0;
  seen.insert(x.node());
  if (x.op() == Ops::REDUCE) return std::nullopt;
  int64_t total = GroupOp::Elementwise.has(x.op()) ? 1 : 0;
  bool none = false;
  for (size_t i = 0; i < (x.op() == Ops::INDEX ? std::min<size_t>(1, x.nsrc()) : x.nsrc()); i++) {
    auto c = recompute_cost(x.src(i), seen);
    if (!c) none = true;
    else total += *c;
  }
  if (none) return std::nullopt;
  return total;
}

inline UOp inline_stage_index(const UOp& stage, const UOp& idx) {
  NodeMap<const UOpNode*> rep;  // stage range -> the index's value (stage and idx keep both alive)
  for (size_t i = 1; i < stage.nsrc() && i < idx.nsrc(); i++) rep.try_emplace(stage.src(i).node(), idx.src(i).node());
  NodeMap<UOp> cache;  // node of the stage's value -> its replacement (perf: node-keyed tables, no std::function)
  auto replace = [&](auto& self, const UOp& x) -> UOp {
    if (const UOpNode* const* r = rep.find(x.node())) return UOp::borrow(*r);
    if (has_buffer_identity(x) || x.op() == Ops::STAGE) return x;
    if (const UOp* c = cache.find(x.node())) return *c;
    detail::SmallUOps<> ns;
    for (const UOp& s : x.src()) ns.push_back(self(self, s));
    UOp r = x.with_src(ns);
    cache.try_emplace(x.node(), r);
    return r;
  };
  return replace(replace, stage.src(0));
}

inline bool in_backward_slice(const UOp& root, Ops op) { return root.slice_ops().has(op); }  // no walk: nodes carry it

inline int64_t max_numel(const UOp& u) { return graft::prod(u.shape()); }

// `rc` may be shared with other passes: a node's open ranges depend on the node alone
inline UOp remove_stages(UOp tsink, RangeCache& rc) {
  for (;;) {
    const std::vector<UOp> topo = tsink.toposort();  // keeps the nodes alive for the node-keyed maps below
    // consumers of every node (once per use, in topological order) in one flat array (perf: a map of vectors was
    // rebuilt for the whole graph every round)
    NodeMap<uint32_t> pos(topo.size());
    for (uint32_t i = 0; i < topo.size(); i++) pos.try_emplace(topo[i].node(), i);
    std::vector<uint32_t> first(topo.size() + 1, 0), users;
    for (const UOp& u : topo)
      for (const UOp& s : u.src()) first[*pos.find(s.node()) + 1]++;
    for (size_t i = 0; i < topo.size(); i++) first[i + 1] += first[i];
    users.resize(first.back());
    {
      std::vector<uint32_t> fill(first.begin(), first.end() - 1);
      for (uint32_t i = 0; i < topo.size(); i++)
        for (const UOp& s : topo[i].src()) users[fill[*pos.find(s.node())]++] = i;
    }
    auto children = [&](const UOp& x) {
      uint32_t i = *pos.find(x.node());
      return std::span<const uint32_t>(users.data() + first[i], first[i + 1] - first[i]);
    };
    std::vector<UOp> order;  // stages in first-INDEX order
    for (const UOp& u : topo)
      if (u.op() == Ops::INDEX && u.src(0).op() == Ops::STAGE && topo[children(u.src(0))[0]] == u) order.push_back(u.src(0));
    auto is_boundary = [](const UOp& c) { return c.op() == Ops::STAGE || c.op() == Ops::STORE || c.op() == Ops::CALL; };
    // the boundaries each node reaches, as [begin, end) in one array (perf: a vector per node was a malloc each);
    // a span is valid until the next call computes a new set
    std::vector<UOp> bpool;
    NodeMap<std::pair<uint32_t, uint32_t>> bcache;
    auto boundaries_rec = [&](auto& self, const UOp& x) -> std::span<const UOp> {
      if (const auto* c = bcache.find(x.node())) return {bpool.data() + c->first, bpool.data() + c->second};
      detail::Scratch<UOp> r;  // one per level of the recursion
      for (uint32_t ci : children(x)) {
        const UOp& c = topo[ci];
        if (is_boundary(c)) r->push_back(c);
        else for (const UOp& b : self(self, c)) r->push_back(b);
      }
      std::sort(r->begin(), r->end(), UOp::AddressLess{});
      r->erase(std::unique(r->begin(), r->end()), r->end());
      uint32_t begin = uint32_t(bpool.size());
      bpool.insert(bpool.end(), r->begin(), r->end());
      bcache.try_emplace(x.node(), std::pair<uint32_t, uint32_t>{begin, uint32_t(bpool.size())});
      return {bpool.data() + begin, bpool.data() + bpool.size()};
    };
    auto boundaries = [&](const UOp& x) { return boundaries_rec(boundaries_rec, x); };
    NodeMap<bool> rcache;
    auto feeds_reduce_rec = [&](auto& self, const UOp& x) -> bool {
      if (const bool* c = rcache.find(x.node())) return *c;
      bool r = false;
      for (uint32_t ci : children(x)) {
        const UOp& c = topo[ci];
        if (c.op() == Ops::REDUCE || (!is_boundary(c) && self(self, c))) { r = true; break; }
      }
      return *rcache.try_emplace(x.node(), r).first;
    };
    auto feeds_reduce = [&](const UOp& x) { return feeds_reduce_rec(feeds_reduce_rec, x); };
    auto boundary_work = [&](const UOp& b) -> std::optional<int64_t> {
      const UOp& value = b.op() == Ops::STORE ? b.src(1) : b.src(0);
      int64_t w = 1;
      for (const UOp& r : rc.get(value)) {
        if (!r.src(0).is_const()) return std::nullopt;
        w *= r.src(0).arg().as_int();
      }
      return w;
    };
    auto recompute_work = [&](const std::vector<UOp>& idxs) -> std::optional<int64_t> {
      int64_t total = 0;
      for (const UOp& idx : idxs) {
        std::span<const UOp> bs = boundaries(idx);
        if (bs.size() != 1) return std::nullopt;
        auto w = boundary_work(bs[0]);
        if (!w) return std::nullopt;
        total += *w;
      }
      return total;
    };
    auto same_idx = [](const UOp& a, const UOp& b) {
      return a.nsrc() == b.nsrc() && std::equal(a.src().begin() + 1, a.src().end(), b.src().begin() + 1);
    };

    std::unordered_map<UOp, UOp> replacements, range_replacements;
    std::vector<UOp> selected;
    for (const UOp& stage : order) {
      std::vector<UOp> idxs;  // its consumers, when all of them index it
      bool only_indexed = true;
      for (uint32_t ci : children(stage)) {
        only_indexed &= topo[ci].op() == Ops::INDEX && topo[ci].src(0) == stage;
        idxs.push_back(topo[ci]);
      }
      if (!stage_removable(stage) || !only_indexed) continue;
      const UOp& body = stage.src(0);
      bool inlinable = GroupOp::ALU.has(body.op()) || body.op() == Ops::REDUCE;
      detail::NodeSet seen;
      std::optional<int64_t> cost = recompute_cost(body, seen);
      if (!inlinable) {
        // passthrough stages don't duplicate compute when indexing is unchanged
        if (idxs.size() == 1 && same_idx(stage, idxs[0])) {
          replacements[idxs[0]] = body;
          break;
        }
        continue;
      }
      if (idxs.size() > 1) {
        auto work = recompute_work(idxs);
        if (cost && *cost <= MAX_RECOMPUTE && work && *work <= max_numel(stage) * int64_t(idxs.size())) {
          for (const UOp& idx : idxs) replacements[idx] = inline_stage_index(stage, idx);
        } else if (!cost && std::all_of(idxs.begin(), idxs.end(), [&](const UOp& i) { return same_idx(i, idxs[0]); }) &&
                   std::none_of(idxs.begin(), idxs.end(), feeds_reduce)) {
          std::vector<UOp> sb;
          for (const UOp& idx : idxs) for (const UOp& b : boundaries(idx)) sb.push_back(b);
          std::sort(sb.begin(), sb.end(), UOp::AddressLess{});
          sb.erase(std::unique(sb.begin(), sb.end()), sb.end());
          if (auto bw = sb.size() == 1 ? boundary_work(sb[0]) : std::nullopt; bw && *bw == max_numel(stage)) {
            for (size_t i = 1; i < stage.nsrc(); i++) range_replacements[stage.src(i)] = idxs[0].src(i);
            selected.push_back(stage);
          }
        }
        if (!replacements.empty() || !range_replacements.empty()) break;
        continue;
      }
      const UOp& idx = idxs[0];
      std::span<const UOp> sb = boundaries(idx);
      std::optional<int64_t> bw1 = sb.size() == 1 ? boundary_work(sb[0]) : std::nullopt;
      int64_t work = bw1.value_or(-1);  // -1: unknown (no single boundary or symbolic ranges)
      bool all_const = std::all_of(idx.src().begin() + 1, idx.src().end(), [](const UOp& r) { return r.is_const(); });
      bool all_range = std::all_of(idx.src().begin() + 1, idx.src().end(), [](const UOp& r) { return r.op() == Ops::RANGE; });
      bool scalar = max_numel(stage) == 1 && cost && *cost <= MAX_SCALAR_RECOMPUTE && all_const;
      bool small = cost && *cost <= MAX_SCALAR_RECOMPUTE && max_numel(stage) <= 8 && max_numel(idx) <= 8;
      if (cost) {
        if (in_backward_slice(body, Ops::THREEFRY) || scalar || small || (*cost <= MAX_RECOMPUTE && work >= 0 && work <= max_numel(stage)))
          replacements[idx] = inline_stage_index(stage, idx);
      } else if (sb.size() == 1 && !feeds_reduce(idx) && work == max_numel(stage)) {
        if (all_range) {
          for (size_t i = 1; i < stage.nsrc(); i++) range_replacements[stage.src(i)] = idx.src(i);
          selected.push_back(stage);
        } else {
          replacements[idx] = inline_stage_index(stage, idx);
        }
      }
      if (!replacements.empty() || !range_replacements.empty()) break;
    }
    if (replacements.empty() && range_replacements.empty()) break;
    tsink = tsink.substitute(replacements).substitute(range_replacements);
    if (!selected.empty()) {
      std::unordered_set<UOp> sel;
      for (const UOp& s : selected) sel.insert(s.substitute(range_replacements));
      tsink = map_graph(tsink, [&](const UOp& x) -> UOp {
        if (x.op() == Ops::INDEX && x.src(0).op() == Ops::STAGE && sel.count(x.src(0)) &&
            std::equal(x.src(0).src().begin() + 1, x.src(0).src().end(), x.src().begin() + 1, x.src().end()))
          return x.src(0).src(0);
        return x;
      }, OpSet{Ops::STAGE});
    }
  }
  return tsink;
}

// ---- reduce simplify (part of tinygrad's `symbolic + pm_reduce_simplify` passes) ----------------------------------
// reduce_unparented: REDUCE ranges the body does not use are dropped (ADD multiplies by their size, MAX ignores
// them; MUL is left alone). With flatten_unit_ranges (after the stage-removal loop only: STAGE ranges must stay
// RANGEs while stages can still be inlined), size-1 RANGEs become 0 and leave END/REDUCE (tinygrad's symbolic folds
// them); an END or REDUCE left without ranges is its body.
// One node, its sources already simplified (map_graph order).
inline UOp reduce_simplify_node(const UOp& x, bool flatten_unit_ranges, RangeCache& rc) {
  if (flatten_unit_ranges && is_unit_range(x)) return UOp::const_int(0);
  if (x.op() != Ops::REDUCE && x.op() != Ops::END) return x;
  if (x.op() == Ops::REDUCE && x.nsrc() == 1) return x;  // not rangeified
  if (x.op() == Ops::REDUCE)  // over an empty range: the identity, whatever the body reads
    for (const UOp& r : x.src().subspan(1))
      if (r.op() == Ops::RANGE && r.src(0).is_const() && r.src(0).arg().as_int() == 0) {
        Ops op = x.arg().tuple()[0].get<Ops>();
        double id = op == Ops::ADD ? 0.0 : op == Ops::MUL ? 1.0 : dtypes::is_float(x.dtype()) ? -INFINITY : dtypes::min_value(x.dtype());
        return UOp::const_(x.dtype(), id);
      }
  Ops rop = x.op() == Ops::REDUCE ? x.arg().tuple()[0].get<Ops>() : Ops::NOOP;
  // perf: only an ADD/MAX REDUCE can drop ranges, so only it needs the body's open ranges
  const bool can_drop = rop == Ops::ADD || rop == Ops::MAX;
  std::optional<RangeCache::Ranges> used;
  if (can_drop) used = rc.get(x.src(0));
  auto kept = [&](const UOp& r) { return r.op() == Ops::RANGE && !(can_drop && !used->contains(r)); };  // else folded (size 1) or unparented
  if (std::all_of(x.src().begin() + 1, x.src().end(), kept)) return x;  // perf: the usual case, no lists
  detail::SmallUOps<> keep, dropped;
  keep.push_back(x.src(0));
  for (const UOp& r : x.src().subspan(1))
    if (r.op() == Ops::RANGE) (kept(r) ? keep : dropped).push_back(r);
  UOp ret = keep.size() > 1 ? x.with_src(keep) : x.op() == Ops::REDUCE ? x.src(0).cast(x.dtype()) : x.src(0);
  if (rop == Ops::ADD)
    for (const UOp& r : dropped) ret = ret * UOp::const_(ret.dtype(), r.src(0).arg());
  return ret;
}

inline UOp reduce_simplify(const UOp& tsink, bool flatten_unit_ranges, RangeCache& rc) {
  return map_graph(tsink, [&](const UOp& x) { return reduce_simplify_node(x, flatten_unit_ranges, rc); },
                   flatten_unit_ranges ? OpSet{Ops::REDUCE, Ops::END, Ops::RANGE} : OpSet{Ops::REDUCE, Ops::END});
}

// ---- STAGE -> BUFFER + STORE + END ---------------------------------------------------------------------------------
// The STAGE's sources are simplified (its size-1 ranges are 0: they index the buffer and leave the END).
inline UOp stage_to_buffer(const UOp& x, RangeCache& rc) {
  DType dt = dtypes::strong(x.dtype());
  const Shape& shape = x.shape();
  UOp buf = new_buffer_uop(graft::prod(shape), dt, stage_device(x));
  UOp val = x.src(0).dtype() == dt ? x.src(0) : x.src(0).cast(dt);
  std::span<const UOp> rngs = x.src().subspan(1);
  UOp st = reduce_simplify_node(make_end(make_store(make_index(reshape_to(buf, shape), rngs), val), rngs), true, rc);
  return reshape_to(make_after(buf, st), shape);
}

// After the stage-removal loop (tinygrad's "reduce simplify" and "remove stage" passes, whose symbolic folds size-1
// ranges in both): reduce simplify with size-1 ranges flattened, and every STAGE becomes its buffer, in one pass
// (perf: three whole-graph passes were ~10 % of scheduling).
inline UOp remove_stage(const UOp& tsink, RangeCache& rc) {
  return map_graph(tsink, [&](const UOp& x) { return x.op() == Ops::STAGE ? stage_to_buffer(x, rc) : reduce_simplify_node(x, true, rc); },
                   OpSet{Ops::REDUCE, Ops::END, Ops::RANGE, Ops::STAGE});
}

}  // namespace graft::sched
