// GRAFT_VIZ: graph_rewrite calls recorded step by step and rendered as a self-contained HTML page.
#include <doctest/doctest.h>

#include <graft/graft.hpp>
#include <graft/testing.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace graft;

namespace {
constexpr auto x = pat::var<"x">;
constexpr auto c0 = pat::cvar<"c0">;
constexpr auto c1 = pat::cvar<"c1">;

bool has(const std::string& s, std::string_view needle) { return s.find(needle) != std::string::npos; }
size_t count(const std::string& s, std::string_view needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) n++;
  return n;
}

// capture on for one test, off and cleared afterwards (the exit-time page is only written when GRAFT_VIZ is set)
struct Capture {
  bool was = viz::enabled();
  Capture() { viz::clear(); viz::enable(true); }
  ~Capture() { viz::enable(was); viz::clear(); }
};
}  // namespace

TEST_CASE("viz: off by default, nothing is recorded") {
  if (std::getenv("GRAFT_VIZ")) return;  // the whole run is being captured on purpose
  viz::clear();
  CHECK_FALSE(viz::enabled());
  graph_rewrite(UOp::variable("a", 0, 10) + 0, symbolic_simple());
  CHECK(viz::num_calls() == 0);
}

TEST_CASE("viz: a symbolic graph_rewrite, step by step, in a self-contained page") {
  Capture cap;
  PatternMatcher fold{
      rule(c0 + c1, [](const auto& m) { return UOp::const_(m[c0].dtype(), m[c0].arg().as_int() + m[c1].arg().as_int()); }),
  };
  int fold_line = __LINE__ - 2;
  UOp a = UOp::variable("a", 0, 10);
  UOp in = (a + 0) * 1 + (UOp::const_int(2) + UOp::const_int(3));
  UOp out = graph_rewrite(in, fold + symbolic_simple());  // fold first: symbolic_simple folds constants too
  CHECK(out == a + 5);
  REQUIRE(viz::num_calls() == 1);

  std::string path = (std::filesystem::temp_directory_path() / "graft_test_viz.html").string();
  viz::write(path);
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string page = ss.str();
  std::remove(path.c_str());

  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.size() > 16);
  CHECK(page.substr(page.size() - 8) == "</html>\n");
  CHECK_FALSE(has(page, "http://cdn"));
  CHECK_FALSE(has(page, "<script src"));
  CHECK_FALSE(has(page, "<link"));
  // the call site (this file) and the matcher's rule files
  CHECK(has(page, "test_viz.cpp:"));
  CHECK(has(page, "rules/symbolic.hpp"));
  // each step names the rule that fired by source location and shows its pattern
  CHECK(has(page, "test_viz.cpp:" + std::to_string(fold_line)));
  CHECK(count(page, "class=\"step\"") >= 3);  // x+0, x*1, 2+3 (at least)
  CHECK(has(page, "pattern: <code>"));
  // before / after nodes and the graphs in tinygrad repr (quotes are HTML-escaped)
  CHECK(has(page, "<h4>before</h4>"));
  CHECK(has(page, "<h4>after</h4>"));
  CHECK(has(page, "input graph"));
  CHECK(has(page, "graph after step 1"));
  CHECK(has(page, "output graph"));
  CHECK(has(page, "UOp(Ops.CONST, dtypes.weakint, arg=5, src=())"));
  CHECK(has(page, "<svg"));
  // balanced structure
  CHECK(count(page, "<details") == count(page, "</details>"));
  CHECK(count(page, "<section") == count(page, "</section>"));
  CHECK(count(page, "<svg") == count(page, "</svg>"));
  // the last "graph after step" is the output graph
  std::string last = page.substr(page.rfind("graph after step"));
  CHECK(has(last, "arg=5"));
}

TEST_CASE("viz: bottom_up and nested calls, caps, and no recording of substitute") {
  Capture cap;
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10);
  UOp r = (a + 4).substitute({{a, b}});
  CHECK(r == b + 4);
  CHECK(viz::num_calls() == 0);  // substitute is not a graph_rewrite call

  PatternMatcher inner{rule(x * 1, [](const auto& m) { return m[x]; })};
  PatternMatcher outer{rule(pat::op<Ops::SINK>().named<"x">(), [&](const auto& m) {
    // a rule that runs a graph_rewrite itself: recorded as a nested call
    std::vector<UOp> s;
    bool changed = false;
    for (const UOp& c : m[x].src()) {
      UOp n = graph_rewrite(c, inner);
      changed |= n != c;
      s.push_back(n);
    }
    return changed ? UOp::sink(s) : UOp();
  })};
  UOp out = graph_rewrite(UOp::sink({a * 1, b * 1}), outer, {.bottom_up = true});
  CHECK(out == UOp::sink({a, b}));
  CHECK(viz::num_calls() == 5);  // the outer call, and 2 inner ones each time the pre-order rule runs (twice)
  std::string page = viz::html();
  CHECK(has(page, "nested (depth 1)"));
  CHECK(has(page, "bottom_up"));
  CHECK(has(page, "(pre-order)"));
}

TEST_CASE("viz: over GRAFT_VIZ_MAX_CALLS, calls (nested ones too) run unrecorded") {
  Capture cap;
  const char* old = std::getenv("GRAFT_VIZ_MAX_CALLS");
  std::string saved = old ? old : "";
  setenv("GRAFT_VIZ_MAX_CALLS", "1", 1);
  PatternMatcher inner{rule(x * 1, [](const auto& m) { return m[x]; })};
  PatternMatcher outer{rule(pat::op<Ops::SINK>().named<"x">(), [&](const auto& m) {
    UOp s = graph_rewrite(m[x].src(0), inner);  // nested, over the cap: must not deadlock
    return s != m[x].src(0) ? UOp::sink({s}) : UOp();
  })};
  UOp a = UOp::variable("a", 0, 10);
  UOp out = graph_rewrite(UOp::sink({a * 1}), outer);
  out = graph_rewrite(UOp::sink({a * 1}), outer);
  if (old) setenv("GRAFT_VIZ_MAX_CALLS", saved.c_str(), 1);
  else unsetenv("GRAFT_VIZ_MAX_CALLS");
  CHECK(out == UOp::sink({a}));
  CHECK(viz::num_calls() == 1);
  CHECK(has(viz::html(), "not recorded (GRAFT_VIZ_MAX_CALLS)"));
}

TEST_CASE("viz: the graph after a step substitutes the rewritten node in the whole graph") {
  UOp a = UOp::variable("a", 0, 10);
  UOp g = UOp::sink({a + 1, (a + 1) * 2});
  UOp after = viz::detail::replace_node(g, a + 1, a);
  CHECK(after == UOp::sink({a, a * 2}));
  CHECK(viz::detail::replace_node(g, g, a) == a);
  CHECK(viz::detail::esc("<a href=\"x\">&") == "&lt;a href=&quot;x&quot;&gt;&amp;");
}

TEST_CASE("viz: to_dot covers any UOp") {
  CHECK(to_dot(UOp()) == "digraph G {\n}\n");
  UOp t = UOp::make(Ops::NOOP, dtypes::void_, {UOp::const_int(1)}, std::string("two\nlines \"q\""), std::string("tg"));
  std::string d = to_dot(t);
  CHECK(d.rfind("digraph", 0) == 0);
  CHECK(has(d, "NOOP"));
  CHECK(has(d, "tag=tg"));
  CHECK_FALSE(has(d, "\n lines"));  // newlines in args are escaped
  CHECK(has(d, "\\\"q\\\""));
}
