// Visual debugging of graph_rewrite, like tinygrad's VIZ=1: with GRAFT_VIZ=1 (or viz::enable(true)) every
// graph_rewrite call is recorded: its call site, the matcher's rules, the input graph, and each rewrite step (the rule
// that fired with its source location and pattern, the node before and after). viz::write(path) renders a
// self-contained HTML page (no scripts or styles from the network): per call the input graph, per step the rule, the
// before/after nodes and the whole graph after the step (tinygrad repr text, plus an inline SVG drawing for small
// graphs), then the output graph.
//
//   GRAFT_VIZ=1            capture, and write the page at process exit
//   GRAFT_VIZ_FILE=path    where the exit page goes (default ./graft_viz.html)
//   GRAFT_VIZ_MAX_CALLS=N  record the first N graph_rewrite calls (default 1000; later ones run unrecorded)
//   GRAFT_VIZ_MAX_STEPS=N  record the first N rewrites of each call (default 2000)
//   GRAFT_VIZ_MAX_MB=N     stop drawing graphs once the page is this large (default 64; summaries still go in)
//
// Unset, capture costs one predicted branch per graph_rewrite call and per rewrite that fires. UOp::substitute is
// not recorded (only calls through graph_rewrite). Recorded graphs stay alive until viz::clear().
#pragma once
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <source_location>
#include <string>
#include <unordered_set>
#include <vector>

#include "graft/core/print.hpp"
#include "graft/pattern/matcher.hpp"

namespace graft::viz {

inline bool enabled() noexcept { return detail::capture.load(std::memory_order_relaxed); }
// Turn capture on or off (programmatic use; the exit-time page is only written when GRAFT_VIZ=1 is set).
inline void enable(bool on = true) noexcept { detail::capture.store(on, std::memory_order_relaxed); }

namespace detail {

inline size_t env_size(const char* name, size_t dflt) {
  const char* e = std::getenv(name);
  if (!e || !*e) return dflt;
  long long v = std::atoll(e);
  return v > 0 ? size_t(v) : dflt;
}

struct Step {
  UOp before, after;
  std::shared_ptr<const UPat> pattern;  // empty when the rewriter is not a PatternMatcher (no rule to name)
  std::source_location where;
  bool has_rule = false;
  bool pre = false;  // fired pre-order (bottom_up / bpm)
};

struct Call {
  uint64_t seq = 0;
  int depth = 0;  // nesting: a graph_rewrite started from inside a rule of another one
  std::source_location site;
  std::string matcher, options, error;
  UOp input, output;
  std::vector<Step> steps;
  size_t dropped_steps = 0;
  size_t max_steps = 2000;

  void step(const UOp& before, const UOp& after, bool pre) {
    const Rule* r = std::exchange(fired, nullptr);
    if (steps.size() >= max_steps) { dropped_steps++; return; }
    Step s{before, after, {}, {}, false, pre};
    if (r) s.pattern = r->upat, s.where = r->location, s.has_rule = true;
    steps.push_back(std::move(s));
  }
};

struct Registry {
  std::mutex mu;
  std::vector<Call> calls;
  uint64_t next_seq = 0;
  size_t dropped_calls = 0;
  bool exit_hook = false;
  static Registry& get() {
    static Registry* r = new Registry();  // leaked: the exit writer runs after static destructors may have started
    return *r;
  }
};

inline thread_local int depth = 0;

inline void write_at_exit();

// "12 rules (graft/rules/symbolic.hpp, ...)" for a PatternMatcher; the type name is not useful for anything else.
template <class PM> std::string describe(const PM* pm) {
  if (!pm) return "";
  if constexpr (requires { pm->rules(); }) {
    std::vector<std::string> files;
    for (const Rule& r : pm->rules()) {
      std::string f = r.location.file_name();
      if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
    }
    std::string out = std::to_string(pm->rules().size()) + " rules";
    for (size_t i = 0; i < files.size() && i < 4; i++) out += (i ? ", " : " from ") + files[i];
    if (files.size() > 4) out += ", ...";
    return out;
  } else {
    return "custom rewriter";
  }
}

// Record one graph_rewrite call around `run(Call*)`; a null Call (over the call cap) runs it unrecorded.
template <class Run>
UOp traced(const UOp& root, std::string matcher, std::string options, const std::source_location& site, Run&& run) {
  Registry& reg = Registry::get();
  Call c;
  bool over_cap = false;
  {
    std::lock_guard<std::mutex> lk(reg.mu);  // not held while rewriting: rules may start nested graph_rewrites
    if (reg.next_seq >= env_size("GRAFT_VIZ_MAX_CALLS", 1000)) over_cap = true, reg.dropped_calls++;
    else c.seq = reg.next_seq++;
    if (!reg.exit_hook && env_requested()) {
      reg.exit_hook = true;
      std::atexit(write_at_exit);
    }
  }
  if (over_cap) return run(static_cast<Call*>(nullptr));
  c.depth = depth;
  c.site = site;
  c.matcher = std::move(matcher);
  c.options = std::move(options);
  c.input = root;
  c.max_steps = env_size("GRAFT_VIZ_MAX_STEPS", 2000);
  fired = nullptr;
  struct DepthGuard { DepthGuard() { depth++; } ~DepthGuard() { depth--; } } guard;
  auto save = [&] {
    std::lock_guard<std::mutex> lk(reg.mu);
    reg.calls.push_back(std::move(c));
  };
  try {
    c.output = run(&c);
  } catch (const std::exception& e) {
    c.error = e.what();
    save();
    throw;
  }
  UOp out = c.output;
  save();
  return out;
}

// ---- rendering -----------------------------------------------------------------------------------------------

inline std::string esc(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += ch;
    }
  }
  return o;
}

inline std::string short_label(const UOp& u) {
  std::string l(op_name(u.op()));
  if (!u.arg().is_none()) {
    std::string a = u.arg().str();
    if (a.size() > 22) a = a.substr(0, 20) + "..";
    l += " " + a;
  }
  return l;
}

// the number of nodes below `root`, counting stops above `limit` (so huge graphs cost O(limit))
inline size_t count_nodes(const UOp& root, size_t limit) {
  if (!root) return 0;
  std::unordered_set<const UOpNode*> seen;
  std::vector<const UOpNode*> st{root.node()};
  while (!st.empty() && seen.size() <= limit) {
    const UOpNode* n = st.back();
    st.pop_back();
    if (!seen.insert(n).second) continue;
    for (uint32_t i = 0; i < n->nsrc; i++) st.push_back(n->srcs()[i].node());
  }
  return seen.size();
}

// Inline SVG of a small DAG: leaves on top, each node one layer below its deepest source; `hl` is highlighted.
inline std::string svg(const UOp& root, const UOp& hl, size_t max_nodes) {
  if (!root || count_nodes(root, max_nodes) > max_nodes) return "";
  std::vector<UOp> topo = root.toposort();
  std::unordered_map<const UOpNode*, size_t> idx;
  std::vector<int> layer(topo.size(), 0);
  int nlayers = 0;
  for (size_t i = 0; i < topo.size(); i++) {
    idx[topo[i].node()] = i;
    for (const UOp& s : topo[i].src()) layer[i] = std::max(layer[i], layer[idx[s.node()]] + 1);
    nlayers = std::max(nlayers, layer[i] + 1);
  }
  std::vector<std::vector<size_t>> rows(static_cast<size_t>(nlayers));
  for (size_t i = 0; i < topo.size(); i++) rows[size_t(layer[i])].push_back(i);
  const int cw = 7, bh = 34, vgap = 26, hgap = 12;
  std::vector<int> x(topo.size()), w(topo.size()), y(topo.size());
  int width = 0;
  for (size_t r = 0; r < rows.size(); r++) {
    int cx = 6;
    for (size_t i : rows[r]) {
      std::string l = short_label(topo[i]);
      w[i] = int(std::max<size_t>(l.size(), 12)) * cw + 12;
      x[i] = cx, y[i] = 6 + int(r) * (bh + vgap);
      cx += w[i] + hgap;
    }
    width = std::max(width, cx);
  }
  int height = 12 + nlayers * (bh + vgap);
  std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"g\" width=\"" + std::to_string(width) +
                  "\" height=\"" + std::to_string(height) + "\">";
  for (size_t i = 0; i < topo.size(); i++)
    for (const UOp& s : topo[i].src()) {
      size_t j = idx[s.node()];
      o += "<line x1=\"" + std::to_string(x[j] + w[j] / 2) + "\" y1=\"" + std::to_string(y[j] + bh) + "\" x2=\"" +
           std::to_string(x[i] + w[i] / 2) + "\" y2=\"" + std::to_string(y[i]) + "\"/>";
    }
  for (size_t i = 0; i < topo.size(); i++) {
    const UOp& u = topo[i];
    o += std::string("<g") + (u == hl ? " class=\"hl\"" : "") + "><rect x=\"" + std::to_string(x[i]) + "\" y=\"" +
         std::to_string(y[i]) + "\" width=\"" + std::to_string(w[i]) + "\" height=\"" + std::to_string(bh) +
         "\" rx=\"4\"/><text x=\"" + std::to_string(x[i] + 6) + "\" y=\"" + std::to_string(y[i] + 14) + "\">" +
         esc(short_label(u)) + "</text><text class=\"dt\" x=\"" + std::to_string(x[i] + 6) + "\" y=\"" +
         std::to_string(y[i] + 28) + "\">" + esc(u.dtype().py_name()) + "</text></g>";
  }
  return o + "</svg>";
}

// tinygrad repr, cut at `max_chars`; graphs over 1000 nodes are not printed (a deep chain's repr is quadratic)
inline std::string repr(const UOp& u, size_t max_chars) {
  if (count_nodes(u, 1000) > 1000)
    return "(graph of more than 1000 nodes, root Ops." + std::string(op_name(u.op())) + ": repr omitted)";
  std::string s = u ? pretty_print(u) : std::string("UOp()");
  if (s.size() > max_chars) s = s.substr(0, max_chars) + "\n... (" + std::to_string(s.size() - max_chars) + " more chars)";
  return s;
}

// `root` with `from` replaced by `to` everywhere (parents rebuilt, dtypes kept): the whole graph after a step
inline UOp replace_node(const UOp& root, const UOp& from, const UOp& to) {
  if (root == from) return to;
  std::unordered_map<const UOpNode*, UOp> m{{from.node(), to}};
  std::vector<UOp> srcs;
  for (const UOp& u : root.toposort([&](const UOp& x) { return x != from; })) {
    srcs.clear();
    bool changed = false;
    for (const UOp& s : u.src()) {
      auto it = m.find(s.node());
      srcs.push_back(it == m.end() ? s : it->second);
      changed |= it != m.end();
    }
    if (changed) m[u.node()] = UOp::make(u.op(), u.dtype(), srcs, u.arg(), u.tag());
  }
  auto it = m.find(root.node());
  return it == m.end() ? root : it->second;
}

inline std::string where_str(const std::source_location& l) {
  return std::string(l.file_name()) + ":" + std::to_string(l.line());
}

inline std::string graph_block(const UOp& g, const UOp& hl, std::string_view title, bool open, size_t& budget) {
  std::string o = std::string("<details") + (open ? " open" : "") + "><summary>" + esc(title) + "</summary>";
  if (budget == 0) return o + "<p class=\"note\">graph omitted: GRAFT_VIZ_MAX_MB reached</p></details>";
  std::string body = "<div class=\"svgbox\">" + svg(g, hl, 80) + "</div><pre>" + esc(repr(g, 200000)) + "</pre>";
  budget = body.size() >= budget ? 0 : budget - body.size();
  return o + body + "</details>";
}

inline std::string render_call(const Call& c, size_t& budget) {
  std::string o = "<section class=\"call\" id=\"c" + std::to_string(c.seq) + "\"><h2>#" + std::to_string(c.seq) +
                  " graph_rewrite at " + esc(where_str(c.site)) + "</h2><p class=\"meta\">" +
                  (c.matcher.empty() ? "" : esc(c.matcher) + " &middot; ") + esc(c.options) + " &middot; " +
                  std::to_string(c.steps.size() + c.dropped_steps) + " rewrites" +
                  (c.depth ? " &middot; nested (depth " + std::to_string(c.depth) + ")" : "") + "</p>";
  if (!c.error.empty()) o += "<p class=\"err\">threw: " + esc(c.error) + "</p>";
  o += graph_block(c.input, UOp(), "input graph", true, budget);
  UOp cur = c.input;
  bool track = c.input && count_nodes(c.input, 400) <= 400;  // the whole graph after each step, for small graphs
  for (size_t i = 0; i < c.steps.size(); i++) {
    const Step& s = c.steps[i];
    std::string rule = s.has_rule ? where_str(s.where) : std::string("(rewriter without rule locations)");
    o += "<details class=\"step\"><summary><span class=\"n\">step " + std::to_string(i + 1) + "</span> <span class=\"rule\">" +
         esc(rule) + "</span> " + esc(op_name(s.before.op())) + " &rarr; " + esc(op_name(s.after.op())) +
         (s.pre ? " <span class=\"note\">(pre-order)</span>" : "") + "</summary>";
    if (s.pattern) o += "<div class=\"pat\">pattern: <code>" + esc(s.pattern->str()) + "</code></div>";
    if (budget) {
      std::string b = "<div class=\"ba\"><div><h4>before</h4><pre>" + esc(repr(s.before, 20000)) +
                      "</pre></div><div><h4>after</h4><pre>" + esc(repr(s.after, 20000)) + "</pre></div></div>";
      budget = b.size() >= budget ? 0 : budget - b.size();
      o += b;
    }
    if (track && i < 300) {
      try {
        cur = replace_node(cur, s.before, s.after);
        if (count_nodes(cur, 2000) > 2000) track = false;  // the next steps' whole graphs would cost too much
        o += graph_block(cur, s.after, "graph after step " + std::to_string(i + 1), false, budget);
      } catch (const std::exception&) {
        track = false;
      }
    }
    o += "</details>";
  }
  if (c.dropped_steps)
    o += "<p class=\"note\">" + std::to_string(c.dropped_steps) + " more rewrites not recorded (GRAFT_VIZ_MAX_STEPS)</p>";
  if (c.output) o += graph_block(c.output, UOp(), "output graph", true, budget);
  return o + "</section>";
}

}  // namespace detail

// The number of graph_rewrite calls recorded so far.
inline size_t num_calls() {
  auto& reg = detail::Registry::get();
  std::lock_guard<std::mutex> lk(reg.mu);
  return reg.calls.size();
}

// Forget everything recorded (and release the graphs it kept alive).
inline void clear() {
  auto& reg = detail::Registry::get();
  std::vector<detail::Call> old;
  std::lock_guard<std::mutex> lk(reg.mu);
  old.swap(reg.calls);
  reg.next_seq = 0;
  reg.dropped_calls = 0;
}

// The page for everything recorded so far.
inline std::string html() {
  auto& reg = detail::Registry::get();
  std::vector<detail::Call> calls;
  size_t dropped;
  {
    std::lock_guard<std::mutex> lk(reg.mu);
    calls = reg.calls;
    dropped = reg.dropped_calls;
  }
  std::sort(calls.begin(), calls.end(), [](const detail::Call& a, const detail::Call& b) { return a.seq < b.seq; });
  size_t budget = detail::env_size("GRAFT_VIZ_MAX_MB", 64) << 20;
  std::string o =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>graft viz</title><style>\n"
      "body{font-family:sans-serif;margin:0;display:flex}nav{width:22em;height:100vh;overflow:auto;position:sticky;"
      "top:0;border-right:1px solid #ccc;font-size:12px;padding:4px}nav a{display:block;color:#036;text-decoration:none;"
      "padding:1px 0}main{flex:1;padding:8px 16px;min-width:0}pre{background:#f6f6f6;padding:6px;overflow:auto;"
      "font-size:12px;max-height:40em}h2{font-size:16px;border-top:2px solid #888;padding-top:8px}.meta,.note{color:#666;"
      "font-size:12px}.err{color:#b00}.rule{color:#036;font-family:monospace}.step{margin-left:1em}summary{cursor:pointer}"
      ".ba{display:flex;gap:8px}.ba>div{flex:1;min-width:0}h4{margin:4px 0}.pat code{font-size:12px}.svgbox{overflow:auto}"
      "svg.g line{stroke:#999}svg.g rect{fill:#eef3fb;stroke:#468}svg.g .hl rect{fill:#ffe08a;stroke:#b80}"
      "svg.g text{font:11px monospace}svg.g text.dt{fill:#777}\n</style></head><body>\n<nav><b>graph_rewrite calls</b>";
  for (const detail::Call& c : calls)
    o += "<a href=\"#c" + std::to_string(c.seq) + "\">#" + std::to_string(c.seq) + " " +
         std::string(c.depth, '-') + detail::esc(detail::where_str(c.site)) + " (" +
         std::to_string(c.steps.size() + c.dropped_steps) + ")</a>";
  o += "</nav>\n<main><h1>graft viz</h1><p class=\"meta\">" + std::to_string(calls.size()) + " graph_rewrite calls";
  if (dropped) o += ", " + std::to_string(dropped) + " more not recorded (GRAFT_VIZ_MAX_CALLS)";
  o += "</p>\n";
  for (const detail::Call& c : calls) o += detail::render_call(c, budget) + "\n";
  return o + "</main></body></html>\n";
}

// Write the page to `path`; throws graft::Error when the file cannot be written.
inline void write(const std::string& path) {
  std::string page = html();
  std::ofstream f(path, std::ios::binary);
  if (!f || !f.write(page.data(), std::streamsize(page.size())))
    throw Error("graft viz: cannot write " + path);
}

namespace detail {
inline void write_at_exit() {
  const char* f = std::getenv("GRAFT_VIZ_FILE");
  std::string path = f && *f ? f : "graft_viz.html";
  try {
    write(path);
    std::fprintf(stderr, "graft viz: wrote %zu graph_rewrite calls to %s\n", num_calls(), path.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
}
}  // namespace detail

}  // namespace graft::viz
