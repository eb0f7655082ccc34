// graft::Tensor: the tensor front end. Every op builds exactly the tensor-graph UOps tinygrad (branch
// rewrite_rangeify2, tinygrad/mixin/{movement,elementwise,reduce,op,creation}.py) builds: ALU nodes broadcast
// implicitly (prepare expands them later), explicit expand = RESHAPE(squeeze) + EXPAND(prepend) + PERMUTE, reductions
// = PERMUTE reduced axes to the front + REDUCE((op, n)) + RESHAPE, sub = add of neg, div = mul by reciprocal, ...
// Data: a realized tensor is a BUFFER (fresh slot, device "CPU") RESHAPEd to its shape (no RESHAPE when 1-D, as
// tinygrad's reshape is a no-op there), whose bytes live in the storage side table (tensor/storage.hpp). A Tensor keeps
// shared_ptrs to every storage its graph reads.
// realize() / to_vector() (engine/realize.hpp) schedule, compile and run on a device. A bound Variable is a 0-d tensor:
// Tensor(UOp::variable("n", 1, 10).bind(3)).
#pragma once
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>

#include "graft/core/sugar.hpp"
#include "graft/pattern/rewrite.hpp"
#include "graft/tensor/reference.hpp"

namespace graft {

namespace detail::tensor_ {
template <class T> constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return dtypes::bool_;
  else if constexpr (std::is_same_v<T, int8_t>) return dtypes::int8;
  else if constexpr (std::is_same_v<T, uint8_t>) return dtypes::uint8;
  else if constexpr (std::is_same_v<T, int16_t>) return dtypes::int16;
  else if constexpr (std::is_same_v<T, uint16_t>) return dtypes::uint16;
  else if constexpr (std::is_same_v<T, int32_t>) return dtypes::int32;
  else if constexpr (std::is_same_v<T, uint32_t>) return dtypes::uint32;
  else if constexpr (std::is_same_v<T, int64_t>) return dtypes::int64;
  else if constexpr (std::is_same_v<T, uint64_t>) return dtypes::uint64;
  else if constexpr (std::is_same_v<T, float>) return dtypes::float32;
  else if constexpr (std::is_same_v<T, double>) return dtypes::float64;
  else static_assert(sizeof(T) == 0, "unsupported element type");
}
inline int64_t pyfloordiv(int64_t a, int64_t b) { return floordiv(a, b); }
inline int64_t ceildiv(int64_t a, int64_t b) { return -pyfloordiv(-a, b); }

// Tensor.expand's graph: the dims that grow are squeezed out (RESHAPE), expanded as new leading dims (EXPAND) and
// permuted into place (PERMUTE); each op only when it changes something. On plain UOps so that the scheduler's
// broadcast expansion builds the same nodes without a Tensor per step (perf: each Tensor enrolls in the live set).
inline UOp broadcast_uop(const UOp& u, const Shape& new_shape) {
  const Shape& s = u.shape();
  if (s == new_shape) return u;
  auto err = [&] { return Error("expand: cannot broadcast " + shape_str(s) + " to " + shape_str(new_shape)); };
  if (s.size() > new_shape.size()) throw err();
  size_t n_left = new_shape.size() - s.size();
  for (size_t i = 0; i < s.size(); i++)
    if (s[i] != new_shape[n_left + i] && s[i] != 1) throw err();
  std::vector<size_t> expand_at, kept;
  for (size_t i = 0; i < s.size(); i++)
    (s[i] == 1 && new_shape[n_left + i] != 1 ? expand_at : kept).push_back(i);
  Shape ks;
  for (size_t i : kept) ks.push_back(s[i]);
  UOp r = ks == s ? u : UOp::make(Ops::RESHAPE, u.dtype(), {u, UOp::shape_arg(ks)});
  Shape eshape(new_shape.begin(), new_shape.begin() + long(n_left));
  for (size_t i : expand_at) eshape.push_back(new_shape[n_left + i]);
  if (!eshape.empty()) r = UOp::make(Ops::EXPAND, u.dtype(), {r, UOp::shape_arg(eshape)});
  ArgTuple perm;
  bool ident = true;
  for (size_t i = 0; i < n_left; i++) perm.push_back(Arg(int64_t(i)));
  for (size_t i = 0; i < s.size(); i++) {
    auto e = std::find(expand_at.begin(), expand_at.end(), i);
    size_t p = n_left + (e != expand_at.end() ? size_t(e - expand_at.begin()) : expand_at.size() + size_t(std::find(kept.begin(), kept.end(), i) - kept.begin()));
    ident &= p == n_left + i;
    perm.push_back(Arg(int64_t(p)));
  }
  if (!ident) r = UOp::make(Ops::PERMUTE, u.dtype(), {r}, Arg(std::move(perm)));
  (void)r.shape();  // shape inference checks every step
  return r;
}
}  // namespace detail::tensor_

class Tensor;
void apply_map_to_tensors(const std::unordered_map<UOp, UOp>& map, const std::vector<std::shared_ptr<const HostStorage>>& deps);
template <class T> concept TensorScalar = std::is_arithmetic_v<T>;

class Tensor {
 public:
  using Deps = std::vector<std::shared_ptr<const HostStorage>>;

  // Every Tensor is enrolled in a process-wide list so that an assign to a view, and realize, can re-point all live
  // tensors at once (tinygrad _apply_map_to_tensors). Copies are separate tensors; neither list nor re-pointing is
  // synchronized with other threads using the same tensors.
  Tensor() { enroll(); }
  explicit Tensor(UOp u, Deps deps = {}) : uop_(std::move(u)), deps_(std::move(deps)) { enroll(); }
  Tensor(const Tensor& o) : uop_(o.uop_), deps_(o.deps_) { enroll(); }
  Tensor(Tensor&& o) noexcept : uop_(std::move(o.uop_)), deps_(std::move(o.deps_)) { enroll(); }
  Tensor& operator=(const Tensor&) = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  ~Tensor() { withdraw(); }
  Tensor(const std::vector<float>& data, Shape shape) : Tensor(from(data, std::move(shape))) {}
  // host data -> BUFFER (dtype defaults to T's)
  template <class T> static Tensor from(const std::vector<T>& data, Shape shape, std::optional<DType> dtype = {}) {
    DType dt = dtype.value_or(detail::tensor_::dtype_of<T>());
    for (int64_t d : shape)
      if (d < 0) throw Error("Tensor: negative dim in " + shape_str(shape));
    if (int64_t(data.size()) != graft::prod(shape))
      throw Error("Tensor: " + std::to_string(data.size()) + " elements do not fill shape " + shape_str(shape));
    auto st = make_host_storage(graft::prod(shape), dt);
    for (size_t i = 0; i < data.size(); i++) st->set(int64_t(i), detail::ref::cast_value(detail::tensor_::dtype_of<T>(), dt, double(data[i])));
    return Tensor(st->buffer, {st}).reshape(shape);
  }

  // --- creation (tinygrad mixin/creation.py, op.py) --------------------------------------------------------------
  // empty: a fresh BUFFER reshaped; graft allocates zero-filled host storage so it can be evaluated
  static Tensor empty(Shape shape, DType dtype = dtypes::default_float) {
    for (int64_t d : shape)
      if (d < 0) throw Error("empty: negative dim in " + shape_str(shape));
    if (dtype == dtypes::float16 || dtype == dtypes::bfloat16)  // no host storage for these: graph only
      return Tensor(new_buffer_uop(graft::prod(shape), dtype)).reshape(shape);
    return from(std::vector<double>(size_t(graft::prod(shape)), 0.0), shape, dtype);
  }
  // full (tinygrad buffer=True): AFTER(empty, STORE(empty, CONST.reshape(1..).expand(shape))); buffer=false: the
  // expanded CONST only. Without a dtype the CONST is weak (from the value) and the buffer is its strong dtype.
  template <TensorScalar V> static Tensor full(Shape shape, V value, std::optional<DType> dtype = {}, bool buffer = true) {
    UOp c = dtype ? UOp::const_(*dtype, Arg(value_arg(value))) : detail::scalar_const(value);
    Tensor val = Tensor(c).reshape(Shape(shape.size(), 1)).expand(shape);
    if (!buffer) return val;
    DType bdt = dtype.value_or(dtypes::strong(c.dtype()));
    UOp buf = new_buffer_uop(graft::prod(shape), bdt);
    Tensor ret = Tensor(buf).reshape(shape);
    UOp store = UOp::make(Ops::STORE, dtypes::void_, {ret.uop_, val.uop_});
    return Tensor(UOp::make(Ops::AFTER, ret.dtype(), {ret.uop_, store}));
  }
  static Tensor zeros(Shape shape, std::optional<DType> dtype = {}) { return full(std::move(shape), 0.0, dtype); }
  static Tensor ones(Shape shape, std::optional<DType> dtype = {}) { return full(std::move(shape), 1.0, dtype); }
  // arange: full((n,), step)._cumalu(0, ADD) + (start - step), cast (ints default to int32, floats to float32)
  static Tensor arange(int64_t stop) { return arange(int64_t(0), stop, int64_t(1)); }
  static Tensor arange(int64_t start, int64_t stop, int64_t step = 1, std::optional<DType> dtype = {}) {
    DType dt = dtype.value_or(dtypes::default_int);
    if (!dtype && (start < -2147483648LL || stop > 2147483648LL)) dt = dtypes::int64;
    return arange_impl(Arg(start), Arg(stop), Arg(step), dt, detail::tensor_::ceildiv(stop - start, step));
  }
  static Tensor arange(double start, double stop, double step = 1.0, std::optional<DType> dtype = {}) {
    return arange_impl(Arg(start), Arg(stop), Arg(step), dtype.value_or(dtypes::default_float), int64_t(std::ceil((stop - start) / step)));
  }
  // rand: uniform [0, 1) float32 host data from a deterministic CPU generator (std::mt19937_64 seeded with `seed`,
  // 24-bit mantissa draws); NOT tinygrad's threefry stream, so values differ from tinygrad's Tensor.rand
  static Tensor rand(Shape shape, uint64_t seed = 0, DType dtype = dtypes::default_float) {
    std::mt19937_64 g(seed);
    std::vector<double> v(size_t(graft::prod(shape)));
    for (double& x : v) x = double(g() >> 40) / double(1 << 24);
    return from(v, std::move(shape), dtype);
  }

  // --- fields ----------------------------------------------------------------------------------------------------
  const UOp& uop() const { return uop_; }
  const Shape& shape() const { return uop_.shape(); }
  DType dtype() const { return uop_.dtype(); }
  int64_t ndim() const { return int64_t(shape().size()); }
  int64_t numel() const { return graft::prod(shape()); }
  const Deps& deps() const { return deps_; }

  // --- realize: defined in engine/realize.hpp (schedule, compile, run on a device); include graft/graft.hpp -------
  // device: "VULKAN", "CPU", "INTERP" or "" (GRAFT_DEVICE, else Vulkan when present, else CPU)
  Tensor& realize(const std::string& device = "");
  template <class T = float> std::vector<T> to_vector(const std::string& device = "") const;
  // a realized tensor is host data: a BUFFER, or RESHAPEs of one (row-major, so the bytes are the tensor)
  UOp realized_buffer() const {
    UOp b = uop_;
    while (b.op() == Ops::RESHAPE) b = b.src(0);
    return b.op() == Ops::BUFFER && host_storage(b) != nullptr ? b : UOp();
  }
  bool is_realized() const { return bool(realized_buffer()); }

  // --- elementwise (mixin/elementwise.py) --------------------------------------------------------------------------
  Tensor alu(Ops op, std::initializer_list<Tensor> rest = {}) const {
    std::vector<UOp> s{uop_};
    Deps d = deps_;
    for (const Tensor& t : rest) s.push_back(t.uop_), merge(d, t.deps_);
    UOp u = UOp::infer(op, s);
    check_shape(u, s);
    return Tensor(u, std::move(d));
  }
  Tensor cast(DType dt) const { return dt == dtype() ? *this : Tensor(UOp::make(Ops::CAST, dt, {uop_}, dt), deps_); }
  Tensor detach() const { return alu(Ops::DETACH); }
  Tensor logical_not() const { return cast(dtypes::bool_).binop(Ops::CMPNE, scalar(true), false); }
  Tensor neg() const { return dtype() == dtypes::bool_ ? logical_not() : binop(Ops::MUL, scalar(-1), false); }
  // bool: logical_not; unsigned: x ^ dtype.max; signed: x ^ -1 (uint64's max is not a weakint here: a uint64 CONST)
  Tensor bitwise_not() const {
    if (dtype() == dtypes::bool_) return logical_not();
    if (dtype() == dtypes::uint64) return binop(Ops::XOR, Tensor(UOp::const_(dtypes::uint64, int64_t(-1))), false);
    if (dtypes::is_unsigned(dtype())) return binop(Ops::XOR, scalar(dtypes::imax(dtype())), false);
    return binop(Ops::XOR, scalar(-1), false);
  }
  Tensor add(const Tensor& x, bool rev = false) const { return binop(Ops::ADD, x, rev); }
  Tensor mul(const Tensor& x, bool rev = false) const { return binop(Ops::MUL, x, rev); }
  Tensor sub(const Tensor& x, bool rev = false) const {
    auto [a, b] = broadcasted(x, rev);
    return a.alu(Ops::ADD, {b.neg()});
  }
  Tensor div(const Tensor& x, bool rev = false) const {
    auto [a, b] = broadcasted(x, rev);
    if (dtypes::is_int(a.dtype()) || a.dtype() == dtypes::bool_) a = a.cast(dtypes::default_float);
    return a.alu(Ops::MUL, {b.reciprocal()});
  }
  Tensor maximum(const Tensor& x) const { return binop(Ops::MAX, x, false); }
  Tensor minimum(const Tensor& x) const {
    auto [t, y] = broadcasted(x, false);
    return t.inverse().maximum(y.inverse()).inverse();
  }
  Tensor lt(const Tensor& x) const { return binop(Ops::CMPLT, x, false); }
  Tensor gt(const Tensor& x) const { return binop(Ops::CMPLT, x, true); }
  Tensor ge(const Tensor& x) const { return lt(x).logical_not(); }
  Tensor le(const Tensor& x) const { return gt(x).logical_not(); }
  Tensor ne(const Tensor& x) const { return binop(Ops::CMPNE, x, false); }
  Tensor eq(const Tensor& x) const { return ne(x).logical_not(); }
  // where: self is the (bool) condition
  Tensor where(const Tensor& x, const Tensor& y) const {
    auto [a, b] = x.broadcasted(y, false);
    if (dtype() != dtypes::bool_) throw Error("where: condition must be bool, got dtypes." + std::string(dtype().py_name()) + " " + shape_str(shape()));
    return alu(Ops::WHERE, {a, b});
  }
  Tensor reciprocal() const { return alu(Ops::RECIPROCAL); }
  Tensor sqrt() const { return alu(Ops::SQRT); }
  Tensor rsqrt() const { return sqrt().reciprocal(); }
  Tensor exp2() const { return alu(Ops::EXP2); }
  Tensor log2() const { return alu(Ops::LOG2); }
  Tensor trunc() const { return alu(Ops::TRUNC); }
  Tensor sin() const { return alu(Ops::SIN); }
  Tensor exp() const {
    Tensor s = cast(least_upper_float(dtype()));
    return s.cast(least_upper_dtype(s.dtype(), dtypes::float32)).mul(scalar(1.0 / std::log(2.0))).exp2().cast(s.dtype());
  }
  Tensor log() const { return log2().mul(scalar(std::log(2.0))); }
  Tensor relu() const { return gt(scalar(0)).where(*this, scalar(0)); }
  Tensor square() const { return mul(*this); }
  Tensor contiguous() const {
    if (dtypes::is_weak(dtype())) return *this;
    if (uop_.op() == Ops::CONTIGUOUS || !has_device() || has_buffer_identity()) return *this;
    return alu(Ops::CONTIGUOUS);
  }

  // assign (tinygrad Tensor.assign): this tensor's storage receives x (broadcast to this shape; the dtype must match,
  // a weak x is cast). Lazy: the write happens when something that reads it is realized. The target becomes
  // AFTER(target, STORE(target, x)); when the target is a view (SHRINK, PERMUTE, BITCAST...) of a buffer, the write
  // goes through to the buffer: every live tensor that reads the buffer node now reads it after the store.
  Tensor& assign(const Tensor& x_in) {
    if (dtypes::is_weak(dtype()))
      throw Error("assign: the target has weak dtype dtypes." + std::string(dtype().py_name()) + "; cast it first");
    if (uop_ == x_in.uop_) return *this;  // a self assign is a no-op
    Tensor x = x_in;
    if (x.shape() != shape()) {
      try {
        x = x.expand(shape());
      } catch (const Error&) {
        throw Error("assign: shape " + shape_str(x_in.shape()) + " does not broadcast to " + shape_str(shape()));
      }
    }
    if (dtypes::is_weak(x.dtype())) x = x.cast(least_upper_dtype(dtype(), x.dtype()));
    if (x.dtype() != dtype())
      throw Error("assign dtype mismatch dtypes." + std::string(dtype().py_name()) + " != dtypes." + std::string(x.dtype().py_name()));
    Deps d = deps_;
    merge(d, x.deps_);
    static constexpr OpSet through = GroupOp::Movement | OpSet{Ops::BITCAST, Ops::DETACH};
    UOp ib = uop_;
    while (!is_buffer(ib, false) && through.has(ib.op())) ib = ib.src(0);
    // a target without storage of its own (an expression: Tensor::contiguous() keeps device-less graphs lazy, where
    // tinygrad's would have made them a buffer) is given one, so the assigned value has somewhere to live
    UOp target = ib.op() == Ops::CONTIGUOUS || is_buffer(ib, true) ? uop_ : UOp::make(Ops::CONTIGUOUS, dtype(), {uop_});
    UOp store = UOp::make(Ops::STORE, dtypes::void_, {target, x.uop_});
    if (!(ib == uop_) && is_buffer(ib, true)) {
      apply_map_to_tensors({{ib, UOp::make(Ops::AFTER, ib.dtype(), {ib, store})}}, d);
    } else {
      uop_ = UOp::make(Ops::AFTER, dtype(), {target, store});
      deps_ = std::move(d);
    }
    return *this;
  }
  template <TensorScalar V> Tensor& assign(V v) { return assign(full(shape(), v, dtype(), false)); }
  // clone (tinygrad Tensor.clone): a fresh buffer that receives this tensor's value; a copy even where contiguous()
  // is a no-op (a buffer, or a device-less constant graph such as arange)
  Tensor clone() const {
    Tensor r = empty(shape(), dtypes::strong(dtype()));
    r.assign(*this);
    return r;
  }
  // in-place arithmetic is assign, as in tinygrad (`x += 1` writes x's buffer)
  template <class V> Tensor& operator+=(const V& v) { return assign(add(as_operand(v))); }
  template <class V> Tensor& operator-=(const V& v) { return assign(sub(as_operand(v))); }
  template <class V> Tensor& operator*=(const V& v) { return assign(mul(as_operand(v))); }
  template <class V> Tensor& operator/=(const V& v) { return assign(div(as_operand(v))); }

  // a weak scalar CONST tensor (python literal semantics)
  template <TensorScalar V> static Tensor scalar(V v) { return Tensor(detail::scalar_const(v)); }

  // --- movement (mixin/movement.py) -----------------------------------------------------------------------------
  Tensor reshape(Shape new_shape) const {
    const Shape& s = shape();
    int64_t c = std::count(new_shape.begin(), new_shape.end(), int64_t(-1));
    if (c > 1) throw Error("reshape: only one dimension can be inferred using -1, getting " + shape_str(new_shape));
    if (c) {
      int64_t known = -graft::prod(new_shape);  // product of the others
      for (int64_t& d : new_shape)
        if (d == -1) d = known == 0 ? 0 : graft::prod(s) / known;
    }
    for (int64_t d : new_shape)
      if (d < 0) throw Error("reshape: negative dim in " + shape_str(new_shape) + " (input shape " + shape_str(s) + ")");
    if (graft::prod(s) != graft::prod(new_shape)) throw Error("reshape: size mismatch, can't reshape " + shape_str(s) + " -> " + shape_str(new_shape));
    if (new_shape == s) return *this;
    return mop(Ops::RESHAPE, {UOp::shape_arg(new_shape)});
  }
  Tensor expand(Shape shape_in) const {
    Shape s = shape();
    size_t n = std::max(s.size(), shape_in.size());
    s.insert(s.begin(), n - s.size(), 1);
    shape_in.insert(shape_in.begin(), n - shape_in.size(), 1);
    for (size_t i = 0; i < n; i++)
      if (shape_in[i] == -1) shape_in[i] = s[i];
    return broadcast_to(shape_in);
  }
  Tensor broadcast_to(const Shape& new_shape) const {
    UOp r = detail::tensor_::broadcast_uop(uop_, new_shape);
    return r == uop_ ? *this : Tensor(std::move(r), deps_);
  }
  // pad: per axis (before, after) (>= 0)
  Tensor pad(const std::vector<std::pair<int64_t, int64_t>>& arg) const {
    const Shape& s = shape();
    if (arg.size() != s.size()) throw Error("pad: arg has " + std::to_string(arg.size()) + " axes, shape is " + shape_str(s));
    Shape off, size;
    for (size_t i = 0; i < s.size(); i++) {
      if (arg[i].first < 0 || arg[i].second < 0) throw Error("pad: negative padding on axis " + std::to_string(i) + " (shape " + shape_str(s) + ")");
      off.push_back(arg[i].first), size.push_back(s[i] + arg[i].first + arg[i].second);
    }
    if (size == s) return *this;
    return mop(Ops::PAD, {UOp::shape_arg(off), UOp::shape_arg(size)});
  }
  // shrink: per axis (start, end)
  Tensor shrink(const std::vector<std::pair<int64_t, int64_t>>& arg) const {
    const Shape& s = shape();
    if (arg.size() != s.size()) throw Error("shrink: arg has " + std::to_string(arg.size()) + " axes, shape is " + shape_str(s));
    Shape off, size;
    for (size_t i = 0; i < s.size(); i++) {
      if (arg[i].first < 0 || arg[i].second > s[i] || arg[i].first > arg[i].second)
        throw Error("shrink: bad range (" + std::to_string(arg[i].first) + ", " + std::to_string(arg[i].second) + ") on axis " + std::to_string(i) + " of shape " + shape_str(s));
      off.push_back(arg[i].first), size.push_back(arg[i].second - arg[i].first);
    }
    if (size == s) return *this;
    return mop(Ops::SHRINK, {UOp::shape_arg(off), UOp::shape_arg(size)});
  }
  // shrink with symbolic bounds (tinygrad x.shrink(((v, v+2),)) with a bound Variable v): each end - start must
  // simplify to a constant; every value of start must keep the window inside the axis. Constant bounds -> shrink above.
  Tensor shrink(const std::vector<std::pair<UOp, UOp>>& arg) const {
    const Shape& s = shape();
    if (arg.size() != s.size()) throw Error("shrink: arg has " + std::to_string(arg.size()) + " axes, shape is " + shape_str(s));
    std::vector<std::pair<int64_t, int64_t>> consts;
    std::vector<UOp> off;
    Shape size;
    for (size_t i = 0; i < s.size(); i++) {
      const auto& [b, e] = arg[i];
      if (!b || !e || !dtypes::is_int(b.dtype()) || !dtypes::is_int(e.dtype()))
        throw Error("shrink: the bounds on axis " + std::to_string(i) + " must be integer UOps (a Variable, a bound one, or a CONST)");
      UOp n = (e - b).simplify();
      if (!n.is_const()) throw Error("shrink: the size " + n.render() + " on axis " + std::to_string(i) + " is not a constant");
      off.push_back(b), size.push_back(n.arg().as_int());
      if (b.is_const()) consts.push_back({b.arg().as_int(), b.arg().as_int() + size.back()});
    }
    if (consts.size() == s.size()) return shrink(consts);
    return mop(Ops::SHRINK, {off.size() == 1 ? off[0] : UOp::stack(off), UOp::shape_arg(size)});
  }
  Tensor shrink_to(const Shape& ns) const {
    std::vector<std::pair<int64_t, int64_t>> a;
    for (int64_t d : ns) a.push_back({0, d});
    return shrink(a);
  }
  Tensor permute(const std::vector<int64_t>& order) const {
    std::vector<int64_t> o;
    for (int64_t d : order) o.push_back(resolve_dim(d, "permute"));
    std::vector<int64_t> sorted = o;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); i++)
      if (sorted[i] != int64_t(i) || sorted.size() != size_t(ndim())) throw Error("permute: order is not a valid permutation of shape " + shape_str(shape()));
    if (sorted.size() != size_t(ndim())) throw Error("permute: order is not a valid permutation of shape " + shape_str(shape()));
    bool ident = true;
    ArgTuple a;
    for (size_t i = 0; i < o.size(); i++) ident &= o[i] == int64_t(i), a.push_back(Arg(o[i]));
    if (ident) return *this;
    return Tensor(UOp::make(Ops::PERMUTE, dtype(), {uop_}, Arg(std::move(a))), deps_).checked();
  }
  Tensor flip(const std::vector<int64_t>& axes) const {
    std::vector<bool> f(size_t(ndim()), false);
    for (int64_t a : axes) {
      int64_t d = resolve_dim(a, "flip");
      if (f[size_t(d)]) throw Error("flip: dim can appear at most once (shape " + shape_str(shape()) + ")");
      f[size_t(d)] = true;
    }
    if (std::none_of(f.begin(), f.end(), [](bool b) { return b; })) return *this;
    ArgTuple a;
    for (bool b : f) a.push_back(Arg(b));
    return Tensor(UOp::make(Ops::FLIP, dtype(), {uop_}, Arg(std::move(a))), deps_).checked();
  }
  Tensor transpose(int64_t d0 = 1, int64_t d1 = 0) const {
    std::vector<int64_t> o(static_cast<size_t>(ndim()));
    for (size_t i = 0; i < o.size(); i++) o[i] = int64_t(i);
    std::swap(o[size_t(resolve_dim(d0, "transpose"))], o[size_t(resolve_dim(d1, "transpose"))]);
    return permute(o);
  }
  Tensor flatten(int64_t start = 0, int64_t end = -1) const {
    const Shape& s = shape();
    if (s.empty()) return reshape({1});
    size_t a = size_t(resolve_dim(start, "flatten")), b = size_t(resolve_dim(end, "flatten"));
    Shape ns(s.begin(), s.begin() + long(a));
    ns.push_back(graft::prod(std::span<const int64_t>(s).subspan(a, b >= a ? b - a + 1 : 0)));
    ns.insert(ns.end(), s.begin() + long(b) + 1, s.end());
    return reshape(ns);
  }
  Tensor unsqueeze(int64_t dim) const {
    Shape s = shape();
    int64_t d = dim < 0 ? dim + ndim() + 1 : dim;
    if (d < 0 || d > ndim()) throw Error("unsqueeze: dim " + std::to_string(dim) + " out of range for shape " + shape_str(s));
    s.insert(s.begin() + d, 1);
    return reshape(s);
  }
  Tensor squeeze(std::optional<int64_t> dim = {}) const {
    Shape s = shape();
    if (!dim) {
      Shape ns;
      for (int64_t d : s)
        if (d != 1) ns.push_back(d);
      return reshape(ns);
    }
    if (s.empty()) return *this;
    int64_t d = resolve_dim(*dim, "squeeze");
    if (s[size_t(d)] != 1) return *this;
    s.erase(s.begin() + d);
    return reshape(s);
  }
  Tensor repeat(const std::vector<int64_t>& repeats) const {
    Shape base = shape();
    if (repeats.size() < base.size()) throw Error("repeat: fewer repeats than dims of shape " + shape_str(base));
    base.insert(base.begin(), repeats.size() - base.size(), 1);
    Shape un, ex, fin;
    for (size_t i = 0; i < repeats.size(); i++) {
      int64_t r = repeats[i], s = base[i];
      if (r == 1) un.push_back(s), ex.push_back(s);
      else un.push_back(1), un.push_back(s), ex.push_back(r), ex.push_back(s);
      fin.push_back(r * s);
    }
    return reshape(un).expand(ex).reshape(fin);
  }

  // --- reduce (mixin/reduce.py, op.py) ------------------------------------------------------------------------------
  // reduce axes: default / std::nullopt = all axes (tinygrad axis=None); an int, a {list} or a vector; an explicit
  // empty vector reduces nothing. Negative axes count from the end.
  struct Axes {
    std::optional<std::vector<int64_t>> v;
    Axes() = default;
    Axes(std::nullopt_t) {}
    Axes(int a) : v(std::vector<int64_t>{a}) {}
    Axes(int64_t a) : v(std::vector<int64_t>{a}) {}
    Axes(std::vector<int64_t> a) : v(std::move(a)) {}
    Axes(std::initializer_list<int64_t> a) : v(std::vector<int64_t>(a)) {}
  };
  Tensor sum(Axes axis = {}, bool keepdim = false, std::optional<DType> acc = {}) const {
    Tensor ret = cast(acc.value_or(sum_acc_dtype(dtype()))).reduce(Ops::ADD, axis, keepdim);
    return !acc && (dtype() == dtypes::float16 || dtype() == dtypes::bfloat16) ? ret.cast(dtype()) : ret;
  }
  Tensor prod(Axes axis = {}, bool keepdim = false) const { return reduce(Ops::MUL, axis, keepdim); }
  Tensor max(Axes axis = {}, bool keepdim = false) const { return reduce(Ops::MAX, axis, keepdim); }
  Tensor min(Axes axis = {}, bool keepdim = false) const { return inverse().max(axis, keepdim).inverse(); }
  Tensor mean(Axes axis = {}, bool keepdim = false) const {
    DType out = dtypes::is_float(dtype()) ? dtype() : dtypes::float32;
    Tensor num = cast(sum_acc_dtype(dtype())).sum(axis, keepdim);
    return num.div(scalar(reduced_count(axis))).cast(out);
  }
  Tensor var(Axes axis = {}, bool keepdim = false, int64_t correction = 1) const {
    DType out = dtypes::is_float(dtype()) ? dtype() : dtypes::float32;
    Tensor squares = sub(mean(axis, true)).square();
    int64_t n = reduced_count(axis);
    Tensor num = squares.cast(sum_acc_dtype(dtype())).sum(axis, keepdim);
    return num.div(scalar(std::max<int64_t>(n - correction, 0))).cast(out);
  }
  Tensor std(Axes axis = {}, bool keepdim = false, int64_t correction = 1) const { return var(axis, keepdim, correction).sqrt(); }

  // --- nn (mixin/op.py) --------------------------------------------------------------------------------------------
  Tensor softmax(int64_t axis = -1) const {
    auto [m, e, ss] = softmax_parts(axis);
    return e.mul(ss.reciprocal());
  }
  Tensor log_softmax(int64_t axis = -1) const {
    auto [m, e, ss] = softmax_parts(axis);
    return m.sub(ss.log());
  }
  Tensor layernorm(std::vector<int64_t> axis = {-1}, double eps = 1e-5) const {
    Tensor y = sub(mean(axis, true));
    return y.mul(y.mul(y).mean(axis, true).add(scalar(eps)).rsqrt());
  }
  Tensor dot(const Tensor& w) const {
    int64_t dx = ndim(), dw = w.ndim();
    if (!(dx > 0 && dw > 0)) throw Error("dot: both tensors need to be at least 1D, got " + shape_str(shape()) + " and " + shape_str(w.shape()));
    int64_t axis_w = -std::min<int64_t>(dw, 2);
    const Shape &xs = shape(), &ws = w.shape();
    if (xs.back() != ws[size_t(dw + axis_w)]) throw Error("dot: cannot dot " + shape_str(xs) + " and " + shape_str(ws));
    int64_t ones = std::min({dx - 1, dw - 1, int64_t(1)});
    Shape nx(xs.begin(), xs.end() - 1);
    nx.insert(nx.end(), size_t(ones), 1);
    nx.push_back(xs.back());
    Shape nw(ws.begin(), ws.end() - std::min<long>(2, long(dw)));
    nw.insert(nw.end(), size_t(ones), 1);
    nw.insert(nw.end(), ws.end() + axis_w, ws.end());
    Tensor x2 = reshape(nx), w2 = w.reshape(nw).transpose(-1, axis_w);
    return x2.mul(w2).sum(int64_t(-1)).cast(least_upper_dtype(x2.dtype(), w2.dtype()));
  }
  Tensor matmul(const Tensor& w) const { return dot(w); }
  // padding: an int for every side, or per spatial dim (len 2), or (left, right, top, bottom) as in tinygrad
  Tensor conv2d(const Tensor& weight, std::optional<Tensor> bias = {}, int64_t groups = 1, int64_t stride = 1, int64_t dilation = 1,
                std::vector<int64_t> padding = {0}) const {
    const Shape &xs = shape(), &ws = weight.shape();
    if (xs.size() < 3 || xs.size() != ws.size() || ws[1] * groups != xs[1])
      throw Error("conv2d: input shape " + shape_str(xs) + " does not match the weight shape " + shape_str(ws));
    int64_t bs = xs[0], cout = ws[0], cin = ws[1];
    Shape HW(ws.begin() + 2, ws.end());
    size_t nd = HW.size();
    std::vector<int64_t> p;
    if (padding.size() == 1) p.assign(2 * nd, padding[0]);
    else if (padding.size() == 2 * nd) p = padding;
    else if (padding.size() == nd) { for (int64_t v : padding) p.push_back(v), p.push_back(v); std::reverse(p.begin(), p.end()); }
    else throw Error("conv2d: padding must be an int or a sequence of length " + std::to_string(nd) + " or " + std::to_string(2 * nd));
    std::vector<std::pair<int64_t, int64_t>> pads(xs.size() - nd, {0, 0});
    for (size_t i = 0; i < nd; i++) pads.push_back({p[2 * nd - 2 - 2 * i], p[2 * nd - 1 - 2 * i]});
    Tensor x = pad_constant(pads).pool(HW, stride, dilation);
    int64_t rcout = cout / groups;
    Shape oyx(x.shape().begin() + 2, x.shape().end() - long(nd));
    Shape r1{bs, groups, cin, 1}, e1{bs, groups, cin, rcout};
    for (int64_t d : oyx) r1.push_back(d), e1.push_back(d);
    for (int64_t d : HW) r1.push_back(d), e1.push_back(d);
    std::vector<int64_t> perm{0, 1, 3};
    for (size_t i = 0; i < oyx.size(); i++) perm.push_back(4 + int64_t(i));
    perm.push_back(2);
    for (size_t i = 0; i < nd; i++) perm.push_back(4 + int64_t(oyx.size() + i));
    x = x.reshape(r1).expand(e1).permute(perm);
    Shape wr{1, groups, rcout};
    wr.insert(wr.end(), oyx.size(), 1);
    wr.push_back(cin);
    for (int64_t d : HW) wr.push_back(d);
    std::vector<int64_t> axes;
    for (size_t i = 0; i < 1 + oyx.size(); i++) axes.push_back(-1 - int64_t(i));
    Shape outs{bs, cout};
    for (int64_t d : oyx) outs.push_back(d);
    Tensor ret = x.mul(weight.reshape(wr)).sum(axes, true).reshape(outs);
    if (!bias) return ret;
    Shape bsh{1, -1};
    bsh.insert(bsh.end(), nd, 1);
    return ret.add(bias->reshape(bsh));
  }
  // cumsum (tinygrad _split_cumalu: one _cumalu up to 512 elements, else two stages over chunks of 256)
  Tensor cumsum(int64_t axis = 0) const {
    if (ndim() == 0) return cast(sum().dtype());
    int64_t ax = resolve_dim(axis, "cumsum");
    int64_t s = shape()[size_t(ax)];
    if (s == 0) return cast(sum().dtype());
    constexpr int64_t SPLIT = 256;
    if (s <= SPLIT * 2) return cumalu(ax);
    std::vector<std::pair<int64_t, int64_t>> pads(size_t(ndim() - 1), {0, 0});
    pads.push_back({(s + SPLIT - 1) / SPLIT * SPLIT - s, 0});
    Tensor t = transpose(ax, -1).pad_constant(pads);
    Shape us(t.shape().begin(), t.shape().end() - 1);
    us.push_back(-1), us.push_back(SPLIT);
    Tensor chunks = t.reshape(us).cumalu(-1);
    const Shape& cs = chunks.shape();
    std::vector<std::pair<int64_t, int64_t>> last;  // chunks[..., -1]
    for (size_t i = 0; i + 1 < cs.size(); i++) last.push_back({0, cs[i]});
    last.push_back({cs.back() - 1, cs.back()});
    Tensor lastv = chunks.shrink(last).reshape(Shape(cs.begin(), cs.end() - 1));
    std::vector<std::pair<int64_t, int64_t>> bp(cs.size() - 2, {0, 0});
    bp.push_back({1, -1});
    Tensor base = lastv.cumalu(-1).pad_constant(bp);
    Tensor flat = chunks.alu(Ops::ADD, {base.unsqueeze(-1)}).flatten(int64_t(cs.size()) - 2);
    const Shape& fs = flat.shape();
    std::vector<std::pair<int64_t, int64_t>> tail;  // [..., -s:]
    for (size_t i = 0; i + 1 < fs.size(); i++) tail.push_back({0, fs[i]});
    tail.push_back({fs.back() - s, fs.back()});
    return flat.shrink(tail).transpose(ax, -1);
  }
  // _cumalu(axis, ADD): pad s-1 zeros in front, pool windows of s, sum
  Tensor cumalu(int64_t axis) const {
    int64_t ax = resolve_dim(axis, "cumsum");
    int64_t s = shape()[size_t(ax)];
    std::vector<std::pair<int64_t, int64_t>> pads(size_t(ndim() - 1), {0, 0});
    pads.push_back({s - 1, 0});
    return transpose(ax, -1).pad_constant(pads).pool({s}, 1, 1).sum(int64_t(-1)).transpose(ax, -1);
  }
  // _pool (mixin/movement.py)
  Tensor pool(const Shape& k, int64_t stride = 1, int64_t dilation = 1) const {
    const Shape& s = shape();
    if (s.size() < k.size()) throw Error("pool: can't pool " + shape_str(s) + " with kernel " + shape_str(k));
    size_t nk = k.size(), nn = s.size() - nk;
    Shape i_(s.end() - long(nk), s.end()), o_, f_;
    for (size_t j = 0; j < nk; j++) {
      if (dilation * (k[j] - 1) + 1 > i_[j]) throw Error("pool: kernel " + shape_str(k) + " is larger than the input " + shape_str(s));
      o_.push_back(detail::tensor_::ceildiv(i_[j] - dilation * (k[j] - 1), stride));
      f_.push_back(std::max<int64_t>(1, detail::tensor_::ceildiv(o_[j] * stride - dilation, i_[j])));
    }
    std::vector<int64_t> rep(nn, 1);
    Shape sh1(s.begin(), s.begin() + long(nn)), sh2 = sh1, sh3 = sh1, sh4 = sh1, sh5 = sh1, sh6 = sh1, sh7 = sh1;
    for (size_t j = 0; j < nk; j++) {
      int64_t kk = k[j], ii = i_[j], ff = f_[j], oo = o_[j];
      rep.push_back(detail::tensor_::ceildiv(kk * (ii * ff + dilation), ii));
      sh1.push_back(kk * (ii * ff + dilation));
      sh2.push_back(kk), sh2.push_back(ii * ff + dilation);
      sh3.push_back(kk), sh3.push_back(oo * stride);
      sh4.push_back(kk), sh4.push_back(oo), sh4.push_back(stride);
      sh5.push_back(kk), sh5.push_back(oo), sh5.push_back(1);
      sh6.push_back(kk), sh6.push_back(oo);
    }
    Tensor x = repeat(rep).shrink_to(sh1).reshape(sh2).shrink_to(sh3).reshape(sh4).shrink_to(sh5).reshape(sh6);
    std::vector<int64_t> perm;
    for (size_t j = 0; j < nn; j++) perm.push_back(int64_t(j));
    for (size_t j = 0; j < nk; j++) perm.push_back(int64_t(nn + j * 2 + 1));
    for (size_t j = 0; j < nk; j++) perm.push_back(int64_t(nn + j * 2));
    return x.permute(perm);
  }
  // _pad_constant with value 0 (negative pads shrink first)
  Tensor pad_constant(const std::vector<std::pair<int64_t, int64_t>>& pX) const {
    const Shape& s = shape();
    if (pX.size() != s.size()) throw Error("pad: arg has " + std::to_string(pX.size()) + " axes, shape is " + shape_str(s));
    bool neg = false;
    for (auto [a, b] : pX) neg |= a < 0 || b < 0;
    if (!neg) return pad(pX);
    std::vector<std::pair<int64_t, int64_t>> sh, pads;
    for (size_t i = 0; i < s.size(); i++) {
      sh.push_back({-std::min<int64_t>(pX[i].first, 0), std::min(pX[i].second + s[i], s[i])});
      pads.push_back({std::max<int64_t>(pX[i].first, 0), std::max<int64_t>(pX[i].second, 0)});
    }
    return shrink(sh).pad(pads);
  }

 private:
  // mutable: realize and view assigns re-point every live tensor (apply_map_to_tensors), const ones included
  mutable UOp uop_;
  mutable Deps deps_;

  struct Live {
    std::mutex mu;
    std::unordered_set<Tensor*> all;
    static Live& get() {
      static Live* l = new Live();  // leaked on purpose: tensors may die during static destruction
      return *l;
    }
  };
  void enroll() {
    Live& l = Live::get();
    std::lock_guard<std::mutex> lk(l.mu);
    l.all.insert(this);
  }
  void withdraw() noexcept {
    Live& l = Live::get();
    std::lock_guard<std::mutex> lk(l.mu);
    l.all.erase(this);
  }
  friend void apply_map_to_tensors(const std::unordered_map<UOp, UOp>& map, const Deps& deps);

  template <class V> static Tensor as_operand(const V& v) {
    if constexpr (std::is_same_v<V, Tensor>) return v;
    else return scalar(v);
  }
  // buffer identity: BUFFER/PARAM through RESHAPEs (and AFTERs when after_ok)
  static bool is_buffer(UOp x, bool after_ok) {
    while (x.op() == Ops::RESHAPE || (after_ok && x.op() == Ops::AFTER)) x = x.src(0);
    return x.is_storage();  // a Variable is a value, not a buffer
  }
  static void merge(Deps& d, const Deps& o) {
    for (const auto& s : o)
      if (std::find(d.begin(), d.end(), s) == d.end()) d.push_back(s);
  }
  template <class V> static Arg value_arg(V v) {
    if constexpr (std::is_same_v<V, bool>) return Arg(v);
    else if constexpr (std::is_floating_point_v<V>) return Arg(double(v));
    else return Arg(int64_t(v));
  }
  static void check_shape(const UOp& u, const std::vector<UOp>& s) {
    try {
      (void)u.shape();
    } catch (const Error& e) {
      std::string m = std::string(op_name(u.op())) + ": bad operand shapes";
      for (const UOp& x : s) m += ' ', m += x.has_shape() ? shape_str(x.shape()) : std::string("()");
      throw Error(m + " (" + e.what() + ")");
    }
  }
  Tensor checked() const { (void)uop_.shape(); return *this; }
  Tensor mop(Ops op, std::initializer_list<UOp> args) const {
    std::vector<UOp> s{uop_};
    s.insert(s.end(), args);
    return Tensor(UOp::make(op, dtype(), s), deps_).checked();
  }
  int64_t resolve_dim(int64_t d, const char* what) const {
    int64_t n = ndim(), r = d < 0 ? d + n : d;
    if (r < 0 || r >= std::max<int64_t>(n, 1) || (n == 0))
      throw Error(std::string(what) + ": dim " + std::to_string(d) + " out of range for shape " + shape_str(shape()));
    return r;
  }
  std::vector<int64_t> resolve_axes(const Axes& axis) const {
    std::vector<int64_t> r;
    if (!axis.v) for (int64_t i = 0; i < ndim(); i++) r.push_back(i);
    else for (int64_t a : *axis.v) r.push_back(resolve_dim(a, "reduce"));
    return r;
  }
  int64_t reduced_count(const Axes& axis) const {
    if (ndim() == 0) return 1;
    int64_t n = 1;
    for (int64_t a : resolve_axes(axis)) n *= shape()[size_t(a)];
    return n;
  }
  Tensor reduce(Ops op, const Axes& axis_in, bool keepdim) const {
    Tensor self = cast(dtypes::strong(dtype()));
    std::vector<int64_t> axis = ndim() == 0 ? std::vector<int64_t>{} : self.resolve_axes(axis_in);
    Tensor ret = self.rop(op, axis);
    if (!keepdim) return ret;
    Shape ks = self.shape();
    for (int64_t a : axis) ks[size_t(a)] = 1;
    return ret.reshape(ks);
  }
  Tensor rop(Ops op, std::vector<int64_t> axis) const {
    std::sort(axis.begin(), axis.end());
    axis.erase(std::unique(axis.begin(), axis.end()), axis.end());
    const Shape& s = shape();
    std::vector<int64_t> red;
    for (int64_t a : axis)
      if (s[size_t(a)] != 1) red.push_back(a);
    Shape outs;
    for (size_t i = 0; i < s.size(); i++)
      if (std::find(axis.begin(), axis.end(), int64_t(i)) == axis.end()) outs.push_back(s[i]);
    if (red.empty()) return reshape(outs);
    std::vector<int64_t> perm = red;
    for (int64_t i = 0; i < int64_t(s.size()); i++)
      if (std::find(red.begin(), red.end(), i) == red.end()) perm.push_back(i);
    Tensor p = permute(perm);
    Tensor ret(UOp::make(Ops::REDUCE, dtype(), {p.uop_}, Arg{Arg(op), Arg(int64_t(red.size()))}), deps_);
    return axis != red ? ret.reshape(outs) : ret;
  }
  Tensor inverse() const { return dtypes::is_float(dtype()) ? neg() : bitwise_not(); }
  std::tuple<Tensor, Tensor, Tensor> softmax_parts(int64_t axis) const {
    Tensor m = sub(max(axis, true).detach());
    Tensor e = m.exp();
    return {m, e, e.sum(axis, true)};
  }
  bool has_device() const {
    for (const UOp& x : uop_.toposort())
      if (x.op() == Ops::BUFFER && x.arg().is_param() && !x.arg().param().device.empty()) return true;
    return false;
  }
  bool has_buffer_identity() const { return is_buffer(uop_, false); }
  // _broadcasted: promote to least_upper_dtype, a weak CONST stays weak (re-made at weak(out) and expanded)
  std::pair<Tensor, Tensor> broadcasted(const Tensor& y, bool reverse) const {
    const Tensor &a = reverse ? y : *this, &b = reverse ? *this : y;
    DType out = least_upper_dtype(a.dtype(), b.dtype());
    auto promote = [&](const Tensor& t) -> Tensor {
      UOp base = t.uop_.base();
      if (base.is_invalid()) return t;
      if (dtypes::is_weak(t.dtype()) && base.op() == Ops::CONST) {
        UOp c = UOp::const_(dtypes::weak(out), base.arg());
        const Shape& ts = t.shape();
        if (!ts.empty() && c.shape() != ts) c = UOp::make(Ops::EXPAND, c.dtype(), {c, UOp::shape_arg(ts)});
        return Tensor(c, t.deps_);
      }
      return t.cast(out);
    };
    return {promote(a), promote(b)};
  }
  Tensor binop(Ops op, const Tensor& x, bool reverse) const {
    auto [a, b] = broadcasted(x, reverse);
    return a.alu(op, {b});
  }
  static Tensor arange_impl(Arg start, Arg stop, Arg step, DType dt, int64_t n) {
    (void)stop;
    if (n <= 0) return Tensor(UOp::const_(dt, 0)).reshape({1}).expand({0});
    Tensor steps = Tensor(UOp::const_(dt, step)).reshape({1}).expand({n});
    Tensor cum = steps.cumalu(0);
    Tensor off = start.is<double>() || step.is<double>() ? scalar(start.as_double() - step.as_double()) : scalar(start.as_int() - step.as_int());
    return cum.add(off).cast(dt);
  }
};

// Re-point every live tensor (tinygrad _apply_map_to_tensors): each occurrence of a key in its graph becomes the
// value (replacements are not revisited, so a value may contain its key); tensors that changed also hold `deps`.
inline void apply_map_to_tensors(const std::unordered_map<UOp, UOp>& map, const Tensor::Deps& deps) {
  OpSet keys;
  for (const auto& [k, v] : map) keys = keys | OpSet{k.op()};
  if (keys.empty()) return;
  Tensor::Live& l = Tensor::Live::get();
  std::lock_guard<std::mutex> lk(l.mu);
  for (Tensor* t : l.all) {
    if (!t->uop_ || (t->uop_.slice_ops() & keys).empty()) continue;
    UOp n = t->uop_.substitute(map, true);
    if (n == t->uop_) continue;
    t->uop_ = std::move(n);
    Tensor::merge(t->deps_, deps);
  }
}

// --- operators: Tensor op Tensor and Tensor op scalar (scalars are weak CONSTs) --------------------------------------
namespace detail::tensor_ {
template <class T> Tensor as_tensor(const T& v) {
  if constexpr (std::is_same_v<T, Tensor>) return v;
  else return Tensor::scalar(v);
}
template <class A, class B> concept TensorPair =
    (std::is_same_v<A, Tensor> || std::is_same_v<B, Tensor>) && (std::is_same_v<A, Tensor> || TensorScalar<A>) &&
    (std::is_same_v<B, Tensor> || TensorScalar<B>);
}  // namespace detail::tensor_
#define GRAFT_TENSOR_BINOP(sym, fn)                                                                            \
  template <class A, class B> requires detail::tensor_::TensorPair<A, B> Tensor operator sym(const A& a, const B& b) {  \
    return detail::tensor_::as_tensor(a).fn(detail::tensor_::as_tensor(b));                                                     \
  }
GRAFT_TENSOR_BINOP(+, add)
GRAFT_TENSOR_BINOP(-, sub)
GRAFT_TENSOR_BINOP(*, mul)
GRAFT_TENSOR_BINOP(/, div)
GRAFT_TENSOR_BINOP(<, lt)
GRAFT_TENSOR_BINOP(>, gt)
GRAFT_TENSOR_BINOP(<=, le)
GRAFT_TENSOR_BINOP(>=, ge)
#undef GRAFT_TENSOR_BINOP
inline Tensor operator-(const Tensor& a) { return a.neg(); }

}  // namespace graft
