// GLSL 450 compute-shader renderer for the Vulkan backend.
// One storage buffer per slot (std430, set 0, binding = slot); bool buffers are bytes (uint8_t via 8-bit storage).
// Invocation gid = ((wg.z * GY + wg.y) * GX + wg.x) * L + lid.x with the grid of rt::dispatch_grid(threads, L), so
// more than 65535 workgroups fit. 8/16/64-bit and float16 arithmetic use GL_EXT_shader_explicit_arithmetic_types and
// are rendered only when the device reports the feature; otherwise graft::Error names the dtype (the engine then
// falls back to the CPU backend). Semantics as the C renderer: integer division by zero gives 0, float -> int of
// NaN/inf gives 0. GLSL has no float64 exp2/log2/sin/pow: those raise graft::Error too.
#pragma once
#include <cmath>
#include <cstdio>
#include <sstream>

#include "graft/codegen/linearize.hpp"
#include "graft/runtime/device.hpp"

namespace graft::codegen {

namespace detail::glsl {

inline std::string type(DType dt) {
  switch (dt.id) {
    case DTypeId::bool_: return "bool";
    case DTypeId::int8: return "int8_t";
    case DTypeId::uint8: return "uint8_t";
    case DTypeId::int16: return "int16_t";
    case DTypeId::uint16: return "uint16_t";
    case DTypeId::int32: return "int";
    case DTypeId::uint32: return "uint";
    case DTypeId::int64: return "int64_t";
    case DTypeId::uint64: return "uint64_t";
    case DTypeId::float16: return "float16_t";
    case DTypeId::float32: return "float";
    case DTypeId::float64: return "double";
    default: throw Error("GLSL renderer: dtype dtypes." + std::string(dt.py_name()) + " is not supported");
  }
}
inline std::string storage_type(DType dt) { return dt == dtypes::bool_ ? "uint8_t" : type(dt); }

inline std::string literal(const Arg& v, DType dt) {
  if (dtypes::is_float(dt)) {
    double x = v.as_double();
    std::string s;
    if (std::isnan(x)) s = "uintBitsToFloat(0x7fc00000u)";
    else if (std::isinf(x)) s = x > 0 ? "uintBitsToFloat(0x7f800000u)" : "uintBitsToFloat(0xff800000u)";
    else {
      char b[64];
      std::snprintf(b, sizeof b, dt == dtypes::float64 ? "%.17g" : "%.9g", x);
      s = b;
      if (s.find_first_of(".eE") == std::string::npos) s += ".0";
      if (dt == dtypes::float64) s += "lf";
    }
    if (dt == dtypes::float32 || (dt == dtypes::float64 && s.back() == 'f')) return s;
    return type(dt) + "(" + s + ")";
  }
  if (dtypes::is_bool(dt)) return v.as_double() != 0 ? "true" : "false";
  int64_t i = v.as_int();
  switch (dt.id) {
    case DTypeId::int32: return i == std::numeric_limits<int32_t>::min() ? "(-2147483647-1)" : std::to_string(i);
    case DTypeId::uint32: return std::to_string(uint32_t(i)) + "u";
    case DTypeId::int64: return i == std::numeric_limits<int64_t>::min() ? "(-9223372036854775807l-1l)" : std::to_string(i) + "l";
    case DTypeId::uint64: return std::to_string(uint64_t(i)) + "ul";
    default: return type(dt) + "(" + std::to_string(i) + ")";
  }
}

// the device features a dtype needs
inline void require(DType dt, const rt::DeviceFeatures& f, const std::string& kernel) {
  auto miss = [&](const char* what) {
    throw Error("GLSL renderer: kernel " + kernel + " uses dtypes." + std::string(dt.py_name()) + " but the Vulkan device has no " + what);
  };
  switch (dt.id) {
    case DTypeId::int64: case DTypeId::uint64: if (!f.int64) miss("shaderInt64"); break;
    case DTypeId::float64: if (!f.float64) miss("shaderFloat64"); break;
    case DTypeId::float16: if (!f.float16) miss("shaderFloat16 / 16-bit storage"); break;
    case DTypeId::int8: case DTypeId::uint8: case DTypeId::bool_: if (!f.int8_storage) miss("8-bit storage"); break;
    case DTypeId::int16: case DTypeId::uint16: if (!f.int16) miss("shaderInt16 / 16-bit storage"); break;
    default: break;
  }
}

}  // namespace detail::glsl

inline constexpr uint32_t kGlslLocalSize = 128;

// Invocations per element count: big kernels give each invocation several elements, strided by the number of
// invocations so neighbours still touch neighbouring memory (lavapipe: 1.7x faster at 16M elements; the usual
// grid-stride loop on GPUs).
inline uint32_t glsl_elements_per_invocation(int64_t threads) { return threads >= (1 << 20) ? 16 : threads >= (1 << 16) ? 4 : 1; }
inline int64_t glsl_invocations(int64_t threads, uint32_t per) { return (threads + per - 1) / per; }

// render a linearized kernel as a GLSL 450 compute shader; `local` is the workgroup size, `per` the elements each
// invocation handles (dispatch glsl_invocations(threads, per) invocations)
inline std::string render_glsl(const Program& p, const rt::DeviceFeatures& features = {}, uint32_t local = kGlslLocalSize,
                               uint32_t per = 1) {
  using namespace detail::glsl;
  if (p.threads > std::numeric_limits<int32_t>::max())
    throw Error("GLSL renderer: kernel " + p.name + " has " + std::to_string(p.threads) + " invocations (limit 2^31-1)");
  // dtypes -> extensions
  bool small = false, i8 = false, i16 = false, i64 = false, f16 = false;
  auto note = [&](DType dt, bool storage) {
    require(dt, features, p.name);
    if (dt == dtypes::int8 || dt == dtypes::uint8 || (storage && dt == dtypes::bool_)) i8 = small = true;
    if (dt == dtypes::int16 || dt == dtypes::uint16) i16 = small = true;
    if (dt == dtypes::float16) f16 = small = true;
    if (dt == dtypes::int64 || dt == dtypes::uint64) i64 = small = true;
  };
  for (const BufferInfo& b : p.bufs) note(b.dtype, true);
  for (DType d : p.regs) note(d, false);
  int64_t invocations = glsl_invocations(std::max<int64_t>(p.threads, 1), per);
  auto grid = rt::dispatch_grid(invocations, local);

  std::vector<std::string> names = register_names(p, literal);
  auto r = [&](int32_t i) { return names[size_t(i)]; };

  std::ostringstream o;
  o << "#version 450\n";
  if (small) o << "#extension GL_EXT_shader_explicit_arithmetic_types : require\n";
  if (i8) o << "#extension GL_EXT_shader_8bit_storage : require\n";
  if (i16 || f16) o << "#extension GL_EXT_shader_16bit_storage : require\n";
  o << "// " << p.name << ": " << p.threads << " elements, " << per << " per invocation\n";
  o << "layout(local_size_x = " << local << ") in;\n";
  for (size_t i = 0; i < p.bufs.size(); i++)
    o << "layout(std430, set = 0, binding = " << i << ") restrict " << (p.bufs[i].written ? "" : "readonly ") << "buffer B" << i
      << " { " << storage_type(p.bufs[i].dtype) << " data" << i << "[]; };\n";
  // floor division helpers for the signed index types in use
  for (DType dt : {dtypes::int32, dtypes::int64}) {
    if (dt == dtypes::int64 && !i64) continue;
    std::string t = type(dt), z = literal(Arg(int64_t(0)), dt), one = literal(Arg(int64_t(1)), dt), m1 = literal(Arg(int64_t(-1)), dt);
    o << t << " graft_floordiv(" << t << " a, " << t << " b) { if (b == " << z << ") return " << z << "; " << t
      << " q = a / b; return (a - q * b != " << z << " && ((a < " << z << ") != (b < " << z << "))) ? q - " << one << " : q; }\n";
    o << t << " graft_floormod(" << t << " a, " << t << " b) { if (b == " << z << ") return " << z << "; " << t
      << " m = a - (a / b) * b; return (m != " << z << " && ((m < " << z << ") != (b < " << z << "))) ? m + b : m; }\n";
    (void)m1;
  }
  o << "void main() {\n";
  std::string ind = "  ";
  std::string first = per == 1 ? "gidx" : "inv";
  o << "  uint " << first << " = ((gl_WorkGroupID.z * " << grid[1] << "u + gl_WorkGroupID.y) * " << grid[0]
    << "u + gl_WorkGroupID.x) * " << local << "u + gl_LocalInvocationID.x;\n";
  if (per > 1) {
    o << "  for (uint k = 0u; k < " << per << "u; k++) {\n";
    o << "    uint gidx = inv + k * " << invocations << "u;\n";
    ind = "    ";
  }
  o << ind << "if (gidx >= " << std::max<int64_t>(p.threads, 0) << "u) " << (per > 1 ? "break" : "return") << ";\n";
  for (const Inst& in : p.insts) {
    switch (in.kind) {
      case InstKind::Loop:
        o << ind << "for (" << type(in.dtype) << " " << r(in.out) << " = " << literal(Arg(int64_t(0)), in.dtype) << "; "
          << r(in.out) << " < " << literal(Arg(in.imm), in.dtype) << "; " << r(in.out) << "++) {\n";
        ind += "  ";
        continue;
      case InstKind::EndLoop:
        ind.resize(ind.size() - 2);
        o << ind << "}\n";
        continue;
      case InstKind::AccInit:
        if (dtypes::is_bool(in.dtype)) o << ind << "bool " << r(in.out) << " = " << (in.op == Ops::MUL ? "true" : "false") << ";\n";
        else o << ind << type(in.dtype) << " " << r(in.out) << " = " << literal(Arg(reduce_identity(in.op, in.dtype)), in.dtype) << ";\n";
        continue;
      case InstKind::AccUpdate: {
        std::string a = r(in.out), v = r(in.a);
        if (dtypes::is_bool(in.dtype)) o << ind << a << " = " << a << (in.op == Ops::MUL ? " && " : " || ") << v << ";\n";
        else if (in.op == Ops::ADD) o << ind << a << " += " << v << ";\n";
        else if (in.op == Ops::MUL) o << ind << a << " *= " << v << ";\n";
        else if (dtypes::is_float(in.dtype))
          o << ind << a << " = (isnan(" << a << ") || isnan(" << v << ")) ? " << a << " + " << v << " : max(" << a << ", " << v << ");\n";
        else o << ind << a << " = max(" << a << ", " << v << ");\n";
        continue;
      }
      case InstKind::Store: {
        DType bt = p.bufs[size_t(in.imm)].dtype;
        std::string v = bt == dtypes::bool_ ? "uint8_t(" + r(in.c) + " ? 1 : 0)" : r(in.c);
        o << ind << (in.b >= 0 ? "if (" + r(in.b) + ") " : "") << "data" << in.imm << "[" << r(in.a) << "] = " << v << ";\n";
        continue;
      }
      case InstKind::Value: break;
    }
    if (in.op == Ops::CONST) continue;
    std::string a = in.a >= 0 ? r(in.a) : "", b = in.b >= 0 ? r(in.b) : "", c = in.c >= 0 ? r(in.c) : "";
    DType dt = in.dtype, sdt = in.a >= 0 ? p.regs[size_t(in.a)] : dt;
    bool boolean = dtypes::is_bool(dt) && dtypes::is_bool(sdt);
    std::string T = type(dt), e;
    auto zero = [&](DType d) { return literal(Arg(int64_t(0)), d); };
    auto fmath = [&](const char* f) {
      if (dt == dtypes::float64 && std::string(f) != "sqrt" && std::string(f) != "trunc")
        throw Error("GLSL renderer: kernel " + p.name + " needs " + f + " on float64, which GLSL does not have");
      if (dt == dtypes::float16) return "float16_t(" + std::string(f) + "(float(" + a + ")))";
      return std::string(f) + "(" + a + ")";
    };
    switch (in.op) {
      case Ops::SPECIAL: e = T + "(gidx)"; break;
      case Ops::LOAD: {
        int64_t n = p.bufs[size_t(in.imm)].numel;
        DType it = p.regs[size_t(in.a)];
        std::string idx = in.clamp ? "clamp(" + a + ", " + zero(it) + ", " + literal(Arg(std::max<int64_t>(n - 1, 0)), it) + ")" : a;
        e = "data" + std::to_string(in.imm) + "[" + idx + "]";
        if (dt == dtypes::bool_) e = "(" + e + " != uint8_t(0))";
        if (in.b >= 0) e = b + " ? " + e + " : " + (dt == dtypes::bool_ ? "false" : zero(dt));
        break;
      }
      case Ops::ADD: e = boolean ? a + " || " + b : a + " + " + b; break;
      case Ops::MUL: e = boolean ? a + " && " + b : a + " * " + b; break;
      case Ops::SUB: e = a + " - " + b; break;
      case Ops::FDIV: e = a + " / " + b; break;
      case Ops::MULACC: e = a + " * " + b + " + " + c; break;
      case Ops::CMPLT: e = dtypes::is_bool(sdt) ? "!" + a + " && " + b : a + " < " + b; break;
      case Ops::CMPNE: e = a + " != " + b; break;
      case Ops::CMPEQ: e = a + " == " + b; break;
      case Ops::AND: e = boolean ? a + " && " + b : a + " & " + b; break;
      case Ops::OR: e = boolean ? a + " || " + b : a + " | " + b; break;
      case Ops::XOR: e = boolean ? a + " != " + b : a + " ^ " + b; break;
      case Ops::SHL: e = a + " << " + b; break;
      case Ops::SHR: e = a + " >> " + b; break;
      case Ops::WHERE: e = a + " ? " + b + " : " + c; break;
      case Ops::NEG: e = boolean ? "!" + a : "-" + a; break;
      case Ops::MAX:
        if (boolean) e = a + " || " + b;
        else if (dtypes::is_float(dt)) e = "(isnan(" + a + ") || isnan(" + b + ")) ? " + a + " + " + b + " : max(" + a + ", " + b + ")";
        else e = "max(" + a + ", " + b + ")";
        break;
      case Ops::RECIPROCAL: e = literal(Arg(1.0), dt) + " / " + a; break;
      case Ops::SQRT: e = fmath("sqrt"); break;
      case Ops::EXP2: e = fmath("exp2"); break;
      case Ops::LOG2: e = fmath("log2"); break;
      case Ops::SIN: e = fmath("sin"); break;
      case Ops::TRUNC: e = fmath("trunc"); break;
      case Ops::POW:
        if (dt != dtypes::float32) throw Error("GLSL renderer: POW on dtypes." + std::string(dt.py_name()) + " is not supported");
        e = "pow(" + a + ", " + b + ")";
        break;
      case Ops::CDIV: case Ops::CMOD: {
        std::string q = in.op == Ops::CDIV ? a + " / " + b : a + " - (" + a + " / " + b + ") * " + b;
        e = in.divisor_nonzero ? q : b + " == " + zero(dt) + " ? " + zero(dt) + " : " + q;
        break;
      }
      case Ops::FLOORDIV: case Ops::FLOORMOD:
        if (dtypes::is_unsigned(dt)) {
          std::string q = in.op == Ops::FLOORDIV ? a + " / " + b : a + " % " + b;
          e = b + " == " + zero(dt) + " ? " + zero(dt) + " : " + q;
        } else if (dt == dtypes::int32 || dt == dtypes::int64) {
          e = std::string(in.op == Ops::FLOORDIV ? "graft_floordiv(" : "graft_floormod(") + a + ", " + b + ")";
        } else {
          e = T + "(" + (in.op == Ops::FLOORDIV ? "graft_floordiv(int(" : "graft_floormod(int(") + a + "), int(" + b + ")))";
        }
        break;
      case Ops::CAST:
        if (dtypes::is_bool(dt)) e = dtypes::is_bool(sdt) ? a : a + " != " + zero(sdt);
        else if (dtypes::is_bool(sdt)) e = a + " ? " + literal(Arg(int64_t(1)), dt) + " : " + zero(dt);
        else if (dtypes::is_int(dt) && dtypes::is_float(sdt)) {
          std::string wide = dt.itemsize() == 8 ? (dtypes::is_unsigned(dt) ? "uint64_t(int64_t(" : "int64_t((") : (dtypes::is_unsigned(dt) ? T + "(int(" : T + "((");
          e = "(isnan(" + a + ") || isinf(" + a + ")) ? " + zero(dt) + " : " + wide + a + "))";
        } else e = T + "(" + a + ")";
        break;
      case Ops::BITCAST: {
        auto key = std::string(sdt.py_name()) + ">" + std::string(dt.py_name());
        static const std::pair<const char*, const char*> fns[] = {
            {"float>int", "floatBitsToInt"}, {"float>uint", "floatBitsToUint"}, {"int>float", "intBitsToFloat"},
            {"uint>float", "uintBitsToFloat"}, {"double>long", "doubleBitsToInt64"}, {"double>ulong", "doubleBitsToUint64"},
            {"long>double", "int64BitsToDouble"}, {"ulong>double", "uint64BitsToDouble"}, {"int>uint", "uint"}, {"uint>int", "int"}};
        for (auto& [k, f] : fns)
          if (key == k) e = std::string(f) + "(" + a + ")";
        if (e.empty()) throw Error("GLSL renderer: BITCAST " + key + " is not supported");
        break;
      }
      default: throw Error("GLSL renderer: unsupported op " + std::string(op_name(in.op)));
    }
    o << ind << T << " " << r(in.out) << " = " << e << ";\n";
  }
  if (per > 1) o << "  }\n";
  o << "}\n";
  return o.str();
}

}  // namespace graft::codegen
