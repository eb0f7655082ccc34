// DType: a one-byte handle into a constexpr table, with tinygrad's promotion lattice.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

#include "graft/core/error.hpp"

namespace graft {

// Table order = id order. The weak dtypes are tinygrad's width-less "python literal" types used for index math.
enum class DTypeId : uint8_t {
  void_, weakint, bool_, int8, uint8, int16, uint16, int32, uint32, int64, uint64,
  weakfloat, float16, bfloat16, float32, float64, count_
};

struct DTypeInfo {
  int8_t priority;
  uint16_t bitsize;
  std::string_view name;      // tinygrad's dtype.name (the C type name)
  std::string_view py_name;   // tinygrad's attribute name: dtypes.<py_name>
  char fmt;                   // struct format char, 0 if none
};

inline constexpr std::array<DTypeInfo, size_t(DTypeId::count_)> dtype_table{{
    {-1, 0, "void", "void", 0},
    {0, 800, "weakint", "weakint", 0},
    {0, 1, "bool", "bool", '?'},
    {1, 8, "signed char", "char", 'b'},
    {2, 8, "unsigned char", "uchar", 'B'},
    {3, 16, "short", "short", 'h'},
    {4, 16, "unsigned short", "ushort", 'H'},
    {5, 32, "int", "int", 'i'},
    {6, 32, "unsigned int", "uint", 'I'},
    {7, 64, "long", "long", 'q'},
    {8, 64, "unsigned long", "ulong", 'Q'},
    {9, 800, "weakfloat", "weakfloat", 0},
    {12, 16, "half", "half", 'e'},
    {13, 16, "__bf16", "bfloat16", 0},
    {14, 32, "float", "float", 'f'},
    {15, 64, "double", "double", 'd'},
}};

struct DType {
  DTypeId id = DTypeId::void_;
  constexpr DType() = default;
  constexpr DType(DTypeId i) : id(i) {}
  constexpr const DTypeInfo& info() const { return dtype_table[size_t(id)]; }
  constexpr int priority() const { return info().priority; }
  constexpr int bitsize() const { return info().bitsize; }
  constexpr int itemsize() const { return (bitsize() + 7) / 8; }
  constexpr std::string_view name() const { return info().name; }
  constexpr std::string_view py_name() const { return info().py_name; }
  constexpr uint8_t index() const { return uint8_t(id); }
  constexpr bool operator==(const DType&) const = default;
  // tinygrad's DType.__lt__: (priority, bitsize, name, fmt)
  constexpr bool operator<(const DType& o) const {
    if (priority() != o.priority()) return priority() < o.priority();
    if (bitsize() != o.bitsize()) return bitsize() < o.bitsize();
    if (name() != o.name()) return name() < o.name();
    return info().fmt < o.info().fmt;
  }
};

namespace dtypes {
inline constexpr DType void_{DTypeId::void_}, weakint{DTypeId::weakint}, bool_{DTypeId::bool_},
    int8{DTypeId::int8}, uint8{DTypeId::uint8}, int16{DTypeId::int16}, uint16{DTypeId::uint16},
    int32{DTypeId::int32}, uint32{DTypeId::uint32}, int64{DTypeId::int64}, uint64{DTypeId::uint64},
    weakfloat{DTypeId::weakfloat}, float16{DTypeId::float16}, bfloat16{DTypeId::bfloat16},
    float32{DTypeId::float32}, float64{DTypeId::float64};
inline constexpr DType half = float16, float_ = float32, double_ = float64, char_ = int8, uchar = uint8, short_ = int16,
                      ushort = uint16, int_ = int32, uint = uint32, long_ = int64, ulong = uint64;
inline constexpr DType default_int = int32, default_float = float32;

constexpr bool is_unsigned(DType d) { return d == uint8 || d == uint16 || d == uint32 || d == uint64; }
constexpr bool is_int(DType d) { return d.id >= DTypeId::weakint && d.id <= DTypeId::uint64 && d != bool_; }
constexpr bool is_float(DType d) { return d.id >= DTypeId::weakfloat && d.id <= DTypeId::float64; }
constexpr bool is_bool(DType d) { return d == bool_; }
constexpr bool is_weak(DType d) { return d == weakint || d == weakfloat; }
}  // namespace dtypes

// A set of dtypes as a bitmask (used by patterns).
struct DTypeSet {
  uint32_t bits = 0;
  constexpr DTypeSet() = default;
  constexpr DTypeSet(DType d) : bits(1u << d.index()) {}
  constexpr DTypeSet(std::initializer_list<DType> ds) { for (DType d : ds) bits |= 1u << d.index(); }
  constexpr bool empty() const { return bits == 0; }
  constexpr bool has(DType d) const { return (bits >> d.index()) & 1u; }
  constexpr DTypeSet operator|(DTypeSet o) const { DTypeSet r; r.bits = bits | o.bits; return r; }
  constexpr bool operator==(const DTypeSet&) const = default;
};

namespace dtypes {
inline constexpr DTypeSet uints{uint8, uint16, uint32, uint64}, sints{int8, int16, int32, int64},
    ints{uint8, uint16, uint32, uint64, int8, int16, int32, int64},
    floats{float16, bfloat16, float32, float64}, weaks{weakint, weakfloat};

constexpr DType strong(DType d) { return d == weakint ? default_int : d == weakfloat ? default_float : d; }
constexpr DType weak(DType d) { return is_float(d) ? weakfloat : is_int(d) ? weakint : d; }

constexpr double min_value(DType d) {
  if (is_int(d) && d != weakint) return is_unsigned(d) ? 0.0 : -std::ldexp(1.0, d.bitsize() - 1);
  if (is_bool(d) || d == void_) return 0;  // tinygrad: void.min is False
  return -std::numeric_limits<double>::infinity();
}
constexpr double max_value(DType d) {
  if (is_int(d) && d != weakint) return is_unsigned(d) ? std::ldexp(1.0, d.bitsize()) - 1 : std::ldexp(1.0, d.bitsize() - 1) - 1;
  if (is_bool(d) || d == void_) return 1;  // tinygrad: void.max is True
  return std::numeric_limits<double>::infinity();
}
// Integer bounds (weakint is unbounded mathematically; we clamp it to int64).
constexpr int64_t imin(DType d) {
  if (d == weakint || d == int64) return std::numeric_limits<int64_t>::min();
  if (is_unsigned(d) || is_bool(d) || d == void_) return 0;  // void: tinygrad's (False, True), no shift by -1
  return -(int64_t(1) << (d.bitsize() - 1));
}
constexpr int64_t imax(DType d) {
  if (d == weakint || d == int64 || d == uint64) return std::numeric_limits<int64_t>::max();
  if (is_bool(d) || d == void_) return 1;
  if (is_unsigned(d)) return (int64_t(1) << d.bitsize()) - 1;
  return (int64_t(1) << (d.bitsize() - 1)) - 1;
}
}  // namespace dtypes

namespace detail {
// The promotion lattice edges (tinygrad dtype.py promo_lattice; fp8 omitted: weakfloat goes to half/bf16 directly).
constexpr uint32_t promo_parents_direct(DType d) {
  using namespace dtypes;
  auto m = [](std::initializer_list<DType> ds) { return DTypeSet(ds).bits; };
  switch (d.id) {
    case DTypeId::bool_: return m({weakint});
    case DTypeId::weakint: return m({int8, uint8});
    case DTypeId::int8: return m({int16});
    case DTypeId::int16: return m({int32});
    case DTypeId::int32: return m({int64});
    case DTypeId::int64: return m({weakfloat});
    case DTypeId::uint8: return m({int16, uint16});
    case DTypeId::uint16: return m({int32, uint32});
    case DTypeId::uint32: return m({int64, uint64});
    case DTypeId::uint64: return m({weakfloat});
    case DTypeId::weakfloat: return m({float16, bfloat16});
    case DTypeId::float16: return m({float32});
    case DTypeId::bfloat16: return m({float32});
    case DTypeId::float32: return m({float64});
    default: return 0;
  }
}
constexpr uint32_t promo_ancestors(DType d) {
  uint32_t r = 1u << d.index(), frontier = r;
  while (frontier) {
    uint32_t next = 0;
    for (unsigned i = 0; i < unsigned(DTypeId::count_); i++)
      if ((frontier >> i) & 1u) next |= promo_parents_direct(DType(DTypeId(i)));
    frontier = next & ~r;
    r |= next;
  }
  return r;
}
}  // namespace detail

namespace detail {
// the smallest dtype (by DType::operator<) in a set of common ancestors
constexpr DType lowest_common(uint32_t common) {
  DType best = dtypes::void_;
  bool found = false;
  for (unsigned i = 0; i < unsigned(DTypeId::count_); i++)
    if ((common >> i) & 1u) {
      DType c{DTypeId(i)};
      if (!found || c < best) best = c, found = true;
    }
  if (!found) throw Error("least_upper_dtype: no common dtype");
  return best;
}
}  // namespace detail

// least_upper_dtype: the smallest (by DType::operator<) common ancestor in the lattice.
template <class Range> constexpr DType least_upper_dtype_of(const Range& ds) {
  uint32_t common = ~0u;
  for (DType d : ds) {
    if (d == dtypes::void_) throw Error("least_upper_dtype: void has no promotion");
    common &= detail::promo_ancestors(d);
  }
  return detail::lowest_common(common);
}
constexpr DType least_upper_dtype(std::initializer_list<DType> ds) { return least_upper_dtype_of(ds); }
constexpr DType least_upper_dtype(DType a, DType b) { return a == b ? a : least_upper_dtype({a, b}); }
constexpr DType least_upper_float(DType d) {
  return d == dtypes::weakint ? dtypes::weakfloat : dtypes::is_float(d) ? d : least_upper_dtype(d, dtypes::default_float);
}
// Does dt1 preserve every value of dt0? (tinygrad can_lossless_cast)
constexpr bool can_lossless_cast(DType dt0, DType dt1) {
  using namespace dtypes;
  auto in = [&](std::initializer_list<DType> ds) { return DTypeSet(ds).has(dt0); };
  if (dt0 == dt1 || dt0 == bool_) return true;
  switch (dt1.id) {
    case DTypeId::weakint: return ints.has(dt0);
    case DTypeId::float64: return in({float32, float16, bfloat16, uint32, uint16, uint8, int32, int16, int8});
    case DTypeId::float32: return in({float16, bfloat16, uint16, uint8, int16, int8});
    case DTypeId::float16: return in({uint8, int8});
    case DTypeId::uint64: return in({uint32, uint16, uint8});
    case DTypeId::uint32: return in({uint16, uint8});
    case DTypeId::uint16: return in({uint8});
    case DTypeId::int64: return in({uint32, uint16, uint8, int32, int16, int8});
    case DTypeId::int32: return in({uint16, uint8, int16, int8});
    case DTypeId::int16: return in({uint8, int8});
    default: return false;
  }
}
// Default accumulator for sum (tinygrad sum_acc_dtype with SUM_DTYPE=float32).
constexpr DType sum_acc_dtype(DType d) {
  if (dtypes::is_unsigned(d)) return least_upper_dtype(d, dtypes::uint32);
  if (dtypes::is_int(d) || d == dtypes::bool_) return least_upper_dtype(d, dtypes::int32);
  return least_upper_dtype(d, dtypes::float32);
}

// Round a double to what the dtype can hold (tinygrad truncate[] for floats).
inline double float_to_half(double x) {
  if (!std::isfinite(x)) return x;
  float f = float(x);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  // round-to-nearest-even at 10 mantissa bits, honouring subnormals and overflow to inf
  double ax = std::fabs(x);
  if (ax >= 65520.0) return std::copysign(INFINITY, x);
  if (ax < 6.103515625e-05) {  // subnormal half: quantum 2^-24
    double q = std::nearbyint(ax * 16777216.0) / 16777216.0;
    return std::copysign(q, x);
  }
  int e;
  std::frexp(ax, &e);
  double quantum = std::ldexp(1.0, e - 11);
  return std::copysign(std::nearbyint(ax / quantum) * quantum, x);
}
inline double float_to_bf16(double x) {
  if (!std::isfinite(x)) return x;
  float f = float(x);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000u;
  std::memcpy(&f, &u, 4);
  return f;
}
// IEEE binary16 / bfloat16 bit patterns (host storage of half buffers); values are rounded as truncate_float does
inline uint16_t half_to_bits(double x) {
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return sign | 0x7E00;
  double a = std::fabs(float_to_half(x));
  if (std::isinf(a)) return sign | 0x7C00;
  if (a < 6.103515625e-05) return sign | uint16_t(a * 16777216.0);  // subnormal: exact multiple of 2^-24
  int e;
  std::frexp(a, &e);  // a in [2^(e-1), 2^e)
  return sign | uint16_t((e - 1 + 15) << 10) | uint16_t(std::ldexp(a, 11 - e) - 1024);
}
inline double half_from_bits(uint16_t h) {
  double s = (h & 0x8000) ? -1.0 : 1.0;
  int e = (h >> 10) & 31, m = h & 1023;
  if (e == 0) return s * std::ldexp(double(m), -24);
  if (e == 31) return m ? std::nan("") : s * INFINITY;
  return s * std::ldexp(double(1024 + m), e - 25);
}
inline uint16_t bf16_to_bits(double x) {
  float f = float(std::isnan(x) ? x : float_to_bf16(x));
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return std::isnan(x) ? uint16_t((u >> 16) | 0x40) : uint16_t(u >> 16);
}
inline double bf16_from_bits(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// noinline: GCC 12.2 at -O2/-O3 SLP-vectorizes two adjacent inlined calls (vmin/vmax of a CAST in core/range.hpp) and
// drops the (double)(float)x rounding, so an int range [0, 16777219] cast to float32 kept 16777219 (should be 16777220).
[[gnu::noinline]] inline double truncate_float(DType d, double x) {
  if (d == dtypes::float32) return double(float(x));
  if (d == dtypes::float16) return float_to_half(x);
  if (d == dtypes::bfloat16) return float_to_bf16(x);
  return x;
}
// Wrap an integer to the dtype's width (ctypes semantics; weakint/int64 are unchanged).
inline int64_t truncate_int(DType d, int64_t v) {
  using namespace dtypes;
  switch (d.id) {
    case DTypeId::bool_: return v != 0;
    case DTypeId::int8: return int8_t(v);
    case DTypeId::uint8: return uint8_t(v);
    case DTypeId::int16: return int16_t(v);
    case DTypeId::uint16: return uint16_t(v);
    case DTypeId::int32: return int32_t(v);
    case DTypeId::uint32: return uint32_t(v);
    default: return v;
  }
}

}  // namespace graft
