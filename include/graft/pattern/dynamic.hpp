// Runtime UPat: the same pattern vocabulary as pat:: built at run time, matched by a direct port of tinygrad's
// UPat.match (a list of binding stores: permutations x alternatives x children). It is the semantic oracle for the
// compile-time matcher, the form rules print in, and the benchmark baseline. Every compile-time pattern lowers to
// one (`pat::lower`).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "graft/core/print.hpp"
#include "graft/pattern/upat.hpp"

namespace graft {

struct UPat {
  enum class SrcKind : uint8_t { None, Tuple, List, Repeat };
  std::optional<OpSet> op;      // nullopt: any op
  DTypeSet dtypes;              // empty: any dtype
  std::optional<Arg> arg;       // compared with Python `==`
  std::optional<Arg> tag;
  std::string name;             // empty: unnamed
  SrcKind src_kind = SrcKind::None;
  std::vector<UPat> src;        // children (for is_any: the alternatives)
  bool allow_any_len = false;
  bool is_any = false;

  // ---- builders (tinygrad spelling) ----
  static UPat ops(OpSet o, std::vector<UPat> src = {}, SrcKind kind = SrcKind::Tuple) {
    UPat p;
    p.op = o;
    p.src = std::move(src);
    p.src_kind = p.src.empty() && kind == SrcKind::Tuple ? SrcKind::None : kind;
    return p;
  }
  static UPat var(std::string name = "", DTypeSet dt = {}) { UPat p; p.name = std::move(name); p.dtypes = dt; return p; }
  static UPat cvar(std::string name = "", DTypeSet dt = {}) { UPat p = var(std::move(name), dt); p.op = OpSet{Ops::CONST}; return p; }
  static UPat const_(Arg v, DTypeSet dt = {}) { UPat p = cvar("", dt); p.arg = std::move(v); return p; }
  static UPat any(std::vector<UPat> alts) { UPat p; p.is_any = true; p.src = std::move(alts); return p; }
  UPat named(std::string n) const {
    if (n == "ctx") throw Error("UPat can't be named ctx");
    UPat p = *this;
    p.name = std::move(n);
    return p;
  }

  bool strict_length() const { return !(allow_any_len || src_kind == SrcKind::Repeat || src_kind == SrcKind::None); }
  size_t required_len() const { return src_kind == SrcKind::Repeat || src_kind == SrcKind::None ? 0 : src.size(); }
  bool all_same() const {
    for (const UPat& s : src)
      if (!(s == src[0])) return false;
    return true;
  }
  OpSet early_reject() const {
    OpSet r;
    if (is_any || src_kind == SrcKind::None) return r;
    for (const UPat& c : src)
      if (c.op && c.op->size() == 1) r = r | *c.op;
    return r;
  }
  bool operator==(const UPat& o) const {
    auto eq_opt = [](const std::optional<Arg>& a, const std::optional<Arg>& b) { return a.has_value() == b.has_value() && (!a || *a == *b); };
    return op == o.op && dtypes == o.dtypes && eq_opt(arg, o.arg) && eq_opt(tag, o.tag) && name == o.name &&
           src_kind == o.src_kind && src == o.src && allow_any_len == o.allow_any_len && is_any == o.is_any;
  }

  // ---- matching (tinygrad UPat.match) ----
  using Store = std::vector<std::pair<std::string_view, const UOp*>>;
  static const UOp* lookup(const Store& s, std::string_view n) {
    for (auto& [k, v] : s)
      if (k == n) return v;
    return nullptr;
  }
  std::vector<Store> match(const UOp& u, Store store) const {
    std::vector<Store> res;
    match_into(u, std::move(store), res);
    return res;
  }
  // store.setdefault(name, u) is u
  bool bind(Store& store, const UOp& u) const {
    if (name.empty()) return true;
    if (const UOp* b = lookup(store, name)) return b->node() == u.node();
    store.emplace_back(name, &u);
    return true;
  }
  void match_into(const UOp& u, Store store, std::vector<Store>& out) const {
    if (is_any) {
      // a named alternative set (pat::any<"n">, lowered) binds the matched node too; tinygrad's UPat.any has no name
      if (!bind(store, u)) return;
      for (const UPat& alt : src) alt.match_into(u, store, out);
      return;
    }
    if (op && !op->has(u.op())) return;
    if (!bind(store, u)) return;
    if (!dtypes.empty() && !dtypes.has(u.dtype())) return;
    if (arg && !arg->py_equal(u.arg())) return;
    if (tag && !tag->py_equal(u.tag())) return;
    if (u.nsrc() < required_len() || (strict_length() && u.nsrc() != required_len())) return;
    if (src_kind == SrcKind::None) { out.push_back(std::move(store)); return; }
    auto run = [&](auto pattern_for_child) {
      std::vector<Store> stores{store}, next;
      size_t n = src_kind == SrcKind::Repeat ? u.nsrc() : std::min(u.nsrc(), src.size());
      for (size_t i = 0; i < n; i++) {
        for (Store& s : stores) pattern_for_child(i).match_into(u.src(i), s, next);
        stores.swap(next);
        next.clear();
      }
      for (Store& s : stores) out.push_back(std::move(s));
    };
    if (src_kind == SrcKind::Repeat) return run([&](size_t) -> const UPat& { return src[0]; });
    if (src_kind == SrcKind::Tuple || all_same()) return run([&](size_t i) -> const UPat& { return src[i]; });
    std::vector<size_t> perm(src.size());
    for (size_t i = 0; i < perm.size(); i++) perm[i] = i;
    do run([&](size_t i) -> const UPat& { return src[perm[i]]; });
    while (std::next_permutation(perm.begin(), perm.end()));
  }

  // Why does `u` not match? Empty when it matches; otherwise the first mismatch, with its path from the root.
  std::string explain(const UOp& u, const std::string& path = "uop") const {
    if (!match(u, {}).empty()) return "";
    if (is_any) {
      std::string r = path + ": no alternative matched:";
      for (const UPat& alt : src) r += "\n  " + alt.explain(u, path);
      return r;
    }
    if (op && !op->has(u.op())) return path + ": op is Ops." + std::string(op_name(u.op())) + ", pattern wants " + str();
    if (!dtypes.empty() && !dtypes.has(u.dtype())) return path + ": dtype is " + dtype_repr(u.dtype()) + ", pattern wants " + str();
    if (arg && !arg->py_equal(u.arg())) return path + ": arg is " + u.arg().str() + ", pattern wants " + arg->str();
    if (tag && !tag->py_equal(u.tag())) return path + ": tag is " + u.tag().str() + ", pattern wants " + tag->str();
    if (u.nsrc() < required_len() || (strict_length() && u.nsrc() != required_len()))
      return path + ": has " + std::to_string(u.nsrc()) + " sources, pattern wants " + std::to_string(required_len()) +
             (strict_length() ? "" : " or more");
    if (src_kind == SrcKind::Tuple || src_kind == SrcKind::Repeat)
      for (size_t i = 0; i < (src_kind == SrcKind::Repeat ? u.nsrc() : src.size()); i++) {
        std::string why = (src_kind == SrcKind::Repeat ? src[0] : src[i]).explain(u.src(i), path + ".src[" + std::to_string(i) + "]");
        if (!why.empty()) return why;
      }
    if (src_kind == SrcKind::List) return path + ": no order of the sources matches " + str();
    return path + ": names bound twice disagree (a repeated name must be the same node)";
  }

  // tinygrad-like printing
  std::string str() const {
    if (is_any) {
      std::string s = "UPat.any(";
      for (size_t i = 0; i < src.size(); i++) s += (i ? ", " : "") + src[i].str();
      return s + ")";
    }
    std::string s = "UPat(";
    if (op) {
      if (op->size() == 1) s += "Ops." + std::string(op_name(op->first()));
      else {
        s += "(";
        bool first = true;
        for (size_t i = 0; i < num_ops; i++)
          if (op->has(Ops(i))) s += (first ? "" : ", ") + std::string("Ops.") + std::string(op_names[i]), first = false;
        s += ")";
      }
    } else s += "None";
    if (!dtypes.empty()) {
      s += ", dtype=(";
      bool first = true;
      for (unsigned i = 0; i < unsigned(DTypeId::count_); i++)
        if (dtypes.has(DType(DTypeId(i)))) s += (first ? "" : ", ") + dtype_repr(DType(DTypeId(i))), first = false;
      s += ")";
    }
    if (arg) s += ", arg=" + arg->str();
    if (!name.empty()) s += ", name='" + name + "'";
    if (src_kind != SrcKind::None) {
      std::string open = src_kind == SrcKind::List ? "[" : "(", close = src_kind == SrcKind::List ? "]" : ")";
      if (src_kind == SrcKind::Repeat) s += ", src=" + src[0].str();
      else {
        s += ", src=" + open;
        for (size_t i = 0; i < src.size(); i++) s += (i ? ", " : "") + src[i].str();
        s += close;
      }
    }
    if (allow_any_len) s += ", allow_any_len=True";
    return s + ")";
  }
};

// Lower a compile-time pattern to its runtime form.
namespace pat {
namespace detail {
template <class... Ps> std::vector<UPat> lower_list(const List<Ps...>& l);
}
template <class P> UPat lower(const P& p) {
  if constexpr (requires { &P::alts; }) {
    UPat r = UPat::any(detail::lower_list(p.alts));
    if (!P::name.empty()) {  // a named alternative set binds the matched node too, whatever the alternative binds
      r.name = std::string(P::name);
      for (UPat& a : r.src)  // and prints like tinygrad's or_casted(name): any(self.named(name), ...)
        if (a.name.empty()) a.name = r.name;
    }
    return r;
  } else {
    UPat r;
    if (!P::ops.empty()) r.op = P::ops;
    r.dtypes = p.dtypes;
    if (!p.arg_.any()) r.arg = p.arg_.to_arg();
    if (!p.tag_.any()) r.tag = p.tag_.to_arg();
    r.name = std::string(P::name);
    using S = decltype(p.src);
    if constexpr (std::is_same_v<S, NoSrc>) {
      r.src_kind = UPat::SrcKind::None;
    } else if constexpr (requires { &S::p; }) {
      r.src_kind = UPat::SrcKind::Repeat;
      r.src.push_back(lower(p.src.p));
    } else if constexpr (requires { p.src.all_same; }) {
      r.src_kind = UPat::SrcKind::List;
      r.src = detail::lower_list(p.src.ps);
    } else {
      r.src_kind = UPat::SrcKind::Tuple;
      r.allow_any_len = detail::is_prefix<S>;
      r.src = detail::lower_list(p.src.ps);
    }
    return r;
  }
}
namespace detail {
template <class... Ps> std::vector<UPat> lower_list(const List<Ps...>& l) {
  std::vector<UPat> out;
  if constexpr (sizeof...(Ps) > 0) {
    out.push_back(lower(l.head));
    auto rest = lower_list(l.tail);
    out.insert(out.end(), rest.begin(), rest.end());
  }
  return out;
}
}  // namespace detail
}  // namespace pat

}  // namespace graft
