// The symbolic simplifier (tinygrad's uop/symbolic.py): variables with value ranges, index expressions, simplify(),
// render(), vmin()/vmax(), div/mod folding and validity (gated index) simplification.
// Every result is checked; the exit code is non-zero on a wrong result, so CI runs this as a test.
#include <graft/graft.hpp>

#include <iostream>
#include <string>

using namespace graft;

static bool all_ok = true;
// print `what` simplified, and check the rendered result
static void expect(const std::string& what, const UOp& u, const std::string& want) {
  std::string got = u.render();  // render() simplifies with symbolic() first, as tinygrad's render() does
  bool ok = got == want;
  std::cout << (ok ? "  ok   " : "  FAIL ") << what << "  ->  " << got << (ok ? "" : "   (want " + want + ")") << "\n";
  all_ok = all_ok && ok;
}
static void check(bool ok, const std::string& what) {
  std::cout << (ok ? "  ok   " : "  FAIL ") << what << "\n";
  all_ok = all_ok && ok;
}

int main() {
  // ---- variables and value ranges -------------------------------------------------------------------------------
  // A variable is a named integer with an inclusive range (a BUFFER node in the ALU address space; dtype weakint,
  // tinygrad's index type). Every node has a value range: vmin()/vmax() propagate the bounds through the ALU ops.
  UOp x = UOp::variable("x", 0, 1023), y = UOp::variable("y", 0, 3);
  UOp i = x * 4 + y;
  std::cout << "x in [0, 1023], y in [0, 3]; x*4+y in [" << i.vmin().str() << ", " << i.vmax().str() << "]\n";
  check(i.vmin().as_int() == 0 && i.vmax().as_int() == 4095, "vmin/vmax of x*4+y: [0, 4095]");

  // ---- div/mod folding ------------------------------------------------------------------------------------------
  // floordiv and % are Python's // and % (floor semantics; cdiv/cmod are C's truncating versions). The rules use the
  // value ranges: y < 4, so (x*4+y)//4 is x and the remainder is y.
  std::cout << "\ndiv/mod folding\n";
  UOp e = floordiv(i, 4) % 8;
  std::cout << "  ((x*4+y)//4)%8 built as a graph of " << e.toposort().size() << " nodes, simplified to "
            << e.simplify().toposort().size() << "\n";
  expect("((x*4+y)//4)%8", e, "(x%8)");
  expect("(x*4+y)%4", i % 4, "y");
  expect("(x*4+y)//4", floordiv(i, 4), "x");
  expect("(x*4+y)//2", floordiv(i, 2), "(x*2+y//2)");  // the divisible part is split off
  expect("(x*4+y)%2", i % 2, "(y%2)");
  // simplify() returns the rewritten graph; vmin/vmax of the result are tighter than the input's
  UOp s = e.simplify();
  check(s.vmin().as_int() == 0 && s.vmax().as_int() == 7, "(x%8) in [0, 7]");

  // ---- thread indices: split and recombine ----------------------------------------------------------------------
  // SPECIAL is a launch index (gidx0 in [0, 64), lidx0 in [0, 16)); codegen builds indices like these.
  std::cout << "\nlaunch indices\n";
  UOp g = UOp::special(64, "gidx0"), l = UOp::special(16, "lidx0");
  UOp idx = g * 16 + l;
  expect("(gidx0*16+lidx0)//16", floordiv(idx, 16), "gidx0");
  expect("(gidx0*16+lidx0)%16", idx % 16, "lidx0");
  expect("((gidx0*16+lidx0)//16)*16 + (gidx0*16+lidx0)%16", floordiv(idx, 16) * 16 + idx % 16, "(lidx0+gidx0*16)");
  // comparisons fold when the range decides them: idx is at most 1023
  expect("gidx0*16+lidx0 < 1024", idx < 1024, "True");
  expect("gidx0*16+lidx0 < 1000", idx < 1000, "((lidx0+gidx0*16)<1000)");

  // ---- folding from value ranges --------------------------------------------------------------------------------
  std::cout << "\nrange-based folding\n";
  UOp a = UOp::variable("a", 0, 9);
  check((a * 3 + 2).vmin().as_int() == 2 && (a * 3 + 2).vmax().as_int() == 29, "a*3+2 in [2, 29]");
  check((a - 5).vmin().as_int() == -5, "a-5 has vmin -5");
  expect("a+3 < 0", (a + 3) < 0, "False");
  expect("a//10", floordiv(a, 10), "0");
  expect("max(a, 0)", maximum(a, 0), "a");
  expect("(a*2+1)%2", (a * 2 + 1) % 2, "1");
  expect("x+x", x + x, "(x*2)");

  // substitute a value, then simplify: constant folding evaluates the expression
  UOp at13 = e.substitute({{x, UOp::const_int(13)}, {y, UOp::const_int(2)}}).simplify();
  check(at13 == UOp::const_int(5), "((13*4+2)//4)%8 == 5 after substitute + simplify");

  // ---- validity ---------------------------------------------------------------------------------------------------
  // A gated index is where(valid, idx, Invalid): where `valid` is false nothing is loaded or stored. tinygrad's `sym`
  // rule set (symbolic + pm_simplify_valid + a few more) simplifies idx assuming `valid` holds. Plain simplify()
  // (the `symbolic` set) does not use the gate.
  std::cout << "\nvalidity\n";
  UOp r = UOp::range(32, 0);  // a loop index r0 in [0, 32) (axis id 0)
  UOp gated = where(r < 16, (r % 16) * 2 + floordiv(r, 16), UOp::invalid());
  expect("where(r0<16, (r0%16)*2 + r0//16, Invalid)", gated, "((r0%16*2+r0//16) if (r0<16) else Invalid)");
  UOp with_valid = graph_rewrite(gated, sym());
  std::cout << "  with sym():  " << with_valid.render() << "\n";
  check(with_valid.render() == "((r0*2) if (r0<16) else Invalid)", "under r0<16, r0%16 is r0 and r0//16 is 0");
  // a gate that always holds disappears, one that never holds leaves only Invalid
  expect("where(a<10, a, Invalid)", where(a < 10, a, UOp::invalid()), "a");
  expect("where(a<0, a, Invalid)", where(a < 0, a, UOp::invalid()), "Invalid");
  // The clauses of an AND are simplified under the ones before them: given r0*3+r1 < 8, (r0*3+r1)//8 is 0.
  UOp r0 = UOp::range(4, 0), r1 = UOp::range(4, 1), r2 = UOp::range(4, 2), r3 = UOp::range(4, 3);
  UOp valid = ((r0 * 3 + r1) < 8) & ((floordiv(r0 * 3 + r1, 8) + r2 * 3 + r3) % 4 < 2);
  std::cout << "  simplify(): " << valid.render() << "\n";
  UOp valid_s = graph_rewrite(valid, sym());
  std::cout << "  sym():      " << valid_s.render() << "\n";
  check(valid_s.render() == "(((r0*3+r1)<8)&(((r2*3+r3)%4)<2))", "the second clause loses its (r0*3+r1)//8 term");

  std::cout << (all_ok ? "all checks passed\n" : "SOME CHECKS FAILED\n");
  return all_ok ? 0 : 1;
}
