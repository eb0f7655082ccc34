// GLSL 450 compute-shader renderer for the Vulkan backend.
// One storage buffer per slot (std430, set 0, binding = slot); bool buffers are bytes (uint8_t via 8-bit storage).
// Invocation gid = ((wg.z * GY + wg.y) * GX + wg.x) * L + lid.x with the grid of rt::dispatch_grid(threads, L), so
// more than 65535 workgroups fit. 8/16/64-bit and float16 arithmetic use GL_EXT_shader_explicit_arithmetic_types and
// are rendered only when the device reports the feature; otherwise graft::Error names the dtype (the engine then
// falls back to the CPU backend). Semantics as the C renderer: integer division by zero gives 0, float -> int of
// NaN/inf gives 0. GLSL has no float64 exp2/log2/sin/pow: those raise graft::Error too.
// Memory access is vectorized where the index math allows (4 thread lanes per invocation, loops stepped by 4, vec4
// reads and writes; detail::glsl::plan_vec4): glsl_launch() picks the dispatch, render_glsl() follows it. With
// GlslLaunch::max_texels > 0 (the Vulkan device allows uniform texel buffers), read-only 4-byte buffers are bound as
// `uniform samplerBuffer` (RGBA32 texels) and read with texelFetch: lavapipe gathers those instead of looping over
// the SIMD lanes as it does for every storage-buffer access (bench/README.md section 4).
#pragma once
#include <algorithm>
#include <cmath>
#include <optional>
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
inline constexpr uint32_t kGlslVec4LocalSize = 256;  // with 4 lanes per invocation (lavapipe: 256 >= 128, 512, 1024)

// Invocations per element count: big kernels give each invocation several elements, strided by the number of
// invocations so neighbours still touch neighbouring memory (lavapipe: 1.7x faster at 16M elements; the usual
// grid-stride loop on GPUs).
inline uint32_t glsl_elements_per_invocation(int64_t threads) { return threads >= (1 << 20) ? 16 : threads >= (1 << 16) ? 4 : 1; }
inline int64_t glsl_invocations(int64_t threads, uint32_t per) { return (threads + per - 1) / per; }

// With 4 lanes (vec4 elementwise kernels): `per` groups of 4 lanes per invocation, grid-stride. lavapipe pays a fixed
// cost per workgroup (an empty 16384-group dispatch takes 8-10 ms), so big loop-free kernels take 4 groups each.
inline uint32_t glsl_lane_groups_per_invocation(int64_t threads, bool loops) {
  return !loops && threads / 4 >= (1 << 18) ? 4 : 1;
}

// How a kernel is dispatched: `vec` = 4 gives each invocation `per` groups of 4 consecutive elements 4i..4i+3 as
// lanes (see detail::glsl::Vectorize), the groups strided by `invocations` = ceil(threads / 4 / per); otherwise
// `per` elements per invocation, grid-stride.
// `max_texels` > 0 (the device's maxTexelBufferElements, rt::VulkanDevice::max_texel_elements()): read-only
// buffers of 4-byte dtypes with at most 4 * max_texels elements are read through uniform texel buffers
// (samplerBuffer over RGBA32 texels, texelFetch) instead of storage buffers: lavapipe compiles a texel fetch to a
// gather, a storage-buffer load to a loop over the SIMD lanes (2-4x slower; bench/README.md section 4).
struct GlslLaunch {
  uint32_t local = kGlslLocalSize;
  uint32_t per = 1;
  uint32_t vec = 1;
  int64_t invocations = 1;
  uint64_t max_texels = 0;
};

namespace detail::glsl {

// vec4 access plan. lavapipe (Mesa 22.x) turns every storage-buffer load and store into a loop over the SIMD lanes
// with a branch and a bounds check per lane and component, so that per-access cost, not memory bandwidth, bounds
// its kernels; a vec4 access pays the per-lane part once for 4 components (bench/README.md section 4).
//  * thread lanes: each invocation computes the 4 elements 4i..4i+3 ("lanes", tinygrad's UPCAST of the thread axis),
//    with the instruction stream rendered once: a value the lanes share (class Uniform: it does not depend on gidx,
//    or only through gidx / c with c % 4 == 0) is computed once, the others once per lane (names v<N>_<lane>).
//    Loads and stores at a lane-contiguous index (class Lane: lane k reads base + k, base % 4 == 0; e.g. gidx, gidx + 4,
//    r * 512 + gidx % 512) are one vec4 access for the 4 lanes. Used when the thread count is a multiple of 4 and
//    every store is at a lane-contiguous index.
//  * loop vec4: a loop with a trip count divisible by 4 is stepped by 4 (body rendered 4 times); its loads at index
//    X + r (r the loop variable, X loop-invariant and provably a multiple of 4, ungated, unclamped) become one vec4
//    load per step (row sums, softmax's reductions, matmul's row of A).
// A buffer is declared as a vec4 array only when every access to it is of one vectorized kind; only 4-byte dtypes.
enum LaneClass : char { Uniform = 0, Lane = 1, Other = 2 };
struct Vectorize {
  int lanes = 1;                    // 4: thread lanes in use
  std::vector<char> cls;            // per register: LaneClass (all Uniform when lanes == 1)
  std::vector<char> thread_vec;     // per inst: LOAD/Store at a Lane index, one vec4 access for the 4 lanes
  std::vector<int32_t> loop_of;     // per inst: LOAD vectorized over this Loop inst, else -1
  std::vector<int32_t> loop_base;   // per inst: the X register of such a LOAD (-1: index is the loop variable)
  std::vector<char> vec_loop;       // per inst: Loop stepped by 4
  std::vector<char> vec_slot;       // per buffer: declared as a vec4 array
};

inline constexpr const char* kLane[4] = {".x", ".y", ".z", ".w"};  // vec4 component of a lane

inline bool vec4_dtype(DType dt) { return dt == dtypes::float32 || dt == dtypes::int32 || dt == dtypes::uint32; }
inline std::string vec4_type(DType dt) { return dt == dtypes::float32 ? "vec4" : dt == dtypes::int32 ? "ivec4" : "uvec4"; }

inline Vectorize plan_vec4(const Program& p, bool want_lanes) {
  size_t n = p.insts.size();
  Vectorize v;
  v.thread_vec.assign(n, 0), v.loop_of.assign(n, -1), v.loop_base.assign(n, -1), v.vec_loop.assign(n, 0);
  v.vec_slot.assign(p.bufs.size(), 0);
  v.cls.assign(p.regs.size(), Uniform);
  std::vector<int32_t> def(p.regs.size(), -1), parent(n, -1);  // register -> defining inst; inst -> enclosing Loop
  std::vector<int32_t> stack;
  for (size_t i = 0; i < n; i++) {
    const Inst& in = p.insts[i];
    parent[i] = stack.empty() ? -1 : stack.back();
    if (in.kind == InstKind::EndLoop) { stack.pop_back(); continue; }
    if (in.out >= 0 && in.kind != InstKind::AccUpdate && def[size_t(in.out)] < 0) def[size_t(in.out)] = int32_t(i);
    if (in.kind == InstKind::Loop) stack.push_back(int32_t(i));
  }
  auto const_of = [&](int32_t r) -> std::optional<int64_t> {
    if (r < 0 || def[size_t(r)] < 0) return std::nullopt;
    const Inst& d = p.insts[size_t(def[size_t(r)])];
    if (d.kind != InstKind::Value || d.op != Ops::CONST || !dtypes::is_int(d.dtype)) return std::nullopt;
    return d.value.as_int();
  };
  auto op_of = [&](int32_t r) -> const Inst* {
    if (r < 0 || def[size_t(r)] < 0) return nullptr;
    const Inst& d = p.insts[size_t(def[size_t(r)])];
    return d.kind == InstKind::Value ? &d : nullptr;
  };
  // provably a multiple of 4 (integer registers)
  auto mult4 = [&](auto&& self, int32_t r, int depth) -> bool {
    if (depth > 16) return false;
    if (auto c = const_of(r)) return *c % 4 == 0;
    const Inst* d = op_of(r);
    if (!d || !dtypes::is_int(d->dtype)) return false;
    switch (d->op) {
      case Ops::MUL: return self(self, d->a, depth + 1) || self(self, d->b, depth + 1);
      case Ops::ADD: case Ops::SUB: return self(self, d->a, depth + 1) && self(self, d->b, depth + 1);
      case Ops::SHL: { auto c = const_of(d->b); return (c && *c >= 2 && *c < 64) || self(self, d->a, depth + 1); }
      default: return false;
    }
  };

  // lane classes (a fixed point: an accumulator updated with per-lane values is per-lane from its AccInit on)
  bool lanes = want_lanes && p.threads >= 4 && p.threads % 4 == 0;
  if (lanes) {
    std::vector<char> nonneg(p.regs.size(), 0);  // integer value >= 0 in every lane
    auto& cls = v.cls;
    for (bool changed = true; changed;) {
      changed = false;
      auto set = [&](int32_t r, char c, bool nn) {
        if (cls[size_t(r)] != c) cls[size_t(r)] = c, changed = true;
        nonneg[size_t(r)] = nn;
      };
      for (size_t i = 0; i < n; i++) {
        const Inst& in = p.insts[i];
        if (in.kind == InstKind::Loop) { set(in.out, Uniform, true); continue; }
        if (in.kind == InstKind::AccUpdate) {
          if (cls[size_t(in.a)] != Uniform && cls[size_t(in.out)] == Uniform) cls[size_t(in.out)] = Other, changed = true;
          continue;
        }
        if (in.kind != InstKind::Value) continue;
        auto C = [&](int32_t r) { return r < 0 ? char(Uniform) : cls[size_t(r)]; };
        bool isint = dtypes::is_int(in.dtype) && !dtypes::is_bool(in.dtype);
        switch (in.op) {
          case Ops::CONST: set(in.out, Uniform, isint && in.value.as_int() >= 0); continue;
          case Ops::SPECIAL: set(in.out, Lane, true); continue;
          case Ops::PARAM: set(in.out, Uniform, p.vars.at(size_t(in.imm)).lo >= 0); continue;  // a variable
          case Ops::LOAD: set(in.out, C(in.a) == Uniform && C(in.b) == Uniform ? Uniform : Other, false); continue;
          default: break;
        }
        char ca = C(in.a), cb = C(in.b), cc = C(in.c);
        auto nn = [&](int32_t r) { return r >= 0 && nonneg[size_t(r)]; };
        auto posc4 = [&](int32_t r) { auto c = const_of(r); return c && *c > 0 && *c % 4 == 0; };
        if (ca == Uniform && cb == Uniform && cc == Uniform) {
          bool k = isint && ((in.op == Ops::ADD || in.op == Ops::MUL) ? nn(in.a) && nn(in.b)
                             : (in.op == Ops::CDIV || in.op == Ops::CMOD) ? nn(in.a) && nn(in.b)
                             : (in.op == Ops::FLOORMOD) && nn(in.b));
          set(in.out, Uniform, k);
        } else if (isint && in.op == Ops::ADD && ((ca == Lane && cb == Uniform && mult4(mult4, in.b, 0)) ||
                                                  (cb == Lane && ca == Uniform && mult4(mult4, in.a, 0)))) {
          set(in.out, Lane, nn(in.a) && nn(in.b));
        } else if (isint && in.op == Ops::SUB && ca == Lane && cb == Uniform && mult4(mult4, in.b, 0)) {
          set(in.out, Lane, false);
        } else if (isint && ca == Lane && posc4(in.b) &&
                   (in.op == Ops::FLOORDIV || in.op == Ops::FLOORMOD || ((in.op == Ops::CDIV || in.op == Ops::CMOD) && nn(in.a)))) {
          // (4m + k) / c == 4m / c and (4m + k) % c == 4m % c + k for c % 4 == 0, 0 <= k < 4
          bool div = in.op == Ops::FLOORDIV || in.op == Ops::CDIV;
          set(in.out, div ? Uniform : Lane, div ? nn(in.a) : true);
        } else {
          set(in.out, Other, false);
        }
      }
    }
    // every store at a Lane index, ungated
    for (const Inst& in : p.insts)
      if (in.kind == InstKind::Store && (cls[size_t(in.a)] != Lane || in.b >= 0)) lanes = false;
    if (!lanes) v.cls.assign(p.regs.size(), Uniform);
  }
  v.lanes = lanes ? 4 : 1;

  enum Kind : char { Unseen, Thread, Loop, Scalar };
  std::vector<char> kind(p.bufs.size(), Unseen);
  auto note = [&](int64_t slot, Kind k) {
    char& s = kind[size_t(slot)];
    if (!vec4_dtype(p.bufs[size_t(slot)].dtype)) k = Scalar;
    s = s == Unseen || s == k ? k : Scalar;
  };
  std::vector<int32_t> cand_loop(n, -1), cand_base(n, -1);
  for (size_t i = 0; i < n; i++) {
    const Inst& in = p.insts[i];
    if (in.kind == InstKind::Store) {
      note(in.imm, lanes && v.cls[size_t(in.a)] == Lane && in.b < 0 ? Thread : Scalar);
    } else if (in.kind == InstKind::Value && in.op == Ops::LOAD) {
      Kind k = Scalar;
      if (in.b < 0 && !in.clamp) {
        if (lanes && v.cls[size_t(in.a)] == Lane) k = Thread;
        else if (parent[i] >= 0) {
          const Inst& l = p.insts[size_t(parent[i])];
          if (l.imm > 0 && l.imm % 4 == 0) {
            int32_t base = -2;  // -2: no match
            if (in.a == l.out) base = -1;
            else if (const Inst* d = op_of(in.a); d && d->op == Ops::ADD)
              for (auto [x, y] : {std::pair{d->a, d->b}, std::pair{d->b, d->a}})
                if (x == l.out && y >= 0 && def[size_t(y)] >= 0 && def[size_t(y)] < parent[i] && mult4(mult4, y, 0)) base = y;
            if (base != -2) cand_loop[i] = parent[i], cand_base[i] = base, k = Loop;
          }
        }
      }
      note(in.imm, k);
    }
  }
  for (size_t s = 0; s < p.bufs.size(); s++) v.vec_slot[s] = kind[s] == Thread || kind[s] == Loop;
  for (size_t i = 0; i < n; i++) {
    const Inst& in = p.insts[i];
    bool mem = in.kind == InstKind::Store || (in.kind == InstKind::Value && in.op == Ops::LOAD);
    if (!mem || !v.vec_slot[size_t(in.imm)]) continue;
    if (kind[size_t(in.imm)] == Thread) v.thread_vec[i] = 1;
    else v.loop_of[i] = cand_loop[i], v.loop_base[i] = cand_base[i], v.vec_loop[size_t(cand_loop[i])] = 1;
  }
  return v;
}

}  // namespace detail::glsl

// the dispatch for a kernel: thread vec4 where it applies (elementwise kernels, or big ones with loops), else the
// scalar grid-stride layout
inline GlslLaunch glsl_launch(const Program& p, uint32_t max_local = 1024, uint64_t max_texels = 0) {
  GlslLaunch l;
  l.max_texels = max_texels;
  int64_t threads = std::max<int64_t>(p.threads, 1);
  bool loops = std::any_of(p.insts.begin(), p.insts.end(), [](const Inst& i) { return i.kind == InstKind::Loop; });
  if ((!loops || threads >= 1024) && detail::glsl::plan_vec4(p, true).lanes == 4) {
    l.vec = 4, l.per = glsl_lane_groups_per_invocation(threads, loops);
    l.local = std::min(kGlslVec4LocalSize, std::max<uint32_t>(max_local, 1));
    l.invocations = glsl_invocations(threads / 4, l.per);
    return l;
  }
  l.local = std::min(kGlslLocalSize, std::max<uint32_t>(max_local, 1));
  l.per = glsl_elements_per_invocation(threads);
  l.invocations = glsl_invocations(threads, l.per);
  return l;
}

// render a linearized kernel as a GLSL 450 compute shader for the dispatch `launch` (glsl_launch): launch.invocations
// invocations in workgroups of launch.local
inline std::string render_glsl(const Program& p, const rt::DeviceFeatures& features, const GlslLaunch& launch) {
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
  const uint32_t local = launch.local, per = std::max<uint32_t>(launch.per, 1);
  if (launch.vec != 1 && launch.vec != 4) throw Error("GLSL renderer: vec must be 1 or 4");
  Vectorize vz = plan_vec4(p, launch.vec == 4);
  if (launch.vec == 4 && vz.lanes != 4) throw Error("GLSL renderer: kernel " + p.name + " cannot take 4 elements per invocation");
  const int64_t threads = std::max<int64_t>(p.threads, 0);
  int64_t invocations = vz.lanes == 4 ? glsl_invocations(std::max<int64_t>(threads / 4, 1), per)
                                      : glsl_invocations(std::max<int64_t>(p.threads, 1), per);
  auto grid = rt::dispatch_grid(invocations, local);

  // read-only 4-byte buffers read through uniform texel buffers (RGBA32 texels: element i is texel i / 4, component i % 4)
  std::vector<char> texel(p.bufs.size(), 0);
  for (size_t i = 0; i < p.bufs.size(); i++) {
    const BufferInfo& b = p.bufs[i];
    texel[i] = launch.max_texels > 0 && !b.written && vec4_dtype(b.dtype) && b.numel > 0 &&
               b.numel < (int64_t(1) << 31) && uint64_t(b.numel + 3) / 4 <= launch.max_texels;
  }
  // GLSL subscripts are 32-bit: int64 index math (a wide variable) is narrowed where it indexes (buffers hold < 2^31
  // elements, so an in-bounds index fits)
  auto sub = [wide = p.index_dtype.itemsize() == 8](const std::string& e) { return wide ? "int(" + e + ")" : e; };
  // a whole texel (4 elements from element index idx, a multiple of 4) / one element
  auto fetch4 = [&](int64_t slot, const std::string& idx, const std::string& four) {
    std::string d = "data" + std::to_string(slot);
    return texel[size_t(slot)] ? "texelFetch(" + d + ", int(" + idx + ") >> 2)" : d + "[" + sub(idx + " / " + four) + "]";
  };
  auto fetch1 = [&](int64_t slot, const std::string& idx, const std::string& gate) {
    std::string d = "data" + std::to_string(slot);
    if (!texel[size_t(slot)]) return d + "[" + sub(idx) + "]";
    std::string t = "int(" + idx + ")";
    return "texelFetch(" + d + ", " + (gate.empty() ? t + " >> 2" : "(" + gate + ") ? " + t + " >> 2 : 0") + ")[" + t + " & 3]";
  };

  std::vector<std::string> names = register_names(p, literal);
  auto r = [&](int32_t i) { return names[size_t(i)]; };

  std::ostringstream o;
  o << "#version 450\n";
  if (small) o << "#extension GL_EXT_shader_explicit_arithmetic_types : require\n";
  if (i8) o << "#extension GL_EXT_shader_8bit_storage : require\n";
  if (i16 || f16) o << "#extension GL_EXT_shader_16bit_storage : require\n";
  std::string how = vz.lanes != 4 ? ""
                    : per == 1 ? " (4 lanes)"
                               : " (4 lanes, " + std::to_string(per) + " groups strided by " + std::to_string(invocations) + ")";
  o << "// " << p.name << ": " << p.threads << " elements, " << (vz.lanes == 4 ? 4 * per : per) << " per invocation" << how << "\n";
  o << "layout(local_size_x = " << local << ") in;\n";
  for (size_t i = 0; i < p.bufs.size(); i++) {
    if (texel[i]) {
      DType dt = p.bufs[i].dtype;
      o << "layout(set = 0, binding = " << i << ") uniform " << (dt == dtypes::float32 ? "" : dt == dtypes::int32 ? "i" : "u")
        << "samplerBuffer data" << i << ";\n";
      continue;
    }
    o << "layout(std430, set = 0, binding = " << i << ") restrict " << (p.bufs[i].written ? "" : "readonly ") << "buffer B" << i
      << " { " << (vz.vec_slot[i] ? vec4_type(p.bufs[i].dtype) : storage_type(p.bufs[i].dtype)) << " data" << i << "[]; };\n";
  }
  if (!p.vars.empty()) {  // variables: push constants at the offsets the runtime writes (rt::var_layout)
    rt::VarLayout vl = rt::var_layout(var_widths(p));
    o << "layout(push_constant) uniform Vars {";
    for (size_t j = 0; j < p.vars.size(); j++)
      o << " layout(offset = " << vl.offsets[j] << ") " << type(p.vars[j].dtype) << " var" << j << ";";
    o << " } vars;\n";
  }
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
  std::vector<int32_t> end_of(p.insts.size(), -1);  // Loop -> its EndLoop
  {
    std::vector<int32_t> st;
    for (size_t i = 0; i < p.insts.size(); i++) {
      if (p.insts[i].kind == InstKind::Loop) st.push_back(int32_t(i));
      if (p.insts[i].kind == InstKind::EndLoop) end_of[size_t(st.back())] = int32_t(i), st.pop_back();
    }
  }
  std::vector<int> loop_lane(p.insts.size(), 0);  // vectorized Loop -> the lane of the body being rendered
  const int nlanes = vz.lanes;
  // register reg's name in thread lane k
  auto nm = [&](int32_t reg, int k) { return nlanes == 1 || vz.cls[size_t(reg)] == Uniform ? r(reg) : r(reg) + "_" + std::to_string(k); };
  // thread lanes an instruction producing `reg` is rendered for
  auto lanes_of = [&](int32_t reg) { return nlanes == 1 || vz.cls[size_t(reg)] == Uniform ? 1 : nlanes; };
  auto vec_name = [&](size_t i, int k) {
    std::string n = "L";  // appended, not "L" + ...: GCC 12 -Wrestrict false positive
    n += std::to_string(i);
    if (vz.loop_of[i] >= 0 && lanes_of(p.insts[i].out) > 1) n += '_', n += std::to_string(k);
    return n;
  };
  // instructions [begin, end) at indentation ind
  auto emit = [&](auto&& self, size_t begin, size_t end, const std::string& ind) -> void {
  for (size_t ii = begin; ii < end; ii++) {
    const Inst& in = p.insts[ii];
    switch (in.kind) {
      case InstKind::Loop: {
        size_t e = size_t(end_of[ii]);
        std::string T = type(in.dtype), R = r(in.out), zero = literal(Arg(int64_t(0)), in.dtype);
        if (!vz.vec_loop[ii]) {
          o << ind << "for (" << T << " " << R << " = " << zero << "; " << R << " < " << literal(Arg(in.imm), in.dtype) << "; " << R << "++) {\n";
          self(self, ii + 1, e, ind + "  ");
        } else {
          std::string R4 = R + "_4", four = literal(Arg(int64_t(4)), in.dtype);
          o << ind << "for (" << T << " " << R4 << " = " << zero << "; " << R4 << " < " << literal(Arg(in.imm), in.dtype) << "; " << R4
            << " += " << four << ") {\n";
          for (size_t j = ii + 1; j < e; j++)
            if (vz.loop_of[j] == int32_t(ii)) {
              const Inst& ld = p.insts[j];
              for (int k = 0; k < lanes_of(ld.out); k++) {
                std::string idx = vz.loop_base[j] < 0 ? R4 : "(" + nm(vz.loop_base[j], k) + " + " + R4 + ")";
                o << ind << "  " << vec4_type(ld.dtype) << " " << vec_name(j, k) << " = " << fetch4(ld.imm, idx, four) << ";\n";
              }
            }
          for (int k = 0; k < 4; k++) {
            loop_lane[ii] = k;
            o << ind << "  {\n" << ind << "    " << T << " " << R << " = " << R4 << " + " << literal(Arg(int64_t(k)), in.dtype) << ";\n";
            self(self, ii + 1, e, ind + "    ");
            o << ind << "  }\n";
          }
        }
        o << ind << "}\n";
        ii = e;
        continue;
      }
      case InstKind::EndLoop: throw Error("GLSL renderer: unbalanced loops in kernel " + p.name);
      case InstKind::AccInit:
        for (int k = 0; k < lanes_of(in.out); k++) {
          if (dtypes::is_bool(in.dtype)) o << ind << "bool " << nm(in.out, k) << " = " << (in.op == Ops::MUL ? "true" : "false") << ";\n";
          else o << ind << type(in.dtype) << " " << nm(in.out, k) << " = " << literal(Arg(reduce_identity(in.op, in.dtype)), in.dtype) << ";\n";
        }
        continue;
      case InstKind::AccUpdate:
        for (int k = 0; k < lanes_of(in.out); k++) {
        std::string a = nm(in.out, k), v = nm(in.a, k);
        if (dtypes::is_bool(in.dtype)) o << ind << a << " = " << a << (in.op == Ops::MUL ? " && " : " || ") << v << ";\n";
        else if (in.op == Ops::ADD) o << ind << a << " += " << v << ";\n";
        else if (in.op == Ops::MUL) o << ind << a << " *= " << v << ";\n";
        else if (dtypes::is_float(in.dtype))
          o << ind << a << " = (isnan(" << a << ") || isnan(" << v << ")) ? " << a << " + " << v << " : max(" << a << ", " << v << ");\n";
        else o << ind << a << " = max(" << a << ", " << v << ");\n";
        }
        continue;
      case InstKind::Store: {
        DType bt = p.bufs[size_t(in.imm)].dtype;
        if (vz.thread_vec[ii]) {
          DType it = p.regs[size_t(in.a)];
          o << ind << "data" << in.imm << "[" << sub(nm(in.a, 0) + " / " + literal(Arg(int64_t(4)), it)) << "] = " << vec4_type(bt) << "("
            << nm(in.c, 0) << ", " << nm(in.c, 1) << ", " << nm(in.c, 2) << ", " << nm(in.c, 3) << ");\n";
          continue;
        }
        bool same = lanes_of(in.a) == 1 && lanes_of(in.c) == 1 && (in.b < 0 || lanes_of(in.b) == 1);
        for (int k = 0; k < (same ? 1 : nlanes); k++) {
          std::string v = bt == dtypes::bool_ ? "uint8_t(" + nm(in.c, k) + " ? 1 : 0)" : nm(in.c, k);
          o << ind << (in.b >= 0 ? "if (" + nm(in.b, k) + ") " : "") << "data" << in.imm << "[" << sub(nm(in.a, k)) << "] = " << v << ";\n";
        }
        continue;
      }
      case InstKind::Value: break;
    }
    if (in.op == Ops::CONST) continue;
    if (in.op == Ops::LOAD && vz.thread_vec[ii]) {  // one vec4 read for the 4 lanes
      DType it = p.regs[size_t(in.a)];
      o << ind << vec4_type(p.bufs[size_t(in.imm)].dtype) << " L" << ii << " = "
        << fetch4(in.imm, nm(in.a, 0), literal(Arg(int64_t(4)), it)) << ";\n";
    }
    for (int k = 0; k < lanes_of(in.out); k++) {
    std::string a = in.a >= 0 ? nm(in.a, k) : "", b = in.b >= 0 ? nm(in.b, k) : "", c = in.c >= 0 ? nm(in.c, k) : "";
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
      case Ops::SPECIAL: e = nlanes == 1 ? T + "(gidx)" : T + "(inv * 4u + " + std::to_string(k) + "u)"; break;
      case Ops::PARAM: e = "vars.var" + std::to_string(in.imm); break;
      case Ops::LOAD: {
        int64_t n = p.bufs[size_t(in.imm)].numel;
        DType it = p.regs[size_t(in.a)];
        std::string idx = in.clamp ? "clamp(" + a + ", " + zero(it) + ", " + literal(Arg(std::max<int64_t>(n - 1, 0)), it) + ")" : a;
        e = fetch1(in.imm, idx, in.b >= 0 ? b : "");
        if (vz.thread_vec[ii]) e = "L" + std::to_string(ii) + kLane[k];
        else if (vz.loop_of[ii] >= 0) e = vec_name(ii, k) + kLane[loop_lane[size_t(vz.loop_of[ii])]];
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
    o << ind << T << " " << nm(in.out, k) << " = " << e << ";\n";
    }
  }
  };
  std::string first = per == 1 ? nlanes == 1 ? "gidx" : "inv" : nlanes == 1 ? "inv" : "inv0";
  o << "  uint " << first << " = ((gl_WorkGroupID.z * " << grid[1] << "u + gl_WorkGroupID.y) * " << grid[0]
    << "u + gl_WorkGroupID.x) * " << local << "u + gl_LocalInvocationID.x;\n";
  if (nlanes == 4 && per == 1) {
    o << "  if (inv >= " << threads / 4 << "u) return;\n";
    emit(emit, 0, p.insts.size(), "  ");
  } else if (nlanes == 4) {
    o << "  for (uint k = 0u; k < " << per << "u; k++) {\n";
    o << "    uint inv = inv0 + k * " << invocations << "u;\n";
    o << "    if (inv >= " << threads / 4 << "u) break;\n";
    emit(emit, 0, p.insts.size(), "    ");
    o << "  }\n";
  } else {
    std::string ind = "  ";
    if (per > 1) {
      o << "  for (uint k = 0u; k < " << per << "u; k++) {\n";
      o << "    uint gidx = inv + k * " << invocations << "u;\n";
      ind = "    ";
    }
    o << ind << "if (gidx >= " << threads << "u) " << (per > 1 ? "break" : "return") << ";\n";
    emit(emit, 0, p.insts.size(), ind);
    if (per > 1) o << "  }\n";
  }
  o << "}\n";
  return o.str();
}

// scalar layout (no thread vec4): `per` elements per invocation, glsl_invocations(threads, per) invocations
inline std::string render_glsl(const Program& p, const rt::DeviceFeatures& features = {}, uint32_t local = kGlslLocalSize,
                               uint32_t per = 1) {
  GlslLaunch l;
  l.local = local, l.per = per, l.vec = 1, l.invocations = glsl_invocations(std::max<int64_t>(p.threads, 1), per);
  return render_glsl(p, features, l);
}

}  // namespace graft::codegen
