// doctest helpers for graft users and graft's own tests (not part of graft.hpp: this header needs doctest).
//
//   graft::testing::check_schedule({tensors...}, kernels)   schedule, CHECK the kernel count (the message lists the
//                                                          kernels), return the Schedule
//   CHECK_REWRITES(pm, in, out [, RewriteOptions])         CHECK graph_rewrite(in, pm, options) == out; on failure
//   REQUIRE_REWRITES(pm, in, out [, RewriteOptions])       prints in / got / want in tinygrad repr and pm.explain(got)
//   graft::testing::check_close(got, want, rtol, atol)     elementwise |got - want| <= atol + rtol * |want| over two
//                                                          ranges of numbers (NaN equals NaN); the message gives the
//                                                          count and the first bad index
//   graft::testing::check_close(tensor, want, rtol, atol)  the same on tensor.to_vector<double>()
// The check_* functions report a failure at their caller's line and return whether the check passed. The *_mismatch
// functions behind them return the failure message ("" when fine) for use outside doctest assertions.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <source_location>
#include <string>
#include <vector>

#include "graft/graft.hpp"

namespace graft::testing {

namespace detail {
// one doctest CHECK at the caller's line: counted when it passes, reported with `msg` when it fails
inline bool check_at(const std::source_location& loc, const char* what, const std::string& msg) {
  doctest::detail::ResultBuilder rb(doctest::assertType::DT_CHECK, loc.file_name(), int(loc.line()), what);
  rb.setResult(doctest::detail::Result(msg.empty(), doctest::String(msg.c_str())));
  if (rb.log()) DOCTEST_BREAK_INTO_DEBUGGER();
  rb.react();
  return msg.empty();
}
}  // namespace detail

// One line per kernel: its index, buffer count and the ops in its body with their counts.
inline std::string describe_schedule(const Schedule& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    std::map<size_t, size_t> hist;  // by op, in enum order
    for (const UOp& u : s[i].sink().toposort()) hist[size_t(u.op())]++;
    // appended piecewise, not "lit" + std::string&&: GCC 12 -O3 -Wrestrict false positive (see core/print.hpp)
    out += "  kernel ";
    out += std::to_string(i);
    out += ": ";
    out += std::to_string(s[i].call.nsrc() - 1);
    out += " buffers;";
    for (auto [op, n] : hist) {
      out += ' ';
      out += op_name(Ops(op));
      if (n > 1) out += 'x', out += std::to_string(n);
    }
    out += '\n';
  }
  return out;
}

// Schedule `tensors` and CHECK that it takes `kernels` kernels (tinygrad's check_schedule).
inline Schedule check_schedule(const std::vector<Tensor>& tensors, size_t kernels,
                               std::source_location loc = std::source_location::current()) {
  Schedule s = schedule(tensors);
  detail::check_at(loc, "check_schedule(tensors, kernels)",
                   s.size() == kernels ? "" : "got " + std::to_string(s.size()) + " kernels, expected " +
                                                  std::to_string(kernels) + "\n" + describe_schedule(s));
  return s;
}

// "" when graph_rewrite(in, pm, o) == want, else a report: the three graphs in tinygrad repr and, when the
// rewriter can explain itself, why each of its rules does not fire on the result's root.
template <Rewriter PM>
std::string rewrite_mismatch(const PM& pm, const UOp& in, const UOp& want, RewriteOptions o = {}) {
  UOp got = graph_rewrite(in, pm, o);
  if (got == want) return "";
  std::string msg = "graph_rewrite(in, pm) != want\nin:\n" + in.str() + "\ngot:\n" + got.str() + "\nwant:\n" + want.str();
  if constexpr (requires { { pm.explain(got) } -> std::convertible_to<std::string>; })
    if (got) msg += "\npm.explain(got):\n" + std::string(pm.explain(got));
  return msg;
}

// "" when every element is close (and the sizes agree), else the count of bad elements and the first one.
template <class G, class W>
std::string close_mismatch(const G& got, const W& want, double rtol = 1e-4, double atol = 1e-5) {
  size_t ng = std::size(got), nw = std::size(want);
  if (ng != nw) return "check_close: got " + std::to_string(ng) + " values, want " + std::to_string(nw);
  size_t bad = 0, first = 0;
  double fg = 0, fw = 0;
  auto git = std::begin(got);
  auto wit = std::begin(want);
  for (size_t i = 0; i < ng; i++, ++git, ++wit) {
    double g = double(*git), w = double(*wit);
    bool ok = (std::isnan(g) && std::isnan(w)) || g == w || std::fabs(g - w) <= atol + rtol * std::fabs(w);
    if (!ok && bad++ == 0) first = i, fg = g, fw = w;
  }
  if (!bad) return "";
  char buf[256];
  std::snprintf(buf, sizeof buf, "check_close: %zu of %zu values differ (rtol=%g, atol=%g); first at [%zu]: got %.9g, want %.9g",
                bad, ng, rtol, atol, first, fg, fw);
  return buf;
}

template <class G, class W>
bool check_close(const G& got, const W& want, double rtol = 1e-4, double atol = 1e-5,
                 std::source_location loc = std::source_location::current()) {
  return detail::check_at(loc, "check_close(got, want)", close_mismatch(got, want, rtol, atol));
}
template <class T>
bool check_close(const std::vector<T>& got, std::initializer_list<double> want, double rtol = 1e-4, double atol = 1e-5,
                 std::source_location loc = std::source_location::current()) {
  return check_close(got, std::vector<double>(want), rtol, atol, loc);
}

// Realize `t` (default device) and compare its values.
inline bool check_close(const Tensor& t, const std::vector<double>& want, double rtol = 1e-4, double atol = 1e-5,
                        std::source_location loc = std::source_location::current()) {
  return check_close(t.to_vector<double>(), want, rtol, atol, loc);
}

namespace detail {
struct RewriteCheck {
  bool ok;
  std::string message;
};
template <class PM>
RewriteCheck rewrites(const char* text, const PM& pm, const UOp& in, const UOp& want, RewriteOptions o = {}) {
  std::string m = rewrite_mismatch(pm, in, want, o);
  return {m.empty(), m.empty() ? "" : std::string(text) + "\n" + m};
}
}  // namespace detail

}  // namespace graft::testing

// CHECK_REWRITES(pm, in, out [, options]): graph_rewrite(in, pm, options) == out, with both graphs on failure.
#define GRAFT_TESTING_REWRITES_(ASSERT, NAME, pm, in, out, ...)                                              \
  do {                                                                                                        \
    auto graft_rewrites_ = ::graft::testing::detail::rewrites(NAME "(" #pm ", " #in ", " #out ")", pm, in, out \
                                                              __VA_OPT__(, ) __VA_ARGS__);                    \
    ASSERT(graft_rewrites_.ok, graft_rewrites_.message);                                                     \
  } while (0)
#define CHECK_REWRITES(pm, in, out, ...) \
  GRAFT_TESTING_REWRITES_(DOCTEST_CHECK_MESSAGE, "CHECK_REWRITES", pm, in, out __VA_OPT__(, ) __VA_ARGS__)
#define REQUIRE_REWRITES(pm, in, out, ...) \
  GRAFT_TESTING_REWRITES_(DOCTEST_REQUIRE_MESSAGE, "REQUIRE_REWRITES", pm, in, out __VA_OPT__(, ) __VA_ARGS__)
