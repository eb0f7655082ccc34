// C renderer for the CPU backend. ABI of the emitted function:
//     void <name>(void* const* bufs, long long gid_start, long long gid_end)
// bufs[i] is buffer slot i, then bufs[nbufs + j] points to the value of variable slot j (a long long); the function
// runs invocations gid_start <= gid < gid_end (the CPU device splits the range over threads). Semantics follow the
// reference evaluator: integer ops wrap (compile with -fwrapv), integer division by zero gives 0 instead of trapping,
// float -> int casts of NaN/inf give 0, MAX propagates NaN.
#pragma once
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "graft/codegen/linearize.hpp"

namespace graft::codegen {

namespace detail::c {

inline std::string type(DType dt) {
  switch (dt.id) {
    case DTypeId::bool_: return "_Bool";
    case DTypeId::int8: return "signed char";
    case DTypeId::uint8: return "unsigned char";
    case DTypeId::int16: return "short";
    case DTypeId::uint16: return "unsigned short";
    case DTypeId::int32: return "int";
    case DTypeId::uint32: return "unsigned int";
    case DTypeId::int64: return "long long";
    case DTypeId::uint64: return "unsigned long long";
    case DTypeId::float16: return "_Float16";
    case DTypeId::float32: return "float";
    case DTypeId::float64: return "double";
    default: throw Error("C renderer: dtype dtypes." + std::string(dt.py_name()) + " is not supported");
  }
}

inline std::string float_literal(double v, DType dt) {
  std::string suffix = dt == dtypes::float32 ? "f" : "";
  std::string cast = dt == dtypes::float16 ? "(_Float16)" : "";
  if (std::isnan(v)) return cast + "NAN";
  if (std::isinf(v)) return cast + (v > 0 ? "INFINITY" : "(-INFINITY)");
  char b[64];
  std::snprintf(b, sizeof b, dt == dtypes::float64 ? "%.17g" : "%.9g", v);
  std::string s = b;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return cast + s + (dt == dtypes::float16 ? "f" : suffix);
}

inline std::string literal(const Arg& v, DType dt) {
  if (dtypes::is_float(dt)) return float_literal(v.as_double(), dt);
  if (dtypes::is_bool(dt)) return v.as_double() != 0 ? "1" : "0";
  if (dt == dtypes::uint64) return std::to_string(uint64_t(v.as_int())) + "ULL";
  int64_t i = v.as_int();
  if (i == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807LL-1)";
  if (dt == dtypes::int64) return std::to_string(i) + "LL";
  if (dtypes::is_unsigned(dt)) return std::to_string(uint64_t(i)) + "u";
  if (i == std::numeric_limits<int32_t>::min()) return "(-2147483647-1)";
  return std::to_string(i);
}

inline std::string math_fn(const char* f, DType dt, const std::string& a) {
  if (dt == dtypes::float64) return std::string(f) + "(" + a + ")";
  if (dt == dtypes::float32) return std::string(f) + "f(" + a + ")";
  return "(_Float16)" + std::string(f) + "f((float)" + a + ")";
}

// a user-chosen name made safe for a comment or an identifier: anything but [A-Za-z0-9_] becomes '_'
inline std::string identifier_chars(std::string s) {
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') ch = '_';
  return s;
}

}  // namespace detail::c

// render a linearized kernel as C source
inline std::string render_c(const Program& p) {
  using namespace detail::c;
  std::ostringstream o;
  std::vector<std::string> names = register_names(p, literal);
  auto r = [&](int32_t i) { return names[size_t(i)]; };
  o << "#include <math.h>\n#include <string.h>\n";
  o << "static inline long long graft_floordiv(long long a, long long b) { if (b == 0) return 0; if (b == -1) return "
       "-a; long long q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }\n";
  o << "static inline long long graft_floormod(long long a, long long b) { if (b == 0 || b == -1) return 0; long long m "
       "= a % b; return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m; }\n";
  o << "void " << p.name << "(void* const* bufs, long long gid_start, long long gid_end) {\n";
  for (size_t i = 0; i < p.bufs.size(); i++)
    o << "  " << (p.bufs[i].written ? "" : "const ") << type(p.bufs[i].dtype) << "* restrict data" << i << " = ("
      << type(p.bufs[i].dtype) << "*)bufs[" << i << "];\n";
  o << "  for (long long gid = gid_start; gid < gid_end; gid++) {\n";
  std::string ind = "    ";
  for (const Inst& in : p.insts) {
    switch (in.kind) {
      case InstKind::Loop:
        o << ind << "for (" << type(in.dtype) << " " << r(in.out) << " = 0; " << r(in.out) << " < " << in.imm << "; "
          << r(in.out) << "++) {\n";
        ind += "  ";
        continue;
      case InstKind::EndLoop:
        ind.resize(ind.size() - 2);
        o << ind << "}\n";
        continue;
      case InstKind::AccInit:
        o << ind << type(in.dtype) << " " << r(in.out) << " = " << literal(Arg(reduce_identity(in.op, in.dtype)), in.dtype)
          << ";\n";
        continue;
      case InstKind::AccUpdate: {
        std::string a = r(in.out), v = r(in.a);
        if (in.op == Ops::ADD) o << ind << a << " += " << v << ";\n";
        else if (in.op == Ops::MUL) o << ind << a << " *= " << v << ";\n";
        else if (dtypes::is_float(in.dtype))
          o << ind << a << " = (" << a << " != " << a << " || " << v << " != " << v << ") ? " << a << " + " << v << " : ("
            << v << " > " << a << " ? " << v << " : " << a << ");\n";
        else o << ind << a << " = " << v << " > " << a << " ? " << v << " : " << a << ";\n";
        continue;
      }
      case InstKind::Store:
        o << ind << (in.b >= 0 ? "if (" + r(in.b) + ") " : "") << "data" << in.imm << "[" << r(in.a) << "] = " << r(in.c)
          << ";\n";
        continue;
      case InstKind::Value: break;
    }
    std::string a = in.a >= 0 ? r(in.a) : "", b = in.b >= 0 ? r(in.b) : "", c = in.c >= 0 ? r(in.c) : "";
    DType sdt = in.a >= 0 ? p.regs[size_t(in.a)] : in.dtype;  // operand dtype
    std::string e;
    switch (in.op) {
      case Ops::CONST: continue;
      case Ops::SPECIAL: e = "(" + type(in.dtype) + ")gid"; break;
      case Ops::PARAM:  // variable slot imm (its name in a comment)
        e = "(" + type(in.dtype) + ")*(const long long*)bufs[" + std::to_string(p.bufs.size() + size_t(in.imm)) + "] /* " +
            identifier_chars(p.vars.at(size_t(in.imm)).name) + " */";
        break;
      case Ops::LOAD: {
        std::string idx = a;
        if (in.clamp)
          idx = "(" + a + " < 0 ? 0 : " + a + " > " + std::to_string(p.bufs[size_t(in.imm)].numel - 1) + " ? " +
                std::to_string(std::max<int64_t>(p.bufs[size_t(in.imm)].numel - 1, 0)) + " : " + a + ")";
        e = "data" + std::to_string(in.imm) + "[" + idx + "]";
        if (in.b >= 0) e = b + " ? " + e + " : 0";
        break;
      }
      case Ops::ADD: e = a + " + " + b; break;
      case Ops::SUB: e = a + " - " + b; break;
      case Ops::MUL: e = a + " * " + b; break;
      case Ops::FDIV: e = a + " / " + b; break;
      case Ops::MULACC: e = a + " * " + b + " + " + c; break;
      case Ops::CMPLT: e = a + " < " + b; break;
      case Ops::CMPNE: e = a + " != " + b; break;
      case Ops::CMPEQ: e = a + " == " + b; break;
      case Ops::AND: e = a + " & " + b; break;
      case Ops::OR: e = a + " | " + b; break;
      case Ops::XOR: e = a + " ^ " + b; break;
      case Ops::SHL: e = a + " << " + b; break;
      case Ops::SHR: e = a + " >> " + b; break;
      case Ops::WHERE: e = a + " ? " + b + " : " + c; break;
      case Ops::NEG: e = "-" + a; break;
      case Ops::MAX:
        e = dtypes::is_float(in.dtype) ? "(" + a + " != " + a + " || " + b + " != " + b + ") ? " + a + " + " + b + " : (" + a +
                                             " > " + b + " ? " + a + " : " + b + ")"
                                       : a + " > " + b + " ? " + a + " : " + b;
        break;
      case Ops::RECIPROCAL: e = "(" + type(in.dtype) + ")1 / " + a; break;
      case Ops::SQRT: e = math_fn("sqrt", in.dtype, a); break;
      case Ops::EXP2: e = math_fn("exp2", in.dtype, a); break;
      case Ops::LOG2: e = math_fn("log2", in.dtype, a); break;
      case Ops::SIN: e = math_fn("sin", in.dtype, a); break;
      case Ops::TRUNC: e = math_fn("trunc", in.dtype, a); break;
      case Ops::POW: e = math_fn("pow", in.dtype, a + ", " + b); break;
      case Ops::CDIV: case Ops::CMOD: {
        const char* op = in.op == Ops::CDIV ? " / " : " % ";
        if (in.divisor_nonzero || dtypes::is_unsigned(in.dtype)) e = a + op + b;
        else if (in.op == Ops::CDIV) e = "(" + b + " == 0 ? 0 : " + b + " == -1 ? -" + a + " : " + a + " / " + b + ")";
        else e = "((" + b + " == 0 || " + b + " == -1) ? 0 : " + a + " % " + b + ")";
        if (dtypes::is_unsigned(in.dtype) && !in.divisor_nonzero) e = "(" + b + " == 0 ? 0 : " + a + op + b + ")";
        break;
      }
      case Ops::FLOORDIV: case Ops::FLOORMOD:
        if (dtypes::is_unsigned(in.dtype)) e = "(" + b + " == 0 ? 0 : " + a + (in.op == Ops::FLOORDIV ? " / " : " % ") + b + ")";
        else e = std::string(in.op == Ops::FLOORDIV ? "graft_floordiv(" : "graft_floormod(") + a + ", " + b + ")";
        break;
      case Ops::CAST:
        if (dtypes::is_bool(in.dtype)) e = a + " != 0";
        else if (dtypes::is_int(in.dtype) && dtypes::is_float(sdt))
          e = "(" + a + " != " + a + " || " + a + " >= 9.2e18 || " + a + " <= -9.2e18) ? 0 : (" + type(in.dtype) +
              ")(long long)" + a;
        else e = "(" + type(in.dtype) + ")" + a;
        break;
      case Ops::BITCAST:
        if (in.dtype.itemsize() != sdt.itemsize()) throw Error("C renderer: BITCAST between different sizes");
        o << ind << type(in.dtype) << " " << r(in.out) << "; memcpy(&" << r(in.out) << ", &" << a << ", sizeof(" << a << "));\n";
        continue;
      default: throw Error("C renderer: unsupported op " + std::string(op_name(in.op)));
    }
    o << ind << type(in.dtype) << " " << r(in.out) << " = " << e << ";\n";
  }
  o << "  }\n}\n";
  return o.str();
}

}  // namespace graft::codegen
