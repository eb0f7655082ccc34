// sym() (rules/symbolic.hpp): pm_simplify_valid (uop_given_valid / simplify_valid / gated index math), the sym-only
// rules and GROUP/SINK cleanup, plus graft's integer overflow semantics. Ported from tinygrad (branch rewrite_rangeify2)
// test/null/test_simplify_valid_idx.py; every expected string was produced by tinygrad with
//   graph_rewrite(UOp.sink(load), sym).src[0] ... .render(simplify=False)
// (the tinygrad test adds pm_move_where_on_load, which does not fire on these inputs; the image cases are run
// through sym only, without the codegen-layer indexing_simplify, so their expected strings are sym's output).
#include <doctest/doctest.h>
#include <graft/graft.hpp>

#include <string>
#include <unordered_map>
#include <vector>

using namespace graft;

namespace {

// render without simplifying first (tinygrad's render(simplify=False))
std::string rnd(const UOp& u) {
  std::unordered_map<const UOpNode*, std::string> ctx;
  for (const UOp& n : u.toposort()) ctx[n.node()] = sym_detail::render_node(n, ctx);
  return ctx.at(u.node());
}
UOp special(const char* name, int64_t n) { return UOp::special(n, name); }
UOp rng(int64_t axis, int64_t end) { return UOp::range(end, axis); }
UOp param_buf(std::initializer_list<int64_t> shape) {
  return UOp::make(Ops::PARAM, dtypes::float32, {UOp::shape_arg(shape)}, Arg(ParamArg{0, dtypes::float32, {}, 1, "", AddrSpace::GLOBAL, ""}));
}
UOp valid_of(const UOp& idx, const UOp& cond) { return where(cond, idx, UOp::invalid()); }
UOp get_idx(const UOp& u) { return u.op() == Ops::WHERE && u.src(2).is_invalid() ? u.src(1) : u; }
UOp get_valid(const UOp& u) { return u.op() == Ops::WHERE && u.src(2).is_invalid() ? u.src(0) : UOp::const_bool(!u.is_invalid()); }
UOp gated_load(const UOp& valid, const UOp& idx) {
  return UOp::make(Ops::LOAD, dtypes::float32, {UOp::infer(Ops::INDEX, {param_buf({1024}), valid_of(idx, valid)})});
}
UOp image_load(std::initializer_list<int64_t> shape, const UOp& valid, const UOp& i0, const UOp& i1) {
  return UOp::make(Ops::LOAD, dtypes::float32, {UOp::infer(Ops::INDEX, {param_buf(shape), valid_of(i1, valid), valid_of(i0, valid)})});
}
// graph_rewrite(sink(load, extra...), sym()) -> the INDEX's k-th source
UOp index_src(const UOp& load, size_t k, std::vector<UOp> extra = {}) {
  extra.insert(extra.begin(), load);
  UOp out = graph_rewrite(UOp::sink(extra), sym());
  return out.src(0).src(0).src(k);
}
void check_off(const UOp& off, const char* idx, const char* valid) {
  CHECK(rnd(get_idx(off)) == idx);
  CHECK(rnd(get_valid(off)) == valid);
}

}  // namespace

TEST_CASE("symbolic valid: cumsum") {
  UOp g0 = special("gidx0", 5), l0 = special("lidx0", 4);
  check_off(index_src(gated_load(ne(g0 * 4 + l0 < 19, true), g0 * 4 + l0 - 19), 1), "0", "(((lidx0+gidx0*4)<19)!=True)");
}

TEST_CASE("symbolic valid: simplify within valid1") {
  UOp r0 = rng(0, 4), r1 = rng(1, 4), r2 = rng(2, 4), r3 = rng(3, 4);
  UOp valid = ((r0 * 3 + r1) < 8) & ((floordiv(r0 * 3 + r1, 8) + r2 * 3 + r3) % 4 < 2);
  check_off(index_src(gated_load(valid, r0 + r1 + r2 + r3), 1), "(r0+r1+r2+r3)", "(((r0*3+r1)<8)&(((r2*3+r3)%4)<2))");
}

TEST_CASE("symbolic valid: simplify within valid2 is a no-op") {
  UOp g = special("gidx0", 56), r = rng(0, 3), a0 = g + r;
  CHECK(sym_detail::simplify_valid((a0 < 57) & (a0 >= 1)).empty());
}

TEST_CASE("symbolic valid: valid order matters1") {
  UOp r0 = rng(0, 2), v0 = r0 < 1, v1 = ((r0 * 5 + 1) % 6) < 5;
  CHECK(rnd(sym_detail::simplify_valid(v0 & v1)) == "((r0<1)&True)");
  CHECK(rnd(sym_detail::simplify_valid(v1 & v0)) == "((r0<1)&True)");
  CHECK(sym_detail::simplify_valid(v0 & v1).render() == "(r0<1)");
  CHECK(sym_detail::simplify_valid(v1 & v0).render() == "(r0<1)");
}

TEST_CASE("symbolic valid: valid order matters2 every permutation is False") {
  UOp g0 = special("gidx0", 13), g1 = special("gidx1", 13), r0 = rng(0, 4);
  UOp alu0 = g1 + r0 * 13;
  std::vector<UOp> v{(g0 + 11) % 14 < 11, (alu0 + floordiv(g0 + 39, 42)) % 14 < 11, g0 < 3, alu0 < 42};
  std::vector<int> p{0, 1, 2, 3};
  int n = 0;
  do {
    UOp r = sym_detail::simplify_valid(v[size_t(p[0])] & v[size_t(p[1])] & v[size_t(p[2])] & v[size_t(p[3])]);
    REQUIRE_FALSE(r.empty());
    CHECK(r.render() == "False");
    n++;
  } while (std::next_permutation(p.begin(), p.end()));
  CHECK(n == 24);
}

TEST_CASE("symbolic valid: simplify valid from div") {
  UOp x = UOp::variable("x", -100, 100);
  UOp valid = (x < 0) & (UOp::const_int(100) % x).cast(dtypes::bool_);
  UOp r = sym_detail::simplify_valid(valid);
  REQUIRE_FALSE(r.empty());
  CHECK(rnd(r) == "((x<0)&((100%x)!=0))");
}

TEST_CASE("symbolic valid: a LOAD in the valid is left alone") {
  UOp r2 = rng(2, 4), l0 = special("lidx0", 3), g0 = special("gidx0", 2);
  UOp valid = (l0 + g0 * 3) < 5;
  UOp ld = gated_load(valid, l0 + g0 * 3 + r2 * 5 + 40);
  CHECK(sym_detail::simplify_valid(valid & logical_not(ld.cast(dtypes::bool_))).empty());
}

TEST_CASE("symbolic valid: valid becomes const1") {
  UOp r0 = rng(0, 30), r1 = rng(1, 7), r2 = rng(2, 2);
  UOp a11 = r1 + r2, a15 = floordiv(a11 + 1, 7);
  UOp idx = a15 * -31 + ((floordiv(a11 + 218, 224) + r0) % 30) * 1568;
  UOp ld = gated_load((r2 < 1) & (r1 < 6), idx);
  UOp red = UOp::make(Ops::REDUCE, dtypes::float32, {ld, r1, r2}, Arg{Arg(Ops::ADD), Arg(int64_t(0))});
  check_off(index_src(ld, 1, {red}), "(r0*1568)", "((r2<1)&(r1<6))");
}

TEST_CASE("symbolic valid: valid becomes const2") {
  UOp r0 = rng(0, 4), r1 = rng(1, 4), r2 = rng(2, 4), r3 = rng(3, 4);
  UOp idx = floordiv((r0 + r1) + (r2 + r3) + 28, 30);
  UOp valid = ne((r0 + r1) < 1, true) & ne((r2 + r3) < 1, true);
  check_off(index_src(gated_load(valid, idx), 1), "1", "((((r0+r1)<1)!=True)&(((r2+r3)<1)!=True))");
}

TEST_CASE("symbolic valid: valid with non const rhs") {
  UOp r0 = rng(0, 1024), r1 = rng(1, 4), r2 = rng(2, 4);
  UOp valid = (r0 < (r1 * 4 + r2)) & ne(r0 < -1, true);
  check_off(index_src(gated_load(valid, r0), 1), "r0", "(r0<(r1*4+r2))");
}

TEST_CASE("symbolic valid: image idx gt c") {
  UOp g0 = special("gidx0", 32), g1 = special("gidx1", 32);
  UOp ld = image_load({10, 10, 4}, ne(g1 < 1, true), g0, g1 - 1);
  check_off(index_src(ld, 1), "(gidx1+-1)", "((gidx1<1)!=True)");
  check_off(index_src(ld, 2), "gidx0", "((gidx1<1)!=True)");
  UOp ld2 = image_load({10, 10, 4}, ne(g0 < 1, true) & ne(g1 < 1, true), g0 + 1, g1 - 1);
  check_off(index_src(ld2, 1), "(gidx1+-1)", "(((gidx0<1)!=True)&((gidx1<1)!=True))");
  check_off(index_src(ld2, 2), "(gidx0+1)", "(((gidx0<1)!=True)&((gidx1<1)!=True))");
}

TEST_CASE("symbolic valid: image idx lt bound with a div in the valid") {
  UOp g0 = special("gidx0", 32), g1 = special("gidx1", 32);
  UOp ld = image_load({10, 10, 4}, floordiv(g1, 2) < 5, g0, g1);
  check_off(index_src(ld, 1), "gidx1", "(gidx1<10)");
  check_off(index_src(ld, 2), "gidx0", "(gidx1<10)");
}

TEST_CASE("symbolic valid: image openpilot conv1") {
  UOp i1 = special("idx1", 32), i2 = special("idx2", 64), r0 = rng(0, 6), r1 = rng(1, 3), r2 = rng(2, 3);
  UOp alu1 = i2 * 2 + r1, alu4 = i1 * 48 + r2 * 6 + r0;
  UOp valid = ne(i2 * 2 + r1 < 1, true) & ne(i1 * 8 + r2 < 1, true);
  UOp ld = image_load({128, 1536, 4}, valid, (alu4 + 1530) % 1536, alu1 + floordiv(i1 + floordiv(r2 + 7, 8) + 31, 32) + (-2));
  const char* sv = "((((idx2+r1)<1)!=True)&(((idx1+r2)<1)!=True))";
  check_off(index_src(ld, 1), "(idx2*2+r1+(idx1+(r2+7)//8+31)//32+-2)", sv);
  check_off(index_src(ld, 2), "((idx1*8+r2+255)%256*6+r0)", sv);
}

TEST_CASE("symbolic valid: image simplify1 to simplify3") {
  UOp g = special("gidx", 512);
  UOp ld = image_load({1, 26, 4}, (g < 488) & ne(g < 480, true), (g * 3 + 18) % 26, floordiv(g * 3 + 18, 26) - 56);
  check_off(index_src(ld, 1), "0", "((gidx<488)&((gidx<480)!=True))");
  check_off(index_src(ld, 2), "(gidx*3+-1438)", "((gidx<488)&((gidx<480)!=True))");
  UOp l = special("lidx", 4);
  UOp ld2 = image_load({1, 2, 4}, (l < 3) & ne(l < 1, true), (l + 1) % 2, floordiv(l + 1, 2) - 1);
  check_off(index_src(ld2, 1), "0", "((lidx<3)&((lidx<1)!=True))");
  check_off(index_src(ld2, 2), "(lidx+-1)", "((lidx<3)&((lidx<1)!=True))");
  UOp i0 = special("idx0", 265);
  UOp ld3 = image_load({1, 64, 4}, ne(i0 < 201, true), (i0 + 55) % 64, floordiv(i0 + 55, 64) - 4);
  check_off(index_src(ld3, 1), "0", "((idx0<201)!=True)");
  check_off(index_src(ld3, 2), "(idx0+-201)", "((idx0<201)!=True)");
}

TEST_CASE("symbolic valid: image simplify5 drops the valid") {
  UOp i0 = special("idx0", 16), i1 = special("idx1", 24);
  UOp a1 = i1 * 256 + i0 * 4, a3 = (a1 + 1) % 768;
  UOp ld = image_load({10, 384, 4}, a3 < 640, i0 + ((floordiv(a3, 640) + floordiv(i1, 3)) % 8) * 16 + 128, floordiv(a3, 64) % 10);
  check_off(index_src(ld, 1), "(idx1%3*4)", "True");
  check_off(index_src(ld, 2), "(idx0+idx1//3*16+128)", "True");
}

TEST_CASE("symbolic valid: image simplify6 and simplify8") {
  UOp j1 = special("idx1", 16), j2 = special("idx2", 64), r3 = rng(3, 3), r4 = rng(4, 3), r5 = rng(5, 3);
  UOp A = j2 * 1536 + r4 * 768 + r3 + j1 * 24 + r5 * 3 + -771;
  UOp ld = image_load({128, 768, 4}, ne(j2 + r4 < 1, 1) & ne(j1 + r5 < 1, 1), A % 768, floordiv(A, 768));
  const char* sv = "((((idx2+r4)<1)!=True)&(((idx1+r5)<1)!=True))";
  check_off(index_src(ld, 1), "(idx2*2+r4+(idx1+(r5+7)//8+31)//32+-2)", sv);
  check_off(index_src(ld, 2), "((idx1*8+r5+255)%256*3+r3)", sv);
  UOp h0 = special("gidx0", 16), h1 = special("gidx1", 4), k0 = special("lidx0", 8), k1 = special("lidx1", 16);
  UOp B = h0 + h1 * 8192 + k0 * 1024 + k1 * 64 - 1040;
  UOp ld2 = image_load({32, 1024, 4}, ne(k1 < 1, true) & ne(h1 + k0 < 1, true), B % 1024, floordiv(B, 1024));
  const char* sv2 = "(((lidx1<1)!=True)&(((gidx1+lidx0)<1)!=True))";
  check_off(index_src(ld2, 1), "(lidx0+gidx1*8+-1)", sv2);
  check_off(index_src(ld2, 2), "(gidx0+lidx1*64+-16)", sv2);
}

TEST_CASE("symbolic valid: gated index math simplifies under its own gate") {
  UOp r = rng(0, 16);
  CHECK(rnd(graph_rewrite(valid_of(floordiv(r + 8, 8), r < 8), sym())) == "(1 if (r0<8) else Invalid)");
  CHECK(rnd(graph_rewrite(valid_of(r % 8 + floordiv(r, 8) * 8 - 8, ne(r < 8, true)), sym())) == "((r0+-8) if ((r0<8)!=True) else Invalid)");
  // symbolic alone leaves the gated expression
  CHECK(graph_rewrite(valid_of(floordiv(r + 8, 8), r < 8), symbolic()).src(1).op() != Ops::CONST);
}

TEST_CASE("symbolic valid: uop_given_valid with an empty range") {
  UOp r = rng(0, 16);
  // r < 4 and r >= 8 cannot both hold: the fake variable's range is empty, which must not throw
  UOp v = (r < 4) & ne(r < 8, true);
  CHECK_NOTHROW(sym_detail::uop_given_valid(v, r + 1));
}

TEST_CASE("symbolic sym: distribute -1 and const multiply over weakint sums") {
  UOp x = UOp::variable("x", 0, 10), y = UOp::variable("y", -3, 3);
  CHECK(rnd(graph_rewrite(-1 * (x + y * 3), sym())) == "(y*-3+x*-1)");
  CHECK(rnd(graph_rewrite(-1 * (x + y * 3), symbolic())) == "((x+y*3)*-1)");
  CHECK(rnd(graph_rewrite((x + y) * 4, sym())) == "(y*4+x*4)");
  CHECK(rnd(graph_rewrite((x + y) * 4, symbolic())) == "((y+x)*4)");
}

TEST_CASE("symbolic sym: cast is pushed into where branches") {
  UOp x = UOp::variable("x", 0, 10), y = UOp::variable("y", -3, 3), s = UOp::variable("s", 0, 5);
  UOp w = graph_rewrite(where(s < 3, x, y + 1).cast(dtypes::int32), sym());
  CHECK(rnd(w) == "((int)(x) if (s<3) else ((int)(y)+1))");
  UOp w2 = graph_rewrite(where(s < 3, x, UOp::const_int(7)).cast(dtypes::int32), sym());
  CHECK(rnd(w2) == "((int)(x) if (s<3) else 7)");
  CHECK(w2.src(2).op() == Ops::CONST);
  CHECK(w2.src(2).dtype() == dtypes::int32);
}

TEST_CASE("symbolic sym: reciprocal splitting") {
  UOp f = UOp::variable("f", 1, 4, dtypes::float32);
  UOp r1 = graph_rewrite(reciprocal(f * UOp::const_(dtypes::float32, 2.0)), sym());
  CHECK(r1.op() == Ops::MUL);
  CHECK(r1.src(0) == reciprocal(f));
  CHECK(r1.src(1).op() == Ops::CONST);
  CHECK(r1.src(1).arg().as_double() == 0.5);
  UOp r2 = graph_rewrite(reciprocal(f * f), sym());
  CHECK(r2.op() == Ops::MUL);
  CHECK(r2.src(0) == reciprocal(f));
  CHECK(r2.src(1) == reciprocal(f));
  // x * 1/(1+x) -> 1 - 1/(1+x)
  UOp r3 = graph_rewrite(f * reciprocal(1 + f), sym());
  CHECK(r3.op() == Ops::ADD);
  CHECK_FALSE(sym_detail::in_slice(r3, f * reciprocal(1 + f)));
}

TEST_CASE("symbolic sym: const and independent multiplies move out of REDUCE") {
  UOp r = rng(0, 16), f = UOp::variable("f", 1, 4, dtypes::float32);
  auto red = [&](const UOp& v) { return UOp::make(Ops::REDUCE, dtypes::float32, {v, r}, Arg{Arg(Ops::ADD), Arg(int64_t(0))}); };
  UOp a = graph_rewrite(red(r.cast(dtypes::float32) * UOp::const_(dtypes::float32, 3.0)), sym());
  REQUIRE(a.op() == Ops::MUL);
  CHECK(a.src(0) == red(r.cast(dtypes::float32)));
  CHECK(a.src(1).arg().as_double() == 3.0);
  UOp b = graph_rewrite(red(r.cast(dtypes::float32) * f), sym());
  REQUIRE(b.op() == Ops::MUL);
  CHECK(b.src(0) == red(r.cast(dtypes::float32)));
  CHECK(b.src(1) == f);
  // a tensor-level REDUCE (arg (op, n_axes), no range sources) is left alone
  UOp t = UOp::make(Ops::REDUCE, dtypes::float32, {f * UOp::const_(dtypes::float32, 3.0)}, Arg{Arg(Ops::ADD), Arg(int64_t(1))});
  CHECK(graph_rewrite(t, sym()) == t);
}

TEST_CASE("symbolic sym: GROUP and SINK flattening") {
  UOp x = UOp::variable("x", 0, 10), y = UOp::variable("y", 0, 10);
  UOp g1[] = {x};
  CHECK(graph_rewrite(UOp::group(g1), sym()) == x);
  UOp inner[] = {x, y};
  UOp s = UOp::sink({UOp::group(inner), UOp::make(Ops::NOOP, dtypes::void_), UOp::sink({y})});
  UOp out = graph_rewrite(s, sym());
  REQUIRE(out.op() == Ops::SINK);
  REQUIRE(out.nsrc() == 3);
  CHECK(out.src(0) == x);
  CHECK(out.src(1) == y);
  CHECK(out.src(2) == y);
}

TEST_CASE("symbolic sym: store folding") {
  UOp buf = param_buf({16}), r = rng(0, 16);
  UOp idx = UOp::infer(Ops::INDEX, {buf, r});
  UOp ld = UOp::make(Ops::LOAD, dtypes::float32, {idx});
  CHECK(graph_rewrite(UOp::make(Ops::STORE, dtypes::void_, {idx, ld}), sym()).op() == Ops::NOOP);
  // store(idx, gate ? alt : load(idx)) -> store(INDEX(buf, gate ? r : Invalid), alt)
  UOp alt = UOp::const_(dtypes::float32, 1.0);
  UOp st = graph_rewrite(UOp::make(Ops::STORE, dtypes::void_, {idx, where(r < 4, alt, ld)}), sym());
  REQUIRE(st.op() == Ops::STORE);
  CHECK(st.src(1) == alt);
  CHECK(st.src(0).src(1) == valid_of(r, r < 4));
  // store of where(cond, val, Invalid) -> gated store
  UOp st2 = graph_rewrite(UOp::make(Ops::STORE, dtypes::void_, {idx, where(r < 4, alt, UOp::invalid())}), sym());
  REQUIRE(st2.op() == Ops::STORE);
  CHECK(st2.src(1) == alt);
  CHECK(st2.src(0).src(1) == valid_of(r, r < 4));
}

// ---- integer overflow semantics ------------------------------------------------------------------------------------
// graft stores integer CONST args as int64. tinygrad (Python ints) never wraps in constant folding: int32
// 2147483647 + 1 folds to an int32 CONST 2147483648 and uint32 1 - 2 folds to -1 (checked with tinygrad
// rewrite_rangeify2; the value is truncated only when code is emitted). graft does the same as long as the exact
// result fits in int64. Where the exact result does NOT fit in int64 (Python would produce e.g. 2**64), graft's
// exec_alu refuses to fold and the node is left as it is; vmin/vmax saturate to the int64 limits, and the range-fact
// rules never turn a saturated bound into a CONST.
TEST_CASE("symbolic overflow: int32 and uint results are not wrapped in constant folding") {
  UOp a = (UOp::const_(dtypes::int32, 2147483647) + UOp::const_(dtypes::int32, 1)).simplify();
  REQUIRE(a.op() == Ops::CONST);
  CHECK(a.dtype() == dtypes::int32);
  CHECK(a.arg().as_int() == 2147483648LL);  // tinygrad: 2147483648
  UOp m = (UOp::const_(dtypes::int32, 1 << 20) * UOp::const_(dtypes::int32, 1 << 20)).simplify();
  CHECK(m.arg().as_int() == 1099511627776LL);  // tinygrad: 1099511627776
  UOp u8 = (UOp::const_(dtypes::uint8, 200) + UOp::const_(dtypes::uint8, 100)).simplify();
  CHECK(u8.arg().as_int() == 300);  // tinygrad: 300
  UOp u32 = (UOp::const_(dtypes::uint32, 1) - UOp::const_(dtypes::uint32, 2)).simplify();
  REQUIRE(u32.op() == Ops::CONST);
  CHECK(u32.arg().as_int() == -1);  // tinygrad: -1
}

TEST_CASE("symbolic overflow: a result beyond int64 is not folded") {
  // tinygrad folds 2**62 * 4 to the Python int 18446744073709551616; graft keeps the MUL
  for (DType dt : {dtypes::int64, dtypes::weakint}) {
    UOp e = UOp::const_(dt, int64_t(1) << 62) * UOp::const_(dt, 4);
    UOp s = e.simplify();
    CHECK(s.op() == Ops::MUL);
  }
  // vmin/vmax saturate (tinygrad: vmax 2**64), and saturated bounds never fold a node to a CONST
  UOp v = UOp::variable("v", 0, int64_t(1) << 62, dtypes::int64);
  CHECK((v * 4).vmin().as_int() == 0);
  CHECK((v * 4).vmax().as_int() == INT64_MAX);
  UOp big = UOp::variable("w", int64_t(1) << 62, (int64_t(1) << 62) + 1);
  UOp cmp = ((big * 4) < 0).simplify();
  bool ok = cmp.op() != Ops::CONST || cmp.arg().as_double() == 0;  // never folded to True
  CHECK(ok);
}
