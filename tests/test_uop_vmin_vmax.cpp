// vmin / vmax / const_factor / divides, ported from tinygrad (branch rewrite_rangeify2) test/null/test_uop_vmin_vmax.py.
// The expected values are tinygrad's asserted values. Not ported: vector constants (UOp.const((...)), graft has no
// STACK constants in the symbolic layer), the float-grid cast case and the 0*inf LOAD case.
#include <doctest/doctest.h>
#include <graft/graft.hpp>

using namespace graft;

namespace {
int64_t lo(const UOp& u) { return u.vmin().as_int(); }
int64_t hi(const UOp& u) { return u.vmax().as_int(); }
UOp minimum(const UOp& a, const UOp& b) { return -maximum(-a, -b); }
}  // namespace

TEST_CASE("vmin_vmax: constant and cmpne") {
  UOp c = UOp::const_int(42);
  CHECK(lo(c) == 42);
  CHECK(hi(c) == 42);
  CHECK(ne(c, 42).vmin().as_double() == 0);
  CHECK(ne(c, 42).vmax().as_double() == 0);
  CHECK(ne(c, 43).vmin().as_double() == 1);
  CHECK(ne(c, 41).vmax().as_double() == 1);
}

TEST_CASE("vmin_vmax: add sub mul with a variable") {
  UOp x = UOp::variable("x", 10, 20);
  CHECK(lo(x + 5) == 15);
  CHECK(hi(x + 5) == 25);
  CHECK(lo(x - 5) == 5);
  CHECK(hi(x - 5) == 15);
  CHECK(lo(5 - x) == -15);
  CHECK(hi(5 - x) == -5);
  UOp y = UOp::variable("y", -3, 4);
  CHECK(lo(y * 2) == -6);
  CHECK(hi(y * 2) == 8);
  UOp z = UOp::variable("z", 2, 5);
  CHECK(lo(z * -3) == -15);
  CHECK(hi(z * -3) == -6);
  UOp w = UOp::variable("w", -2, 5);
  CHECK(lo(w * -3) == -15);
  CHECK(hi(w * -3) == 6);
}

TEST_CASE("vmin_vmax: and with a variable") {
  UOp x = UOp::variable("x", 10, 20);
  CHECK(lo(x & 5) == 0);
  CHECK(hi(x & 5) == 5);
  CHECK(lo(x & 15) == 0);
  CHECK(hi(x & 15) == 15);
  CHECK(lo(x & 32) == 0);
  CHECK(hi(x & 32) == 20);  // tinygrad: 20 (could be 0)
  UOp n = UOp::variable("n", -100, 100, dtypes::int32);
  CHECK(lo(n & 511) == 0);
  CHECK(hi(n & 511) == 511);
  CHECK(lo(n & 0x7FFFFFFF) == 0);
  CHECK(hi(n & 0x7FFFFFFF) == 0x7FFFFFFF);
  CHECK(lo(n & -1) == INT32_MIN);
  CHECK(hi(n & -1) == INT32_MAX);
}

TEST_CASE("vmin_vmax: special nested max min where") {
  UOp sp = UOp::make(Ops::SPECIAL, dtypes::int32, {UOp::variable("i", 1, 10, dtypes::int32)}, std::string("gidx0"));
  CHECK(lo(sp) == 0);
  CHECK(hi(sp) == 9);
  UOp x = UOp::variable("x", 0, 10);
  UOp mm = minimum(maximum(x, 5), UOp::const_int(8));
  CHECK(lo(mm) == 5);
  CHECK(hi(mm) == 8);
  UOp y = UOp::variable("y", 1, 11), z = UOp::variable("z", 2, 12);
  CHECK(lo(where(x < 5, y, z)) == 1);
  CHECK(hi(where(x < 5, y, z)) == 12);
}

TEST_CASE("vmin_vmax: shifts and xor -1") {
  UOp x = UOp::variable("x", 0, 10);
  CHECK(lo(x << 5) == 0);
  CHECK(hi(x << 5) == (10 << 5));
  CHECK(lo(x >> 2) == 0);
  CHECK(hi(x >> 2) == (10 >> 2));
  UOp a = UOp::variable("a", 3, 7);
  CHECK(lo(a ^ -1) == ~7);
  CHECK(hi(a ^ -1) == ~3);
  UOp b = UOp::variable("b", -10, -3);
  CHECK(lo(b ^ -1) == ~(-3));
  CHECK(hi(b ^ -1) == ~(-10));
  UOp c = UOp::variable("c", -5, 6);
  CHECK(lo(c ^ -1) == ~6);
  CHECK(hi(c ^ -1) == ~(-5));
}

TEST_CASE("vmin_vmax: casts") {
  CHECK(lo(UOp::variable("x", 5, 10).cast(dtypes::uint8)) == 5);
  CHECK(hi(UOp::variable("x", 5, 10).cast(dtypes::uint8)) == 10);
  CHECK(lo(UOp::variable("x", -1, 10).cast(dtypes::uint8)) == 0);
  CHECK(hi(UOp::variable("x", -1, 10).cast(dtypes::uint8)) == 255);
  CHECK(lo(UOp::variable("x", 250, 260).cast(dtypes::uint8)) == 0);
  CHECK(hi(UOp::variable("x", 250, 260).cast(dtypes::uint8)) == 255);
  UOp x = UOp::variable("x", -10, 10, dtypes::int32);
  CHECK(x.cast(dtypes::float32).vmin().as_double() == -10);
  CHECK(x.cast(dtypes::float32).vmax().as_double() == 10);
  CHECK(x.cast(dtypes::bool_).vmin().as_double() == 0);
  CHECK(x.cast(dtypes::bool_).vmax().as_double() == 1);
  CHECK(lo(x.cast(dtypes::uint32)) == 0);
  CHECK(hi(x.cast(dtypes::uint32)) == 4294967295LL);
}

TEST_CASE("vmin_vmax: invalid has no single value") {
  CHECK_FALSE(UOp::invalid().vmin() == UOp::invalid().vmax());
}

TEST_CASE("vmin_vmax: floordiv by constants") {
  UOp x = UOp::variable("x", 10, 20);
  CHECK(lo(floordiv(x, 2)) == 5);
  CHECK(hi(floordiv(x, 2)) == 10);
  CHECK(lo(floordiv(x, -2)) == -10);
  CHECK(hi(floordiv(x, -2)) == -5);
  CHECK(lo(floordiv(x, -3)) == -7);
  CHECK(hi(floordiv(x, -3)) == -4);
  UOp n = UOp::variable("n", -20, -10);
  CHECK(lo(floordiv(n, -2)) == 5);
  CHECK(hi(floordiv(n, -2)) == 10);
  CHECK(lo(floordiv(n, -3)) == 3);
  CHECK(hi(floordiv(n, -3)) == 6);
  UOp m = UOp::variable("m", -7, 7);
  CHECK(lo(floordiv(m, 3)) == -3);
  CHECK(hi(floordiv(m, 3)) == 2);
  CHECK(lo(m % 3) == 0);
  CHECK(hi(m % 3) == 2);
  CHECK(lo(m % -3) == -2);
  CHECK(hi(m % -3) == 0);
  UOp k = UOp::variable("k", -10, 10);
  CHECK(lo(floordiv(k, -2)) == -5);
  CHECK(hi(floordiv(k, -2)) == 5);
  CHECK(lo(floordiv(k, -3)) == -4);
  CHECK(hi(floordiv(k, -3)) == 3);
}

TEST_CASE("vmin_vmax: floordiv floormod of an empty range") {
  UOp r = UOp::range(0, 0);
  CHECK(lo(r) == 0);
  CHECK(hi(r) == -1);
  CHECK(lo(floordiv(r, 4)) == 0);
  CHECK(hi(floordiv(r, 4)) == 0);
  CHECK(lo(r % 4) == 0);
  CHECK(hi(r % 4) == 0);
}

TEST_CASE("vmin_vmax: symbolic divisor") {
  UOp x = UOp::variable("x", 1, 10), y = UOp::variable("y", 3, 5);
  CHECK(lo(floordiv(x, y)) == 0);
  CHECK(hi(floordiv(x, y)) == 3);
  CHECK(lo(floordiv(-x, y)) == -4);
  CHECK(hi(floordiv(-x, y)) == -1);
  CHECK(lo(floordiv(x, -y)) == -4);
  CHECK(hi(floordiv(x, -y)) == -1);
  CHECK(lo(floordiv(-x, -y)) == 0);
  CHECK(hi(floordiv(-x, -y)) == 3);
  CHECK(lo(floordiv(100, y)) == 20);
  CHECK(hi(floordiv(100, y)) == 33);
  CHECK(lo(floordiv(-100, y)) == -34);
  CHECK(hi(floordiv(-100, y)) == -20);
  CHECK(lo(floordiv(100, -y)) == -34);
  CHECK(hi(floordiv(100, -y)) == -20);
  CHECK(lo(floordiv(-100, -y)) == 20);
  CHECK(hi(floordiv(-100, -y)) == 33);
}

TEST_CASE("vmin_vmax: mod by positive and negative constants") {
  for (auto [a, b] : {std::pair{10, 20}, std::pair{-20, -10}, std::pair{-20, 20}}) {
    UOp v = UOp::variable("v", a, b);
    CHECK(lo(v % 3) == 0);
    CHECK(hi(v % 3) == 2);
    CHECK(lo(v % -3) == -2);
    CHECK(hi(v % -3) == 0);
  }
}

TEST_CASE("vmin_vmax: const_factor") {
  using sym_detail::const_factor;
  CHECK(const_factor(UOp::const_int(42)) == 42);
  CHECK(const_factor(UOp::const_int(30) + UOp::const_int(12)) == 6);
  CHECK(const_factor(UOp::const_int(5) * UOp::const_int(7)) == 5);
  UOp x = UOp::variable("x", 10, 20);
  CHECK(const_factor(x * 3) == 3);
  CHECK(const_factor(floordiv(x, 4)) == 1);
  CHECK(const_factor(UOp::variable("y", 6, 18) * 4) == 4);
  CHECK(const_factor(UOp::variable("z", 16, 32, dtypes::weakint, 4)) == 4);
}

TEST_CASE("vmin_vmax: divides") {
  using sym_detail::const_factor;
  using sym_detail::divides;
  UOp r = divides(UOp::const_int(42), 7);
  REQUIRE_FALSE(r.empty());
  CHECK(const_factor(r) == 6);
  CHECK(divides(UOp::const_int(42), 5).empty());
  UOp x = UOp::variable("x", 10, 20);
  UOp d = divides(x * 6 + 18, 6);
  REQUIRE_FALSE(d.empty());
  CHECK(const_factor(d) == 1);
  CHECK(divides(UOp::variable("w", 15, 45) * 4, 3).empty());
  UOp m = UOp::variable("m", 16, 32, dtypes::weakint, 4);
  CHECK_FALSE(divides(m, 4).empty());
  CHECK_FALSE(divides(m, 2).empty());
}
