// Reference evaluator for tensor-graph UOps (what graft::Tensor builds), on the host, in double precision with the
// dtype's semantics applied after every op: float32 results are rounded to float, ints wrap to their width (int ops
// are done in int64), bool is 0/1, weakfloat computes as float32. Handles BUFFER (host side table), CONST, every movement op (PAD fills 0), ALU ops
// with implicit (right-aligned) broadcasting, CAST, REDUCE of the leading n axes, AFTER/STORE (Tensor::full),
// CONTIGUOUS / DETACH / COPY passthrough, bound Variables (AFTER(var, STORE(var, value))) as their value, also as
// SHRINK offsets. Iterative (explicit stack, no recursion over graph depth), memoized per node.
// The tests' oracle for the compiled backends (realize() runs on a device: engine/realize.hpp).
#pragma once
#include <cmath>
#include <memory>
#include <unordered_map>

#include "graft/core/range.hpp"
#include "graft/tensor/storage.hpp"

namespace graft {

namespace detail::ref {

inline double round_to(DType dt, double v) {
  if (dtypes::is_bool(dt)) return v != 0 ? 1.0 : 0.0;
  // a weak float is computed as default_float (float32), as tinygrad lowers it; weakint keeps int64 range
  if (dtypes::is_float(dt)) return truncate_float(dt == dtypes::weakfloat ? dtypes::default_float : dt, v);
  if (dtypes::is_int(dt)) return double(truncate_int(dt, int64_t(v)));
  return v;
}
// C-style conversion of a value of dtype `from` to `to`
inline double cast_value(DType from, DType to, double v) {
  if (dtypes::is_bool(to)) return v != 0 ? 1.0 : 0.0;
  if (dtypes::is_int(to)) {
    if (dtypes::is_float(from)) {
      if (std::isnan(v) || std::isinf(v)) return 0;
      v = std::trunc(v);
      if (dtypes::is_unsigned(to) && v < 0) return double(truncate_int(to, int64_t(v)));
    }
    if (to == dtypes::uint64 && v >= 9.2233720368547758e18) return v;
    return double(truncate_int(to, int64_t(v)));
  }
  return round_to(to, v);
}

inline std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

// is source i of u a value the evaluation reads? (the target of a STORE / the buffer of an AFTER is written, not read)
inline bool reads_src(const UOp& u, size_t i) {
  if (u.op() == Ops::STORE && i == 0) return false;
  if (u.op() == Ops::AFTER && i == 0) return false;
  return true;
}
// the value sources of a node (shape arguments of movement ops are not values)
inline size_t value_srcs(const UOp& u) {
  switch (u.op()) {
    case Ops::BUFFER: case Ops::CONST: return 0;
    case Ops::RESHAPE: case Ops::EXPAND: case Ops::PAD: case Ops::SHRINK: return 1;
    default: return u.nsrc();
  }
}

using Values = std::shared_ptr<const std::vector<double>>;

// One ALU op on scalars with graft's semantics (the oracle for every backend): `ints` says the operands are
// integers/bool (wrapping arithmetic), the result is rounded to `dt`. Integer division by zero raises graft::Error.
inline double alu_scalar(Ops op, DType dt, bool ints, const double* a) {
  using enum Ops;
  double v = 0;
  auto I = [&](size_t k) { return int64_t(a[k]); };
  auto U = [&](size_t k) { return uint64_t(int64_t(a[k])); };
  switch (op) {
    case ADD: v = ints ? double(int64_t(U(0) + U(1))) : a[0] + a[1]; break;
    case SUB: v = ints ? double(int64_t(U(0) - U(1))) : a[0] - a[1]; break;
    case MUL: v = ints ? double(int64_t(U(0) * U(1))) : a[0] * a[1]; break;
    case MAX: v = std::isnan(a[0]) || std::isnan(a[1]) ? NAN : std::max(a[0], a[1]); break;
    case CMPLT: v = a[0] < a[1]; break;
    case CMPNE: v = a[0] != a[1]; break;
    case CMPEQ: v = a[0] == a[1]; break;
    case WHERE: v = a[0] != 0 ? a[1] : a[2]; break;
    case NEG: v = -a[0]; break;
    case EXP2: v = std::exp2(a[0]); break;
    case LOG2: v = std::log2(a[0]); break;
    case SIN: v = std::sin(a[0]); break;
    case SQRT: v = std::sqrt(a[0]); break;
    case RECIPROCAL: v = 1.0 / a[0]; break;
    case TRUNC: v = std::trunc(a[0]); break;
    case FDIV: v = a[0] / a[1]; break;
    case POW: v = std::pow(a[0], a[1]); break;
    case MULACC: v = a[0] * a[1] + a[2]; break;
    case CDIV: if (I(1) == 0) throw Error("evaluate: integer division by zero"); v = double(I(0) / I(1)); break;
    case CMOD: if (I(1) == 0) throw Error("evaluate: integer division by zero"); v = double(I(0) % I(1)); break;
    case FLOORDIV: if (I(1) == 0) throw Error("evaluate: integer division by zero"); v = double(floordiv(I(0), I(1))); break;
    case FLOORMOD: if (I(1) == 0) throw Error("evaluate: integer division by zero"); v = double(floormod(I(0), I(1))); break;
    case XOR: v = double(I(0) ^ I(1)); break;
    case OR: v = double(I(0) | I(1)); break;
    case AND: v = double(I(0) & I(1)); break;
    case SHL: v = double(int64_t(U(0) << I(1))); break;
    case SHR: v = double(I(0) >> I(1)); break;
    default: throw Error("evaluate: unsupported ALU op " + std::string(op_name(op)));
  }
  return round_to(dt, v);
}

inline std::vector<double> eval_alu(const UOp& u, const std::vector<const std::vector<double>*>& in) {
  using enum Ops;
  const Shape& out = u.shape();
  int64_t n = prod(out);
  DType dt = u.dtype();
  DType sdt = u.src(0).dtype();  // operand dtype (comparisons output bool)
  if (u.op() == WHERE) sdt = u.src(1).dtype();
  bool ints = dtypes::is_int(sdt) || dtypes::is_bool(sdt);
  // per-source broadcast strides (right aligned, 0 where the source dim is 1)
  std::vector<std::vector<int64_t>> bst;
  for (const UOp& s : u.src()) {
    const Shape& ss = s.shape();
    std::vector<int64_t> st = strides_of(ss), b(out.size(), 0);
    for (size_t i = 0; i < ss.size(); i++)
      if (ss[i] != 1) b[out.size() - ss.size() + i] = st[i];
    bst.push_back(std::move(b));
  }
  std::vector<double> r(static_cast<size_t>(n));
  std::vector<int64_t> idx(out.size(), 0);
  std::vector<double> a(u.nsrc());
  for (int64_t o = 0; o < n; o++) {
    for (size_t k = 0; k < u.nsrc(); k++) {
      int64_t off = 0;
      for (size_t d = 0; d < out.size(); d++) off += idx[d] * bst[k][d];
      a[k] = (*in[k])[size_t(off)];
    }
    r[size_t(o)] = alu_scalar(u.op(), dt, ints, a.data());
    for (size_t d = out.size(); d-- > 0;)
      if (++idx[d] < out[d]) break; else idx[d] = 0;
  }
  return r;
}

// gather: out[o] = in[map(o)] (or fill where map returns -1)
template <class F> std::vector<double> gather(const Shape& out, const std::vector<double>& in, F&& map) {
  int64_t n = prod(out);
  std::vector<double> r(static_cast<size_t>(n));
  std::vector<int64_t> idx(out.size(), 0);
  for (int64_t o = 0; o < n; o++) {
    int64_t src = map(idx);
    r[size_t(o)] = src < 0 ? 0.0 : in[size_t(src)];
    for (size_t d = out.size(); d-- > 0;)
      if (++idx[d] < out[d]) break; else idx[d] = 0;
  }
  return r;
}

}  // namespace detail::ref
inline std::vector<double> evaluate(const UOp& root);
namespace detail::ref {

inline std::vector<double> eval_node(const UOp& u, const std::vector<const std::vector<double>*>& in) {
  using enum Ops;
  switch (u.op()) {
    case CONST:
      if (!u.arg().is_number()) throw Error("evaluate: CONST " + u.arg().str() + " is not a number");
      return {round_to(u.dtype(), u.arg().as_double())};
    case BUFFER: {
      auto st = host_storage(u);
      if (!st) throw Error("evaluate: BUFFER " + u.arg().str() + " has no host data");
      std::vector<double> r(size_t(st->numel));
      for (int64_t i = 0; i < st->numel; i++) r[size_t(i)] = st->get(i);
      return r;
    }
    case RESHAPE: case CONTIGUOUS: case CONTIGUOUS_BACKWARD: case DETACH: case COPY: return *in[0];
    case AFTER:
      for (size_t i = 1; i < u.nsrc(); i++)
        if (u.src(i).op() == STORE) {
          const std::vector<double>& v = *in[i];
          std::vector<double> r(v.size());
          for (size_t k = 0; k < v.size(); k++) r[k] = cast_value(u.src(i).src(1).dtype(), u.dtype(), v[k]);
          return r;
        }
      throw Error("evaluate: AFTER without a STORE");
    case STORE: {  // the stored value, broadcast to the target's shape
      const Shape& out = u.src(0).shape();
      const Shape& vs = u.src(1).shape();
      if (prod(vs) == prod(out)) return *in[1];
      if (prod(vs) == 1) return std::vector<double>(size_t(prod(out)), (*in[1])[0]);
      throw Error("evaluate: STORE value shape " + shape_str(vs) + " does not match " + shape_str(out));
    }
    case CAST: {
      std::vector<double> r(*in[0]);
      for (double& x : r) x = cast_value(u.src(0).dtype(), u.dtype(), x);
      return r;
    }
    case EXPAND: {  // prepends dims: repeat the whole input
      const std::vector<double>& x = *in[0];
      int64_t reps = prod(as_shape(u.src(1)));
      std::vector<double> r;
      r.reserve(x.size() * size_t(reps));
      for (int64_t i = 0; i < reps; i++) r.insert(r.end(), x.begin(), x.end());
      return r;
    }
    case PERMUTE: {
      const Shape& is = u.src(0).shape();
      std::vector<int64_t> st = strides_of(is);
      const ArgTuple& p = u.arg().tuple();
      return gather(u.shape(), *in[0], [&](const std::vector<int64_t>& idx) {
        int64_t off = 0;
        for (size_t d = 0; d < idx.size(); d++) off += idx[d] * st[size_t(p[d].as_int())];
        return off;
      });
    }
    case FLIP: {
      const Shape& is = u.src(0).shape();
      std::vector<int64_t> st = strides_of(is);
      const ArgTuple& f = u.arg().tuple();
      return gather(u.shape(), *in[0], [&](const std::vector<int64_t>& idx) {
        int64_t off = 0;
        for (size_t d = 0; d < idx.size(); d++) off += (f[d].as_int() ? is[d] - 1 - idx[d] : idx[d]) * st[d];
        return off;
      });
    }
    case PAD: case SHRINK: {
      const Shape& is = u.src(0).shape();
      std::vector<int64_t> st = strides_of(is);
      Shape off;  // a SHRINK offset may be an expression of bound Variables: evaluated as a scalar graph
      for (const UOp& o : shape_arg_uops(u.src(1))) off.push_back(o.is_const() ? o.arg().as_int() : int64_t(evaluate(o).at(0)));
      bool pad = u.op() == PAD;
      return gather(u.shape(), *in[0], [&](const std::vector<int64_t>& idx) -> int64_t {
        int64_t o = 0;
        for (size_t d = 0; d < idx.size(); d++) {
          int64_t i = pad ? idx[d] - off[d] : idx[d] + off[d];
          if (i < 0 || i >= is[d]) return -1;
          o += i * st[d];
        }
        return o;
      });
    }
    case REDUCE: {
      const ArgTuple& a = u.arg().tuple();
      Ops rop = a.at(0).get<Ops>();
      const Shape& is = u.src(0).shape();
      int64_t nred = a.at(1).as_int();
      int64_t outer = prod(std::span<const int64_t>(is).subspan(0, size_t(nred)));
      int64_t inner = prod(std::span<const int64_t>(is).subspan(size_t(nred)));
      const std::vector<double>& x = *in[0];
      bool ints = !dtypes::is_float(u.dtype());
      double init = rop == ADD ? 0.0 : rop == MUL ? 1.0 : (ints ? dtypes::min_value(u.dtype()) : -INFINITY);
      if (ints && rop == MAX && u.dtype() == dtypes::weakint) init = -9.2233720368547758e18;
      std::vector<double> r(size_t(inner), init);
      for (int64_t i = 0; i < outer; i++)
        for (int64_t j = 0; j < inner; j++) {
          double v = x[size_t(i * inner + j)], &acc = r[size_t(j)];
          if (rop == ADD) acc = ints ? double(int64_t(uint64_t(int64_t(acc)) + uint64_t(int64_t(v)))) : acc + v;
          else if (rop == MUL) acc = ints ? double(int64_t(uint64_t(int64_t(acc)) * uint64_t(int64_t(v)))) : acc * v;
          else if (rop == MAX) acc = std::isnan(acc) || std::isnan(v) ? NAN : std::max(acc, v);
          else throw Error("evaluate: unsupported REDUCE op " + std::string(op_name(rop)));
          if (ints) acc = round_to(u.dtype(), acc);
        }
      for (double& v : r) v = round_to(u.dtype(), v);
      return r;
    }
    default:
      if (GroupOp::ALU.has(u.op())) return eval_alu(u, in);
      throw Error("evaluate: unsupported op " + std::string(op_name(u.op())));
  }
}

}  // namespace detail::ref

// Evaluate a tensor-graph UOp; the result is row-major over u.shape() (one element for a scalar).
inline std::vector<double> evaluate(const UOp& root) {
  std::unordered_map<const UOpNode*, detail::ref::Values> memo;
  std::vector<std::pair<UOp, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [u, ready] = stack.back();
    stack.pop_back();
    if (memo.count(u.node())) continue;
    size_t nv = detail::ref::value_srcs(u);
    if (!ready) {
      stack.push_back({u, true});
      for (size_t i = nv; i-- > 0;)
        if (detail::ref::reads_src(u, i) && !memo.count(u.src(i).node())) stack.push_back({u.src(i), false});
      continue;
    }
    std::vector<const std::vector<double>*> in;
    for (size_t i = 0; i < nv; i++) in.push_back(detail::ref::reads_src(u, i) ? memo.at(u.src(i).node()).get() : nullptr);
    if (u.has_shape() && nv) (void)u.shape();
    memo[u.node()] = std::make_shared<const std::vector<double>>(detail::ref::eval_node(u, in));
  }
  return *memo.at(root.node());
}

template <class T> std::vector<T> evaluate_as(const UOp& root) {
  std::vector<double> v = evaluate(root);
  std::vector<T> r(v.size());
  for (size_t i = 0; i < v.size(); i++) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) r[i] = std::isfinite(v[i]) ? T(int64_t(v[i])) : T(0);
    else r[i] = T(v[i]);
  }
  return r;
}

}  // namespace graft
