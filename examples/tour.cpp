// The README's API tour, compiled and run by CI so the README cannot drift from the API.
#include <graft/graft.hpp>

#include <iostream>

using namespace graft;

static constexpr auto x = pat::var<"x">;     // names are compile-time strings, resolved to slots
static constexpr auto c1 = pat::cvar<"c1">;  // a named CONST
static constexpr auto c2 = pat::cvar<"c2">;

int main() {
  PatternMatcher rules{
      rule(x + 0, [](const auto& m) { return m[x]; }),  // rule order is priority
      rule((x + c1) + c2, [](const auto& m) {           // ADD is commutative: every operand order is tried
        return m[x] + (m[c1].arg().as_int() + m[c2].arg().as_int());
      }),
  };

  UOp a = UOp::variable("a", 0, 9);              // a BUFFER in the ALU addrspace with a value range
  UOp e = ((a + 0) + 3) + 4;                     // operators build nodes; equal graphs are the same pointer
  UOp r = graph_rewrite(e, rules);               // r == a + 7
  std::cout << r << " in [" << r.vmin().str() << ", " << r.vmax().str() << "]\n";
  UOp same = graph_rewrite(e, rules.dynamic());  // the same rules through the runtime UPat interpreter

  UOp i = floordiv(a * 4 + 3, 4) % 8;            // tinygrad's symbolic rules: simplify() and render()
  std::cout << i.simplify().render() << "\n";    // "(a%8)"

  Tensor t = Tensor::rand({4, 8}, /*seed=*/1);   // builds the same tensor graph tinygrad builds
  Tensor y = (t - t.max(1, true)).exp().sum(1);
  Schedule s = schedule({y});                    // rangeify2 splits the graph into kernels
  std::string src = codegen::render_c(codegen::linearize(codegen::lower(s[0].sink())));  // a kernel as C source
  std::vector<float> v = y.to_vector<float>();   // schedule, compile, run on GRAFT_DEVICE (Vulkan, else the C JIT)
  UOp n = UOp::variable("n", 1, 100);            // bound Variables are kernel arguments: one kernel for every value
  std::vector<float> scaled = (y * Tensor(n.bind(3))).to_vector<float>();
  std::cout << s.size() << " kernel(s); the first one in C:\n" << src;
  std::cout << "sum(exp(t - max)) per row:";
  for (float f : v) std::cout << " " << f;
  std::cout << "\n";
  bool ok = r == a + 7 && same == r && i.simplify().render() == "(a%8)" && v.size() == 4 && s.size() >= 1 && !src.empty();
  for (float f : v) ok = ok && f >= 1.0f && f <= 8.0f;
  for (size_t k = 0; k < v.size() && ok; k++) ok = scaled.size() == v.size() && std::abs(scaled[k] - 3 * v[k]) <= 1e-5f * scaled[k];
  return ok ? 0 : 1;
}
