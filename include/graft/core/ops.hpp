// Ops (tinygrad's names and declaration order, which is also the toposort priority) and GroupOp sets as bitsets.
#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace graft {

#define GRAFT_OPS(X)                                                                                              \
  X(SPECIAL) X(BUFFER)                                                                                            \
  X(NOOP) X(REWRITE_ERROR) X(PARAM) X(FUNCTION) X(CALL) X(PROGRAM) X(LINEAR) X(SOURCE) X(BINARY) X(SINK) X(AFTER)  \
  X(GROUP) X(STACK) X(TUPLE) X(GETTUPLE) X(GETADDR)                                                               \
  X(INDEX) X(SHRINK) X(LOAD) X(STORE)                                                                             \
  X(WMMA) X(CAST) X(BITCAST) X(EXP2) X(LOG2) X(SIN) X(SQRT) X(RECIPROCAL) X(NEG) X(TRUNC)                         \
  X(ADD) X(MUL) X(SHL) X(SHR) X(CDIV) X(MAX) X(CMOD) X(CMPLT) X(CMPNE) X(CMPEQ) X(XOR) X(OR) X(AND) X(THREEFRY)    \
  X(SUB) X(FDIV) X(POW) X(FLOORDIV) X(FLOORMOD) X(WHERE) X(MULACC)                                                \
  X(BARRIER) X(RANGE) X(IF) X(END) X(ENDIF) X(WAIT) X(CONST) X(CUSTOM) X(CUSTOMI) X(INS)                          \
  X(CONTIGUOUS) X(CONTIGUOUS_BACKWARD) X(DETACH) X(STAGE) X(COPY) X(MSELECT) X(MSTACK) X(CUSTOM_FUNCTION)          \
  X(RESHAPE) X(PERMUTE) X(EXPAND) X(PAD) X(FLIP) X(UNSHARD) X(REDUCE) X(ALLREDUCE)

enum class Ops : uint8_t {
#define GRAFT_X(name) name,
  GRAFT_OPS(GRAFT_X)
#undef GRAFT_X
  count_
};
inline constexpr size_t num_ops = size_t(Ops::count_);
static_assert(num_ops <= 128, "OpSet holds 128 ops");

inline constexpr std::array<std::string_view, num_ops> op_names{
#define GRAFT_X(name) #name,
    GRAFT_OPS(GRAFT_X)
#undef GRAFT_X
};
constexpr std::string_view op_name(Ops o) { return op_names[size_t(o)]; }

// A set of ops as a 128-bit mask; a structural type, so it can be a template argument.
struct OpSet {
  uint64_t lo = 0, hi = 0;
  constexpr OpSet() = default;
  constexpr OpSet(Ops o) { add(o); }
  constexpr OpSet(std::initializer_list<Ops> os) { for (Ops o : os) add(o); }
  constexpr void add(Ops o) { size_t i = size_t(o); (i < 64 ? lo : hi) |= uint64_t(1) << (i & 63); }
  constexpr bool has(Ops o) const { size_t i = size_t(o); return ((i < 64 ? lo : hi) >> (i & 63)) & 1u; }
  constexpr bool empty() const { return lo == 0 && hi == 0; }
  constexpr int size() const { return __builtin_popcountll(lo) + __builtin_popcountll(hi); }
  constexpr OpSet operator|(OpSet o) const { OpSet r; r.lo = lo | o.lo; r.hi = hi | o.hi; return r; }
  constexpr OpSet operator&(OpSet o) const { OpSet r; r.lo = lo & o.lo; r.hi = hi & o.hi; return r; }
  constexpr OpSet operator-(OpSet o) const { OpSet r; r.lo = lo & ~o.lo; r.hi = hi & ~o.hi; return r; }
  constexpr bool subset_of(OpSet o) const { return (lo & ~o.lo) == 0 && (hi & ~o.hi) == 0; }
  constexpr bool operator==(const OpSet&) const = default;
  // the single op of a one-element set (undefined otherwise)
  constexpr Ops first() const { return Ops(lo ? __builtin_ctzll(lo) : 64 + __builtin_ctzll(hi)); }
};

namespace GroupOp {
using enum Ops;
inline constexpr OpSet Unary{EXP2, LOG2, SIN, SQRT, RECIPROCAL, NEG, TRUNC};
inline constexpr OpSet Binary{ADD, MUL, CDIV, MAX, CMOD, CMPLT, CMPNE, CMPEQ, XOR, SHL, SHR, OR, AND, THREEFRY, SUB, FDIV,
                              POW, FLOORDIV, FLOORMOD};
inline constexpr OpSet Ternary{WHERE, MULACC};
inline constexpr OpSet ALU = Unary | Binary | Ternary;
inline constexpr OpSet Broadcastable = Binary | Ternary;
inline constexpr OpSet Elementwise = ALU | OpSet{CAST, BITCAST};
inline constexpr OpSet Defines{PARAM, BUFFER};
inline constexpr OpSet Irreducible{CONST, SPECIAL, RANGE, PARAM, GETADDR};
inline constexpr OpSet Movement{RESHAPE, EXPAND, PERMUTE, PAD, SHRINK, FLIP};
inline constexpr OpSet Commutative{ADD, MUL, MAX, CMPNE, CMPEQ, XOR, AND, OR};
inline constexpr OpSet Associative{ADD, MUL, AND, OR, MAX};
inline constexpr OpSet Idempotent{OR, AND, MAX};
inline constexpr OpSet Reduce{ADD, MUL, MAX};
inline constexpr OpSet Comparison{CMPLT, CMPNE, CMPEQ};
inline constexpr OpSet All = [] { OpSet s; for (size_t i = 0; i < num_ops; i++) s.add(Ops(i)); return s; }();
}  // namespace GroupOp

}  // namespace graft
