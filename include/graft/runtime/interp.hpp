// The reference interpreter: runs the linear IR (codegen::Program) on the host, one invocation after another, with
// the reference evaluator's scalar semantics (tensor/reference.hpp). It is the test oracle for the compiled backends
// and a checker of the code generator: an out-of-bounds read or write raises graft::Error (the compiled backends
// clamp such reads instead), as does an integer division by zero.
#pragma once
#include <cstring>

#include "graft/codegen/linearize.hpp"
#include "graft/runtime/device.hpp"
#include "graft/tensor/reference.hpp"

namespace graft::rt {

class InterpBuffer : public Buffer {
 public:
  explicit InterpBuffer(size_t n) : bytes_(n) {}
  size_t nbytes() const override { return bytes_.size(); }
  void copy_in(const void* src, size_t n) override { check(n), std::memcpy(bytes_.data(), src, n); }
  void copy_out(void* dst, size_t n) override { check(n), std::memcpy(dst, bytes_.data(), n); }
  uint8_t* data() { return bytes_.data(); }

 private:
  std::vector<uint8_t> bytes_;
  void check(size_t n) const {
    if (n > bytes_.size()) throw Error("INTERP buffer: copy of " + std::to_string(n) + " bytes into " + std::to_string(bytes_.size()));
  }
};

class InterpProgram : public Program {
 public:
  explicit InterpProgram(std::shared_ptr<const codegen::Program> p) : p_(std::move(p)) {}
  using Program::launch;
  void launch(std::span<Buffer* const> bufs, std::span<const int64_t> vars) override {
    const codegen::Program& p = *p_;
    if (bufs.size() != p.bufs.size()) throw Error("INTERP " + p.name + ": expected " + std::to_string(p.bufs.size()) + " buffers");
    check_var_count(p.name, p.vars.size(), vars.size());
    for (size_t j = 0; j < vars.size(); j++)
      if (vars[j] < p.vars[j].lo || vars[j] > p.vars[j].hi)
        throw Error("INTERP " + p.name + ": variable '" + p.vars[j].name + "' = " + std::to_string(vars[j]) + " is outside [" +
                    std::to_string(p.vars[j].lo) + ", " + std::to_string(p.vars[j].hi) + "]");
    std::vector<uint8_t*> data;
    for (size_t i = 0; i < bufs.size(); i++) {
      auto* b = dynamic_cast<InterpBuffer*>(bufs[i]);
      if (!b) throw Error("INTERP " + p.name + ": buffer " + std::to_string(i) + " is not an interpreter buffer");
      if (b->nbytes() < size_t(p.bufs[i].numel) * p.bufs[i].dtype.itemsize())
        throw Error("INTERP " + p.name + ": buffer " + std::to_string(i) + " is too small (" + std::to_string(b->nbytes()) +
                    " bytes, the kernel reads " + std::to_string(size_t(p.bufs[i].numel) * p.bufs[i].dtype.itemsize()) + ")");
      data.push_back(b->data());
    }
    std::vector<double> r(p.regs.size(), 0.0);
    for (int64_t gid = 0; gid < p.threads; gid++) run(p, data, vars, r, gid);
  }

 private:
  std::shared_ptr<const codegen::Program> p_;

  static void run(const codegen::Program& p, std::vector<uint8_t*>& data, std::span<const int64_t> vars, std::vector<double>& r,
                  int64_t gid) {
    using codegen::InstKind;
    std::vector<size_t> loop_start;  // index of the Loop instruction of each open loop
    const auto& is = p.insts;
    auto check = [&](const codegen::Inst& in, double idx) {
      int64_t n = p.bufs[size_t(in.imm)].numel;
      if (!(idx >= 0 && idx < double(n)))
        throw Error("INTERP " + p.name + ": " + (in.kind == InstKind::Store ? "write" : "read") + " of buffer " +
                    std::to_string(in.imm) + " at " + std::to_string(int64_t(idx)) + ", outside its " + std::to_string(n) +
                    " elements");
      return int64_t(idx);
    };
    for (size_t pc = 0; pc < is.size(); pc++) {
      const codegen::Inst& in = is[pc];
      switch (in.kind) {
        case InstKind::Loop:
          r[size_t(in.out)] = 0;
          if (in.imm <= 0) pc = skip_loop(is, pc);  // zero-trip loop
          else loop_start.push_back(pc);
          continue;
        case InstKind::EndLoop: {
          const codegen::Inst& head = is[loop_start.back()];
          if (++r[size_t(head.out)] < double(head.imm)) pc = loop_start.back();
          else loop_start.pop_back();
          continue;
        }
        case InstKind::AccInit: r[size_t(in.out)] = codegen::reduce_identity(in.op, in.dtype); continue;
        case InstKind::AccUpdate: {
          double acc[2] = {r[size_t(in.out)], r[size_t(in.a)]};
          r[size_t(in.out)] = detail::ref::alu_scalar(in.op, in.dtype, !dtypes::is_float(in.dtype), acc);
          continue;
        }
        case InstKind::Store:
          if (in.b >= 0 && r[size_t(in.b)] == 0) continue;
          store_element(p.bufs[size_t(in.imm)].dtype, data[size_t(in.imm)], check(in, r[size_t(in.a)]),
                        detail::ref::round_to(p.bufs[size_t(in.imm)].dtype, r[size_t(in.c)]));
          continue;
        case InstKind::Value: break;
      }
      double& out = r[size_t(in.out)];
      switch (in.op) {
        case Ops::CONST: out = detail::ref::round_to(in.dtype, in.value.as_double()); break;
        case Ops::SPECIAL: out = double(gid); break;
        case Ops::PARAM: out = double(vars[size_t(in.imm)]); break;
        case Ops::LOAD:
          out = (in.b >= 0 && r[size_t(in.b)] == 0)
                    ? 0.0
                    : load_element(p.bufs[size_t(in.imm)].dtype, data[size_t(in.imm)], check(in, r[size_t(in.a)]));
          break;
        case Ops::CAST: out = detail::ref::cast_value(p.regs[size_t(in.a)], in.dtype, r[size_t(in.a)]); break;
        case Ops::BITCAST: out = bitcast(p.regs[size_t(in.a)], in.dtype, r[size_t(in.a)]); break;
        default: {
          double a[3] = {in.a >= 0 ? r[size_t(in.a)] : 0, in.b >= 0 ? r[size_t(in.b)] : 0, in.c >= 0 ? r[size_t(in.c)] : 0};
          DType sdt = p.regs[size_t(in.op == Ops::WHERE ? in.b : in.a)];
          out = detail::ref::alu_scalar(in.op, in.dtype, !dtypes::is_float(sdt), a);
        }
      }
    }
  }
  static size_t skip_loop(const std::vector<codegen::Inst>& is, size_t pc) {
    int depth = 0;
    for (size_t i = pc; i < is.size(); i++) {
      if (is[i].kind == codegen::InstKind::Loop) depth++;
      if (is[i].kind == codegen::InstKind::EndLoop && --depth == 0) return i;
    }
    throw Error("INTERP: unbalanced loops");
  }
  static double bitcast(DType from, DType to, double v) {
    if (from.itemsize() != to.itemsize()) throw Error("INTERP: BITCAST between different sizes");
    uint8_t b[8] = {};
    store_element(from, b, 0, v);
    return load_element(to, b, 0);
  }
};

// Device "INTERP": host buffers, programs run by the interpreter (needs KernelSource::program).
class InterpDevice : public Device {
 public:
  static std::shared_ptr<InterpDevice> get() {
    static auto d = std::make_shared<InterpDevice>();
    return d;
  }
  std::string name() const override { return "INTERP"; }
  const DeviceFeatures& features() const override { return features_; }
  std::unique_ptr<Buffer> alloc(size_t nbytes) override { return std::make_unique<InterpBuffer>(nbytes); }
  std::unique_ptr<Program> compile(const KernelSource& k) override {
    if (!k.program) throw Error("INTERP: kernel " + k.name + " has no linear IR to run");
    return std::make_unique<InterpProgram>(k.program);
  }
  void synchronize() override {}

 private:
  DeviceFeatures features_;
};

}  // namespace graft::rt
