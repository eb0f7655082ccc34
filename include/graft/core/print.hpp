// Printing: tinygrad's pretty_print format (shared nodes become `x3:=` and are referenced as `x3`), and DOT export.
#pragma once
#include <sstream>

#include "graft/core/uop.hpp"

namespace graft {

inline std::string dtype_repr(DType d) { return "dtypes." + std::string(d.py_name()); }

inline std::string arg_repr(Ops op, const Arg& arg) {
  if (op == Ops::REDUCE && arg.is<ArgTuple>()) {  // tinygrad prints REDUCE args with str(), not repr()
    std::string s = "(";
    const ArgTuple& t = arg.tuple();
    for (size_t i = 0; i < t.size(); i++) s += (i ? ", " : "") + t[i].str();
    return s + ")";
  }
  // float CONST args are tinygrad ConstFloats: repr is ConstFloat(1.5)
  if (op == Ops::CONST && arg.is<double>()) {
    std::string s = "ConstFloat(";  // appended, not "lit" + string&&: GCC 12 -O3 -Wrestrict false positive
    s += arg.str();
    return s += ')';
  }
  return arg.str();
}
// tinygrad prints tags with str(): a top-level string tag is not quoted
inline std::string tag_str(const Arg& tag) { return tag.is<std::string>() ? tag.get<std::string>() : tag.str(); }

// Iterative, so a 10^6-deep chain prints without recursion.
inline std::string pretty_print(const UOp& root) {
  // numbering and use counts in tinygrad's dfs order
  std::unordered_map<const UOpNode*, std::array<int64_t, 3>> info;  // id, uses, printed
  info[root.node()] = {0, 0, 0};
  {
    std::vector<std::pair<const UOpNode*, size_t>> st{{root.node(), 0}};
    // tinygrad: cache.setdefault(s, [len(cache),0,False])[1] += 1; recurse on first use. The root is not in the cache
    // during the walk, so the first child is x0.
    int64_t next = 0;
    while (!st.empty()) {
      auto& [n, i] = st.back();
      if (i == n->nsrc) { st.pop_back(); continue; }
      const UOpNode* c = n->srcs()[i++].node();
      auto [it, fresh] = info.try_emplace(c, std::array<int64_t, 3>{next, 0, 0});
      if (fresh) next++;
      if (++it->second[1] == 1) st.push_back({c, 0});
    }
  }
  std::string out;
  struct Frame { const UOpNode* n; int depth; uint32_t i; };
  std::vector<Frame> st;
  auto open = [&](const UOpNode* n, int d) {
    auto& in = info[n];
    if (in[2]) { out += std::string(size_t(d), ' ') + "x" + std::to_string(in[0]); return; }
    in[2] = 1;
    out += std::string(size_t(d), ' ');
    if (in[1] > 1) out += "x" + std::to_string(in[0]) + ":=";
    out += "UOp(Ops." + std::string(op_name(n->op)) + ", " + dtype_repr(n->dtype) + ", arg=";
    out += arg_repr(n->op, n->arg);
    if (n->tagged) out += ", tag=" + tag_str(detail::tag_of(n));
    out += ", src=(";
    st.push_back({n, d, 0});
  };
  open(root.node(), 0);
  while (!st.empty()) {
    Frame& f = st.back();
    if (f.i == f.n->nsrc) { out += "))"; st.pop_back(); if (!st.empty()) out += ","; continue; }
    const UOpNode* c = f.n->srcs()[f.i++].node();
    int d = f.depth + 2;
    out += "\n";
    size_t before = st.size();
    open(c, d);
    if (st.size() == before) out += ",";  // a back-reference closes immediately
  }
  return out;
}

inline std::string UOp::str() const { return n_ ? pretty_print(*this) : "UOp()"; }

inline std::ostream& operator<<(std::ostream& os, const UOp& u) { return os << u.str(); }

// Graphviz DOT of the DAG below `root` (one node per UOp, edges labelled with the source index).
inline std::string to_dot(const UOp& root) {
  if (!root) return "digraph G {\n}\n";
  std::ostringstream os;
  os << "digraph G {\n  node [shape=box, fontname=monospace];\n";
  std::unordered_map<const UOpNode*, size_t> id;
  auto esc = [](const std::string& a) {  // a DOT string: quotes and backslashes escaped, line breaks as \n
    std::string e;
    for (char c : a) {
      if (c == '\n') { e += "\\n"; continue; }
      if (c == '\r') continue;
      if (c == '"' || c == '\\') e += '\\';
      e += c;
    }
    return e;
  };
  for (const UOp& u : root.toposort()) {
    size_t i = id.size();
    id[u.node()] = i;
    std::string label = std::string(op_name(u.op())) + "\\n" + dtype_repr(u.dtype());
    if (!u.arg().is_none()) label += "\\narg=" + esc(u.arg().str());
    if (!u.tag().is_none()) label += "\\ntag=" + esc(tag_str(u.tag()));
    os << "  n" << i << " [label=\"" << label << "\"];\n";
    for (size_t k = 0; k < u.nsrc(); k++) os << "  n" << id[u.src(k).node()] << " -> n" << i << " [label=\"" << k << "\"];\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace graft
