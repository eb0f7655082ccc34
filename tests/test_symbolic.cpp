// Symbolic rules (rules/symbolic.hpp): tinygrad parity tables, a differential fuzz, and the long-chain check.
// The expected strings / bounds in kTinygradCases were produced by tinygrad (branch rewrite_rangeify2):
//   v = eval(expr); s = v.simplify(); (s.vmin, s.vmax, s.render(simplify=False))
// with Variables a[0,8] b[0,3] c[1,12] d[-4,5] e[0,255] (UOp.variable, i.e. BUFFER form, weakint).
#include <doctest/doctest.h>
#include <graft/graft.hpp>

#include <cctype>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

using namespace graft;

namespace {

struct Case { const char* expr; int64_t vmin, vmax; const char* render; };

// prefix + number (appending avoids a GCC 12 -Wrestrict false positive on `"v" + std::to_string(i)` at -O3)
std::string vname(const char* prefix, int i) {
  std::string s(prefix);
  s += std::to_string(i);
  return s;
}

// ---- a tiny Python-expression parser (ints, variables, + - * // % <, max(), ne(), where(), unary -) ---------------
struct Parser {
  using V = std::variant<int64_t, UOp>;
  std::string s;
  size_t i = 0;
  std::map<std::string, UOp> vars;

  static UOp u(const V& v) { return std::holds_alternative<UOp>(v) ? std::get<UOp>(v) : UOp::const_int(std::get<int64_t>(v)); }
  void ws() { while (i < s.size() && s[i] == ' ') i++; }
  bool eat(const char* t) {
    ws();
    size_t n = std::strlen(t);
    if (s.compare(i, n, t) == 0) { i += n; return true; }
    return false;
  }
  V binop(const char* op, const V& a, const V& b) {
    std::string o = op;
    if (std::holds_alternative<int64_t>(a) && std::holds_alternative<int64_t>(b)) return binop(op, u(a), b);  // CONST op CONST
    auto put = [&](auto f) -> V {
      if (std::holds_alternative<int64_t>(b)) return f(std::get<UOp>(a), std::get<int64_t>(b));
      return f(u(a), std::get<UOp>(b));
    };
    if (o == "+") return put([](const auto& x, const auto& y) { return x + y; });
    if (o == "-") return put([](const auto& x, const auto& y) { return x - y; });
    if (o == "*") return put([](const auto& x, const auto& y) { return x * y; });
    if (o == "//") return put([](const auto& x, const auto& y) { return floordiv(x, y); });
    if (o == "%") return put([](const auto& x, const auto& y) { return x % y; });
    if (o == "<") return put([](const auto& x, const auto& y) { return x < y; });
    throw std::runtime_error("bad op " + o);
  }
  V expr() {
    V a = add();
    if (eat("<")) a = binop("<", a, add());
    return a;
  }
  V add() {
    V a = mul();
    for (;;) {
      if (eat("+")) a = binop("+", a, mul());
      else if (eat("-")) a = binop("-", a, mul());
      else return a;
    }
  }
  V mul() {
    V a = unary();
    for (;;) {
      if (eat("//")) a = binop("//", a, unary());
      else if (eat("*")) a = binop("*", a, unary());
      else if (eat("%")) a = binop("%", a, unary());
      else return a;
    }
  }
  V unary() {
    if (eat("-")) {
      V a = unary();
      if (std::holds_alternative<int64_t>(a)) return -std::get<int64_t>(a);
      return -std::get<UOp>(a);
    }
    return atom();
  }
  V atom() {
    ws();
    if (eat("(")) { V a = expr(); REQUIRE(eat(")")); return a; }
    if (std::isdigit(s[i])) {
      int64_t v = 0;
      while (i < s.size() && std::isdigit(s[i])) v = v * 10 + (s[i++] - '0');
      return v;
    }
    std::string name;
    while (i < s.size() && (std::isalnum(s[i]) || s[i] == '_')) name += s[i++];
    if (name == "True") return UOp::const_bool(true);
    if (name == "False") return UOp::const_bool(false);
    if (name == "Invalid") return UOp::invalid();
    if (eat("(")) {
      std::vector<V> args{expr()};
      while (eat(",")) args.push_back(expr());
      REQUIRE(eat(")"));
      if (name == "max") return maximum(u(args[0]), u(args[1]));
      if (name == "ne") return std::holds_alternative<int64_t>(args[1]) ? ne(u(args[0]), std::get<int64_t>(args[1])) : ne(u(args[0]), u(args[1]));
      if (name == "where") return where(u(args[0]), u(args[1]), u(args[2]));
      if (name == "and") return u(args[0]) & u(args[1]);
      if (name == "or") return u(args[0]) | u(args[1]);
      FAIL("unknown function " << name);
    }
    if (eat("[")) {  // name[lo:hi] is a PARAM variable (tinygrad Variable(..., param=True)), name[lo:hi:b] a BUFFER one
      auto num = [&] {
        bool neg = eat("-");
        int64_t v = 0;
        while (i < s.size() && std::isdigit(s[i])) v = v * 10 + (s[i++] - '0');
        return neg ? -v : v;
      };
      int64_t lo = num();
      REQUIRE(eat(":"));
      int64_t hi = num();
      bool buffer = eat(":b");
      REQUIRE(eat("]"));
      if (buffer) return UOp::variable(name, lo, hi);
      ParamArg pa{-1, dtypes::weakint, std::pair{lo, hi}, 1, name, AddrSpace::ALU, ""};
      return UOp::make(Ops::PARAM, dtypes::weakint, {UOp::shape_arg({})}, Arg(std::move(pa)));
    }
    auto it = vars.find(name);
    REQUIRE_MESSAGE(it != vars.end(), "unknown variable " << name);
    return it->second;
  }
};

std::map<std::string, UOp> std_vars() {
  return {{"a", UOp::variable("a", 0, 8)}, {"b", UOp::variable("b", 0, 3)}, {"c", UOp::variable("c", 1, 12)},
          {"d", UOp::variable("d", -4, 5)}, {"e", UOp::variable("e", 0, 255)}};
}
UOp parse(const std::string& e) {
  Parser p{e, 0, std_vars()};
  Parser::V v = p.expr();
  return Parser::u(v);
}

// ---- a small evaluator: the value of an integer / bool expression at a point ----------------------------------------
int64_t eval(const UOp& root, const std::unordered_map<UOp, int64_t>& at) {
  std::unordered_map<const UOpNode*, int64_t> val;
  for (const UOp& x : root.toposort()) {
    auto s = [&](size_t i) { return val.at(x.src(i).node()); };
    int64_t r = 0;
    switch (x.op()) {
      case Ops::CONST: r = x.arg().as_int(); break;
      case Ops::BUFFER: case Ops::PARAM: r = at.at(x); break;  // variables
      case Ops::STACK: r = 0; break;  // the shape arg of a variable
      case Ops::ADD: r = s(0) + s(1); break;
      case Ops::MUL: r = s(0) * s(1); break;
      case Ops::FLOORDIV: r = sym_detail::pfloordiv(s(0), s(1)); break;
      case Ops::FLOORMOD: r = sym_detail::pfloormod(s(0), s(1)); break;
      case Ops::MAX: r = std::max(s(0), s(1)); break;
      case Ops::CMPLT: r = s(0) < s(1); break;
      case Ops::CMPNE: r = s(0) != s(1); break;
      case Ops::AND: r = s(0) & s(1); break;
      case Ops::OR: r = s(0) | s(1); break;
      case Ops::XOR: r = s(0) ^ s(1); break;
      case Ops::WHERE: r = s(0) ? s(1) : s(2); break;
      case Ops::CAST: r = x.dtype() == dtypes::bool_ ? s(0) != 0 : s(0); break;
      default: FAIL("eval: unsupported op " << op_name(x.op())); break;
    }
    val[x.node()] = r;
  }
  return val.at(root.node());
}

const Case kHandCases[] = {
{"(a<4)", 0, 1, "(a<4)"},
{"(a*4+b)", 0, 35, "(b+a*4)"},
{"(a//2)", 0, 4, "(a//2)"},
{"(a%8)", 0, 7, "(a%8)"},
{"((a*4+b)//4)", 0, 8, "a"},
{"(((a*4+b)//4)%8)", 0, 7, "(a%8)"},
{"((a*4+2)%4)", 2, 2, "2"},
{"((a*6)//3)", 0, 16, "(a*2)"},
{"(((a*12+8)%6)//2)", 1, 1, "1"},
{"((a*4+b*4)//2)", 0, 22, "(b*2+a*2)"},
{"((a*5+b*4)//2)", 0, 26, "(b*2+a*2+a//2)"},
{"(((a*4+b*4)+7)//16)", 0, 3, "((b+a+1)//4)"},
{"((3+b*3)%4)", 0, 3, "(b*-1+3)"},
{"(((a//2)+1)//2)", 0, 2, "((a+2)//4)"},
{"((e%12)//4*4+(e%4)+(e//12)*12)", 0, 255, "e"},
{"(e%12//4)", 0, 2, "(e//4%3)"},
{"(e//4%3*4+e%4)", 0, 11, "(e%12)"},
{"((e+3)//4)", 0, 64, "((e+3)//4)"},
{"((e+3)%4)", 0, 3, "((e+3)%4)"},
{"max(a, 9)", 9, 9, "9"},
{"max(a, b)", 0, 8, "max(b, a)"},
{"max(a, 3)", 3, 8, "max(a, 3)"},
{"(a+a)", 0, 16, "(a*2)"},
{"(a*3+a*4)", 0, 56, "(a*7)"},
{"((a+b)+a*2)", 0, 27, "(b+a*3)"},
{"(b+a+a)", 0, 19, "(b+a*2)"},
{"(a+3+4)", 7, 15, "(a+7)"},
{"(a*3*4)", 0, 96, "(a*12)"},
{"((a+3)*2)", 6, 22, "(a*2+6)"},
{"(-(a+3))", -11, -3, "(a*-1+-3)"},
{"(a-a)", 0, 0, "0"},
{"(a//a)", 1, 1, "1"},
{"(a%a)", 0, 0, "0"},
{"((a*2)<7)", 0, 1, "(a<4)"},
{"((a+3)<7)", 0, 1, "(a<4)"},
{"((a//4)<2)", 0, 1, "(a<8)"},
{"((a*-1)<(b*-1))", 0, 1, "(b<a)"},
{"ne(a, a)", 0, 0, "False"},
{"((a*4+b)<8)", 0, 1, "(a<2)"},
{"((a*4+b*8)<8)", 0, 1, "((a+b*2)<2)"},
{"(c//c)", 1, 1, "1"},
{"((a*c)//c)", 0, 8, "a"},
{"((a*c+b*c)//c)", 0, 11, "(b+a)"},
{"((a*c+b*c)%c)", 0, 0, "0"},
{"((d*4+3)//4)", -4, 5, "d"},
{"((d*4+3)%4)", 3, 3, "3"},
{"(d//2)", -2, 2, "(d//2)"},
{"(d%3)", 0, 2, "(d%3)"},
{"((a-3)//4)", -1, 1, "((a+1)//4+-1)"},
{"(e//8//4)", 0, 7, "(e//32)"},
{"((e%16)//4)", 0, 3, "(e//4%4)"},
{"((e%16)%4)", 0, 3, "(e%4)"},
{"((e*2)%4)", 0, 2, "(e%2*2)"},
{"((e*3+1)//3)", 0, 255, "e"},
{"(((e//4)*4+e%4)//2)", 0, 127, "(e//2)"},
{"(ne((a<3), True))", 0, 1, "((a<3)!=True)"},
{"((e+b)%2)", 0, 1, "((b+e)%2)"},
{"(e%2+e//2*2)", 0, 255, "e"},
{"(a*0)", 0, 0, "0"},
{"(a*1+0)", 0, 8, "a"},
{"(where((a<3), b, b))", 0, 3, "b"},
{"(where((a<9), a, b))", 0, 8, "a"},
{"max((a+3), a)", 3, 11, "max(a, (a+3))"},
{"(e//256)", 0, 0, "0"},
{"(e%256)", 0, 255, "e"},
{"((e-256)//256)", -1, -1, "-1"},
{"where((a<3), where((a<3), b, c), e)", 0, 255, "(b if (a<3) else e)"},
{"where((a<3), (b+where((a<3), 1, 2)), where((a<3), c, e))", 0, 255, "((b+1) if (a<3) else e)"},
{"where((a<3), max(b, where((a<3), 4, 9)), 7)", 4, 7, "(4 if (a<3) else 7)"},
{"where(ne(a, 2), where(ne(a, 2), b, 5), where(ne(a, 2), 6, c))", 0, 12, "(b if (a!=2) else c)"},
{"where((e<100), (e+where((e<100), 3, 5)), (e+where((e<100), 7, 11)))", 3, 266, "((e+3) if (e<100) else (e+11))"},
// Invalid gates (pm_data_invalid)
{"where((a<3), ((a*4)+b), Invalid)", 0, 35, "((b+a*4) if (a<3) else Invalid)"},
{"((where((a<3), a, Invalid)*2)+1)", 0, 17, "((a*2+1) if (a<3) else Invalid)"},
{"where((a<3), Invalid, b)", 0, 3, "(b if ((a<3)!=True) else Invalid)"},
{"(where((a<3), a, Invalid)//2)", 0, 4, "((a//2) if (a<3) else Invalid)"},
{"(where((a<3), a, Invalid)%2)", 0, 1, "((a%2) if (a<3) else Invalid)"},
{"max(where((a<3), a, Invalid), b)", 0, 8, "(max(b, a) if (a<3) else Invalid)"},
{"where((a<3), where((b<2), a, Invalid), e)", 0, 255, "((a if (a<3) else e) if (((a<3)!=True)|(b<2)) else Invalid)"},
{"where((a<3), e, where((b<2), a, Invalid))", 0, 255, "((e if (a<3) else a) if ((a<3)|(b<2)) else Invalid)"},
{"where(where((a<3), (b<2), Invalid), a, e)", 0, 255, "((a if (b<2) else e) if (a<3) else Invalid)"},
{"(where((a<3), a, Invalid)*0)", 0, 1, "(0 if (a<3) else Invalid)"},
{"(b+where((a<3), (a*4), Invalid))", 0, 35, "((b+a*4) if (a<3) else Invalid)"},
{"where((a<9), a, Invalid)", 0, 8, "a"},
{"where((a<0), a, Invalid)", 0, 1, "Invalid"},
{"(where((a<3), a, Invalid)<2)", 0, 1, "((a<2) if (a<3) else Invalid)"},
{"where((e<64), ((e//8)*8+(e%8)), Invalid)", 0, 255, "(e if (e<64) else Invalid)"},
};

// every helper_test_variable input of tinygrad's test/null/test_uop_symbolic.py (TestSymbolic) that is weakint/bool
// math over plain Variables (PARAM form), serialized; the expectation is tinygrad's `symbolic` (UOp.simplify) result.
// (The Python tests check `sym`, a superset, so a few of their strings differ; the comment names the test.)
const Case kTinygradTestCases[] = {
{"(a[0:8]+1)", 1, 9, "(a+1)"},  // test_add_1
{"((a[0:5]+(2*(-1)))//4)", -1, 0, "((a+2)//4+-1)"},  // test_add_div
{"((a[0:5]+(1*(-1)))//4)", -1, 1, "((a+3)//4+-1)"},  // test_add_div
{"(a[0:5]//4)", 0, 1, "(a//4)"},  // test_add_div
{"((a[0:5]+1)//4)", 0, 1, "((a+1)//4)"},  // test_add_div
{"((a[0:5]+2)//4)", 0, 1, "((a+2)//4)"},  // test_add_div
{"((a[0:5]+3)//4)", 0, 2, "((a+3)//4)"},  // test_add_div
{"((a[0:5]+4)//4)", 1, 2, "(a//4+1)"},  // test_add_div
{"((a[0:5]+5)//4)", 1, 2, "((a+1)//4+1)"},  // test_add_div
{"((a[0:8]*2)+12)", 12, 28, "(a*2+12)"},  // test_add_min_max
{"(a[0:8]+a[0:8])", 0, 16, "(a*2)"},  // test_add_self
{"((a[0:8]+b[0:8])+b[0:8])", 0, 24, "(a+b*2)"},  // test_add_self
{"(((a[0:8]*3)+b[0:8])+a[0:8])", 0, 40, "(b+a*4)"},  // test_add_self
{"((a[0:8]+b[0:8])+(a[0:8]*3))", 0, 40, "(b+a*4)"},  // test_add_self
{"(0*a[0:1])", 0, 0, "0"},  // test_and_fold
{"(1*a[0:1])", 0, 1, "a"},  // test_and_remove
{"(a[-20:20]%10)", 0, 9, "(a%10)"},  // test_big_mod
{"(a[-20:0]%10)", 0, 9, "(a%10)"},  // test_big_mod
{"(a[-20:1]%10)", 0, 9, "(a%10)"},  // test_big_mod
{"(a[0:20]%10)", 0, 9, "(a%10)"},  // test_big_mod
{"(a[-1:20]%10)", 0, 9, "(a%10)"},  // test_big_mod
{"and((a[0:10]<10), ne((a[0:10]<10), True))", 0, 1, "((a<10)&((a<10)!=True))"},  // test_bool_and_not_contradiction
{"ne((x[0:3]<2), False)", 0, 1, "(x<2)"},  // test_bool_ne_false
{"or((a[0:10]<10), ne((a[0:10]<10), True))", 1, 1, "True"},  // test_bool_or_not_tautology
{"(a[3:8]<4)", 0, 1, "(a<4)"},  // test_cmp_simple
{"ne((a[3:8]<8), True)", 0, 1, "((a<8)!=True)"},  // test_cmp_simple
{"fake[1:1]", 1, 1, "1"},  // test_const_var
{"((a[0:3]+b[0:5])*3)", 0, 24, "((a+b)*3)"},  // test_distribute_mul
{"(((1+a[0:3])*(-2))+12)", 4, 10, "(a*-2+10)"},  // test_distribute_mul
{"(a[0:8]//1)", 0, 8, "a"},  // test_div_1
{"((3+a[0:1])//4)", 0, 1, "a"},  // test_div_binary_expression
{"((((a[0:1]*2)+(b[0:1]*3))+2)//6)", 0, 1, "((a+b+1)//3)"},  // test_div_by_factor_tie_break
{"((((-40)+(a[0:10]*2))+(b[0:10]*40))//40)", -1, 9, "(b+-1)"},  // test_div_cancel
{"((3+(3*a[0:3]))//4)", 0, 3, "a"},  // test_div_congruence
{"(((18+(17*a[0:2]))+17)//18)", 1, 3, "(a+1)"},  // test_div_congruence
{"(((9+(19*x[0:3]))+(18*y[0:2]))//10)", 0, 10, "(y*2+x*2)"},  // test_div_congruence_multiple_vars
{"(((a[0:124]//2)+1)//2)", 0, 31, "((a+2)//4)"},  // test_div_const_div
{"((((a[0:124]*(-1))//2)+(1*(-1)))//2)", -32, -1, "((a*-1+2)//4+-1)"},  // test_div_const_div
{"((((a[0:124]*(-1))//2)+10)//2)", -26, 5, "(a*-1//4+5)"},  // test_div_const_div
{"(((a[0:124]//(-2))+1)//3)", -21, 0, "((a+-2)//-6)"},  // test_div_const_div_neg_inner_divisor
{"((((a[0:124]+(10*(-1)))//2)+10)//2)", 2, 33, "((a+2)//4+2)"},  // test_div_const_div_wrong_sign
{"((((a[0:124]+10)//(-2))+10)//(-4))", -2, 14, "((a//-2+-3)//-4+-2)"},  // test_div_const_div_wrong_sign_divisor
{"((a[0:1800]//10)//9)", 0, 20, "(a//90)"},  // test_div_div
{"(((((lidx1[0:1]+(((gidx1[0:10]*18)+(ridx1005[0:2]*18))+(lidx0[0:1]*162)))+(gidx0[0:10]*2))+(ridx1006[0:2]*2))+(-40))//18)", -3, 20, "(ridx1005+gidx1+lidx0*9+(ridx1006+gidx0+7)//9+-3)"},  // test_div_drop_small_terms
{"(((idx[0:16]*4)%8)//4)", 0, 1, "(idx%2)"},  // test_div_into_mod
{"(a[2:7]//2)", 1, 3, "(a//2)"},  // test_div_min_max
{"(a[0:6]//2)", 0, 3, "(a//2)"},  // test_div_min_max
{"(x[0:10]//y[1:10])", 0, 10, "(x//y)"},  // test_div_min_max
{"(x[-10:0]//y[1:10])", -10, 0, "(x//y)"},  // test_div_min_max
{"(x[0:10]//y[-10:-1])", -10, 0, "(x//y)"},  // test_div_min_max
{"(x[-10:0]//y[-10:-1])", 0, 10, "(x//y)"},  // test_div_min_max
{"(x[-10:10]//y[1:10])", -10, 10, "(x//y)"},  // test_div_min_max
{"(x[-10:10]//y[-10:-1])", -10, 10, "(x//y)"},  // test_div_min_max
{"((gidx[0:124]%4)+((gidx[0:124]//4)*4))", 0, 124, "gidx"},  // test_div_mod_recombine
{"(((gidx[0:124]//4)*4)+(gidx[0:124]%4))", 0, 124, "gidx"},  // test_div_mod_recombine
{"((lidx[0:124]+(gidx[0:124]%4))+((gidx[0:124]//4)*4))", 0, 248, "(gidx+lidx)"},  // test_div_mod_recombine
{"((lidx[0:124]+((gidx[0:124]//4)*4))+(gidx[0:124]%4))", 0, 248, "(gidx+lidx)"},  // test_div_mod_recombine
{"((lidx[0:124]+((gidx[0:124]//4)*8))+(2*(gidx[0:124]%4)))", 0, 372, "(lidx+gidx*2)"},  // test_div_mod_recombine
{"((lidx[0:124]+(2*(gidx[0:124]%4)))+((gidx[0:124]//4)*8))", 0, 372, "(lidx+gidx*2)"},  // test_div_mod_recombine
{"(((((gidx[0:150527]//3)%224)*3)+(gidx[0:150527]%3))+((gidx[0:150527]//672)*672))", 0, 150527, "gidx"},  // test_div_mod_recombine_3level
{"(((((x[0:384]//11)%7)*11)+(x[0:384]%11))+((x[0:384]//77)*77))", 0, 384, "x"},  // test_div_mod_recombine_3level
{"((((x2[0:209]//7)%6)*14)+((x2[0:209]//42)*84))", 0, 406, "(x2//7*14)"},  // test_div_mod_recombine_3level
{"(((((x[-1000:1000]//3)%224)*3)+(x[-1000:1000]%3))+((x[-1000:1000]//672)*672))", -1000, 1000, "x"},  // test_div_mod_recombine_3level
{"((((x[-1000:1000]//3)%7)*3)+((x[-1000:1000]//21)*21))", -1002, 999, "(x//3*3)"},  // test_div_mod_recombine_3level
{"((((gidx[0:150527]//3)%224)*3)+((gidx[0:150527]//600)*600))", 0, 150669, "(gidx//600*600+gidx//3%224*3)"},  // test_div_mod_recombine_3level
{"((((gidx[0:150527]//3)%224)*3)+((gidx[0:150527]//672)*700))", 0, 156769, "(gidx//672*700+gidx//3%224*3)"},  // test_div_mod_recombine_3level
{"(((((a[0:7]*15)+b[0:14])//10)*10)+(((a[0:7]*15)+b[0:14])%10))", 0, 119, "((a+(a+b//5)//2)*10+(b+a*5)%10)"},  // test_div_mod_recombine_after_asymmetric_fold
{"(((((a[0:7]*15)+b[0:14])//10)*2)+((((a[0:7]*15)+b[0:14])//5)%2))", 0, 23, "((a+(a+b//5)//2)*2+(a+b//5)%2)"},  // test_div_mod_recombine_after_asymmetric_fold
{"(((((gidx0[0:15]*4)+lidx0[0:3])//8)*8)+(((gidx0[0:15]*4)+lidx0[0:3])%8))", 0, 63, "(lidx0+gidx0*4)"},  // test_div_mod_recombine_after_nesting
{"(((((gidx0[0:15]*4)+lidx0[0:3])//8)*16)+((((gidx0[0:15]*4)+lidx0[0:3])%8)*2))", 0, 126, "((lidx0+gidx0%2*4)*2+gidx0//2*16)"},  // test_div_mod_recombine_after_nesting
{"(((((a[0:7]*6)+b[0:1])//12)*12)+(((a[0:7]*6)+b[0:1])%12))", 0, 43, "(b+a*6)"},  // test_div_mod_recombine_after_nesting
{"((((31*a[0:2])+1)%30)+((((31*a[0:2])+1)//30)*30))", 1, 63, "(a*31+1)"},  // test_div_mod_recombine_folded_mod
{"((((31*b[0:100])+1)%18)+((((31*b[0:100])+1)//18)*18))", 0, 3113, "((b+(b*13+1)//18)*18+(b*13+1)%18)"},  // test_div_mod_recombine_folded_mod
{"((((x[0:31]//8)*4)+y[0:5])+((x[0:31]//2)%4))", 0, 20, "(y+x//2)"},  // test_div_mod_recombine_in_additive_sum
{"((y[0:5]+((x[0:31]//8)*4))+((x[0:31]//2)%4))", 0, 20, "(y+x//2)"},  // test_div_mod_recombine_in_additive_sum
{"((((19*b[0:100])+3)%7)+((((19*b[0:100])+3)//7)*7))", 0, 1903, "((b*2+(b*5+3)//7)*7+(b*5+3)%7)"},  // test_div_mod_recombine_large_coeff
{"((((25*a[0:10])+3)%10)+((((25*a[0:10])+3)//10)*10))", 3, 258, "((a*2+a//2)*10+a%2*5+3)"},  // test_div_mod_recombine_large_coeff
{"((((x[0:199]//3)%4)*2)+(((x[0:199]//12)%5)*8))", 0, 38, "(x//3%20*2)"},  // test_div_mod_recombine_merged_quotient
{"((((x[0:199]//3)+1)%4)+(((x[0:199]+3)//12)*4))", 1, 67, "(x//3+1)"},  // test_div_mod_recombine_merged_quotient
{"((x[0:199]%(-3))+(((x[0:199]//(-3))%5)*(-3)))", -14, 0, "(x%-15)"},  // test_div_mod_recombine_negative_div
{"(((b[-100:100]//(-3))%(-2))+((b[-100:100]//6)*(-2)))", -33, 34, "(b//6*-2+b//-3%-2)"},  // test_div_mod_recombine_negative_div_unsound
{"(((gidx[0:15]//2)%4)+((gidx[0:15]//8)*4))", 0, 7, "(gidx//2)"},  // test_div_mod_recombine_partial
{"(((x[0:100]+(50*(-1)))%3)+(((x[0:100]+(50*(-1)))//3)*3))", -50, 50, "(x+-50)"},  // test_div_mod_recombine_shifted_quotient
{"(((x[0:100]+(50*(-1)))%3)+((((x[0:100]+(50*(-1)))//3)%5)*3))", 0, 14, "((x+10)%15)"},  // test_div_mod_recombine_shifted_quotient
{"((((y[0:99]+(50*(-1)))//5)%4)+(((y[0:99]+(50*(-1)))//20)*4))", -10, 9, "(y//5+-10)"},  // test_div_mod_recombine_shifted_quotient
{"((((16*b[0:100])+2)%18)+((((16*b[0:100])+2)//18)*18))", 2, 1602, "(b*16+2)"},  // test_div_mod_recombine_with_gcd
{"((((30*b[0:100])+1)%18)+((((30*b[0:100])+1)//18)*18))", 1, 3001, "((b+b*2//3)*18+b*2%3*6+1)"},  // test_div_mod_recombine_with_gcd
{"((((x[0:127]//2)%4)*2)+(x[0:127]%2))", 0, 7, "(x%8)"},  // test_div_mod_recompose_low_order_remainder
{"((((((gidx[0:124]*(-1))*8)+(lidx[0:7]*(-1)))+999)//(-4))+250)", 0, 250, "((lidx*-1+gidx*-8+-1)//-4)"},  // test_div_neg_all_range
{"((((((gidx[0:124]*(-1))*8)+(lidx[0:7]*(-1)))+1000)//(-4))+250)", 0, 249, "((lidx*-1+gidx*-8)//-4)"},  // test_div_neg_all_range
{"((((((gidx[0:124]*(-1))*8)+(lidx[0:7]*(-1)))+1001)//(-4))+250)", -1, 249, "((lidx*-1+gidx*-8+-3)//-4+-1)"},  // test_div_neg_all_range
{"((((((gidx[0:124]*(-1))*8)+(lidx[0:7]*(-1)))+1002)//(-4))+250)", -1, 249, "((lidx*-1+gidx*-8+-2)//-4+-1)"},  // test_div_neg_all_range
{"((((idx[0:100]*(-1))+199)//(-4))+50)", 0, 25, "((idx*-1+-1)//-4)"},  // test_div_neg_cancel
{"((((idx[0:100]*(-1))+200)//(-4))+50)", 0, 25, "(idx*-1//-4)"},  // test_div_neg_cancel
{"((((idx[0:100]*(-1))+201)//(-4))+50)", -1, 24, "((idx*-1+-3)//-4+-1)"},  // test_div_neg_cancel
{"((idx[0:100]*(-1))//2)", -50, 0, "(idx*-1//2)"},  // test_div_neg_cancel
{"(idx[0:100]//(-2))", -50, 0, "(idx//-2)"},  // test_div_neg_cancel
{"(a[1:7]//(-2))", -4, -1, "(a//-2)"},  // test_div_neg_min_max
{"(a[0:6]//(-2))", -3, 0, "(a//-2)"},  // test_div_neg_min_max
{"(((a[0:255]*(-1))+256)//2)", 0, 128, "(a*-1//2+128)"},  // test_div_neg_rem
{"(((((lidx0[0:7]*(-1))+(lidx1[0:7]*(-1)))+14)//(-32))+4)", 3, 4, "((lidx0*-1+lidx1*-1+-18)//-32+3)"},  // test_div_neg_then_neg
{"((((((lidx0[0:7]*(-1))+(lidx1[0:7]*(-1)))+14)//(-32))+4)*(-1))", -4, -3, "((lidx0*-1+lidx1*-1+-18)//-32*-1+-3)"},  // test_div_neg_then_neg
{"(((((lidx0[0:7]*(-1))+(lidx1[0:7]*(-1)))+134)//(-32))+4)", -1, 0, "((lidx0*-1+lidx1*-1+-26)//-32+-1)"},  // test_div_neg_then_neg
{"(((((lidx0[0:7]*(-1))+(lidx1[0:7]*(-1)))+142)//(-32))+4)", -1, 0, "((lidx0*-1+lidx1*-1+-18)//-32+-1)"},  // test_div_neg_then_neg
{"(((((lidx0[0:7]*(-1))+(lidx1[0:7]*(-1)))+150)//(-32))+4)", -1, -1, "-1"},  // test_div_neg_then_neg
{"(((((lidx0[0:7]*(-1))+(lidx1[0:7]*(-1)))+158)//(-32))+4)", -1, -1, "-1"},  // test_div_neg_then_neg
{"((((160*a[0:2])+(5*b[0:31]))+(4*c[0:1]))//60)", 0, 7, "(a*2+(b+a*8)//12)"},  // test_div_nest_by_factor_with_const
{"(((((160*a[0:2])+(5*b[0:31]))+(4*c[0:1]))+1)//60)", 0, 8, "(a*2+(c+b+a*8)//12)"},  // test_div_nest_by_factor_with_const
{"(((((160*a[0:2])+(5*b[0:31]))+(4*c[0:1]))+2)//60)", 0, 8, "(a*2+(c+b+a*8)//12)"},  // test_div_nest_by_factor_with_const
{"(((((160*a[0:2])+(5*b[0:31]))+(4*c[0:1]))+3)//60)", 0, 8, "(a*2+(c+b+a*8)//12)"},  // test_div_nest_by_factor_with_const
{"(((((160*a[0:2])+(5*b[0:31]))+(4*c[0:1]))+59)//60)", 0, 8, "(a*2+(c+b+a*8+11)//12)"},  // test_div_nest_by_factor_with_const
{"((idx[0:9]*(-10))//11)", -9, 0, "(idx*-1)"},  // test_div_numerator_negative
{"(((31*b[0:100])+1)//18)", 0, 172, "(b+(b*13+1)//18)"},  // test_div_partial_quotient
{"(((19*b[0:100])+3)//7)", 0, 271, "(b*2+(b*5+3)//7)"},  // test_div_partial_quotient
{"(a[2:3]//2)", 1, 1, "1"},  // test_div_reduction
{"(a[0:7]//20)", 0, 0, "0"},  // test_div_remove
{"(((3*a[-10:10])+(9*b[-10:10]))//(3*d[1:10]))", -40, 40, "((a+b*3)//d)"},  // test_div_symbolic_const_gcd
{"(x[20:23]//y[8:10])", 2, 2, "2"},  // test_divmod_variable_denom_fold_to_const
{"(x[20:23]%y[8:10])", 0, 7, "(x+y*-2)"},  // test_divmod_variable_denom_fold_to_const
{"where((x[-10:10]<0), 0, x[-10:10])", 0, 10, "max(x, 0)"},  // test_equivalent_const_max
{"where((0<x[-10:10]), x[-10:10], 0)", 0, 10, "max(x, 0)"},  // test_equivalent_const_max
{"((a[0:8]*2)+(a[0:8]*3))", 0, 40, "(a*5)"},  // test_factorize
{"((b[0:8]+(a[0:8]*2))+(a[0:8]*3))", 0, 48, "(b+a*5)"},  // test_factorize
{"(a[0:8]+(a[0:8]*3))", 0, 32, "(a*4)"},  // test_factorize_no_mul
{"(((a[0:8]*3)+b[0:8])+(b[0:8]*3))", 0, 56, "(a*3+b*4)"},  // test_factorize_no_mul
{"((a[0:2]+(12*(-1)))//8)", -2, -2, "-2"},  // test_floordiv_const_evaluation
{"((a[0:2]*(-1))//7)", -1, 0, "(a*-1//7)"},  // test_floordiv_const_evaluation
{"(((a[-10:10]*4)+b[0:3])//12)", -4, 3, "(a//3)"},  // test_floordiv_factor_nest_negative_numerator
{"(((a[-1:5]*2)+7)//8)", 0, 2, "((a+3)//4)"},  // test_floordiv_gcd_with_remainder_negative_numerator
{"((idx[0:24]//4)<3)", 0, 1, "(idx<12)"},  // test_floordiv_lt
{"(((idx[0:24]+(20*(-1)))//4)<(-3))", 0, 1, "(idx<8)"},  // test_floordiv_lt
{"(((idx[0:24]+(10*(-1)))//4)<0)", 0, 1, "(idx<10)"},  // test_floordiv_lt
{"((idx[0:24]//(-4))<(-3))", 0, 1, "(12<idx)"},  // test_floordiv_lt
{"((idx[0:24]//(-4))<(-5))", 0, 1, "(20<idx)"},  // test_floordiv_lt
{"((idx[0:24]//(-4))<(-6))", 0, 0, "False"},  // test_floordiv_lt
{"(((idx[0:24]+(10*(-1)))//(-4))<0)", 0, 1, "(8<(idx+-2))"},  // test_floordiv_lt
{"(((idx[0:24]+(20*(-1)))//(-4))<2)", 0, 1, "(12<idx)"},  // test_floordiv_lt
{"((idx[-20:20]//4)<0)", 0, 1, "(idx<0)"},  // test_floordiv_lt_negative_c
{"((idx[-20:20]//4)<(-1))", 0, 1, "(idx<-4)"},  // test_floordiv_lt_negative_c
{"((idx[-20:20]//4)<(-2))", 0, 1, "(idx<-8)"},  // test_floordiv_lt_negative_c
{"((a[1:1]*(-3))%8)", 5, 5, "5"},  // test_floormod_const_evaluation
{"((a[10:10]*(-1))%7)", 4, 4, "4"},  // test_floormod_const_evaluation
{"(idx[0:24]//4)", 0, 6, "(idx//4)"},  // test_gated_load
{"where((idx[0:24]<4), (idx[0:24]//4), (-1))", -1, 6, "((idx//4) if (idx<4) else -1)"},  // test_gated_load
{"((a[0:2]*4)//6)", 0, 1, "(a*2//3)"},  // test_gcd_with_remainder
{"(((a[0:2]*4)+1)//6)", 0, 1, "(a*2//3)"},  // test_gcd_with_remainder
{"(((a[0:2]*4)+2)//6)", 0, 1, "((a*2+1)//3)"},  // test_gcd_with_remainder
{"(((a[0:2]*4)+3)//6)", 0, 1, "((a*2+1)//3)"},  // test_gcd_with_remainder
{"((a[0:2]*4)%6)", 0, 4, "(a*2%3*2)"},  // test_gcd_with_remainder
{"(((a[0:2]*4)+1)%6)", 1, 5, "(a*2%3*2+1)"},  // test_gcd_with_remainder
{"(((a[0:2]*4)+2)%6)", 0, 4, "((a*2+1)%3*2)"},  // test_gcd_with_remainder
{"(((a[0:2]*4)+3)%6)", 1, 5, "((a*2+1)%3*2+1)"},  // test_gcd_with_remainder
{"ne((a[3:8]<77), True)", 0, 0, "False"},  // test_ge
{"ne((a[3:8]<9), True)", 0, 0, "False"},  // test_ge
{"ne((a[3:8]<4), True)", 0, 1, "((a<4)!=True)"},  // test_ge
{"ne((a[3:8]<3), True)", 1, 1, "True"},  // test_ge
{"ne((a[3:8]<2), True)", 1, 1, "True"},  // test_ge
{"ne((a[0:6]<25), True)", 0, 0, "False"},  // test_ge_remove
{"(a[3:8]<77)", 1, 1, "True"},  // test_lt
{"(a[3:8]<9)", 1, 1, "True"},  // test_lt
{"(a[3:8]<8)", 0, 1, "(a<8)"},  // test_lt
{"(a[3:8]<3)", 0, 0, "False"},  // test_lt
{"(a[3:8]<2)", 0, 0, "False"},  // test_lt
{"(a[3:4]<b[5:6])", 1, 1, "True"},  // test_lt
{"(a[3:5]<b[5:6])", 0, 1, "(a<b)"},  // test_lt
{"(a[5:6]<b[3:5])", 0, 0, "False"},  // test_lt
{"(a[3:4]<a[3:4])", 0, 0, "False"},  // test_lt
{"(((idx[0:511]*4)+FLOAT4_INDEX[0:3])<512)", 0, 1, "(idx<128)"},  // test_lt_divides
{"((((idx1[0:511]*4)+FLOAT4_INDEX[0:3])<512)*(((idx2[0:511]*4)+FLOAT4_INDEX[0:3])<512))", 0, 1, "((idx1<128)&(idx2<128))"},  // test_lt_divides_and
{"(((idx1[0:511]*4)+FLOAT4_INDEX[0:256])<512)", 0, 1, "((FLOAT4_INDEX+idx1*4)<512)"},  // test_lt_factors
{"(a[0:6]<(-3))", 0, 0, "False"},  // test_lt_remove
{"(a[0:6]<3)", 0, 1, "(a<3)"},  // test_lt_remove
{"(a[0:6]<8)", 1, 1, "True"},  // test_lt_remove
{"(((a[0:6]*6)+(b[0:6]*6))<8)", 0, 1, "((a*3+b*3)<4)"},  // test_lt_simple_factor
{"((((a[0:6]*6)+(b[0:6]*4))+(c[0:6]*8))<2)", 0, 1, "((a*3+b*2+c*4)<1)"},  // test_lt_sum_factor_rhs_all
{"((((a[0:6]*6)+(b[0:6]*4))+(c[0:6]*8))<4)", 0, 1, "((a*3+b*2+c*4)<2)"},  // test_lt_sum_factor_rhs_partial
{"((a[0:6]+2)<3)", 0, 1, "(a<1)"},  // test_lt_sum_remove
{"max(max(a[0:20], 10), 11)", 11, 20, "max(a, 11)"},  // test_max_folds
{"(a[0:8]%1)", 0, 0, "0"},  // test_mod_1
{"((3+a[0:1])%4)", 0, 3, "(a*-3+3)"},  // test_mod_binary_expression
{"((3+a[4:5])%4)", 0, 3, "(a*-3+15)"},  // test_mod_binary_expression
{"((((-40)+(a[0:10]*2))+(b[0:10]*40))%40)", 0, 20, "(a*2)"},  // test_mod_cancel
{"((3+(3*a[0:3]))%4)", 0, 3, "(a*-1+3)"},  // test_mod_congruence
{"((17+(13*a[0:3]))%18)", 2, 17, "(a*-5+17)"},  // test_mod_congruence
{"((2+(9*a[0:3]))%18)", 2, 11, "(a%2*9+2)"},  // test_mod_congruence
{"((6*(a[0:2]+1))%9)", 0, 6, "(a*-3+6)"},  // test_mod_congruence_mul_add
{"(((9+(9*x[0:3]))+(9*y[0:3]))%10)", 3, 9, "(x*-1+y*-1+9)"},  // test_mod_congruence_multiple_vars
{"((((7+(9*x[0:2]))+(9*y[0:2]))+z[0:2])%10)", 3, 9, "(z+x*-1+y*-1+7)"},  // test_mod_congruence_multiple_vars
{"(((10+(12*x[0:2]))+(y[0:4]%3))%13)", 8, 12, "(x*-1+y%3+10)"},  // test_mod_congruence_multiple_vars
{"(((3+(2*x[0:1]))+(3*y[0:1]))%4)", 0, 3, "(x*-2+y*-1+3)"},  // test_mod_congruence_tied_remainder
{"(((3+(6*x[0:1]))+(7*y[0:1]))%4)", 0, 3, "(x*-2+y*-1+3)"},  // test_mod_congruence_tied_remainder
{"((x[0:100]+(50*(-1)))%3)", 0, 2, "((x+1)%3)"},  // test_mod_const_reduction_negative_offset
{"((x[0:100]+(50*(-1)))%(-3))", -2, 0, "((x+-2)%-3)"},  // test_mod_const_reduction_negative_offset
{"((x[0:100]+7)%(-13))", -12, 0, "((x+-6)%-13)"},  // test_mod_const_reduction_negative_offset
{"((x[0:23]%6)//3)", 0, 1, "(x//3%2)"},  // test_mod_div_reorder
{"((x[0:23]%12)//4)", 0, 2, "(x//4%3)"},  // test_mod_div_reorder
{"(((((x[0:23]%12)//4)*4)+(x[0:23]%4))+((x[0:23]//12)*12))", 0, 23, "x"},  // test_mod_div_reorder
{"(((a[0:7]*100)+(b[0:3]*50))%100)", 0, 50, "(b%2*50)"},  // test_mod_factor
{"((((-29)+a[0:10])+(b[0:10]*28))%28)", 0, 27, "((a+27)%28)"},  // test_mod_factor_negative
{"((((-29)+a[0:100])+(b[0:10]*28))%28)", 0, 27, "((a+27)%28)"},  // test_mod_factor_negative
{"(((a[0:10]*(-4))+4)%8)", 0, 4, "((a*-1+1)%2*4)"},  // test_mod_gcd_factor_neg
{"(((a[0:10]*(-8))+20)%4)", 0, 0, "0"},  // test_mod_gcd_fold_neg
{"(x[0:10]%y[1:10])", 0, 9, "(x%y)"},  // test_mod_min_max
{"(x[-10:0]%y[1:10])", 0, 9, "(x%y)"},  // test_mod_min_max
{"(x[0:10]%y[-10:-1])", -9, 0, "(x%y)"},  // test_mod_min_max
{"(x[-10:0]%y[-10:-1])", -9, 0, "(x%y)"},  // test_mod_min_max
{"(x[-10:10]%y[-10:-1])", -9, 0, "(x%y)"},  // test_mod_min_max
{"((a[0:31]%12)%4)", 0, 3, "(a%4)"},  // test_mod_mod
{"(((4*a[0:31])%12)%4)", 0, 0, "0"},  // test_mod_mod
{"(((5*a[0:31])%12)%5)", 0, 4, "(a*5%12%5)"},  // test_mod_mod
{"((a[0:31]%4)%12)", 0, 3, "(a%4)"},  // test_mod_mod
{"(((((v1[0:128]%2)*2)+((v3[0:7]+(-1))%5))+(-2))%5)", 0, 4, "((v3+v1%2*2+2)%5)"},  // test_mod_mod_wrong_sign
{"(((((v3[0:4]+3)%7)+(v2[0:8]+(-2)))%7)%7)", 0, 6, "((v3+v2+1)%7)"},  // test_mod_mod_wrong_sign2
{"((b[0:2]+(a[0:5]*10))%9)", 0, 7, "(b+a)"},  // test_mod_mul_sum
{"(((gidx0[0:15]*4)+lidx0[0:3])%8)", 0, 7, "(lidx0+gidx0%2*4)"},  // test_mod_nest_by_factor
{"(((gidx0[0:15]*2)+lidx1[0:1])%8)", 0, 7, "(lidx1+gidx0%4*2)"},  // test_mod_nest_by_factor
{"(((a[0:10]*3)+b[0:2])%9)", 0, 8, "(b+a%3*3)"},  // test_mod_nest_by_factor
{"((((a[0:7]*4)+b[0:1])+2)%8)", 2, 7, "(b+a%2*4+2)"},  // test_mod_nest_by_factor_with_const
{"((((a[0:7]*6)+b[0:2])+3)%12)", 3, 11, "(b+a%2*6+3)"},  // test_mod_nest_by_factor_with_const
{"((((a[0:7]*3)+b[0:1])+1)%6)", 1, 5, "(b+a%2*3+1)"},  // test_mod_nest_by_factor_with_const
{"(((x[0:100]%4)*3)+(((x[0:100]//4)%2)*12))", 0, 21, "(x%8*3)"},  // test_mod_recombine_with_outer_mul
{"(((y[0:384]%11)*5)+(((y[0:384]//11)%7)*55))", 0, 380, "(y%77*5)"},  // test_mod_recombine_with_outer_mul
{"(((x[0:100]%4)*(-2))+(((x[0:100]//4)%2)*(-8)))", -14, 0, "(x%8*-2)"},  // test_mod_recombine_with_outer_mul
{"(a[0:6]%100)", 0, 6, "a"},  // test_mod_remove
{"((1+a[1:2])%2)", 0, 1, "(a+-1)"},  // test_mod_to_sub
{"(((d[2:5]*a[0:3])+b[0:1])%d[2:5])", 0, 1, "b"},  // test_mod_variable_denom_factor_remainder
{"(a[0:8]*0)", 0, 0, "0"},  // test_mul_0
{"(a[0:8]*1)", 0, 8, "a"},  // test_mul_1
{"(a[0:8]*2)", 0, 16, "(a*2)"},  // test_mul_2
{"((a[0:10]*4)//4)", 0, 10, "a"},  // test_mul_div
{"((a[0:10]*4)//8)", 0, 5, "(a//2)"},  // test_mul_div_factor_div
{"(((a[0:10]*(-4))+4)//8)", -5, 0, "((a*-1+1)//2)"},  // test_mul_div_factor_div_neg
{"((a[0:10]*8)//4)", 0, 20, "(a*2)"},  // test_mul_div_factor_mul
{"(((a[0:10]*(-8))+16)//4)", -16, 4, "(a*-2+4)"},  // test_mul_div_factor_mul_neg
{"((a[0:5]*4)<13)", 0, 1, "(a<4)"},  // test_mul_lt
{"((a[0:5]*4)<16)", 0, 1, "(a<4)"},  // test_mul_lt
{"((a[-5:5]*4)<(-13))", 0, 1, "(a<-3)"},  // test_mul_lt
{"((a[-5:5]*(-4))<13)", 0, 1, "((a*-1)<4)"},  // test_mul_lt
{"((a[0:18014398509481985]*2)<18014398509481985)", 0, 1, "(a<9007199254740993)"},  // test_mul_lt
{"((a[0:18014398509481983]*(-2))<(-18014398509481983))", 0, 1, "((a*-1)<-9007199254740991)"},  // test_mul_lt
{"((a[0:5]*(-2))<0)", 0, 1, "((a*-1)<0)"},  // test_mul_lt
{"ne(((a[0:5]*4)<12), True)", 0, 1, "((a<3)!=True)"},  // test_mul_lt
{"ne(((a[0:5]*4)<13), True)", 0, 1, "((a<4)!=True)"},  // test_mul_lt
{"((a[0:20]*10)%9)", 0, 8, "(a%9)"},  // test_mul_mod_large
{"((a[0:5]*10)%9)", 0, 5, "a"},  // test_mul_mod_small
{"((a[0:5]*10)*9)", 0, 450, "(a*90)"},  // test_mul_mul
{"((a[0:2]*(-1))//3)", -1, 0, "(a*-1//3)"},  // test_mul_neg_1
{"((a[2:7]*(-1))//3)", -3, -1, "(a*-1//3)"},  // test_mul_neg_1
{"(a[0:8]*(-1))", -8, 0, "(a*-1)"},  // test_neg
{"((a[0:3]*(-1))<(b[0:3]*(-1)))", 0, 1, "(b<a)"},  // test_neg_in_comp
{"((a[0:124]*(-1))%4)", 0, 3, "(a*-1%4)"},  // test_neg_mod
{"(a[0:124]%(-4))", -3, 0, "(a%-4)"},  // test_neg_mod
{"where(ne((x[0:3]<2), True), a[0:3], b[0:3])", 0, 3, "(b if (x<2) else a)"},  // test_negation_in_where
{"((((ridx0[0:9]*(-7))+ridx1[0:6])+63)//35)", 0, 1, "((ridx0*-1+4)//5+1)"},  // test_nest_div_negative_factor
{"((a[0:100]%(-8))//2)", -4, 0, "(a%-8//2)"},  // test_nested_div_mod_negative_inner_divisor
{"((a[0:100]%(-8))%2)", 0, 1, "(a%2)"},  // test_nested_div_mod_negative_inner_divisor
{"((a[0:124]//(-2))//(-3))", 0, 20, "(a//-2//-3)"},  // test_nested_div_negative_divisor
{"((a[0:124]//2)//(-3))", -21, 0, "(a//2//-3)"},  // test_nested_div_negative_divisor
{"((a[0:124]//(-2))//3)", -21, 0, "(a//-6)"},  // test_nested_div_negative_divisor
{"(((x[0:1575]+(-1064))%512)%4)", 0, 3, "(x%4)"},  // test_nested_mod_negative_range
{"(((x[0:1575]+(-1064))%512)%128)", 0, 127, "((x+88)%128)"},  // test_nested_mod_negative_range
{"(((((r0[0:7]*8)+r1[0:7])//4)*4)+(((r0[0:7]*8)+r1[0:7])%4))", 0, 63, "((r0*2+r1//4)*4+r1%4)"},  // test_reshape_index_roundtrip
{"(a[0:3]<2)", 0, 1, "(a<2)"},  // test_simplex_lt
{"ne((2<a[0:3]), True)", 0, 1, "((2<a)!=True)"},  // test_simplex_lt
{"(1<a[0:3])", 0, 1, "(1<a)"},  // test_simplex_lt
{"ne((a[0:3]<1), True)", 0, 1, "((a<1)!=True)"},  // test_simplex_lt
{"ne(((a[0:3]+b[0:3])<1), True)", 0, 1, "(((a+b)<1)!=True)"},  // test_simplex_lt
{"ne((((a[0:3]*3)+(b[0:3]*4))<1), True)", 0, 1, "(((a+b)<1)!=True)"},  // test_simplex_lt
{"ne((((a[0:3]*(-3))+(b[0:3]*4))<1), True)", 0, 1, "(((a*-3+b*4)<1)!=True)"},  // test_simplex_lt
{"ne((((a[0:3]*3)+(d[-3:3]*4))<1), True)", 0, 1, "(((d*4+a*3)<1)!=True)"},  // test_simplex_lt
{"ne((((a[0:3]+b[0:3])+(c[0:3]*2))<1), True)", 0, 1, "(((c+(a+b))<1)!=True)"},  // test_simplex_lt
{"ne((((a[0:3]+(b[0:3]*2))+(c[0:3]*4))<1), True)", 0, 1, "(((c+(a+b))<1)!=True)"},  // test_simplex_lt
{"(a[0:8]+(1*(-1)))", -1, 7, "(a+-1)"},  // test_sub_1
{"(a[0:8]+(a[0:8]*(-1)))", 0, 0, "0"},  // test_sub_self
{"((a[0:8]*3)+(a[0:8]*(-1)))", 0, 16, "(a*2)"},  // test_sub_self
{"a[0:7]", 0, 7, "a"},  // test_sum_0
{"((29+a[0:10])+(-23))", 6, 16, "(a+6)"},  // test_sum_combine_num
{"((gidx0[0:24]+19)//20)", 0, 2, "((gidx0+19)//20)"},  // test_sum_div_big_const
{"((gidx0[0:24]+20)//20)", 1, 2, "(gidx0//20+1)"},  // test_sum_div_big_const
{"((gidx0[0:24]+21)//20)", 1, 2, "((gidx0+1)//20+1)"},  // test_sum_div_big_const
{"((((((((gidx2[0:255]*640)+(gidx1[0:1]*160))+((gidx0[0:24]//5)*2))+(lidx0[0:1]*320))+(lidx1[0:15]*10))+(lidx2[0:3]*2))+1)//20)", 0, 8192, "(gidx1*8+gidx2*32+lidx0*16+(lidx1+(lidx2+gidx0//5)//5)//2)"},  // test_sum_div_complex1
{"((((gidx0[0:7]*4)+(lidx2[0:1]*2))+1)//10)", 0, 3, "((lidx2+gidx0*2)//5)"},  // test_sum_div_complex2
{"((((gidx0[0:7]*4)+(lidx2[0:1]*2))+lidx3[0:1])//10)", 0, 3, "((lidx2+gidx0*2)//5)"},  // test_sum_div_complex2
{"(((gidx0[0:7]*2)+lidx2[0:1])//10)", 0, 1, "(gidx0//5)"},  // test_sum_div_complex2
{"((((gidx0[0:7]*4)+(lidx2[0:12]*2))+lidx3[0:1])//12)", 0, 4, "((gidx0+lidx2//2)//3)"},  // test_sum_div_complex3
{"((((lidx2[0:12]*2)+(gidx0[0:7]*4))+lidx3[0:1])//12)", 0, 4, "((gidx0+lidx2//2)//3)"},  // test_sum_div_complex3
{"((((gidx0[0:2]*3)+(lidx2[0:12]*19))+(lidx3[0:12]*38))//57)", 0, 12, "((lidx2+lidx3*2)//3)"},  // test_sum_div_complex4
{"(((a[0:7]*4)+3)//4)", 0, 7, "a"},  // test_sum_div_const
{"(((a[0:7]*4)+3)//16)", 0, 1, "(a//4)"},  // test_sum_div_const_big
{"((a[0:7]+b[0:3])//2)", 0, 5, "((b+a)//2)"},  // test_sum_div_min_max
{"(((a[0:7]*4)+(b[0:3]*4))//2)", 0, 20, "(b*2+a*2)"},  // test_sum_div_mod_factor
{"(((a[0:7]*4)+(b[0:3]*4))%2)", 0, 0, "0"},  // test_sum_div_mod_factor
{"(((a[0:7]*5)+(b[0:3]*5))//2)", 0, 25, "(b*2+a*2+(b+a)//2)"},  // test_sum_div_no_factor
{"(((idx0[0:127]*4)+idx2[0:3])//4)", 0, 127, "idx0"},  // test_sum_div_partial_remove
{"((a[0:7]+b[0:3])//20)", 0, 0, "0"},  // test_sum_div_remove
{"(((a[0:7]*5)+(b[0:3]*4))//2)", 0, 23, "(b*2+a*2+a//2)"},  // test_sum_div_some_factor
{"(((a[0:7]*6)+(b[0:7]*6))//16)", 0, 5, "((a*3+b*3)//8)"},  // test_sum_div_some_partial_factor
{"(((16+(a[0:7]*6))+(b[0:7]*6))//16)", 1, 6, "((a*3+b*3)//8+1)"},  // test_sum_div_some_partial_factor
{"(((a[0:7]*30)+20)//20)", 1, 11, "(a+a//2+1)"},  // test_sum_div_some_partial_factor
{"((((a[0:7]*4)+(b[0:3]*4))+7)//16)", 0, 2, "((b+a+1)//4)"},  // test_sum_div_trim_const
{"(((a[0:7]*4)+b[0:3])<16)", 0, 1, "(a<4)"},  // test_sum_lt_fold
{"(((a[0:7]*4)+b[0:4])<16)", 0, 1, "((b+a*4)<16)"},  // test_sum_lt_fold
{"((uidx[0:3]+(a[0:1529]*12))<268)", 0, 1, "(a<23)"},  // test_sum_lt_fold
{"(((gidx0[0:7]+lidx2[0:12])+lidx3[0:1])*4)", 0, 80, "((lidx3+(gidx0+lidx2))*4)"},  // test_sum_mul_distribute
{"(((a[0:1]*(-4))+1)+(a[0:1]*4))", 1, 1, "1"},  // test_sum_num_hoisted_and_factors_cancel_out
{"((a[1:10]*(-2))+1)", -19, -1, "(a*-2+1)"},  // test_symbolic_div
{"(((((a[1:10]*2)+(-1))*2)+1)*a[1:10])", 3, 390, "(a*(a*4+-1))"},  // test_symbolic_div
{"ne((0<((((((a[1:10]*2)+(-1))*2)+1)*a[1:10])//((a[1:10]*(-2))+1))), True)", 1, 1, "True"},  // test_symbolic_div
{"(((d[1:10]*a[0:10])+b[0:10])//d[1:10])", 0, 20, "(a+b//d)"},  // test_symbolic_factor_remainder_div
{"((((d[1:10]*a[0:10])*20)+b[0:10])//(5*d[1:10]))", 0, 42, "(a*4+b//(d*5))"},  // test_symbolic_factor_remainder_div
{"(((((d[1:10]*a[0:10])*20)+((b[0:10]*d[1:10])*5))+10)//(5*d[1:10]))", 0, 52, "(b+a*4+2//d)"},  // test_symbolic_factor_remainder_div
{"((((d1[1:10]*a[-10:10])*b[-10:10])*d1[1:10])//d1[1:10])", -1000, 1000, "(a*(b*d1))"},  // test_symbolic_gcd_div
{"(((((d1[1:10]*a[-10:10])*d2[-10:-1])*b[-10:10])*d1[1:10])//(d1[1:10]*d2[-10:-1]))", -1000, 1000, "(a*(b*d1))"},  // test_symbolic_gcd_div
{"(((d1[1:10]*a[-10:10])+(b[-10:10]*d1[1:10]))//d1[1:10])", -20, 20, "(a+b)"},  // test_symbolic_gcd_div
{"((((d1[1:10]*a[-10:10])+(b[-10:10]*d1[1:10]))+(c[-10:10]*d1[1:10]))//d1[1:10])", -30, 30, "(c+(a+b))"},  // test_symbolic_gcd_div
{"((((3*a[-10:10])*d1[1:10])+((9*b[-10:10])*d1[1:10]))//((3*d1[1:10])*d2[-10:-1]))", -40, 40, "((a+b*3)//d2)"},  // test_symbolic_gcd_div
{"(((((3*a[-10:10])*d1[1:10])+((9*b[-10:10])*d1[1:10]))+3)//((3*d1[1:10])*d2[-10:-1]))", -401, 399, "((a*d1+b*d1*3+1)//(d2*d1))"},  // test_symbolic_gcd_div
{"where((x[0:10]<5), (where((x[0:10]<5), (x[0:10]*(-1)), x[0:10])*2), (where((x[0:10]<5), (x[0:10]*(-1)), x[0:10])+1))", -20, 11, "((x*-2) if (x<5) else (x+1))"},  // test_where_closure_folding
{"where((x[0:10]<5), (where((x[0:10]<5), (where((x[0:10]<5), (x[0:10]*(-1)), x[0:10])*2), (where((x[0:10]<5), (x[0:10]*(-1)), x[0:10])+1))*3), (where((x[0:10]<5), (where((x[0:10]<5), (x[0:10]*(-1)), x[0:10])*2), (where((x[0:10]<5), (x[0:10]*(-1)), x[0:10])+1))+7))", -60, 18, "((x*-6) if (x<5) else (x+8))"},  // test_where_closure_folding_deep
{"where((x[0:10]<5), (where(ne((x[0:10]<5), True), a[0:3], b[0:3])*2), c[0:3])", 0, 6, "((b*2) if (x<5) else c)"},  // test_where_closure_folding_derived_cond
{"where((x[0:10]<5), where((x[0:10]<7), a[0:3], b[0:3]), where((x[0:10]<7), b[0:3], a[0:3]))", 0, 3, "((a if (x<7) else b) if (x<5) else (b if (x<7) else a))"},  // test_where_closure_folding_different_cond
{"where((x[0:3]<2), a[0:3], 0)", 0, 3, "(a if (x<2) else 0)"},  // test_where_combine
{"where((x[0:3]<2), b[0:3], 1)", 0, 3, "(b if (x<2) else 1)"},  // test_where_combine
{"(where((x[0:3]<2), a[0:3], 0)+where((x[0:3]<2), b[0:3], 1))", 0, 6, "((a+b) if (x<2) else 1)"},  // test_where_combine
{"max(where((x[0:3]<2), a[0:3], 0), where((x[0:3]<2), b[0:3], 1))", 0, 3, "(max(a, b) if (x<2) else 1)"},  // test_where_combine
{"((c[0:3]+where((x[0:3]<2), a[0:3], 0))+where((x[0:3]<2), b[0:3], 1))", 0, 9, "(c+((a+b) if (x<2) else 1))"},  // test_where_combine
{"(where((x[0:3]<2), b[0:3], 1)+where((x[0:3]<2), c[0:3], (c[0:3]+1)))", 0, 7, "((b if (x<2) else 1)+(c if (x<2) else (c+1)))"},  // test_where_combine
{"(where((x[0:3]<2), a[0:3], b[0:3])+where((x[0:3]<2), b[0:3], a[0:3]))", 0, 6, "((a if (x<2) else b)+(b if (x<2) else a))"},  // test_where_combine
{"(where((x[0:3]<2), a[0:3], 0)+where((x[0:3]<2), a[0:3], b[0:3]))", 0, 6, "((a if (x<2) else b)+(a if (x<2) else 0))"},  // test_where_combine
{"(where((x[0:3]<2), a[0:3], 0)+where((x[0:3]<2), 0, b[0:3]))", 0, 3, "(a if (x<2) else b)"},  // test_where_combine_cross_zero
{"(where((x[0:3]<2), a[0:3], 0)+where((x[0:3]<2), 0, a[0:3]))", 0, 3, "a"},  // test_where_combine_cross_zero
{"where((s[0:10]<6), where((2<s[0:10]), a[0:3], b[0:3]), b[0:3])", 0, 3, "(a if ((s<6)&(2<s)) else b)"},  // test_where_merge_branches
{"where((s[0:10]<5), where((s[0:10]<6), a[0:3], b[0:3]), b[0:3])", 0, 3, "(a if ((s<5)&(s<6)) else b)"},  // test_where_merge_branches2
{"where((x[0:3]<2), a[0:3], where((y[0:3]<2), a[0:3], b[0:3]))", 0, 3, "(a if ((x<2)|(y<2)) else b)"},  // test_where_or_dual
{"where((a[0:3]<2), True, False)", 0, 1, "(a<2)"},  // test_where_removal
{"where(where((a[0:3]<2), True, False), True, False)", 0, 1, "(a<2)"},  // test_where_removal
{"where((a[0:3]<2), False, True)", 0, 1, "((a<2)!=True)"},  // test_where_removal
{"where(where((a[0:3]<2), False, True), False, True)", 0, 1, "(a<2)"},  // test_where_removal
};

const Case kRandomCases[] = {
{"(((e*2)+d)+(((e*a)+(b*-3))+((e//5)+(a%4))))", -13, 2609, "(d+e*2+(b*-3+a*e+(e//5+a%4)))"},
{"(a//4)", 0, 2, "(a//4)"},
{"((((b+a)*3)*8)//6)", 0, 44, "((b+a)*4)"},
{"(((d%8)+a)+8)", 8, 23, "(a+d%8+8)"},
{"max(((max(c, d)//2)%1), (((c%1)%12)+2))", 2, 2, "2"},
{"a", 0, 8, "a"},
{"((((d+e)-(d+e))%5)+(((b+b)*2)*e))", 0, 3060, "(b*e*4)"},
{"c", 1, 12, "c"},
{"d", -4, 5, "d"},
{"((((d%16)*(a*8))+(b+(e+a)))//2)", 0, 613, "(a*(d%16)*4+(e+(b+a))//2)"},
{"b", 0, 3, "b"},
{"((((e*c)*8)+d)*((c+(b*-3))*2))", -391760, 587640, "((d+e*c*8)*(c+b*-3)*2)"},
{"(e//1)", 0, 255, "e"},
{"((((b*4)//4)+((b+d)%4))+-3)", -3, 3, "(b+(d+b)%4+-3)"},
{"(a*3)", 0, 24, "(a*3)"},
{"((((a*b)%2)+-2)+(((c+a)*(d+b))+6))", -76, 165, "((d+b)*(a+c)+b*a%2+4)"},
{"((((a%3)%3)+((b*8)+(e*-1)))*-3)", -78, 765, "((b*8+e*-1+a%3)*-3)"},
{"a", 0, 8, "a"},
{"(max(((b+9)+(b//1)), ((e//8)*-1))-(d//3))", 8, 17, "(b*2+d//3*-1+9)"},
{"(b%12)", 0, 3, "b"},
{"(e+((b-(e%12))*-3))", -9, 288, "(e+(b+e%12*-1)*-3)"},
{"((((e*8)//16)//4)-max(((d*b)+4), d))", -19, 35, "(max(d, (d*b+4))*-1+e//8)"},
{"((((c-b)+(d+b))+((b+b)+(d*c)))%8)", 0, 7, "((d+b+(c+b*-1)+(d*c+b*2))%8)"},
{"c", 1, 12, "c"},
{"c", 1, 12, "c"},
{"e", 0, 255, "e"},
{"(((b*(c+c))//1)%3)", 0, 2, "(b*c*2%3)"},
{"(((e+9)-((b%8)+-7))+(c+b))", 14, 286, "(b+c+(e+b*-1)+16)"},
{"a", 0, 8, "a"},
{"((((a+b)+(c+c))-((c%6)+(a*a)))+-9)", -76, 26, "(b+a+c*2+(a*a+c%6)*-1+-9)"},
{"(d//4)", -1, 1, "(d//4)"},
{"((max((b//4), max(b, d))*4)+max(c, ((e*3)+(a%12))))", 1, 793, "(max(d, b)*4+max(c, (a+e*3)))"},
{"c", 1, 12, "c"},
{"((((c+-4)+d)*c)+7)", -77, 163, "(c*(d+c+-4)+7)"},
{"((((c*3)+(e+b))+((c*8)%3))+(e//8))", 3, 327, "(b+e+c*3+c*2%3+e//8)"},
{"max(e, (((b%2)+b)//6))", 0, 255, "e"},
{"((e+(a*-2))*-2)", -510, 32, "((e+a*-2)*-2)"},
{"(max(((d//12)%8), c)*-3)", -36, -3, "(max(c, (d//12*-7))*-3)"},
{"(b//6)", 0, 0, "0"},
{"((a//12)%5)", 0, 0, "0"},
{"((((e%4)+0)*-2)+(max((c*6), (b*a))+((b*e)+(a//6))))", 0, 838, "(b*e+a//6+max((b*a), (c*6))+e%4*-2)"},
{"((d+((d*4)*-2))-(max(b, (c-c))+((c//8)*3)))", -41, 28, "(d*-7+(b+c//8*3)*-1)"},
{"(c+-5)", -4, 7, "(c+-5)"},
{"(((max(d, e)*(a%8))+((a+8)%3))+-4)", -4, 1783, "(max(d, e)*(a%8)+(a+2)%3+-4)"},
{"((((e+3)+-6)%3)+-4)", -4, -2, "(e%3+-4)"},
{"e", 0, 255, "e"},
{"(((b*2)-c)*-2)", -10, 24, "((b*2+c*-1)*-2)"},
{"((d+((a+6)%5))*4)", -16, 36, "((d+(a+1)%5)*4)"},
{"e", 0, 255, "e"},
{"((((c*-3)*-1)+d)%12)", 0, 11, "((d+c*3)%12)"},
{"d", -4, 5, "d"},
{"((((a+d)%2)*-3)-b)", -6, 0, "(b*-1+(d+a)%2*-3)"},
{"((c+7)-(a%5))", 4, 19, "(c+a%5*-1+7)"},
{"((((c*2)+(b+a))+((d+d)%2))//5)", 0, 7, "((b+a+c*2)//5)"},
{"((((a*3)%16)*-2)*2)", -60, 0, "(a*3%16*-4)"},
{"((((e+d)+-4)+((e+b)*6))+a)", -8, 1812, "(a+(d+e+(b+e)*6)+-4)"},
{"(a+d)", -4, 13, "(d+a)"},
{"(((e+5)*d)-((a+(a*e))*(max(d, a)+d)))", -27664, 9492, "(d*(e+5)+(d+max(d, a))*(a+a*e)*-1)"},
{"e", 0, 255, "e"},
{"((d-((d*-2)//1))+(((e*a)+-1)%6))", -12, 20, "(d*3+(a*e+5)%6)"},
{"(((b*d)//8)+-1)", -3, 0, "(d*b//8+-1)"},
{"max(d, c)", 1, 12, "max(d, c)"},
{"((((b+d)*-1)+-2)%8)", 0, 7, "(((d+b)*-1+6)%8)"},
{"a", 0, 8, "a"},
{"(d//2)", -2, 2, "(d//2)"},
{"(a+4)", 4, 12, "(a+4)"},
{"((((a%5)//5)+((d+-2)+-4))%4)", 0, 3, "((d+2)%4)"},
{"((c+(max(d, a)//2))+-9)", -8, 7, "(c+max(d, a)//2+-9)"},
{"max((c-(max(b, a)+max(d, e))), (((b//1)+(b+c))%1))", 0, 12, "max((c+(max(d, e)+max(b, a))*-1), 0)"},
{"(((c%2)+((a+d)%16))%3)", 0, 2, "((c%2+(d+a)%16)%3)"},
{"(c+(((c//8)*max(c, b))+3))", 4, 27, "(c+max(b, c)*(c//8)+3)"},
{"(b+max(((a+a)-(d//2)), ((c+c)-b)))", -1, 27, "(b+max((b*-1+c*2), (a*2+d//2*-1)))"},
{"(max((a+(a*6)), e)+(max((b//12), b)-e))", -255, 258, "(b+e*-1+max(e, (a*7)))"},
{"c", 1, 12, "c"},
{"b", 0, 3, "b"},
{"max(e, (((c*6)+0)%4))", 0, 255, "max(e, (c%2*2))"},
{"((e*8)%12)", 0, 8, "(e*2%3*4)"},
{"((d*6)%2)", 0, 0, "0"},
{"c", 1, 12, "c"},
{"((b//2)+(((b-a)+(a*b))+-5))", -13, 23, "(b+a*-1+b*a+b//2+-5)"},
{"((b-c)*3)", -36, 6, "((b+c*-1)*3)"},
{"e", 0, 255, "e"},
{"max(e, (((b*-1)//8)*-1))", 0, 255, "max(e, (b*-1//8*-1))"},
{"((((c+d)+8)*-2)+-1)", -51, -11, "((d+c)*-2+-17)"},
{"((((a*8)*(a//5))%16)//5)", 0, 1, "(a*(a//5)%2)"},
{"((((c+e)%8)-(d*2))*(e+((e+c)+(e+d))))", -7820, 11730, "((e+(d+e+(e+c)))*(d*-2+(e+c)%8))"},
{"a", 0, 8, "a"},
{"(a+b)", 0, 11, "(b+a)"},
{"((e+2)%12)", 0, 11, "((e+2)%12)"},
{"((a+((a+a)*2))//3)", 0, 13, "(a+a*2//3)"},
{"((((a+d)//16)//1)//8)", -1, 0, "((d+a)//128)"},
{"(((b+(c+a))%5)%16)", 0, 4, "((b+(a+c))%5)"},
{"((((e+a)-b)*(c+d))%6)", 0, 5, "((d+c)*(a+e+b*-1)%6)"},
{"((max((e*-3), (b*3))-((b//3)*-3))*-3)", -36, 0, "((b*3+b//3*3)*-3)"},
{"e", 0, 255, "e"},
{"(a+-9)", -9, -1, "(a+-9)"},
{"a", 0, 8, "a"},
{"(e%6)", 0, 5, "(e%6)"},
{"e", 0, 255, "e"},
{"((((a+a)+(c//12))-a)+(((c*-3)+2)//6))", -6, 8, "(a+c//12+c*-1//2)"},
{"(((e%2)+2)//12)", 0, 0, "0"},
{"(max(c, a)//16)", 0, 0, "0"},
{"((((d+e)*4)+((b+b)//12))%3)", 0, 2, "((d+e)*4%3)"},
{"a", 0, 8, "a"},
{"((((a-d)+(b+c))+((b*8)-e))*(((d+e)+1)%3))", -518, 102, "((b+c+(a+d*-1)+(b*8+e*-1))*((d+e+1)%3))"},
{"((((c//5)//3)+((c//3)*(c*a)))%3)", 0, 2, "(a*c*(c//3)%3)"},
{"((((a+c)%4)*(d*2))+(((b*6)+(d//4))//4))", -25, 34, "(d*((a+c)%4)*2+(b*6+d//4)//4)"},
{"((((b%5)+(a*6))+7)//3)", 2, 19, "(a*2+(b+1)//3+2)"},
{"(d+-6)", -10, -1, "(d+-6)"},
{"e", 0, 255, "e"},
{"((max((d+e), c)+((b+d)*-2))%6)", 0, 5, "(((d+b)*-2+max(c, (d+e)))%6)"},
{"((d+((c+d)%16))+-2)", -6, 18, "(d+(d+c)%16+-2)"},
{"((((e+b)+(d+d))+((d%6)%4))*((a*3)*4))", -768, 26016, "(a*(b+e+d*2+d%6%4)*12)"},
{"((((d-a)%2)*4)+-5)", -5, -1, "((d+a*-1)%2*4+-5)"},
{"((((e//3)+(d+c))%3)+-3)", -3, -1, "((d+c+e//3)%3+-3)"},
{"(e%2)", 0, 1, "(e%2)"},
{"(max(b, ((e-a)%5))-max(((d-b)//12), e))", -255, 4, "(e*-1+max(b, ((e+a*-1)%5)))"},
{"((((d*-2)%3)*4)+(((a+7)%12)+(d-(c+1))))", -17, 22, "(d+c*-1+(a+7)%12+d*-2%3*4+-1)"},
{"(((max(c, c)*8)+((b//12)//2))//6)", 1, 16, "(c+c//3)"},
{"c", 1, 12, "c"},
{"a", 0, 8, "a"},
{"((((b+d)+(e%16))-((e%2)//4))+d)", -8, 28, "(d+(d+b+e%16))"},
{"(max(((b+c)+(c+-4)), ((a//12)+9))+max(((a*-3)*6), ((d+e)*d)))", -135, 1323, "(max((b+c*2+-4), 9)+max((d*(d+e)), (a*-18)))"},
{"(a+a)", 0, 16, "(a*2)"},
{"max((((b*-3)+2)+((a%5)%16)), (((a%1)+-9)*-2))", 18, 18, "18"},
{"((((d*d)//3)*a)+2)", -54, 66, "(a*(d*d//3)+2)"},
{"((((c%5)*3)*-3)+(((a%3)//5)%8))", -36, 0, "(c%5*-9)"},
{"((((c%5)+(a+c))*-1)+max((max(d, c)+8), e))", -15, 254, "((a+c+c%5)*-1+max(e, (max(d, c)+8)))"},
{"(((d+5)%4)*3)", 0, 9, "((d+1)%4*3)"},
{"(((d*3)//16)+((c+(d//16))//3))", -1, 4, "((c+d//16)//3+d*3//16)"},
{"(max((c*-3), (a//4))-max(((d%2)//12), max((a+1), (a+a))))", -16, 1, "(max((a+1), (a*2))*-1+a//4)"},
{"e", 0, 255, "e"},
{"(max(max((a-c), (a+e)), (b*2))%3)", 0, 2, "(max((b*2), max((a+e), (a+c*-1)))%3)"},
{"c", 1, 12, "c"},
{"((((d%1)+-6)+a)+(((c+c)//5)%8))", -6, 6, "(a+c*2//5+-6)"},
{"d", -4, 5, "d"},
{"((((b%4)*-2)-max((d+a), (a*-2)))*8)", -152, 32, "((b*-2+max((d+a), (a*-2))*-1)*8)"},
{"((((d+e)+-5)+((a+c)+(b+-1)))+6)", -3, 283, "(d+e+(b+(a+c)))"},
{"d", -4, 5, "d"},
{"((((c*-2)%5)+((b+-2)*c))+((a*(e//3))+((c+4)%1)))", -24, 696, "(c*(b+-2)+c*-2%5+a*(e//3))"},
{"((b+(a+(c%3)))+(max((a+e), (a%16))//6))", 0, 56, "(b+(a+c%3)+max(a, (a+e))//6)"},
{"max((d*-1), (c+-8))", -5, 4, "max((c+-8), (d*-1))"},
{"c", 1, 12, "c"},
{"max((((c+d)+(c-a))-((e//3)*-3)), (((a//1)+b)+max((b*8), a)))", 0, 284, "max((b+a+max(a, (b*8))), (d+c+(c+a*-1)+e//3*3))"},
{"(d+(a%8))", -4, 12, "(d+a%8)"},
{"((((a*d)*6)+(a//6))//6)", -32, 40, "(d*a)"},
{"max(max(((e*-3)*(c+b)), (a%16)), c)", 1, 12, "max(a, c)"},
{"(b//8)", 0, 0, "0"},
{"((((e+c)-(e//1))//2)%5)", 0, 4, "(c//2%5)"},
{"a", 0, 8, "a"},
{"((((e*c)+e)+8)*(((c//4)-(c%12))*2))", -73106, 19938, "((e+e*c+8)*(c%12*-1+c//4)*2)"},
{"((((b+1)//4)*2)+((max(b, c)+(c*2))*3))", 9, 110, "((c*2+max(b, c))*3+(b+1)//4*2)"},
{"a", 0, 8, "a"},
{"a", 0, 8, "a"},
{"((((b//8)*4)//6)+-5)", -5, -5, "-5"},
{"(max(((d%5)%3), ((a//12)+(b*d)))//5)", 0, 3, "(max((d*b), (d%5%3))//5)"},
{"((((e*6)%6)*-3)//12)", 0, 0, "0"},
{"(max((max(c, c)*2), ((a-a)+e))+6)", 8, 261, "(max(e, (c*2))+6)"},
{"((max((d*4), c)//12)//1)", 0, 1, "(max(c, (d*4))//12)"},
{"(c//16)", 0, 0, "0"},
{"(max(((e//6)*-2), c)//6)", 0, 2, "(c//6)"},
{"max((((d*b)%16)+((b+a)//2)), (((c%16)+c)*(a+d)))", 0, 312, "max(((b+a)//2+d*b%16), (c*(d+a)*2))"},
{"(((e+b)-(a//3))//16)", -1, 16, "((b+e+a//3*-1)//16)"},
{"(max(((b+c)%5), c)*-2)", -24, -2, "(max(c, ((b+c)%5))*-2)"},
{"(b*(d*-3))", -45, 36, "(d*b*-3)"},
{"((max((d-c), (d+-7))+((c+d)*8))//1)", -35, 140, "((d+c)*8+max((d+c*-1), (d+-7)))"},
{"(c+(((d+1)*6)+((e-b)*(c*2))))", -89, 6168, "(c+(d*6+c*(e+b*-1)*2)+6)"},
{"(b+-2)", -2, 1, "(b+-2)"},
{"(max(d, ((b*6)%8))+((max(b, c)*8)//6))", 1, 22, "(max(b, c)+max(b, c)//3+max(d, (b*3%4*2)))"},
{"(((c%8)+e)*-1)", -262, 0, "((e+c%8)*-1)"},
{"(b*2)", 0, 6, "(b*2)"},
{"(e%6)", 0, 5, "(e%6)"},
{"(c%2)", 0, 1, "(c%2)"},
{"((((b-c)-c)+2)+(((a*-1)*3)+e))", -46, 258, "(b+c*-2+(e+a*-3)+2)"},
{"(a%3)", 0, 2, "(a%3)"},
{"(a%16)", 0, 8, "a"},
{"(b//12)", 0, 0, "0"},
{"((((c%1)+(a//4))%2)+-8)", -8, -7, "(a//4%2+-8)"},
{"((d%4)+(((d%16)*-3)+(max(b, d)+(e+c))))", -44, 275, "(e+c+max(d, b)+d%16*-3+d%4)"},
{"b", 0, 3, "b"},
{"((c+((d+d)+(e+d)))//3)", -4, 94, "((c+(e+d*3))//3)"},
{"((e-(d//3))*-1)", -257, 1, "((e+d//3*-1)*-1)"},
{"(max(c, d)*2)", 2, 24, "(max(d, c)*2)"},
{"c", 1, 12, "c"},
{"((d*(a*-3))+d)", -124, 101, "(d+d*a*-3)"},
{"c", 1, 12, "c"},
{"(d//8)", -1, 0, "(d//8)"},
{"((c*3)%4)", 0, 3, "(c*3%4)"},
{"a", 0, 8, "a"},
{"d", -4, 5, "d"},
{"(e+-4)", -4, 251, "(e+-4)"},
{"c", 1, 12, "c"},
{"(c+1)", 2, 13, "(c+1)"},
{"(max((d+(d*d)), ((a//3)+(d+d)))+a)", -8, 38, "(a+max((d+d*d), (d*2+a//3)))"},
{"((e*6)*-1)", -1530, 0, "(e*-6)"},
{"(((max(b, d)*3)*-3)%12)", 0, 9, "(max(d, b)*-3%4*3)"},
{"((((b//8)//2)*-3)%6)", 0, 0, "0"},
{"((((a+-3)//4)*(e*4))+8)", -1012, 1028, "(e*((a+1)//4+-1)*4+8)"},
{"(((b+(c+a))//4)*3)", 0, 15, "((b+(a+c))//4*3)"},
{"((((d//2)%12)//3)+((e%2)//12))", 0, 3, "(d//6*-3)"},
{"(b*8)", 0, 24, "(b*8)"},
{"(((e*2)+(a+max(e, a)))+max(c, (c%2)))", 1, 785, "(c+(a+max(a, e)+e*2))"},
{"((max((c*-2), b)*3)//6)", 0, 1, "(b//2)"},
{"d", -4, 5, "d"},
{"e", 0, 255, "e"},
{"(((max(d, b)+(c+5))+c)%3)", 0, 2, "((c*2+max(d, b)+2)%3)"},
{"(a*-2)", -16, 0, "(a*-2)"},
{"e", 0, 255, "e"},
{"(d*6)", -24, 30, "(d*6)"},
{"(((e+-8)*2)*c)", -192, 5928, "(c*(e*2+-16))"},
{"((((b+d)+-8)-(d%5))+-7)", -23, -7, "(d+b+d%5*-1+-15)"},
{"(((e*(b+d))//2)+2)", -508, 1022, "(e*(d+b)//2+2)"},
{"((a%5)%6)", 0, 4, "(a%5)"},
{"(((c*4)*8)//16)", 2, 24, "(c*2)"},
{"((a+5)+(((c+c)-(c//2))*2))", -3, 61, "(a+(c*2+c//2*-1)*2+5)"},
{"(e+(((d-c)%3)*3))", 0, 261, "(e+(d+c*-1)%3*3)"},
{"(((d+(e//2))//4)//4)", -1, 8, "((d+e//2)//16)"},
{"((max((b+c), max(c, a))+((d//6)+-4))*d)", -44, 55, "(d*(max((b+c), max(a, c))+d//6+-4))"},
{"(((max(a, c)*4)%1)+((b+a)%6))", 0, 5, "((b+a)%6)"},
{"((((e+-1)%12)//1)*3)", 0, 33, "((e+11)%12*3)"},
{"((((e+6)//2)//6)//3)", 0, 7, "((e+6)//36)"},
{"((b+e)+(e//6))", 0, 300, "(b+e+e//6)"},
{"(max(((d%12)//4), ((c*-3)+-6))-(((b*6)-(b-a))+((b+c)+4)))", -45, 0, "((b+c+(b*6+(b+a*-1)*-1))*-1+d//4%3+-4)"},
{"(((max(c, b)+(c+-9))+(e-(e*-3)))+-3)", -10, 1032, "(c+max(b, c)+e*4+-12)"},
{"(d%3)", 0, 2, "(d%3)"},
{"((((c+b)+(b*8))%8)+c)", 1, 19, "(c+(b+c)%8)"},
{"((((a//1)//3)+7)%4)", 0, 3, "((a//3+3)%4)"},
{"(((d+(a//3))+((a//16)//6))%12)", 0, 11, "((d+a//3)%12)"},
{"(max((b+c), a)+a)", 1, 23, "(a+max(a, (b+c)))"},
{"((((d//5)%8)+((d+d)//3))//1)", -3, 10, "(d*2//3+d//5%8)"},
{"((((a%1)*(e+c))%12)//16)", 0, 0, "0"},
{"((((d//4)*6)*4)*-2)", -48, 48, "(d//4*-48)"},
{"((((e+c)//5)%12)//6)", 0, 1, "((e+c)//30%2)"},
{"((((c//4)//3)+d)*-1)", -6, 4, "((d+c//12)*-1)"},
{"max(max(d, max((c*6), c)), (((d+-6)%12)//12))", 6, 72, "max(c, (c*6))"},
{"((d+((d+-1)+b))+c)", -8, 24, "(c+(b+d*2)+-1)"},
{"b", 0, 3, "b"},
{"((((a*2)*-1)+4)//5)", -3, 0, "((a*-2+4)//5)"},
{"(d*6)", -24, 30, "(d*6)"},
{"((max((e*-1), (e+c))*-2)%4)", 0, 2, "((e+c)*-1%2*2)"},
{"((((a%2)*8)*8)+((d+(a//4))*2))", -8, 78, "((d+a//4)*2+a%2*64)"},
{"(((b%2)//1)+a)", 0, 9, "(a+b%2)"},
{"(max(c, ((e*-1)+max(b, c)))+(e//5))", 1, 63, "(max(c, (e*-1+max(b, c)))+e//5)"},
{"((((c%5)*2)%8)+max((e+(d-e)), c))", 1, 18, "(c%5%4*2+max(d, c))"},
{"((((c//1)//5)+((e+e)*8))-((a+a)%12))", -10, 4082, "(e*16+c//5+a%6*-2)"},
{"e", 0, 255, "e"},
{"((max((b+e), a)%4)+(((d-b)%1)*(d+(e+c))))", 0, 3, "(max(a, (b+e))%4)"},
{"((((b%8)+(b+0))+-2)%16)", 0, 14, "((b+7)%8*2)"},
{"(b+(c%2))", 0, 4, "(b+c%2)"},
{"((d//6)+d)", -5, 5, "(d+d//6)"},
{"((((d+c)//4)+9)-(((c*a)*c)+((c+a)+(e*-2))))", -1164, 522, "((a+c+e*-2+c*(a*c))*-1+(d+c)//4+9)"},
{"((((e+c)+b)+(a%12))//5)", 0, 55, "((a+(b+(e+c)))//5)"},
{"a", 0, 8, "a"},
{"b", 0, 3, "b"},
{"d", -4, 5, "d"},
{"((((c*d)+(b*e))+(a-(e%4)))//4)", -13, 208, "((a+e%4*-1+(d*c+b*e))//4)"},
{"b", 0, 3, "b"},
{"c", 1, 12, "c"},
{"((((b+e)+(a//4))+c)*-2)", -544, -2, "((c+(b+e+a//4))*-2)"},
{"e", 0, 255, "e"},
{"(((c//8)+((e+b)+c))+(((a+d)%1)+((a%4)%1)))", 1, 271, "(c+(b+e)+c//8)"},
{"(c%3)", 0, 2, "(c%3)"},
{"((((d+e)%3)*6)*6)", 0, 72, "((d+e)%3*36)"},
{"((((c+b)//4)+-3)%12)", 0, 11, "(((b+c)//4+9)%12)"},
{"max((((c*6)+(c+e))-((e+-9)*-2)), ((e+-3)*-2))", -11, 831, "max((e*3+c*7+-18), (e*-2+6))"},
{"max((c+-4), (max(a, (d-c))*4))", 0, 32, "max((c+-4), (max(a, (d+c*-1))*4))"},
{"((((e*2)-(d*e))-b)*-2)", -3060, 2556, "((e*2+d*e*-1+b*-1)*-2)"},
{"(((max(e, d)+c)+4)*-2)", -542, -10, "((c+max(d, e))*-2+-8)"},
{"((((a-d)%12)+2)+-9)", -7, 4, "((a+d*-1)%12+-7)"},
{"a", 0, 8, "a"},
{"(((c%12)-c)*-1)", -10, 12, "((c*-1+c%12)*-1)"},
{"e", 0, 255, "e"},
{"(e*(((d*-2)+3)+6))", -255, 4335, "(e*(d*-2+9))"},
{"((e+6)%1)", 0, 0, "0"},
{"(e+-8)", -8, 247, "(e+-8)"},
{"e", 0, 255, "e"},
{"c", 1, 12, "c"},
{"((((d-b)%6)%12)//8)", 0, 0, "0"},
{"c", 1, 12, "c"},
{"((e*8)+7)", 7, 2047, "(e*8+7)"},
{"((e+6)//16)", 0, 16, "((e+6)//16)"},
{"(d*4)", -16, 20, "(d*4)"},
{"(max(d, ((c//6)+(a+e)))*-2)", -530, 0, "(max(d, (a+e+c//6))*-2)"},
{"(max(c, b)%2)", 0, 1, "(max(b, c)%2)"},
{"((((b+-5)*6)%5)*-1)", -3, 0, "(b*-1)"},
{"((e+((c//3)//3))%4)", 0, 3, "((e+c//9)%4)"},
{"((((c//3)%8)-(e+7))%5)", 0, 4, "((e*-1+c//3+3)%5)"},
{"(((a-(c+b))*-3)-(((e//1)//1)%16))", -36, 45, "((a+(b+c)*-1)*-3+e%16*-1)"},
{"((((b+c)+9)//16)+(e+((a+9)*-2)))", -34, 238, "(e+a*-2+(b+c+9)//16+-18)"},
{"((((c*c)*d)+((e-d)*2))//6)", -98, 206, "((d*(c*c)+(e+d*-1)*2)//6)"},
{"(b+e)", 0, 258, "(b+e)"},
{"b", 0, 3, "b"},
{"((max((a%1), b)+max((e%5), (e//6)))%6)", 0, 5, "((b+max((e//6), (e%5)))%6)"},
{"(c+((max(c, d)%12)+((b*-2)-(d+-3))))", -7, 30, "(c+(d*-1+b*-2+max(d, c)%12)+3)"},
{"((max((d%3), max(b, b))+b)%16)", 0, 6, "(b+max(b, (d%3)))"},
{"((((a//6)+(d//12))%4)+b)", 0, 6, "(b+(d//12+a//6)%4)"},
{"(e*-1)", -255, 0, "(e*-1)"},
{"((((a//12)-b)-((a//12)*6))*-2)", 0, 6, "(b*2)"},
{"((((a%4)%2)+(d+b))%4)", 0, 3, "((d+b+a%2)%4)"},
{"((((a*-2)+e)//3)+((max(a, a)*max(e, e))+8))", 2, 2133, "(a*e+(e+a*-2)//3+8)"},
{"(where(((((e*-1)+c)*-1)<0), (((e*-1)//1)-(b+(c%12))), ((a+5)+((a-c)*4)))<10)", 0, 1, "(((e*-1+(b+c%12)*-1) if (((c+e*-1)*-1)<0) else (a+(a+c*-1)*4+5))<10)"},
{"((c+(a*b))+((d*d)-b))", -22, 61, "(c+b*a+(d*d+b*-1))"},
{"((((d+e)+e)*b)+((e*((e*-2)-b))*2))", -261642, 1545, "(b*(d+e*2)+e*(b*-1+e*-2)*2)"},
{"(((a+-3)%4)<9)", 1, 1, "True"},
{"(((d//3)*(b+-2))*2)", -4, 8, "((b+-2)*(d//3)*2)"},
{"(d*((a+e)//5))", -208, 260, "(d*((a+e)//5))"},
{"(((a//3)-(e//2))*3)", -381, 6, "((e//2*-1+a//3)*3)"},
{"(c+(c+(b//2)))", 2, 25, "(c*2+b//2)"},
{"d", -4, 5, "d"},
{"((a+((e+a)*8))%2)", 0, 1, "(a%2)"},
{"(d+((((d*-2)%8)%1)%12))", -4, 5, "d"},
{"d", -4, 5, "d"},
{"(a//5)", 0, 1, "(a//5)"},
{"((max(e, e)//2)*8)", 0, 1016, "(e//2*8)"},
{"(((a+2)//5)%3)", 0, 2, "((a+2)//5)"},
{"(((((b//4)*6)*2)+9)//6)", 1, 1, "1"},
{"d", -4, 5, "d"},
{"where(((((b+4)+(c//12))*max((c//6), (a%3)))<10), ((a+(a+e))+max((b%12), (d%16))), (((e//3)+3)+((d*-1)%12)))", 0, 286, "((e+a*2+max(b, (d%16))) if (((b+c//12+4)*max((c//6), (a%3)))<10) else (e//3+d*-1%12+3))"},
{"a", 0, 8, "a"},
{"(max(((a+b)+-2), ((c//5)*where((c<14), a, a)))%12)", 0, 11, "(max((b+a+-2), (a*(c//5)))%12)"},
{"(((((c+b)+(e*d))+((b+d)*3))%16)<18)", 1, 1, "True"},
{"e", 0, 255, "e"},
{"(where(((e+7)<6), (((a+e)//8)+(a*(e+d))), (((d+d)+7)*((b-a)+b)))%4)", 0, 3, "((d*2+7)*(b*2+a*-1)%4)"},
{"((e//2)+7)", 7, 134, "(e//2+7)"},
{"(((((b//16)+(e//3))*2)*4)+((((b+b)*(a+4))-((d+a)*-2))+-3))", -11, 775, "((d+a)*2+b*(a+4)*2+e//3*8+-3)"},
{"((((a%12)%2)+e)-((b+((a+b)*(a*4)))-(((a//4)+d)*4)))", -371, 284, "(e+a%2+(b+a*(b+a)*4+(d+a//4)*-4)*-1)"},
{"(((d+9)+(max((b-d), c)//16))-((((a*4)+(a-b))*3)%5))", 1, 14, "(d+(b*-1+a*5)*3%5*-1+9)"},
{"(a*6)", 0, 48, "(a*6)"},
{"(((((a*2)%8)+c)%5)//5)", 0, 0, "0"},
{"((((e+a)//8)//3)//8)", 0, 1, "((a+e)//192)"},
{"where(((((c*4)*3)//12)<18), ((b%1)-((c+d)*-3)), (((c%4)%1)%16))", -9, 51, "((d+c)*3)"},
{"(((a//1)*(b*-3))%6)", 0, 3, "(b*a*-1%2*3)"},
{"(c<19)", 1, 1, "True"},
{"d", -4, 5, "d"},
{"((max(c, (a+e))*3)//16)", 0, 49, "(max(c, (a+e))*3//16)"},
{"(((((b//1)+(c+d))+a)%2)+-2)", -2, -1, "((a+(b+(d+c)))%2+-2)"},
{"(((((b*-2)*-2)*max((d%8), (b*4)))+e)%6)", 0, 5, "((e+b*max((b*4), (d%8))*4)%6)"},
{"((((a+d)+(d*3))*-3)%2)", 0, 1, "((a+d*4)*-3%2)"},
{"(c%12)", 0, 11, "(c%12)"},
{"(((((c//12)+7)+0)+(((c+a)%6)+((c%8)//16)))+-5)", 2, 8, "(c//12+(a+c)%6+2)"},
{"(((((d*a)//16)+((a+1)//2))-b)+d)", -9, 11, "(d+((a+1)//2+d*a//16+b*-1))"},
{"(((c*-1)+6)*8)", -48, 40, "(c*-8+48)"},
{"((((((d+e)+(a//2))*(b*6))+(((d-c)//2)+0))+(a%12))<1)", 0, 1, "((a+(b*(d+e+a//2)*6+(d+c*-1)//2))<1)"},
{"(a-c)", -12, 7, "(a+c*-1)"},
{"((((d-b)//5)//16)<23)", 1, 1, "True"},
{"(((((b+d)*3)//1)-(d+((b*6)*-1)))+1)", -16, 47, "((d+b)*3+(d+b*-6)*-1+1)"},
{"where((((e+-8)//3)<16), (where((b<0), c, c)+(d//12)), e)", 0, 255, "((c+d//12) if (e<56) else e)"},
{"(((((b//5)+(e*3))+(a%3))*-2)+3)", -1531, 3, "((e*3+a%3)*-2+3)"},
{"((d%12)*((((c//8)%16)+((a//5)*d))//2))", -22, 33, "((d*(a//5)+c//8)//2*(d%12))"},
{"(((e*-2)//3)+-4)", -174, -4, "(e*-2//3+-4)"},
{"a", 0, 8, "a"},
{"((d+((b-b)+-5))+((d*4)*2))", -41, 40, "(d*9+-5)"},
{"(((((a+-4)+(c//16))*2)+(b//16))//4)", -2, 2, "(a//2+-2)"},
{"(a//3)", 0, 2, "(a//3)"},
{"(((a+5)+(e+e))*-2)", -1046, -10, "((a+e*2)*-2+-10)"},
{"(((((e*4)+(e+a))+((b-c)*6))-(((e+d)+d)//3))+((a-((a*8)%6))+(((d*6)%8)//2)))", -164, 1309, "(a+a%3*-2+d*3%4+(a+e*5+(b+c*-1)*6+(e+d*2)//3*-1))"},
{"e", 0, 255, "e"},
{"((e+4)*6)", 24, 1554, "(e*6+24)"},
{"(where((where((where(((a*2)<15), (b*-2), (c%16))<11), ((a*-2)+b), e)<16), (((d+e)+3)+e), (((d+b)+-3)+0))%1)", 0, 0, "0"},
{"(where((((e%4)+(a+a))<7), (where((b<8), d, d)+-7), c)<25)", 1, 1, "True"},
{"(b+(max(e, a)+9))", 9, 267, "(b+max(a, e)+9)"},
{"(((a//12)%16)+-7)", -7, -7, "-7"},
{"(((b//4)//3)+(b//1))", 0, 3, "b"},
{"(((((a%16)//5)+where(((e//3)<17), (e+d), (c*2)))-(((a+e)//12)//3))%6)", 0, 5, "((a//5+((d+e) if (e<51) else (c*2))+(a+e)//36*-1)%6)"},
{"((where((a<0), a, b)//16)//4)", 0, 0, "0"},
{"(c<16)", 1, 1, "True"},
{"c", 1, 12, "c"},
{"((((((e%12)+d)//12)*4)%4)<26)", 1, 1, "True"},
{"((((b%8)+((d+-7)+(e%4)))%5)+((((e*b)*-3)*-1)//8))", 0, 290, "(b*e*3//8+(b+(d+e%4)+3)%5)"},
{"((((where((d<10), a, b)*6)//6)%4)+e)", 0, 258, "(e+a%4)"},
{"(((b*8)%4)*6)", 0, 0, "0"},
{"(c<2)", 0, 1, "(c<2)"},
{"((((a+c)//1)%3)//6)", 0, 0, "0"},
{"(((a*6)+(e%1))%5)", 0, 4, "(a%5)"},
{"(e*-1)", -255, 0, "(e*-1)"},
{"((((c//12)%8)*-1)<3)", 1, 1, "True"},
{"(((a*3)+(b//1))//1)", 0, 27, "(b+a*3)"},
{"(((((c%4)+(d+-6))%8)*(((d+b)+6)*-1))//6)", -17, 0, "(((d+b)*-1+-6)*((d+c%4+2)%8)//6)"},
{"(((where(((d-a)<9), (c-a), where((c<13), c, c))*-2)-c)//6)", -6, 2, "((c*-1+(c+a*-1)*-2)//6)"},
{"((((e*2)//2)+((c*-2)//12))+5)", 3, 259, "(e+c*-1//6+5)"},
{"((((e+b)*3)%4)*3)", 0, 9, "((b+e)*3%4*3)"},
{"(((e*((max(c, c)//6)%2))//1)<8)", 0, 1, "((e*(c//6%2))<8)"},
{"((b+e)+max(((d%4)*2), ((a%2)%2)))", 0, 264, "(b+e+max((d%4*2), (a%2)))"},
{"(where(((e%8)<13), c, ((((b+e)*-1)+9)%8))<23)", 1, 1, "True"},
{"(max(d, (((b%5)*(d*6))+-5))//1)", -4, 85, "max(d, (d*b*6+-5))"},
{"(c+((a*8)//3))", 1, 33, "(c+(a*2+a*2//3))"},
{"d", -4, 5, "d"},
{"(((((b+a)//16)*3)%12)*6)", 0, 0, "0"},
{"a", 0, 8, "a"},
{"(((((a+-5)*-2)+-9)+(b+1))<26)", 1, 1, "True"},
{"(b<10)", 1, 1, "True"},
{"((e*3)*3)", 0, 2295, "(e*9)"},
{"where((((b%1)*-1)<15), a, ((d+a)+(c+a)))", 0, 8, "a"},
{"(((max((d-d), (e*-3))//1)*-1)+((((c*-2)*4)%2)*3))", 0, 0, "0"},
{"((b+(a%3))<16)", 1, 1, "True"},
{"(d+((b//1)*-1))", -7, 5, "(d+b*-1)"},
{"(e<4)", 0, 1, "(e<4)"},
{"(((b%5)-d)+1)", -4, 8, "(b+d*-1+1)"},
{"(d//1)", -4, 5, "d"},
{"(((a*a)%12)+4)", 4, 15, "(a*a%12+4)"},
{"max(((((a+-8)//6)+d)*4), ((((d+a)*2)%3)%3))", 0, 20, "max(((d+(a+4)//6)*4+-8), ((d+a)*2%3))"},
{"(((c%16)+(e*-3))//8)", -96, 1, "((c+e*-3)//8)"},
{"(((b%2)+where((e<0), b, c))*c)", 1, 156, "(c*(c+b%2))"},
{"(((a//12)+6)*b)", 0, 18, "(b*6)"},
{"where((((c*4)+(((b%12)+c)*c))<17), (a+-3), ((c*6)*4))", -3, 288, "((a+-3) if ((c*(b+c)+c*4)<17) else (c*24))"},
{"((((where((c<0), d, b)//12)%8)*d)*2)", 0, 0, "0"},
{"((((e+b)+-9)//8)*4)", -8, 124, "((b+e+7)//8*4+-8)"},
{"where(((e+-6)<15), ((a%6)*-3), ((a-b)%12))", -15, 11, "((a%6*-3) if (e<21) else ((a+b*-1)%12))"},
{"(((a*d)%8)*2)", 0, 14, "(d*a%8*2)"},
{"(d+((((a//2)*-3)//3)%5))", -4, 9, "(d+a//2*-1%5)"},
{"(((((c+d)*(a//2))+(e//4))+a)%16)", 0, 15, "((a+((d+c)*(a//2)+e//4))%16)"},
{"((((b+(e+b))*e)//16)*-1)", -4159, 0, "(e*(e+b*2)//16*-1)"},
{"((((d+b)+(d//2))+((a%8)-(c+e)))*d)", -1365, 1092, "(d*(d+b+d//2+((e+c)*-1+a%8)))"},
{"((e//2)+(((d*6)+2)+4))", -18, 163, "(d*6+e//2+6)"},
{"((((a+c)//1)+((d%1)*4))+(e*((c%4)+(c//3))))", 1, 1805, "(a+c+e*(c//3+c%4))"},
{"c", 1, 12, "c"},
{"(max((c//8), e)+(max(c, a)+max(c, c)))", 2, 279, "(c+max(a, c)+max(e, (c//8)))"},
{"((c+(b+e))*-3)", -810, -3, "((c+(b+e))*-3)"},
{"(((b+((c+a)*-2))-(((e*-2)%4)*-2))+4)", -36, 9, "(b+(a+c)*-2+e*-1%2*4+4)"},
{"max(c, (((d-d)*6)+(where((e<8), b, a)*4)))", 1, 32, "max(c, ((b if (e<8) else a)*4))"},
{"(((d//6)%3)*8)", 0, 16, "(d//6*-16)"},
{"((((c+3)%4)+(((d-d)//12)*-2))+-2)", -2, 1, "((c+3)%4+-2)"},
{"(where((c<16), d, (c+c))+b)", -4, 8, "(d+b)"},
{"where(((b+9)<3), ((c*3)-c), e)", 0, 255, "e"},
{"((a+0)+-1)", -1, 7, "(a+-1)"},
{"d", -4, 5, "d"},
{"((a//16)<27)", 1, 1, "True"},
{"e", 0, 255, "e"},
{"(((((e*c)*4)+((a//5)+(e+a)))*2)+(((e+e)+((c+e)*8))+-3))", 5, 27651, "(e*2+(e+c)*8+(a+e+a//5+e*c*4)*2+-3)"},
{"b", 0, 3, "b"},
{"d", -4, 5, "d"},
{"(((c+-5)+(b*d))*((e//6)+(e+b)))", -4800, 6600, "((b+e+e//6)*(c+d*b+-5))"},
{"c", 1, 12, "c"},
{"(b+(((a+b)%8)//4))", 0, 4, "(b+(b+a)//4%2)"},
{"((((e%6)+(d+b))-((c+b)+(c%16)))+(c//4))", -31, 14, "(d+b+e%6+(b+c*2)*-1+c//4)"},
{"(((a//16)%4)+5)", 5, 5, "5"},
{"e", 0, 255, "e"},
{"(((b+c)*(c+e))*-2)", -8010, -2, "((b+c)*(e+c)*-2)"},
{"(a-((where((b<8), c, b)+(c+a))+b))", -35, 6, "(a+(b+(a+c*2))*-1)"},
{"((((c*-1)*(c+((c//16)+max(d, e))))-((((b%3)*(a//5))+((d*8)-b))+(e*(b+max(a, a)))))<11)", 0, 1, "(((d*8+b*-1+a//5*(b%3)+e*(b+a))*-1+c*(c+max(d, e))*-1)<11)"},
{"((c+c)*((d//5)+1))", 0, 48, "(c*(d//5+1)*2)"},
{"(((c*8)*2)-((d%16)//16))", 16, 192, "(c*16)"},
{"((((a//6)%12)//16)-e)", -255, 0, "(e*-1)"},
{"(((((b*-3)+(a*3))//1)+-2)+(b*-2))", -17, 22, "(b*-5+a*3+-2)"},
{"(d+c)", -3, 17, "(d+c)"},
{"(b+5)", 5, 8, "(b+5)"},
{"((max((d+c), (a+e))%6)-((where((b<1), c, c)*6)//5))", -14, 4, "((c+c//5)*-1+max((d+c), (a+e))%6)"},
{"c", 1, 12, "c"},
{"(((where(((d*b)<10), (b+d), (e+a))%3)+(((a%6)+(a+c))+8))+((((a*-2)+8)%1)//12))", 9, 35, "(a+c+a%6+((d+b) if ((d*b)<10) else (a+e))%3+8)"},
{"(((((where((e<11), b, d)*(a%2))*6)*6)+6)<21)", 0, 1, "((a%2*(b if (e<11) else d))<1)"},
{"((((a*2)*a)-(((c-a)%1)+(d*2)))//5)", -2, 27, "((d*-2+a*a*2)//5)"},
{"(((d*e)//4)+((a//2)//3))", -255, 319, "(a//6+d*e//4)"},
{"(d<22)", 1, 1, "True"},
{"a", 0, 8, "a"},
{"(b*8)", 0, 24, "(b*8)"},
{"(((e+9)-((((d*2)%12)+4)*4))<18)", 0, 1, "((e+d%6*-8)<25)"},
{"(((e*8)%8)*6)", 0, 0, "0"},
{"b", 0, 3, "b"},
{"((((a//16)+(e%8))*d)//6)", -5, 5, "(d*(e%8)//6)"},
{"((((e+a)+max(d, a))*4)//6)", 0, 180, "((a+e+max(d, a))*2//3)"},
{"((a*-1)+9)", 1, 9, "(a*-1+9)"},
{"(e//6)", 0, 42, "(e//6)"},
{"(((((a+d)*(d//1))*3)%6)+4)", 4, 7, "(d*(d+a)%2*3+4)"},
{"c", 1, 12, "c"},
{"(((((b%5)+max(e, b))*2)*-1)%1)", 0, 0, "0"},
{"(b//5)", 0, 0, "0"},
{"(c%6)", 0, 5, "(c%6)"},
{"(max(where((c<-2), d, e), (c//4))*2)", 0, 510, "(max(e, (c//4))*2)"},
{"(((((c+e)-(c+b))*8)+2)+d)", -114, 2135, "(d+(e+c+(b+c)*-1)*8+2)"},
{"where((((c*c)%12)<17), ((((b+c)//1)*8)*3), (((c+0)+(b+(e*2)))+(((e%4)//8)-((e*2)*3))))", 24, 360, "((b+c)*24)"},
{"((((c//16)+(d%2))*6)<20)", 1, 1, "True"},
{"(((((c//1)*(a//16))+(d+(d%16)))-((b//2)-((d+e)-(e*a))))-b)", -2052, 280, "(d+d%16+((d+e+a*e*-1)*-1+b//2)*-1+b*-1)"},
{"c", 1, 12, "c"},
{"(e<2)", 0, 1, "(e<2)"},
{"(b<18)", 1, 1, "True"},
{"b", 0, 3, "b"},
{"a", 0, 8, "a"},
{"((d+(((a+-9)-(e+c))*max((b%8), (b*e))))+((b+((d+c)-(d+e)))-(a//6)))", -211408, 29, "(d+(a+(e+c)*-1+-9)*max(b, (b*e))+(b+(d+c+(d+e)*-1)+a//6*-1))"},
{"(e+-4)", -4, 251, "(e+-4)"},
{"(((a+a)//16)*-3)", -3, 0, "(a//8*-3)"},
{"d", -4, 5, "d"},
{"(((a+b)%5)//3)", 0, 1, "((b+a)%5//3)"},
{"a", 0, 8, "a"},
{"(a*-1)", -8, 0, "(a*-1)"},
{"(a-((e*-1)+e))", 0, 8, "a"},
{"((c+e)*-3)", -801, -3, "((e+c)*-3)"},
{"(((c+-5)%3)-((a%5)%5))", -4, 2, "(a%5*-1+(c+1)%3)"},
{"((((where((c<1), e, a)+where((c<16), e, e))%5)%4)<7)", 1, 1, "True"},
{"(d*(((b//6)%8)+d))", -20, 25, "(d*d)"},
{"(((((a+-6)+a)+((a//2)//8))*2)*((((d+e)+-5)*2)+e))", -9180, 15300, "((e+(d+e)*2+-10)*(a*4+-12))"},
{"((c//1)*4)", 4, 48, "(c*4)"},
{"(((c*-2)+-8)+((b+a)+c))", -20, 2, "(b+a+c*-1+-8)"},
{"c", 1, 12, "c"},
{"((((a+e)*4)//5)<29)", 0, 1, "((a+e)<37)"},
{"((((e//5)+-8)+((c+a)*8))//16)", 0, 12, "((a+c+e//40+1)//2+-1)"},
{"((((a*d)*-2)*-1)*8)", -512, 640, "(d*a*16)"},
{"(((d+-3)+(b+d))+b)", -11, 13, "(d*2+b*2+-3)"},
{"a", 0, 8, "a"},
{"(((a//6)+(e*-3))<25)", 1, 1, "True"},
{"(((d-((a//8)-(e*b)))%6)*-3)", -15, 0, "((d+(b*e*-1+a//8)*-1)%6*-3)"},
{"(max(where((((e+c)//3)<17), ((b*8)%2), a), (where(((a+b)<5), (b//2), (e//8))+((c*-2)//5)))-((where(((c//8)<8), (b*c), (b//16))%2)*3))", -3, 30, "(b*c%2*-3+max((c*-2//5+((b//2) if ((b+a)<5) else (e//8))), (0 if ((e+c)<51) else a)))"},
{"where(((((d+-9)+-3)*4)<13), a, (((d*4)//6)+d))", 0, 8, "a"},
{"(((a//3)-(d+(c+9)))*(d+-8))", 12, 312, "((d+-8)*((d+c)*-1+a//3+-9))"},
{"c", 1, 12, "c"},
{"e", 0, 255, "e"},
{"max((max(((b%5)*-2), ((e+1)*-2))-max(e, ((e+-4)-(b//8)))), ((b+((b*d)//3))+6))", 2, 14, "(b+d*b//3+6)"},
{"(max((b+(a-(c+a))), (((d*4)%12)//16))+((a//16)%8))", 0, 10, "max((b+(a+(a+c)*-1)), 0)"},
{"(d+((((e+d)+(c+a))+(a%4))+c))", -6, 300, "(d+(c+(d+e+(a+c)+a%4)))"},
{"((((a+0)*4)*-2)%3)", 0, 2, "(a*-8%3)"},
{"max(c, ((d+7)+c))", 4, 24, "max(c, (d+c+7))"},
{"max((((e*4)*8)+(d+(e+8))), (((c*-3)+-9)+(a+6)))", 4, 8428, "(d+e*33+8)"},
{"a", 0, 8, "a"},
{"e", 0, 255, "e"},
{"d", -4, 5, "d"},
{"max(((d+-5)+(e*-3)), max((a//12), a))", 0, 8, "a"},
{"e", 0, 255, "e"},
{"d", -4, 5, "d"},
{"((((c%2)+(a*-2))+-8)<29)", 1, 1, "True"},
{"(d+5)", 1, 10, "(d+5)"},
{"((d//8)+(c//1))", 0, 12, "(c+d//8)"},
{"max(((((a+-5)+-7)//4)+((a%2)*(c+9))), ((((b+-5)//5)//4)%3))", 2, 20, "max(((c+9)*(a%2)+a//4+-3), 2)"},
{"((d+max((a+a), (d//1)))<12)", 0, 1, "((d+max(d, (a*2)))<12)"},
{"(((((d%12)+(d+e))*-2)%3)*-3)", -6, 0, "((d+e+d%12)*-2%3*-3)"},
{"(max(d, (a//3))<9)", 1, 1, "True"},
{"(a+((d//12)*(((e+e)*where((e<9), c, a))*c)))", -73440, 8, "(a+c*(e*(c if (e<9) else a))*(d//12)*2)"},
{"(a*2)", 0, 16, "(a*2)"},
{"((((a+-6)+(a%2))//16)//8)", -1, 0, "((a+a%2+122)//128+-1)"},
{"(((c+(c%12))+((d*4)//5))+-5)", -8, 22, "(c+c%12+d*4//5+-5)"},
{"(a+(((e//12)+c)*((a*-3)+-1)))", -825, 7, "(a+(c+e//12)*(a*-3+-1))"},
{"(((b-c)+2)+-7)", -17, -3, "(b+c*-1+-5)"},
{"(b+(max(d, ((e+-9)*8))%2))", 0, 4, "(b+max(d, (e*8+-72))%2)"},
{"((((c+0)*4)%2)%8)", 0, 0, "0"},
{"((a-((a+(d+0))*(a+e)))<9)", 0, 1, "((a+(d+a)*(a+e)*-1)<9)"},
{"((d+-6)//12)", -1, -1, "-1"},
{"((c+max(b, b))//5)", 0, 3, "((b+c)//5)"},
{"(b*8)", 0, 24, "(b*8)"},
{"(where((((c+a)+(d+b))<17), ((b+5)+c), (max(c, a)+(b*8)))<17)", 0, 1, "(((b+c+5) if ((d+b+(a+c))<17) else (b*8+max(a, c)))<17)"},
{"(d+((c//8)+(a//12)))", -4, 6, "(d+c//8)"},
{"(d*(b+(max((a*b), (c+e))+-5)))", -1060, 1325, "(d*(b+max((e+c), (b*a))+-5))"},
{"((((max(b, c)*4)%4)+d)+((((c-c)*(e+e))*-1)*(((b*-2)*(d*-3))//2)))", -4, 5, "d"},
{"max((e%2), (a+where(((max(e, e)+(b+c))<11), b, (e+2))))", 0, 265, "max((a+(b if ((e+(b+c))<11) else (e+2))), (e%2))"},
{"((((a*4)+(e+b))+((c//5)%4))//5)", 0, 58, "((b+e+a*4+c//5)//5)"},
{"(((((a+e)//4)//4)+-7)%2)", 0, 1, "(((a+e)//16+1)%2)"},
{"(((b-e)+9)+((d+9)//5))", -245, 14, "(b+e*-1+(d+4)//5+10)"},
{"(b*-3)", -9, 0, "(b*-3)"},
{"(((e//1)//3)*2)", 0, 170, "(e//3*2)"},
{"(d<18)", 1, 1, "True"},
{"(((e*-2)//4)*max(a, b))", -1024, 0, "(max(b, a)*(e*-1//2))"},
{"(((((e%5)%5)+8)*2)//5)", 3, 4, "((e%5*2+1)//5+3)"},
{"(((b%16)*8)<9)", 0, 1, "(b<2)"},
{"((e+where((((e*4)%16)<6), e, ((b*6)*4)))//5)", 0, 102, "((e+(e if ((e%4)<2) else (b*24)))//5)"},
{"b", 0, 3, "b"},
{"((((d%1)+(d+a))+(c*4))<4)", 0, 1, "((d+a+c*4)<4)"},
{"((((b*3)+(e//1))*((d*2)+(c+e)))%5)", 0, 4, "((e+b*3)*(e+c+d*2)%5)"},
{"(max(((c+4)*(c*3)), ((b*6)*(b*a)))*4)", 60, 2304, "(max((b*(b*a)*6), (c*(c+4)*3))*4)"},
{"a", 0, 8, "a"},
{"(((((d%6)*max(e, b))+((c+c)-(d+d)))%4)<14)", 1, 1, "True"},
{"d", -4, 5, "d"},
{"(((a*3)+((d*b)*(a+a)))+(a+c))", -191, 284, "(a+c+(a*3+a*(d*b)*2))"},
{"(((((b%1)%2)*-1)*b)+e)", 0, 255, "e"},
{"(max(((d*3)*-2), ((a*4)%8))*(((e*3)+3)*-3))", -55296, 0, "((e*-9+-9)*max((d*-6), (a%2*4)))"},
{"(((a*8)//12)//5)", 0, 1, "(a*2//15)"},
{"(c//3)", 0, 4, "(c//3)"},
{"((e+(d*-1))+d)", 0, 255, "e"},
{"(max((e+e), e)+a)", 0, 518, "(a+max(e, (e*2)))"},
{"(((d//8)*8)%16)", 0, 8, "(d//8*-8)"},
{"((((c+b)//3)%16)*(((b+c)+(a//8))*-3))", -240, 0, "((b+c+a//8)*((b+c)//3)*-3)"},
{"(((max((e//8), (c+d))%16)*-1)%2)", 0, 1, "(max((d+c), (e//8))%16*-1%2)"},
{"(b+-7)", -7, -4, "(b+-7)"},
{"((((b%12)-(b%12))//5)//1)", 0, 0, "0"},
{"(((((a%6)*(c+d))+where(((e+e)<6), (d*-3), (b//5)))*2)%2)", 0, 0, "0"},
{"e", 0, 255, "e"},
{"(((((b+-3)+4)//8)*-1)<20)", 1, 1, "True"},
{"(((b*-1)*6)+((b+4)+-3))", -14, 1, "(b*-5+1)"},
{"where((((a//1)-(e+2))<-2), ((a+a)*-1), ((e+d)+-2))", -16, 258, "((a*-2) if ((a+e*-1)<0) else (d+e+-2))"},
{"where(((a+1)<18), ((a%3)*6), ((e+(a-d))+b))", 0, 12, "(a%3*6)"},
{"(((a*6)//4)+-6)", -6, 6, "(a+a//2+-6)"},
{"(a//12)", 0, 0, "0"},
{"(((((e*-3)+e)//2)//8)<14)", 1, 1, "True"},
{"((((d%5)*-3)%16)+where((((c+d)%4)<13), ((e%3)+(e*c)), ((d*8)%1)))", 0, 3077, "(e*c+e%3+d%5*-3%16)"},
{"(((((e-d)+(b+c))//4)%12)+7)", 7, 18, "((b+c+(e+d*-1))//4%12+7)"},
{"(((e+b)*(c+d))%3)", 0, 2, "((d+c)*(b+e)%3)"},
{"(b-((a*8)*(c%2)))", -64, 3, "(b+a*(c%2)*-8)"},
{"((((a//6)+(a//8))+where(((a+d)<20), (d*-3), (a-b)))%8)", 0, 7, "((a//6+a//8+d*-3)%8)"},
{"(d*-2)", -10, 8, "(d*-2)"},
{"(e//12)", 0, 21, "(e//12)"},
{"(((((c*-3)+(e*2))+-4)+(where(((c-e)<0), (b+a), (a*c))%12))+(d+(((d*e)//12)+((d+c)+2))))", -130, 644, "(d+(d+c+d*e//12)+(e*2+c*-3+((b+a) if ((c+e*-1)<0) else (a*c))%12)+-2)"},
{"((((d//16)%5)//6)%6)", 0, 0, "0"},
{"(b//2)", 0, 1, "(b//2)"},
{"(max(((c+(c+d))+8), (((a//6)+e)*-2))*-2)", -74, -12, "((d+c*2)*-2+-16)"},
{"b", 0, 3, "b"},
{"(a//16)", 0, 0, "0"},
{"((a+(e*-3))//8)", -96, 1, "((a+e*-3)//8)"},
{"a", 0, 8, "a"},
{"((((c+-9)//12)+(((b//8)*8)+e))<20)", 0, 1, "((e+(c+3)//12)<21)"},
{"b", 0, 3, "b"},
{"((((e%12)//3)//3)<26)", 1, 1, "True"},
{"(d//4)", -1, 1, "(d//4)"},
{"((b*((b//4)+-9))+((((e//5)%16)%4)+(((b//5)+-5)*8)))", -67, -37, "(b*-9+e//5%4+-40)"},
{"(((((b*8)+(d*4))+(b+-5))*4)+max((d+6), (((a*8)+(e//12))+((e+e)*(d%1)))))", -82, 253, "((d*4+b*9)*4+max((d+6), (a*8+e//12))+-20)"},
{"((((a*e)+(e//3))%16)//16)", 0, 0, "0"},
{"where((max(max((b+a), max(b, e)), ((a//2)-(e+-9)))<13), (((c+c)%16)+-1), (((a*-2)%8)*max(e, c)))", -1, 1530, "((c%8*2+-1) if (max((e*-1+a//2+9), max((b+a), max(b, e)))<13) else (max(e, c)*(a*-1%4)*2))"},
{"a", 0, 8, "a"},
{"((where((e<-1), (b%16), d)//1)<3)", 0, 1, "(d<3)"},
{"(b%2)", 0, 1, "(b%2)"},
{"(((c+(a//3))%16)<15)", 1, 1, "True"},
{"(where(((((b*a)+(a*6))+((a//2)+(a%8)))<2), e, c)+(where((((c+a)%4)<-2), d, ((b+e)//5))//8))", 0, 261, "((b+e)//40+(e if ((b*a+a*6+(a//2+a%8))<2) else c))"},
{"(((e+3)+-8)+where(((a%3)<-1), c, (a*-3)))", -29, 250, "(e+a*-3+-5)"},
{"c", 1, 12, "c"},
{"(((c+a)+c)+d)", -2, 37, "(d+(a+c*2))"},
{"((((b*e)*-3)%8)+(((a+e)*b)*3))", 0, 2374, "(b*(a+e)*3+b*e*-3%8)"},
{"(((a*6)+-2)*c)", -24, 552, "(c*(a*6+-2))"},
{"((max(((c%2)+(e*b)), max((d%5), (c//16)))+(((c%12)+(e%8))*4))+(max(((a+c)+(c%12)), (d%8))*8))", 8, 1086, "((e%8+c%12)*4+max((b*e+c%2), (d%5))+max((a+c+c%12), (d%8))*8)"},
{"(d-d)", 0, 0, "0"},
{"((where(((((a*-1)+(a+a))%16)<4), ((a*-2)*((d//5)//1)), (max(c, where((c<15), a, c))*2))*(c//3))<30)", 0, 1, "((c//3*((a*(d//5)*-2) if (a<4) else (max(a, c)*2)))<30)"},
{"(((((a*a)//12)-(where((c<17), d, a)//8))*4)%6)", 0, 4, "((d//8*-1+a*a//12)*2%3*2)"},
{"(((a+-7)-(c+b))+((c+b)*3))", -5, 31, "(a+(b+c)*2+-7)"},
{"(((d*c)+(a%12))//16)", -3, 4, "((a+d*c)//16)"},
{"(((((e*b)-(e+a))+-9)-max((d*-2), (b+(b-e))))+-3)", -283, 763, "(b*e+(a+e)*-1+max((b*2+e*-1), (d*-2))*-1+-12)"},
{"((d+((e+1)-(e*a)))<15)", 0, 1, "((d+(e+a*e*-1))<14)"},
{"((((d+4)%4)+((a*6)*a))*c)", 0, 4644, "(c*(a*a*6+d%4))"},
{"(((c-((a*8)//16))%2)+max(a, (((b*4)+(b+d))%1)))", 0, 9, "(a+(c+a//2*-1)%2)"},
{"((max(a, c)+(a//1))//5)", 0, 4, "((a+max(a, c))//5)"},
{"(((max((a*2), b)//1)%6)+d)", -4, 10, "(d+max(b, (a*2))%6)"},
{"where((((d*-2)+e)<11), ((e+6)+-8), (c+d))", -3, 253, "((e+-2) if ((e+d*-2)<11) else (d+c))"},
{"(((((b%4)//8)//16)*2)*((((b+e)+0)*c)+(d*6)))", 0, 0, "0"},
{"(e+max(((b+d)//16), ((e%6)//16)))", 0, 255, "e"},
{"d", -4, 5, "d"},
{"(a*-3)", -24, 0, "(a*-3)"},
{"((((e*3)-(c*a))//8)+8)", -4, 103, "((e*3+a*c*-1)//8+8)"},
{"where((((d+1)//6)<15), e, ((((e*3)%8)%8)//16))", 0, 255, "e"},
{"(((((a+-4)+(b%5))%12)*4)-((((a%2)%16)*2)//3))", 0, 44, "((b+a+8)%12*4)"},
{"(e+8)", 8, 263, "(e+8)"},
{"((((c*-2)%12)%2)//2)", 0, 0, "0"},
{"a", 0, 8, "a"},
{"(((c+c)*(b//6))//12)", 0, 0, "0"},
{"(((e+-7)+b)%6)", 0, 5, "((b+e+5)%6)"},
{"(((c*b)+c)*-1)", -48, -1, "((c+b*c)*-1)"},
{"where(((((e+b)+(b*-2))+max((e+c), (b+a)))<11), ((max(d, a)*3)*(where((a<14), d, b)*(c*-1))), ((where((b<5), e, a)+(e-d))%8))", -1440, 1152, "((d*c*max(d, a)*-3) if ((e+b*-1+max((b+a), (e+c)))<11) else ((d*-1+e*2)%8))"},
{"(b<9)", 1, 1, "True"},
{"(((e+-1)%6)+0)", 0, 5, "((e+5)%6)"},
{"((((c*c)//1)+((a*c)+(a+-2)))+(((d%4)%12)%5))", -1, 249, "(a+a*c+c*c+d%4+-2)"},
{"(((e+a)*(a+e))+-3)", -3, 69166, "((a+e)*(a+e)+-3)"},
{"(((where(((e-c)<1), (a*b), (e*6))%5)%2)%6)", 0, 1, "(((b*a) if ((e+c*-1)<1) else (e*6))%5%2)"},
{"((where((((e+c)+6)<12), d, ((d%2)%5))+(((e+-8)+-2)+-8))<0)", 0, 1, "((e+(d if ((e+c)<6) else (d%2)))<18)"},
{"(((e+1)*2)+-7)", -5, 505, "(e*2+-5)"},
{"((((e+e)-(e//8))+((a*-1)%2))+(((e*b)*6)+e))", -31, 5356, "(e+b*e*6+(e*2+e//8*-1+a*-1%2))"},
{"c", 1, 12, "c"},
{"(((e+((e%2)+-2))%2)*where(((((c+d)//3)-((a+c)+(c//3)))<19), (e+6), (e+((c//16)//8))))", 0, 0, "0"},
{"((max((a+d), a)//6)+1)", 1, 3, "(max(a, (d+a))//6+1)"},
{"c", 1, 12, "c"},
{"((((e*3)+(c%4))//8)%5)", 0, 4, "((e*3+c%4)//8%5)"},
{"max((((e*(d%8))%1)+-5), ((((e+d)%3)%12)*-2))", -4, 0, "((d+e)%3*-2)"},
{"e", 0, 255, "e"},
{"((((a*a)-(b-b))%3)//3)", 0, 0, "0"},
{"(((a//12)//16)-((d+c)+(c+d)))", -34, 6, "((d+c)*-2)"},
{"((((b*a)-(c*-3))+-1)<7)", 0, 1, "((b*a+c*3)<8)"},
{"((c*3)+c)", 4, 48, "(c*4)"},
{"b", 0, 3, "b"},
{"((((d%2)//3)//8)%5)", 0, 0, "0"},
{"c", 1, 12, "c"},
{"((((e%8)%12)//6)%16)", 0, 1, "(e%8//6)"},
{"(((((e%2)-c)+(c*4))-(a+8))*4)", -52, 116, "((c*3+e%2+a*-1)*4+-32)"},
{"(((b+e)+max(e, a))//16)", 0, 32, "((b+e+max(a, e))//16)"},
{"e", 0, 255, "e"},
{"(b-a)", -8, 3, "(b+a*-1)"},
{"((((a//1)%2)+b)+c)", 1, 16, "(c+(b+a%2))"},
{"((b+-4)+(where(((e*3)<14), where((b<20), e, d), (e*b))//4))", -4, 190, "(b+(e if (e<5) else (b*e))//4+-4)"},
{"a", 0, 8, "a"},
{"where((((c//6)+((b%4)//6))<3), d, d)", -4, 5, "d"},
{"(((e*-3)+(d*-1))%1)", 0, 0, "0"},
{"c", 1, 12, "c"},
{"((((((c*-1)-(d*6))//16)-c)%6)<16)", 1, 1, "True"},
{"(((b//16)+(a+a))+((a%2)-(c//5)))", -2, 17, "(c//5*-1+a%2+a*2)"},
{"max(a, (max(d, ((a*-2)+(e%12)))+-4))", 0, 8, "max(a, (max(d, (a*-2+e%12))+-4))"},
{"((((c%5)*(c//12))//12)<5)", 1, 1, "True"},
{"((e+c)%3)", 0, 2, "((e+c)%3)"},
{"(((d+where((a<19), e, e))*-3)+(((c+-7)+(b+c))*((b%5)+(e%3))))", -805, 112, "((d+e)*-3+(b+e%3)*(b+c*2+-7))"},
{"((((a+1)-(d//4))*-3)<23)", 1, 1, "True"},
{"(((((c+d)+6)*4)+4)+((where(((a//1)<-2), e, (b*2))+-3)+(((d+-3)*-3)*-2)))", -29, 111, "(d*6+b*2+(d+c)*4+7)"},
{"(((((b*c)%12)//3)//1)+-4)", -4, -1, "(b*c//3%4+-4)"},
{"((where((((b*a)+(c+-3))<20), a, ((b%12)//12))+a)%1)", 0, 0, "0"},
{"(((((b*-1)+(d*-1))+a)%3)+((((d//6)//4)*3)+b))", -3, 5, "(b+d//24*3+(a+(d*-1+b*-1))%3)"},
{"(((c+8)+((b//2)*-1))%6)", 0, 5, "((c+b//2*5+2)%6)"},
{"((max((b+b), (d+a))+((b*-1)-(d+b)))+((where((e<1), b, a)+(b+d))//2))", -13, 25, "(b*-1+(d+b)*-1+max((d+a), (b*2))+(d+b+(b if (e<1) else a))//2)"},
{"((((c*8)+-6)%16)<28)", 1, 1, "True"},
{"(where((((((d//6)*2)+((d*3)*3))+((a//12)%4))<6), a, ((((e//12)+max(e, a))+b)+-8))<1)", 0, 1, "((a if ((d*9+d//6*2)<6) else (b+(max(a, e)+e//12)+-8))<1)"},
{"a", 0, 8, "a"},
{"((d+e)+((d-a)//6))", -6, 260, "(d+e+(d+a*-1)//6)"},
{"(((d%8)//6)%4)", 0, 1, "(d%8//6)"},
{"(max(b, (((e+-8)-(d+0))+4))*(((e%2)-((e+c)%16))+d))", -4845, 1530, "((d+((e+c)%16*-1+e%2))*max(b, (e+d*-1+-4)))"},
{"(((b*-1)//5)*2)", -2, 0, "(b*-1//5*2)"},
{"(a*-1)", -8, 0, "(a*-1)"},
{"(a<20)", 1, 1, "True"},
{"(b+((a*b)%1))", 0, 3, "b"},
{"(c<9)", 0, 1, "(c<9)"},
{"(b<26)", 1, 1, "True"},
{"max(((e%16)//2), ((b*3)+1))", 1, 10, "max((b*3+1), (e//2%8))"},
{"(((e-d)*3)%1)", 0, 0, "0"},
{"(((a*4)+(b+3))+((d+4)*-2))", -15, 38, "(b+a*4+d*-2+-5)"},
{"(((d*-3)//12)//3)", -1, 0, "(d*-1//12)"},
{"(((((e%4)-(b%1))+(e//16))+(((e*c)%12)+(b+(d//5))))*(max((a+(c+a)), ((d+c)*8))%12))", -11, 363, "((b+d//5+e*c%12+(e//16+e%4))*(max((c+a*2), ((d+c)*8))%12))"},
{"(((c*(e+a))-((a*a)%8))//4)", -2, 789, "((c*(a+e)+a*a%8*-1)//4)"},
{"(((c*8)+-4)<11)", 0, 1, "(c<2)"},
{"(((b*-3)+((b+c)//6))<22)", 1, 1, "True"},
{"d", -4, 5, "d"},
{"(((((a-b)+(d//1))//16)+(((e+a)+(b*2))+c))//2)", 0, 140, "(b+(e+(a+c)+(d+(a+b*-1))//16)//2)"},
{"(d<17)", 1, 1, "True"},
{"(d+-4)", -8, 1, "(d+-4)"},
{"(((e//5)%16)+((e//1)+a))", 0, 278, "(a+e+e//5%16)"},
{"((where(((d*(e+a))<4), (a*2), ((c*-2)+8))//16)*-3)", -3, 3, "(((a*2) if ((d*(a+e))<4) else (c*-2+8))//16*-3)"},
{"(where((d<15), max((max(b, b)+(a-b)), max((a*6), (a%6))), (((e//16)+(e*8))*-1))<21)", 0, 1, "(max(a, max((a*6), (a%6)))<21)"},
{"((a*((c-c)//5))*-2)", 0, 0, "0"},
{"(((((b+b)-(a//2))*(b*(c*e)))+(((a%4)*-2)*-2))%16)", 0, 15, "(((b*2+a//2*-1)*(b*(e*c))+a%4*4)%16)"},
{"((b+(((e//6)*8)+5))%8)", 0, 7, "((b+5)%8)"},
{"((((((c%3)+8)*8)%8)+((((e%8)*where((b<0), a, e))-where(((a-c)<2), (d+d), max(b, d)))-((b+9)+((a*d)*(c+b)))))<9)", 0, 1, "((e*(e%8)+((d*2) if ((a+c*-1)<2) else max(d, b))*-1+(b+(b+c)*(d*a))*-1)<18)"},
{"(((d+-1)%2)*2)", 0, 2, "((d+1)%2*2)"},
{"a", 0, 8, "a"},
{"(c+(e+3))", 4, 270, "(e+c+3)"},
{"(e*-2)", -510, 0, "(e*-2)"},
{"max(where((c<13), a, d), ((b+-2)//8))", 0, 8, "a"},
{"(((max(c, e)*(e%5))//5)%6)", 0, 5, "(max(e, c)*(e%5)//5%6)"},
{"d", -4, 5, "d"},
{"(e+(((e//16)*a)+7))", 7, 382, "(e+a*(e//16)+7)"},
{"((e//5)*3)", 0, 153, "(e//5*3)"},
{"c", 1, 12, "c"},
{"(max(where((((e+-2)*-3)<4), (where((e<3), a, e)+(a*b)), ((a%3)*3)), (((a*4)+(c//5))+((a//1)*(e*3))))*((((c+0)+(d*a))*(d*2))+a))", -2560064, 3249312, "((a+d*(c+d*a)*2)*max((a*4+c//5+a*e*3), ((b*a+(a if (e<3) else e)) if ((e*-1)<0) else (a%3*3))))"},
{"((((c%1)+(d*e))%2)+1)", 1, 2, "(d*e%2+1)"},
{"((((b+(d//2))+((b*8)+(a-a)))+((max(e, e)+-6)%16))*-1)", -44, 2, "((b*9+d//2+(e+10)%16)*-1)"},
{"a", 0, 8, "a"},
{"((e+d)+-2)", -6, 258, "(d+e+-2)"},
{"(((c+-6)//6)%8)", 0, 7, "((c//6+7)%8)"},
{"((b*6)%12)", 0, 6, "(b%2*6)"},
{"(b//16)", 0, 0, "0"},
{"((e+((e+-7)*(d//16)))%16)", 0, 15, "((e+(e+-7)*(d//16))%16)"},
{"c", 1, 12, "c"},
{"((e*2)+((((c+a)*-1)+2)+9))", -9, 520, "(e*2+(a+c)*-1+11)"},
{"(((((a%1)%5)+-6)+-2)<25)", 1, 1, "True"},
{"(e//16)", 0, 15, "(e//16)"},
{"(c*-1)", -12, -1, "(c*-1)"},
{"(d<21)", 1, 1, "True"},
{"max(((((c//4)//3)+(d+-7))//3), ((((b*2)%6)%12)//12))", 0, 0, "0"},
{"(d%8)", 0, 7, "(d%8)"},
{"((((e%3)+2)+e)+5)", 7, 264, "(e+e%3+7)"},
{"(((e%8)+(c+b))+((b*a)//2))", 1, 34, "(b+c+e%8+b*a//2)"},
{"e", 0, 255, "e"},
{"c", 1, 12, "c"},
{"(c<27)", 1, 1, "True"},
{"b", 0, 3, "b"},
{"((a+(e%5))*d)", -48, 60, "(d*(a+e%5))"},
{"((b+((c//12)+(d*d)))<6)", 0, 1, "((b+(d*d+c//12))<6)"},
{"(((e+5)//2)*((d+e)+9))", 10, 34970, "((d+e+9)*((e+1)//2+2))"},
{"(((((e*4)//6)+-5)%8)+-3)", -3, 4, "((e*2//3+3)%8+-3)"},
{"(max((e+c), (a%6))+0)", 1, 267, "max((e+c), (a%6))"},
{"((c*4)+((c//6)*3))", 4, 54, "(c*4+c//6*3)"},
{"d", -4, 5, "d"},
{"(a%5)", 0, 4, "(a%5)"},
{"(((max(a, e)*d)-((c-c)+a))%6)", 0, 5, "((d*max(a, e)+a*-1)%6)"},
{"(c*((d%16)%3))", 0, 24, "(c*(d%16%3))"},
{"((((b-e)%6)+((d*8)//3))%6)", 0, 5, "((b+e*-1+d*8//3)%6)"},
{"(b%4)", 0, 3, "b"},
{"((((c//16)*-1)+((b//5)%1))<28)", 1, 1, "True"},
{"(((((d+c)%3)+((d%3)%5))+b)*((b+-8)+(((d+b)+d)+(b%3))))", -112, 70, "((b+(d%3+(d+c)%3))*(b+(b+d*2+b%3)+-8))"},
{"(((d*4)%12)+where(((c%8)<5), (c*6), (a//2)))", 0, 80, "(d%3*4+((c*6) if ((c%8)<5) else (a//2)))"},
{"(((((e*3)%12)%8)%16)%4)", 0, 3, "(e%4*3%4)"},
{"(a*-1)", -8, 0, "(a*-1)"},
{"max(((a*6)//3), d)", 0, 16, "max(d, (a*2))"},
{"c", 1, 12, "c"},
{"(((e%2)*6)+-5)", -5, 1, "(e%2*6+-5)"},
{"((((((b%16)+(e+a))%3)%1)+e)<14)", 0, 1, "(e<14)"},
{"(((d%3)//3)<25)", 1, 1, "True"},
{"((((b*-3)+0)//1)+(((c//5)//12)*6))", -9, 0, "(b*-3)"},
{"(((e+b)*4)//3)", 0, 344, "(b+e+(b+e)//3)"},
{"(max((e%2), (b//16))//6)", 0, 0, "0"},
{"((e+((b//2)//2))+2)", 2, 257, "(e+2)"},
{"((d+-9)+(b%8))", -13, -1, "(d+b+-9)"},
{"(a//8)", 0, 1, "(a//8)"},
{"(((((e*6)+6)%1)%16)<15)", 1, 1, "True"},
{"(a%8)", 0, 7, "(a%8)"},
{"((((c*b)%5)*-3)*-3)", 0, 36, "(b*c%5*9)"},
{"e", 0, 255, "e"},
{"(((b//16)+(d+e))*-1)", -260, 4, "((d+e)*-1)"},
{"(((max((d+c), (c%5))+((a+-5)%1))+((max(e, c)*-1)+6))*8)", -1992, 176, "((max(e, c)*-1+max((d+c), (c%5)))*8+48)"},
{"(((a-((b+c)%6))+((c+(a+6))+((c+c)+(e//2))))-e)", -251, 185, "(a+(b+c)%6*-1+(a+c+(c*2+e//2))+e*-1+6)"},
{"((where(((c-d)<2), (c+-1), d)+((d*-3)//4))//3)", -3, 4, "((d*-3//4+((c+-1) if ((c+d*-1)<2) else d))//3)"},
{"(e<7)", 0, 1, "(e<7)"},
{"(d+9)", 5, 14, "(d+9)"},
{"((b//8)+((a+a)*8))", 0, 128, "(a*16)"},
{"(((((b*4)*8)*-2)+(b*4))*8)", -1440, 0, "(b*-480)"},
{"(((a+d)*6)%12)", 0, 6, "((d+a)%2*6)"},
{"((((e%16)*6)*3)+(((b//3)+(d%16))%6))", 0, 275, "(e%16*18+(b//3+d%16)%6)"},
{"(((((c+a)+(a*-2))+(d*3))+((e*3)+((e%3)//1)))*4)", -76, 3176, "((c+a*-1+d*3+(e*3+e%3))*4)"},
{"(where((((a*3)%5)<17), ((c//1)%16), ((c*-1)*-3))+4)", 5, 16, "(c+4)"},
{"(((((c//3)*3)*-1)*(((d*3)-(a//8))//2))+(a*d))", -116, 124, "(d*a+c//3*((d*3+a//8*-1)//2)*-3)"},
{"(((c+4)+-3)+((d//8)//4))", 1, 13, "(c+d//32+1)"},
{"(((b//2)+(c-d))+2)", -2, 19, "(c+d*-1+b//2+2)"},
{"(((d*-3)+(e*6))+((b+a)-(c+a)))", -35, 1552, "(b+a+(a+c)*-1+(d*-3+e*6))"},
{"(((e+d)*(((b//16)+d)+9))*8)", -448, 29120, "((d+e)*(d+9)*8)"},
{"(((a+c)*3)//4)", 0, 15, "((a+c)*3//4)"},
{"(((d+b)+(a//8))-((c+e)//16))", -20, 9, "(d+b+a//8+(e+c)//16*-1)"},
};

void check_cases(const Case* cases, size_t n) {
  for (size_t k = 0; k < n; k++) {
    const Case& c = cases[k];
    std::string expr = c.expr;
    CAPTURE(expr);
    UOp s = parse(c.expr).simplify();
    CHECK(s.render() == std::string(c.render));
    CHECK(s.vmin().as_int() == c.vmin);
    CHECK(s.vmax().as_int() == c.vmax);
  }
}

}  // namespace

TEST_CASE("symbolic tinygrad parity: hand written cases") {
  check_cases(kHandCases, std::size(kHandCases));
}

TEST_CASE("symbolic tinygrad parity: test_uop_symbolic inputs") {
  check_cases(kTinygradTestCases, std::size(kTinygradTestCases));
}

TEST_CASE("symbolic tinygrad parity: random cases") {
  check_cases(kRandomCases, std::size(kRandomCases));
}

namespace {

// random integer expressions over bounded variables (ADD, SUB, MUL by const, FLOORDIV/FLOORMOD by positive consts,
// MAX, comparisons feeding WHERE)
struct Fuzz {
  std::mt19937_64 rng;
  std::vector<UOp> vars;
  explicit Fuzz(uint64_t seed) : rng(seed) {
    for (int i = 0; i < 4; i++) {
      int64_t lo = pick(-6, 6), hi = lo + pick(0, 40);
      vars.push_back(UOp::variable(vname("v", i), lo, hi));
    }
  }
  int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
  UOp gen(int depth) {
    if (depth == 0 || pick(0, 9) < 2) return pick(0, 9) < 8 ? vars[size_t(pick(0, 3))] : UOp::const_int(pick(-5, 20));
    UOp x = gen(depth - 1);
    switch (pick(0, 10)) {
      case 0: case 1: return x + gen(depth - 1);
      case 2: return x + pick(-9, 9);
      case 3: return x - gen(depth - 1);
      case 4: case 5: return x * pick(-4, 8);
      case 6: return floordiv(x, pick(1, 16));
      case 7: return x % pick(1, 16);
      case 8: return maximum(x, gen(depth - 1));
      case 9: return where(x < pick(-3, 24), gen(depth - 1), gen(depth - 1));
      default: return where(ne(x, pick(0, 8)), x, gen(depth - 1));
    }
  }
  std::unordered_map<UOp, int64_t> point() {
    std::unordered_map<UOp, int64_t> at;
    for (const UOp& v : vars) at[v] = pick(v.vmin().as_int(), v.vmax().as_int());
    return at;
  }
};

}  // namespace

TEST_CASE("symbolic differential fuzz: simplify keeps values and bounds") {
  static const PatternMatcher dyn = symbolic().dynamic();
  int checked = 0;
  for (uint64_t seed = 0; seed < 1000; seed++) {
    Fuzz fz(seed);
    UOp e = fz.gen(int(seed % 5) + 1);
    if (fz.pick(0, 5) == 0) e = e < fz.pick(-5, 30);
    CAPTURE(seed);
    UOp s = e.simplify();
    CHECK(graph_rewrite(e, dyn) == s);  // the runtime-UPat matcher gives the same node
    {
      detail::SideTableOnly side;  // the memo of a process with several threads gives the same node
      CHECK(e.simplify() == s);
    }
    CHECK(s.simplify() == s);           // a fixed point
    for (int k = 0; k < 20; k++) {
      auto at = fz.point();
      int64_t want = eval(e, at), got = eval(s, at);
      CHECK(want == got);
      CHECK(s.vmin().as_int() <= got);
      CHECK(got <= s.vmax().as_int());
      checked++;
    }
  }
  CHECK(checked == 20000);
}

TEST_CASE("symbolic differential fuzz: sums of scaled div/mod terms") {
  // index-style sums (x%c)*m + (x//c)*(c*m) + ... exercise fold_add_divmod_recombine and fold_divmod_general
  static const PatternMatcher dyn = symbolic().dynamic();
  int checked = 0;
  for (uint64_t seed = 0; seed < 300; seed++) {
    Fuzz fz(seed + 100000);
    UOp sum;
    int nterms = int(fz.pick(1, 5));
    for (int k = 0; k < nterms; k++) {
      UOp base = fz.vars[size_t(fz.pick(0, 3))] + fz.pick(0, 3) * fz.vars[size_t(fz.pick(0, 3))];
      int64_t c = fz.pick(1, 12), m = fz.pick(1, 4);
      UOp t = fz.pick(0, 1) ? (base % c) * m : floordiv(base, c) * (c * m);
      sum = sum ? sum + t : t;
    }
    UOp e = fz.pick(0, 2) ? sum : (fz.pick(0, 1) ? floordiv(sum, fz.pick(1, 16)) : sum % fz.pick(1, 16));
    CAPTURE(seed);
    UOp s = e.simplify();
    CHECK(graph_rewrite(e, dyn) == s);
    for (int k = 0; k < 20; k++) {
      auto at = fz.point();
      int64_t got = eval(s, at);
      CHECK(eval(e, at) == got);
      CHECK(s.vmin().as_int() <= got);
      CHECK(got <= s.vmax().as_int());
      checked++;
    }
  }
  CHECK(checked == 6000);
}

TEST_CASE("symbolic constant-folding shortcut reaches the node the rules reach") {
  // symbolic()'s fold shortcut (PatternMatcher::with_fold) against the same rules without it, on trees of int ops over
  // constants (values up to 2^40 so that MUL and ADD overflow int64 and stay unfolded) with a few variables
  const PatternMatcher& fast = symbolic();
  const PatternMatcher slow(symbolic().rules());
  REQUIRE(bool(fast.fold()));
  REQUIRE_FALSE(bool(slow.fold()));
  const Ops ops[] = {Ops::ADD, Ops::SUB, Ops::MUL, Ops::MAX, Ops::XOR, Ops::OR, Ops::AND, Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ};
  const DType dts[] = {dtypes::weakint, dtypes::int32, dtypes::int64};
  std::mt19937_64 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int folded = 0;
  for (int t = 0; t < 300; t++) {
    DType dt = dts[t % 3];
    UOp v = UOp::variable(vname("f", t % 4), -8, 8).cast(dt);
    std::function<UOp(int)> gen = [&](int depth) -> UOp {
      if (depth == 0 || pick(0, 9) == 0) {
        int64_t k = pick(0, 9);
        return k == 0 ? v : UOp::const_(dt, k < 3 ? pick(-(int64_t(1) << 40), int64_t(1) << 40) : pick(-20, 20));
      }
      Ops op = ops[pick(0, 9)];
      UOp l = gen(depth - 1), r = gen(depth - 1);
      if (op == Ops::CMPLT || op == Ops::CMPNE || op == Ops::CMPEQ)  // a comparison feeds a WHERE to stay int
        return where(UOp::make(op, dtypes::bool_, {l, r}), l, r);
      return UOp::make(op, dt, {l, r});
    };
    UOp e = gen(int(t % 6) + 1);
    CAPTURE(t);
    UOp f = graph_rewrite(e, fast);
    CHECK(f == graph_rewrite(e, slow));
    folded += f.op() == Ops::CONST;
  }
  CHECK(folded > 20);
}

TEST_CASE("symbolic int64 overflow leaves constants unfolded and terminates") {
  // Python ints never overflow; int64 folds that would are skipped (and must not make the rewrite cycle)
  UOp big = UOp::const_int(int64_t(1) << 40);
  UOp e = (big * big) * big;
  UOp s = e.simplify();
  CHECK(s.simplify() == s);
  UOp a = UOp::variable("a", 0, 8);
  CHECK(((a * big) * big).simplify().simplify() == ((a * big) * big).simplify());
}

TEST_CASE("symbolic long left-deep ADD chain simplifies correctly") {
  // v0*1 + v1*2 + ... over 16 variables, 10^4 terms (tinygrad is about O(N^3) here; graft must stay linear)
  std::vector<UOp> v;
  for (int i = 0; i < 16; i++) v.push_back(UOp::variable(vname("v", i), 0, 10));
  UOp e = v[0] * 1;
  for (int i = 1; i < 10000; i++) e = e + v[size_t(i % 16)] * (i + 1);
  UOp s = e.simplify();
  std::unordered_map<UOp, int64_t> at;
  for (int i = 0; i < 16; i++) at[v[size_t(i)]] = (i * 7) % 11;
  CHECK(eval(s, at) == eval(e, at));
  CHECK(s.vmin().as_int() == 0);
  CHECK(s.vmax().as_int() == e.vmax().as_int());
}

TEST_CASE("symbolic constant folding follows Python semantics") {
  // integer results are not wrapped to the dtype
  UOp big = UOp::const_(dtypes::int32, 2147483647) + UOp::const_(dtypes::int32, 1);
  UOp s = big.simplify();
  REQUIRE(s.op() == Ops::CONST);
  CHECK(s.dtype() == dtypes::int32);
  CHECK(s.arg().as_int() == 2147483648);
  // floor vs truncation
  CHECK(floordiv(UOp::const_int(-7), 2).simplify().arg().as_int() == -4);
  CHECK((UOp::const_int(-7) % 2).simplify().arg().as_int() == 1);
  CHECK(cdiv(UOp::const_int(-7), 2).simplify().arg().as_int() == -3);
  CHECK(cmod(UOp::const_int(-7), 2).simplify().arg().as_int() == -1);
  // floats are rounded through the dtype
  UOp f = (UOp::const_(dtypes::float32, 0.1) + UOp::const_(dtypes::float32, 0.2)).simplify();
  REQUIRE(f.op() == Ops::CONST);
  CHECK(f.arg().as_double() == double(0.1f + 0.2f));
  CHECK((UOp::const_(dtypes::float32, 2.0) < UOp::const_(dtypes::float32, 3.0)).simplify() == UOp::const_bool(true));
  CHECK(maximum(UOp::const_int(3), UOp::const_int(9)).simplify().arg().as_int() == 9);
  CHECK(sym_detail::exec_alu(Ops::SQRT, dtypes::float32, std::vector<Arg>{Arg(-1.0)})->as_double() != 0);  // nan
  CHECK(sym_detail::exec_alu(Ops::FLOORDIV, dtypes::weakint, std::vector<Arg>{Arg(int64_t(5)), Arg(int64_t(0))})->as_int() == 0);
}

TEST_CASE("symbolic identities and bool rules") {
  UOp a = UOp::variable("a", 0, 8), b = UOp::variable("b", 0, 3);
  UOp p = a < 3, q = b < 2;
  CHECK((a + 0).simplify() == a);
  CHECK((a * 1).simplify() == a);
  CHECK((a * 0).simplify() == UOp::const_int(0));
  CHECK(floordiv(a, 1).simplify() == a);
  CHECK(floordiv(a, a).simplify() == UOp::const_int(1));
  CHECK((a % a).simplify() == UOp::const_int(0));
  CHECK((a ^ 0).simplify() == a);
  CHECK((a ^ a).simplify() == UOp::const_int(0));
  CHECK((a < a).simplify() == UOp::const_bool(false));
  CHECK(ne(a, a).simplify() == UOp::const_bool(false));
  CHECK(where(p, a, a).simplify() == a);
  CHECK(where(UOp::const_bool(true), a, b).simplify() == a);
  CHECK(where(UOp::const_bool(false), a, b).simplify() == b);
  CHECK((p & UOp::const_bool(true)).simplify() == p);
  CHECK((p | UOp::const_bool(true)).simplify() == UOp::const_bool(true));
  CHECK((p & p).simplify() == p);
  CHECK(logical_not(logical_not(p)).simplify() == p);
  CHECK(where(p, UOp::const_bool(true), UOp::const_bool(false)).simplify() == p);
  CHECK((p * q).simplify() == (p & q).simplify());
  CHECK((p + q).simplify() == (p | q).simplify());
  CHECK(maximum(a, b).simplify() == maximum(a, b).simplify());
  CHECK(maximum(a + 4, b).simplify() == (a + 4).simplify());
  CHECK((a + b).simplify() == (b + a).simplify());  // canonical order
  CHECK((a * b).simplify() == (b * a).simplify());
}

TEST_CASE("symbolic render format") {
  UOp a = UOp::variable("a", 0, 8), b = UOp::variable("b", 0, 3);
  CHECK((a * 4 + b).render() == "(b+a*4)");
  CHECK(floordiv(a, 2).render() == "(a//2)");
  CHECK((a % 8).render() == "(a%8)");
  CHECK(maximum(a, b).render() == "max(b, a)");  // canonical order: b's range (0,3) sorts first
  CHECK(UOp::const_(dtypes::float64, 1e20).render() == "1e+20");
  CHECK(UOp::const_(dtypes::float64, 1e-5).render() == "1e-05");
  CHECK((a < 4).render() == "(a<4)");
  CHECK((a >= 4).render() == "((a<4)!=True)");
  CHECK(where(a < 4, a, b).render() == "(a if (a<4) else b)");
  CHECK(UOp::const_float(1.5).render() == "1.5");
  CHECK(UOp::const_float(2.0).render() == "2.0");
  CHECK(UOp::const_bool(true).render() == "True");
  CHECK(UOp::range(8, 0).render() == "r0");
  CHECK(floordiv(a * 4 + b, 4).render() == "a");
}

TEST_CASE("symbolic gated LOAD and STORE of an Invalid index fold") {
  UOp buf = UOp::make(Ops::PARAM, dtypes::float32, {UOp::shape_arg({16})}, Arg(ParamArg{0, dtypes::float32, {}, 1, "buf", AddrSpace::GLOBAL, ""}));
  UOp bad = UOp::make(Ops::INDEX, dtypes::float32, {buf, UOp::invalid()});
  UOp st = UOp::make(Ops::STORE, dtypes::void_, {bad, UOp::const_(dtypes::float32, 1.0)});
  CHECK(st.simplify().op() == Ops::NOOP);
  UOp ld = UOp::make(Ops::LOAD, dtypes::float32, {bad});
  CHECK(ld.simplify() == UOp::const_(dtypes::float32, 0.0));
  UOp alt = UOp::const_(dtypes::float32, 7.0);
  CHECK(UOp::make(Ops::LOAD, dtypes::float32, {bad, alt}).simplify() == alt);
}

TEST_CASE("symbolic pow expansion") {
  UOp x = UOp::make(Ops::PARAM, dtypes::float32, {UOp::shape_arg({})}, Arg(ParamArg{0, dtypes::float32, {}, 1, "x", AddrSpace::GLOBAL, ""}));
  auto pw = [&](double e) { return x.alu(Ops::POW, UOp::const_(dtypes::float32, e)); };
  CHECK(pw(2).simplify() == (x * x).simplify());
  CHECK(pw(3).simplify() == (x * x * x).simplify());
  CHECK(pw(0).simplify() == UOp::const_(dtypes::float32, 1.0));
  CHECK(pw(1).simplify() == x);
  CHECK(pw(0.5).simplify() == sqrt(x));
  CHECK(pw(-1).simplify() == reciprocal(x));
  CHECK(pw(0.3).simplify() == pw(0.3));  // not expanded
  UOp two = UOp::const_(dtypes::float32, 2.0);
  CHECK(two.alu(Ops::POW, x).simplify() == exp2(x * 1.0).simplify());
}

TEST_CASE("symbolic division by zero raises") {
  UOp a = UOp::variable("a", 0, 8);
  CHECK_THROWS_AS(floordiv(a, 0).simplify(), graft::Error);
}
