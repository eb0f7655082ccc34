// The linear IR every backend consumes (C renderer, GLSL renderer, reference interpreter): a flat list of
// instructions over numbered registers, with structured loops.
//
// Placement: each value goes into the innermost loop whose ranges it depends on (loop-invariant code is hoisted to
// where its ranges are bound). A REDUCE opens a loop nest over its ranges with a register accumulator:
//     acc = identity; for (r...) { ...body...; acc = acc <op> v; }      -> the REDUCE's value is acc
// Nodes computed while a loop is open but not depending on its ranges go to the enclosing loop's list, which is
// emitted before the inner loop, so a definition always precedes its uses.
// Loads whose index is not provably inside the buffer are clamped (never an out-of-bounds access on any backend);
// gated loads (INDEX(buf, WHERE(g, i, Invalid))) read only when the gate holds, else 0.
#pragma once
#include <bitset>

#include "graft/codegen/lower.hpp"

namespace graft::codegen {

enum class InstKind : uint8_t {
  Value,      // out = op(a, b, c) / CONST / SPECIAL(gid) / LOAD(slot=imm, index=a, gate=b) / PARAM(variable imm)
  Loop,       // for (out = 0; out < imm; out++) {
  EndLoop,    // }
  AccInit,    // out = identity of op
  AccUpdate,  // out = out <op> a
  Store,      // if (b) buf[imm][a] = c        (b = -1: ungated)
};

struct Inst {
  InstKind kind = InstKind::Value;
  Ops op = Ops::NOOP;
  DType dtype = dtypes::void_;
  int32_t out = -1, a = -1, b = -1, c = -1;
  int64_t imm = 0;   // Loop: trip count; LOAD/Store: buffer slot; PARAM: variable slot
  bool clamp = false;  // LOAD: clamp the index into the buffer
  bool divisor_nonzero = false;  // CDIV/CMOD/FLOORDIV/FLOORMOD: the divisor is provably > 0 (no guard needed)
  Arg value = {};      // CONST value
};

struct Program {
  std::string name;
  std::vector<BufferInfo> bufs;
  std::vector<VarInfo> vars;  // values passed with each launch
  int64_t threads = 1;
  DType index_dtype = dtypes::int32;
  std::vector<DType> regs;  // register -> dtype
  std::vector<Inst> insts;
};

namespace detail {

inline constexpr size_t kMaxRanges = 256;
using RangeSet = std::bitset<kMaxRanges>;

class Linearizer {
 public:
  explicit Linearizer(const LoweredKernel& k) {
    p_.name = k.name, p_.bufs = k.bufs, p_.vars = k.vars, p_.threads = k.threads, p_.index_dtype = k.index_dtype;
    compute_deps(k.sink);
    frames_.emplace_back();
    for (const UOp& s : k.sink.src()) statement(s);
    p_.insts = std::move(frames_[0].insts);
  }
  Program take() { return std::move(p_); }

 private:
  struct Frame {
    std::vector<Inst> insts;
    UOpMap<int32_t> memo;
  };
  Program p_;
  std::vector<Frame> frames_;
  UOpMap<RangeSet> deps_;
  UOpMap<size_t> range_id_;
  std::vector<int> frame_of_range_ = std::vector<int>(kMaxRanges, -1);

  void compute_deps(const UOp& sink) {
    for (const UOp& u : sink.toposort()) {
      RangeSet d;
      for (const UOp& s : u.src()) d |= deps_.at(s);
      if (u.op() == Ops::RANGE) {
        if (range_id_.size() >= kMaxRanges) throw Error("linearize: more than 256 ranges in one kernel");
        size_t id = range_id_.size();
        range_id_.try_emplace(u, id);
        d.set(id);
      }
      if (u.op() == Ops::REDUCE || u.op() == Ops::END)
        for (const UOp& r : u.src().subspan(1)) d.reset(range_id_.at(r));
      deps_.try_emplace(u, d);
    }
  }
  int frame_of(const UOp& u) const {
    const RangeSet& d = deps_.at(u);
    int f = 0;
    for (size_t i = 0; i < kMaxRanges; i++)
      if (d.test(i)) {
        if (frame_of_range_[i] < 0) throw Error("linearize: " + u.str() + " uses a range outside its loop");
        f = std::max(f, frame_of_range_[i]);
      }
    return f;
  }
  int32_t new_reg(DType dt) {
    p_.regs.push_back(dt);
    return int32_t(p_.regs.size() - 1);
  }
  int32_t push(int frame, Inst i) {
    frames_[size_t(frame)].insts.push_back(std::move(i));
    return frames_[size_t(frame)].insts.back().out;
  }

  // open a loop nest over `rngs`; body() runs with the new frame on top; the loops land in the parent frame
  template <class F> void loop_nest(int parent, std::span<const UOp> rngs, F&& body) {
    frames_.emplace_back();
    int f = int(frames_.size() - 1);
    std::vector<Inst> head;
    for (const UOp& r : rngs) {
      if (!r.src(0).is_const()) throw Error("linearize: symbolic range sizes are not supported yet");
      size_t id = range_id_.at(r);
      if (frame_of_range_[id] >= 0) throw Error("linearize: range " + r.str() + " is opened twice");
      frame_of_range_[id] = f;
      int32_t reg = new_reg(p_.index_dtype);
      frames_[size_t(f)].memo.try_emplace(r, reg);
      head.push_back(Inst{.kind = InstKind::Loop, .dtype = p_.index_dtype, .out = reg, .imm = r.src(0).arg().as_int()});
    }
    body(f);
    std::vector<Inst> inner = std::move(frames_[size_t(f)].insts);
    frames_.pop_back();
    for (const UOp& r : rngs) frame_of_range_[range_id_.at(r)] = -1;
    auto& out = frames_[size_t(parent)].insts;
    out.insert(out.end(), head.begin(), head.end());
    out.insert(out.end(), std::make_move_iterator(inner.begin()), std::make_move_iterator(inner.end()));
    for (size_t i = 0; i < rngs.size(); i++) out.push_back(Inst{.kind = InstKind::EndLoop});
  }

  void statement(const UOp& s) {
    switch (s.op()) {
      case Ops::END:
        loop_nest(frame_of(s), s.src().subspan(1), [&](int) { statement(s.src(0)); });
        return;
      case Ops::STORE: {
        const UOp& idx = s.src(0);
        if (idx.op() != Ops::INDEX || idx.src(0).op() != Ops::PARAM)
          throw Error("linearize: STORE target must be INDEX(PARAM, i), got " + std::string(op_name(idx.op())));
        auto [i, gate] = split_gate(idx.src(1));
        if (!i) return;  // always-invalid store: nothing to write
        int32_t vi = value(i), vv = value(s.src(1)), vg = gate ? value(gate) : -1;
        push(int(frames_.size()) - 1, Inst{.kind = InstKind::Store, .op = Ops::STORE, .dtype = s.src(1).dtype(), .a = vi, .b = vg, .c = vv,
                     .imm = idx.src(0).arg().param().slot});
        return;
      }
      case Ops::GROUP: case Ops::SINK:
        for (const UOp& x : s.src()) statement(x);
        return;
      case Ops::NOOP: return;
      default: throw Error("linearize: unexpected kernel statement " + std::string(op_name(s.op())));
    }
  }

  // INDEX's index: WHERE(gate, i, Invalid) -> (i, gate); Invalid -> (empty, empty)
  static std::pair<UOp, UOp> split_gate(const UOp& i) {
    if (i.is_invalid()) return {UOp(), UOp()};
    if (i.op() == Ops::WHERE && i.src(2).is_invalid()) return {i.src(1), i.src(0)};
    return {i, UOp()};
  }

  // the register holding u's value (emitting what is missing, children first, without recursion over ALU depth)
  int32_t value(const UOp& root) {
    if (auto r = lookup(root)) return *r;
    std::vector<UOp> order;
    UOpSet seen;
    std::vector<std::pair<UOp, bool>> stack{{root, false}};
    while (!stack.empty()) {
      auto [u, expanded] = stack.back();
      stack.pop_back();
      if (expanded) { order.push_back(u); continue; }
      if (seen.contains(u) || lookup(u)) continue;
      seen.insert(u);
      stack.push_back({u, true});
      for (const UOp& s : operands(u))
        if (!seen.contains(s)) stack.push_back({s, false});
    }
    for (const UOp& u : order)
      if (!lookup(u)) emit(u);
    return *lookup(root);
  }
  // the nodes whose registers u's instruction reads (REDUCE bodies are emitted inside their own loops)
  static std::vector<UOp> operands(const UOp& u) {
    switch (u.op()) {
      case Ops::REDUCE: case Ops::RANGE: case Ops::CONST: case Ops::SPECIAL: case Ops::PARAM: return {};
      case Ops::INDEX: {
        auto [i, g] = split_gate(u.src(1));
        std::vector<UOp> r;
        if (i) r.push_back(i);
        if (g) r.push_back(g);
        return r;
      }
      case Ops::AFTER: return {u.src(0)};
      default: return {u.src().begin(), u.src().end()};
    }
  }
  std::optional<int32_t> lookup(const UOp& u) {
    auto& m = frames_[size_t(frame_of(u))].memo;
    if (const int32_t* r = m.find(u)) return *r;
    return std::nullopt;
  }

  void emit(const UOp& u) {
    int f = frame_of(u);
    int32_t out = -1;
    switch (u.op()) {
      case Ops::CONST:
        if (u.is_invalid()) throw Error("linearize: an Invalid value reached codegen outside an index");
        out = push(f, Inst{.op = Ops::CONST, .dtype = u.dtype(), .out = new_reg(u.dtype()), .value = u.arg()});
        break;
      case Ops::SPECIAL: out = push(f, Inst{.op = Ops::SPECIAL, .dtype = u.dtype(), .out = new_reg(u.dtype())}); break;
      case Ops::PARAM:  // a buffer PARAM is only read through INDEX; one used as a value is a variable
        if (u.arg().param().addrspace != AddrSpace::ALU)
          throw Error("linearize: buffer PARAM " + std::to_string(u.arg().param().slot) + " used as a value");
        out = push(f, Inst{.op = Ops::PARAM, .dtype = u.dtype(), .out = new_reg(u.dtype()), .imm = u.arg().param().slot});
        break;
      case Ops::RANGE: throw Error("linearize: range " + u.str() + " is used outside its loop");
      case Ops::INDEX: {
        if (u.src(0).op() != Ops::PARAM) throw Error("linearize: INDEX into " + std::string(op_name(u.src(0).op())));
        auto [i, g] = split_gate(u.src(1));
        if (!i) {  // provably invalid read: 0
          out = push(f, Inst{.op = Ops::CONST, .dtype = u.dtype(), .out = new_reg(u.dtype()), .value = Arg(int64_t(0))});
          break;
        }
        int64_t slot = u.src(0).arg().param().slot, n = p_.bufs.at(size_t(slot)).numel;
        bool inside = i.vmin().as_int() >= 0 && i.vmax().as_int() < n;
        out = push(f, Inst{.op = Ops::LOAD, .dtype = u.dtype(), .out = new_reg(u.dtype()), .a = reg(i), .b = g ? reg(g) : -1,
                           .imm = slot, .clamp = !inside});
        break;
      }
      case Ops::AFTER: out = reg(u.src(0)); break;
      case Ops::REDUCE: {
        Ops rop = u.arg().tuple().at(0).get<Ops>();
        int32_t acc = push(f, Inst{.kind = InstKind::AccInit, .op = rop, .dtype = u.dtype(), .out = new_reg(u.dtype())});
        loop_nest(f, u.src().subspan(1), [&](int inner) {
          int32_t v = value(u.src(0));
          push(inner, Inst{.kind = InstKind::AccUpdate, .op = rop, .dtype = u.dtype(), .out = acc, .a = v});
        });
        out = acc;
        break;
      }
      default: {
        if (!GroupOp::ALU.has(u.op()) && u.op() != Ops::CAST && u.op() != Ops::BITCAST)
          throw Error("linearize: unsupported op " + std::string(op_name(u.op())) + " in a kernel");
        if (u.nsrc() > 3) throw Error("linearize: " + std::string(op_name(u.op())) + " with more than 3 sources");
        Inst in{.op = u.op(), .dtype = u.dtype(), .out = new_reg(u.dtype())};
        if (OpSet{Ops::CDIV, Ops::CMOD, Ops::FLOORDIV, Ops::FLOORMOD}.has(u.op())) {
          // a positive divisor needs no zero guard; with a non-negative dividend floor and C division agree
          in.divisor_nonzero = u.src(1).vmin().as_double() > 0;
          if (in.divisor_nonzero && u.src(0).vmin().as_double() >= 0)
            in.op = u.op() == Ops::FLOORDIV ? Ops::CDIV : u.op() == Ops::FLOORMOD ? Ops::CMOD : u.op();
        }
        int32_t* slots[3] = {&in.a, &in.b, &in.c};
        for (size_t k = 0; k < u.nsrc(); k++) *slots[k] = reg(u.src(k));
        out = push(f, in);
      }
    }
    frames_[size_t(f)].memo.try_emplace(u, out);
  }
  int32_t reg(const UOp& u) {
    auto r = lookup(u);
    if (!r) throw Error("linearize: internal error, " + std::string(op_name(u.op())) + " used before it is defined");
    return *r;
  }
};
}  // namespace detail

inline Program linearize(const LoweredKernel& k) { return detail::Linearizer(k).take(); }

// bytes of each variable slot (4 or 8): what rt::KernelSource::var_bytes and the push-constant layout take
inline std::vector<uint8_t> var_widths(const Program& p) {
  std::vector<uint8_t> w;
  for (const VarInfo& v : p.vars) w.push_back(uint8_t(v.dtype.itemsize()));
  return w;
}

// Register names for a renderer: v<N>, except constants, which are written inline where they are used (negative
// ones parenthesised so `-` + `-1` never reads as `--1`). `literal(value, dtype)` is the renderer's literal syntax.
template <class Literal> std::vector<std::string> register_names(const Program& p, Literal&& literal) {
  std::vector<std::string> names(p.regs.size());
  for (size_t i = 0; i < names.size(); i++) names[i].append("v").append(std::to_string(i));  // no "v" + s (-Wrestrict)
  for (const Inst& in : p.insts)
    if (in.kind == InstKind::Value && in.op == Ops::CONST) {
      std::string l = literal(in.value, in.dtype);
      if (l[0] == '-') l.insert(l.begin(), '('), l.push_back(')');  // not "(" + l + ")": GCC 12 -Wrestrict false positive
      names[size_t(in.out)] = std::move(l);
    }
  return names;
}

// the identity of a reduce op as a value of dtype dt
inline double reduce_identity(Ops op, DType dt) {
  switch (op) {
    case Ops::ADD: return 0;
    case Ops::MUL: return 1;
    case Ops::MAX: return dtypes::is_float(dt) ? -INFINITY : dtypes::min_value(dt);
    default: throw Error("codegen: unsupported reduce op " + std::string(op_name(op)));
  }
}

}  // namespace graft::codegen
