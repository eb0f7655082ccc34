// Lowering a kernel (the SINK of a CALL from graft::schedule) to what the linearizer consumes:
//  1. the output ranges of the kernel's END become one flat thread id `gid` (a SPECIAL): range i is
//     (gid // stride_i) % size_i, so the symbolic simplifier folds row-major index math back to `gid`;
//  2. `sym` simplifies the index math and the validity gates;
//  3. weak dtypes are committed: weakint (index math) becomes int32, or int64 when some value may leave int32;
//     a weak constant takes the dtype of the operation that uses it.
// The result keeps tinygrad's kernel-AST shape: STORE(INDEX(PARAM, idx), value), reads are INDEX(PARAM, idx),
// gated indices are WHERE(gate, idx, Invalid), REDUCE(value, ranges...) keeps its loop ranges.
#pragma once
#include <limits>

#include "graft/rules/symbolic.hpp"
#include "graft/schedule/schedule.hpp"

namespace graft::codegen {

struct BufferInfo {
  DType dtype;
  int64_t numel = 0;
  bool written = false;
};

// a scalar variable the kernel reads (an ALU PARAM: tinygrad's bound Variable inside a kernel); its value comes with
// each launch, so one compiled kernel serves every value
struct VarInfo {
  std::string name;
  DType dtype;  // committed (weakint -> the kernel's index dtype)
  int64_t lo = 0, hi = 0;
};

struct LoweredKernel {
  std::string name;              // E_32_64 / r_4_8 style (tinygrad's: E = elementwise, r = has a reduce)
  std::vector<BufferInfo> bufs;  // by slot
  std::vector<VarInfo> vars;     // by slot (numbered apart from the buffers)
  int64_t threads = 1;           // invocations: product of the output ranges (1 when the kernel has none)
  DType index_dtype = dtypes::int32;
  UOp sink;                      // lowered AST; `gid` (SPECIAL) when threads > 1
};

namespace detail {
inline bool is_range(const UOp& u) { return u.op() == Ops::RANGE; }

// weak -> strong dtypes; a weak CONST operand takes the dtype of the value it is combined with
inline UOp commit_weak_dtypes(const UOp& sink, DType index_dt) {
  UOpMap<UOp> done;
  auto strong = [&](DType d) { return d == dtypes::weakint ? index_dt : d == dtypes::weakfloat ? dtypes::float32 : d; };
  for (const UOp& u : sink.toposort()) {
    std::vector<UOp> src;
    src.reserve(u.nsrc());
    for (const UOp& s : u.src()) src.push_back(done.at(s));
    // the operand dtype an ALU's weak consts should take: the first operand that is not a weak CONST
    if (GroupOp::ALU.has(u.op())) {
      size_t first = u.op() == Ops::WHERE ? 1 : 0;
      std::optional<DType> target;
      for (size_t i = first; i < u.nsrc() && !target; i++)
        if (!(u.src(i).is_const() && dtypes::is_weak(u.src(i).dtype()))) target = src[i].dtype();
      if (target)
        for (size_t i = first; i < u.nsrc(); i++)
          if (u.src(i).is_const() && dtypes::is_weak(u.src(i).dtype()) && !u.src(i).is_invalid())
            src[i] = UOp::const_(*target, u.src(i).arg());
    }
    UOp n = u.op() == Ops::CONST && dtypes::is_weak(u.dtype()) && !u.is_invalid()
                ? UOp::const_(strong(u.dtype()), u.arg())
                : UOp::make(u.op(), strong(u.dtype()), src, u.arg(), u.tag());
    done.try_emplace(u, n);
  }
  return done.at(sink);
}

inline std::string kernel_name(bool reduce, const std::vector<int64_t>& sizes) {
  std::string n = reduce ? "r" : "E";
  for (int64_t s : sizes) n.append("_").append(std::to_string(s));
  if (sizes.empty()) n.append("_1");
  return n;
}

// a buffer read through RESHAPEs only (a one-element buffer seen as a scalar) is INDEX(buffer, 0)
inline UOp reshaped_reads_to_index(const UOp& sink) {
  std::unordered_map<UOp, UOp> sub;
  for (const UOp& u : sink.toposort()) {
    if (u.op() != Ops::RESHAPE) continue;
    UOp b = u;
    while (b.op() == Ops::RESHAPE) b = b.src(0);
    if (b.op() != Ops::PARAM) continue;
    if (b.src(0).arg().as_int() != 1)
      throw Error("lower: a RESHAPE of a " + std::to_string(b.src(0).arg().as_int()) + "-element buffer survived scheduling");
    sub.emplace(u, UOp::make(Ops::INDEX, b.dtype(), {b, UOp::const_int(0)}));
  }
  return sub.empty() ? sink : sink.substitute(sub);
}
inline bool depends_on(const UOp& u, const UOp& r) {
  for (const UOp& x : u.toposort())
    if (x == r) return true;
  return false;
}

// A sum over r in [0, n) of WHERE(r + x < c, a, b) with a, b, c, x independent of r is a count: that many a's and
// the rest b's. This is what arange (tinygrad's _cumalu construction: a REDUCE over a padded ones tensor) lowers
// to, so arange runs in O(n) instead of O(n^2).
inline UOp collapse_counting_reduces(const UOp& sink) {
  std::unordered_map<UOp, UOp> sub;
  for (const UOp& u : sink.toposort()) {
    if (u.op() != Ops::REDUCE || u.nsrc() != 2 || u.arg().tuple().at(0).get<Ops>() != Ops::ADD) continue;
    const UOp &r = u.src(1), &w = u.src(0);
    if (r.op() != Ops::RANGE || !r.src(0).is_const() || w.op() != Ops::WHERE || w.src(0).op() != Ops::CMPLT) continue;
    const UOp &lhs = w.src(0).src(0), &c = w.src(0).src(1), &a = w.src(1), &b = w.src(2);
    UOp x;
    if (lhs == r) x = UOp::const_int(0);
    else if (lhs.op() == Ops::ADD && lhs.src(1) == r) x = lhs.src(0);
    else if (lhs.op() == Ops::ADD && lhs.src(0) == r) x = lhs.src(1);
    else continue;
    if (depends_on(x, r) || depends_on(c, r) || depends_on(a, r) || depends_on(b, r)) continue;
    UOp n = r.src(0);
    UOp hits = maximum(UOp::const_int(0), -maximum(-(c - x), -n));  // clamp(c - x, 0, n)
    sub.emplace(u, a * hits.cast(u.dtype()) + b * (n - hits).cast(u.dtype()));
  }
  return sub.empty() ? sink : sink.substitute(sub);
}
}  // namespace detail

template <class = void> LoweredKernel lower(const UOp& kernel_sink_in) {
  if (kernel_sink_in.op() != Ops::SINK) throw Error("lower: expected a kernel SINK, got " + std::string(op_name(kernel_sink_in.op())));
  UOp kernel_sink = detail::reshaped_reads_to_index(kernel_sink_in);
  LoweredKernel k;
  // buffers by slot
  bool has_reduce = false;
  for (const UOp& u : kernel_sink.toposort()) {
    if (u.op() == Ops::REDUCE) has_reduce = true;
    if (u.op() != Ops::PARAM) continue;
    if (!u.arg().is_param()) throw Error("lower: PARAM without a ParamArg");
    const ParamArg& p = u.arg().param();
    if (p.slot < 0) throw Error("lower: PARAM with a negative slot");
    if (p.addrspace == AddrSpace::ALU) {
      if (!p.vmin_vmax) throw Error("lower: variable PARAM '" + p.name + "' without a value range");
      if (size_t(p.slot) >= k.vars.size()) k.vars.resize(size_t(p.slot) + 1);
      k.vars[size_t(p.slot)] = VarInfo{p.name, u.dtype(), p.vmin_vmax->first, p.vmin_vmax->second};
      continue;
    }
    if (size_t(p.slot) >= k.bufs.size()) k.bufs.resize(size_t(p.slot) + 1);
    k.bufs[size_t(p.slot)] = BufferInfo{p.dtype, u.src(0).arg().as_int(), false};
  }
  for (const UOp& u : kernel_sink.toposort())
    if (u.op() == Ops::STORE && u.src(0).op() == Ops::INDEX && u.src(0).src(0).op() == Ops::PARAM)
      k.bufs[size_t(u.src(0).src(0).arg().param().slot)].written = true;
  for (size_t i = 0; i < k.bufs.size(); i++)
    if (k.bufs[i].dtype == dtypes::void_) throw Error("lower: buffer slot " + std::to_string(i) + " is never used");
  for (size_t i = 0; i < k.vars.size(); i++)
    if (k.vars[i].dtype == dtypes::void_) throw Error("lower: variable slot " + std::to_string(i) + " is never used");

  // the output ranges of a single END become the thread id
  UOp sink = kernel_sink;
  std::vector<int64_t> sizes;
  if (sink.nsrc() == 1 && sink.src(0).op() == Ops::END) {
    const UOp& end = sink.src(0);
    std::span<const UOp> rngs = end.src().subspan(1);
    for (const UOp& r : rngs) {
      if (!r.src(0).is_const()) throw Error("lower: symbolic range sizes are not supported yet");
      sizes.push_back(r.src(0).arg().as_int());
    }
    k.threads = 1;
    for (int64_t s : sizes) k.threads *= s;
    std::unordered_map<UOp, UOp> sub;
    UOp gid = UOp::special(k.threads, "gid");
    int64_t stride = 1;
    for (size_t i = rngs.size(); i-- > 0;) {
      // size 1 (or an empty kernel, which never runs): the range is 0
      UOp e = sizes[i] == 1 || k.threads == 0 ? UOp::const_int(0) : floordiv(gid, UOp::const_int(stride)) % UOp::const_int(sizes[i]);
      sub.try_emplace(rngs[i], e);
      stride *= sizes[i];
    }
    sink = UOp::sink({end.src(0).substitute(sub)});
  }
  sink = graph_rewrite(sink, sym());
  if (UOp c = detail::collapse_counting_reduces(sink); c != sink) {
    sink = graph_rewrite(c, sym());
    has_reduce = false;
    for (const UOp& u : sink.toposort()) has_reduce |= u.op() == Ops::REDUCE;
  }
  k.name = detail::kernel_name(has_reduce, sizes);

  // int32 index math unless some value may not fit
  bool wide = false;
  for (const UOp& u : sink.toposort())
    if (u.dtype() == dtypes::weakint && !u.is_invalid() &&
        (u.vmin().as_int() < std::numeric_limits<int32_t>::min() || u.vmax().as_int() > std::numeric_limits<int32_t>::max()))
      wide = true;
  k.index_dtype = wide ? dtypes::int64 : dtypes::int32;
  k.sink = detail::commit_weak_dtypes(sink, k.index_dtype);
  for (VarInfo& v : k.vars) {
    if (v.dtype == dtypes::weakint) v.dtype = k.index_dtype;
    if (!dtypes::is_int(v.dtype) || dtypes::is_bool(v.dtype) || (v.dtype.itemsize() != 4 && v.dtype.itemsize() != 8))
      throw Error("lower: variable '" + v.name + "' has dtype " + std::string(v.dtype.name()) +
                  " (variables are 32- or 64-bit integers)");
  }
  return k;
}

}  // namespace graft::codegen
