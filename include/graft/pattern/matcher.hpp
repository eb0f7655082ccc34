// Rules and the PatternMatcher. `rule(pattern, callback)` instantiates a specialized matcher for the pattern and
// erases it to a function pointer; the PatternMatcher dispatches on the root op (tinygrad's pdict), skips rules that
// cannot match the node's sieve key (ops, dtypes and constant classes of the root and its first two sources, answers
// cached per key) or whose required child ops are missing (early reject), and returns the first result that is not
// the input node.
// Callbacks take the match `m` (m[x] is the node bound to pattern variable x, empty if unbound) and optionally a
// context `Ctx&`; they return a UOp, or an empty UOp for "no match" (then the next binding, then the next rule).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <source_location>
#include <typeinfo>

#include "graft/pattern/dynamic.hpp"
#include "graft/pattern/upat.hpp"

namespace graft {

// The rewrite context handed to rules (tinygrad's ctx=), type-checked on use.
struct CtxRef {
  void* ptr = nullptr;
  const std::type_info* type = nullptr;
  CtxRef() = default;
  // not for CtxRef itself: copying a non-const CtxRef must not wrap it in another CtxRef
  template <class T> requires(!std::is_same_v<std::remove_cv_t<T>, CtxRef>)
  explicit CtxRef(T& c) : ptr(&c), type(&typeid(T)) {}
  template <class T> T& get(const char* who = "rule") const {
    if (!ptr) throw Error(std::string(who) + " needs a ctx of type " + typeid(T).name() + " but graph_rewrite got none");
    if (*type != typeid(T))
      throw Error(std::string(who) + " needs a ctx of type " + typeid(T).name() + " but got " + type->name());
    return *static_cast<T*>(ptr);
  }
};

// Thrown by a pre-order (bottom_up) rule to stop the rewrite from descending below a node (tinygrad BottomUpGate).
struct BottomUpGate {};

namespace detail {
inline const UOp& empty_uop() {
  static const UOp e;
  return e;
}
}  // namespace detail

// The match handed to compile-time rules: slot lookups resolved at compile time.
template <const pat::detail::NameTable& Names> struct StaticMatch {
  const pat::MatchState& s;
  template <class P> requires pat::Pattern<P> const UOp& operator[](const P&) const {
    static_assert(!P::name.empty(), "m[p]: this pattern has no name");
    constexpr int slot = Names.index(P::name);
    static_assert(slot >= 0, "m[p]: the name is not bound by this rule's pattern");
    return (s.bound >> slot) & 1u ? *s.slots[slot] : detail::empty_uop();
  }
  const UOp& operator[](std::string_view name) const {
    int slot = Names.index(name);
    if (slot < 0) throw Error("m[\"" + std::string(name) + "\"]: the name is not bound by this rule's pattern");
    return (s.bound >> slot) & 1u ? *s.slots[slot] : detail::empty_uop();
  }
  bool has(std::string_view name) const { int slot = Names.index(name); return slot >= 0 && ((s.bound >> slot) & 1u); }
};

// The match handed to the same callbacks when they run through the runtime UPat matcher.
struct DynMatch {
  const UPat::Store& store;
  template <class P> requires pat::Pattern<P> const UOp& operator[](const P&) const {
    static_assert(!P::name.empty(), "m[p]: this pattern has no name");
    return (*this)[P::name];
  }
  const UOp& operator[](std::string_view name) const {
    const UOp* u = UPat::lookup(store, name);
    return u ? *u : detail::empty_uop();
  }
  bool has(std::string_view name) const { return UPat::lookup(store, name) != nullptr; }
};

namespace detail {
template <class F> struct second_arg;
template <class R, class C, class A, class B> struct second_arg<R (C::*)(A, B) const> { using type = B; };
template <class R, class C, class A, class B> struct second_arg<R (C::*)(A, B)> { using type = B; };

// call fn(m) or fn(m, ctx) with the ctx type taken from the callback's second parameter
template <class F, class M> UOp invoke_rule(const F& fn, const M& m, const CtxRef& ctx, const char* where) {
  if constexpr (std::is_invocable_v<const F&, const M&>) {
    return UOp(fn(m));
  } else if constexpr (requires { &F::operator(); }) {
    using C = typename second_arg<decltype(&F::operator())>::type;
    return UOp(fn(m, ctx.get<std::remove_cvref_t<C>>(where)));
  } else {
    using C = typename second_arg<decltype(&F::template operator()<M>)>::type;
    return UOp(fn(m, ctx.get<std::remove_cvref_t<C>>(where)));
  }
}
}  // namespace detail

struct RuleStats {
  std::atomic<uint64_t> tries{0}, matches{0}, ns{0};
};
[[gnu::always_inline]] inline bool track_match_stats() {  // perf: read on every dispatch, so no call
  static const bool on = [] { const char* e = std::getenv("GRAFT_TRACK_MATCH_STATS"); return e && std::atoi(e) > 0; }();
  return on;
}

struct Rule;
// GRAFT_VIZ hook (the recorder lives in pattern/viz.hpp): with capture on, PatternMatcher::rewrite notes the rule that
// fired on this thread, and graph_rewrite's recorder takes it. Off, it costs one predicted branch per rewrite that fires.
namespace viz::detail {
inline bool env_requested() {
  static const bool on = [] { const char* e = std::getenv("GRAFT_VIZ"); return e && std::atoi(e) > 0; }();
  return on;
}
inline std::atomic<bool> capture{env_requested()};
inline thread_local const Rule* fired = nullptr;
}  // namespace viz::detail

namespace detail {
struct StatsEntry { std::shared_ptr<RuleStats> stats; std::string where, pattern; };
// one table format for the exit report and PatternMatcher::stats_report: most expensive rule first
inline std::string format_stats(std::vector<StatsEntry> entries) {
  std::sort(entries.begin(), entries.end(), [](const StatsEntry& a, const StatsEntry& b) { return a.stats->ns > b.stats->ns; });
  std::string out;
  for (const StatsEntry& e : entries) {
    char line[96];
    std::snprintf(line, sizeof line, "%8llu / %8llu %10.3f ms  ", (unsigned long long)e.stats->matches.load(),
                  (unsigned long long)e.stats->tries.load(), double(e.stats->ns.load()) * 1e-6);
    out += line + e.where + "  " + e.pattern + "\n";
  }
  return out;
}

// With GRAFT_TRACK_MATCH_STATS=1 every rule registers here and the process prints a per-rule table at exit.
struct StatsRegistry {
  std::mutex mu;
  std::vector<StatsEntry> entries;
  static StatsRegistry& get() {
    static StatsRegistry* r = [] {
      auto* reg = new StatsRegistry();
      std::atexit([] { get().print(); });
      return reg;
    }();
    return *r;
  }
  void add(std::shared_ptr<RuleStats> s, std::string where, std::string pattern) {
    std::lock_guard<std::mutex> lk(mu);
    entries.push_back({std::move(s), std::move(where), std::move(pattern)});
  }
  void print() {
    std::lock_guard<std::mutex> lk(mu);
    std::vector<StatsEntry> tried;
    for (const StatsEntry& e : entries)
      if (e.stats->tries) tried.push_back(e);
    std::fprintf(stderr, "graft match stats: matches / tries, time, rule\n%s", format_stats(std::move(tried)).c_str());
  }
};
}  // namespace detail

// One erased rule: the root ops it applies to, its early-reject set, its sieve, and both matchers.
struct Rule {
  using Fn = UOp (*)(const void* self, const UOp& u, const CtxRef& ctx);
  using Sieve = bool (*)(const void* self, uint64_t sieve_key);  // a necessary condition on the node's sieve key
  OpSet root_ops;
  OpSet early_reject;
  Fn fn_static = nullptr;
  Fn fn_dynamic = nullptr;
  Sieve sieve = nullptr;  // null: no condition (runtime rules)
  uint8_t repeat_depth = 0;  // pat::detail::repeat_depth of the pattern (0: none, runtime rules)
  std::shared_ptr<const void> impl;      // the pattern + callback
  std::shared_ptr<const UPat> upat;      // the lowered pattern (printing, dynamic matching)
  std::source_location location;
  std::shared_ptr<RuleStats> stats = std::make_shared<RuleStats>();
  bool use_dynamic = false;

  UOp apply(const UOp& u, const CtxRef& ctx) const { return (use_dynamic ? fn_dynamic : fn_static)(impl.get(), u, ctx); }
  std::string where() const { return std::string(location.file_name()) + ":" + std::to_string(location.line()); }
};

namespace detail {
template <class P, class F> struct RuleImpl {
  P pattern;
  F fn;
  UPat upat;
  std::string where;
};

template <class P, class F> UOp apply_static(const void* self, const UOp& u, const CtxRef& ctx) {
  const auto& r = *static_cast<const RuleImpl<P, F>*>(self);
  if (!pat::detail::shape_ok<P>(u) || !pat::detail::children_ok(r.pattern, u) || !pat::detail::names_ok<P>(u)) return UOp();
  constexpr const auto& names = pat::detail::names_v<P>;
  pat::MatchState s;
  UOp out;
  // the callback is the continuation of the match: a null result backtracks to the next permutation/alternative
  pat::match<names>(r.pattern, u, s, [&] { return bool(out = invoke_rule(r.fn, StaticMatch<names>{s}, ctx, r.where.c_str())); });
  return out;
}

template <class P, class F> bool sieve_static(const void* self, uint64_t key) {
  return pat::detail::sieve_ok(static_cast<const RuleImpl<P, F>*>(self)->pattern, key);
}

// The runtime matcher's bindings are copied into the compile-time slot layout, so the callback is instantiated once
// (with StaticMatch) and serves both matchers: half the per-rule compile cost of instantiating it twice.
template <class P, class F> UOp apply_dynamic(const void* self, const UOp& u, const CtxRef& ctx) {
  const auto& r = *static_cast<const RuleImpl<P, F>*>(self);
  constexpr const auto& names = pat::detail::names_v<P>;
  for (const UPat::Store& st : r.upat.match(u, {})) {
    pat::MatchState s;
    for (size_t i = 0; i < names.count; i++)
      if (const UOp* b = UPat::lookup(st, names.names[i])) s.slots[i] = b, s.bound |= 1u << i;
    UOp out = invoke_rule(r.fn, StaticMatch<names>{s}, ctx, r.where.c_str());
    if (out) return out;
  }
  return UOp();
}

template <class T> void delete_as(const void* p) { delete static_cast<const T*>(p); }

// runtime rules: a UPat and a callback over DynMatch
struct DynRuleImpl {
  UPat upat;
  std::function<UOp(const DynMatch&, const CtxRef&)> fn;
};
inline UOp apply_dyn_rule(const void* self, const UOp& u, const CtxRef& ctx) {
  const auto& r = *static_cast<const DynRuleImpl*>(self);
  for (const UPat::Store& st : r.upat.match(u, {}))
    if (UOp out = r.fn(DynMatch{st}, ctx)) return out;
  return UOp();
}
}  // namespace detail

// rule(pattern, callback): a compile-time rule.
template <pat::Pattern P, class F>
Rule rule(P pattern, F fn, std::source_location loc = std::source_location::current()) {
  static_assert(requires { P::ops; } && !P::ops.empty(),
                "a rule's root pattern needs an op (tinygrad asserts p.op is not None): use pat::op<...> or pat::ops<...>");
  using Impl = detail::RuleImpl<P, F>;
  std::string where = std::string(loc.file_name()) + ":" + std::to_string(loc.line());
  const Impl* raw = new Impl{pattern, std::move(fn), pat::lower(pattern), std::move(where)};
  // owned through a `const void*` with a plain deleter: one shared_ptr control-block type for every rule instead of
  // a control block (vtable, typeinfo, 5 functions) per rule type, which was a large part of each rule's compile cost
  std::shared_ptr<const void> impl(static_cast<const void*>(raw), &detail::delete_as<Impl>);
  Rule r;
  r.root_ops = P::ops;
  r.early_reject = pat::detail::early_reject<P>();
  r.fn_static = &detail::apply_static<P, F>;
  r.fn_dynamic = &detail::apply_dynamic<P, F>;
  r.sieve = &detail::sieve_static<P, F>;
  r.repeat_depth = pat::detail::repeat_depth<P>();
  r.impl = impl;
  r.upat = std::shared_ptr<const UPat>(impl, &raw->upat);
  r.location = loc;
  if (track_match_stats()) detail::StatsRegistry::get().add(r.stats, r.where(), r.upat->str());
  return r;
}

// dyn_rule(upat, callback): a rule built at run time.
inline Rule dyn_rule(UPat p, std::function<UOp(const DynMatch&, const CtxRef&)> fn,
                     std::source_location loc = std::source_location::current()) {
  if (!p.op) throw Error("dyn_rule: the root pattern needs an op");
  auto impl = std::make_shared<const detail::DynRuleImpl>(detail::DynRuleImpl{std::move(p), std::move(fn)});
  Rule r;
  r.root_ops = *impl->upat.op;
  r.early_reject = impl->upat.early_reject();
  r.fn_static = r.fn_dynamic = &detail::apply_dyn_rule;
  r.impl = impl;
  r.upat = std::shared_ptr<const UPat>(impl, &impl->upat);
  r.location = loc;
  if (track_match_stats()) detail::StatsRegistry::get().add(r.stats, r.where(), r.upat->str());
  return r;
}

class PatternMatcher {
 public:
  PatternMatcher() = default;
  PatternMatcher(std::initializer_list<Rule> rules) : rules_(rules) { index(); }
  explicit PatternMatcher(std::vector<Rule> rules) : rules_(std::move(rules)) { index(); }

  // tinygrad PatternMatcher.rewrite: first result that is not the input node
  UOp rewrite(const UOp& u, const CtxRef& ctx = {}) const {
    const auto& cands = pdict_[size_t(u.op())];
    if (cands.empty()) return UOp();
    if (track_match_stats()) [[unlikely]] return rewrite_tracked(u, ctx);
    OpSet have = u.src_ops();
    auto try_rule = [&](const Candidate& c) -> UOp {
      if (!c.early_reject.subset_of(have)) return UOp();
      UOp out = c.fn(c.impl, u, ctx);
      if (!out || out == u) return UOp();
      if (viz::detail::capture.load(std::memory_order_relaxed)) [[unlikely]] viz::detail::fired = &rules_[c.rule];
      return out;
    };
    if (cands.size() < kSieveMin || cands.size() > 64) {
      for (const Candidate& c : cands)
        if (UOp out = try_rule(c)) return out;
      return UOp();
    }
    uint64_t m = sieve_mask(u, cands);
    // rules whose repeated name needs a node twice among u's children or grandchildren (x + x, x*c0 + x*c1): one
    // check of u for all of them (perf: each failed in its own call, ~9 % of a sum's rewrite)
    if (const auto& rm = repeat_masks_[size_t(u.op())]; m & (rm[0] | rm[1])) {
      uint8_t d = pat::detail::first_repeat_depth(u, m & rm[1] ? 2 : 1);
      if (d > 1) m &= ~rm[0];
      if (d > 2) m &= ~rm[1];
    }
    for (; m; m &= m - 1)
      if (UOp out = try_rule(cands[size_t(__builtin_ctzll(m))])) return out;
    return UOp();
  }

  // rule order is priority: this matcher's rules come first (and its fold shortcut, if any, stays valid)
  PatternMatcher operator+(const PatternMatcher& o) const {
    std::vector<Rule> all = rules_;
    all.insert(all.end(), o.rules_.begin(), o.rules_.end());
    PatternMatcher r(std::move(all));
    r.fold_ = fold_;
    return r;
  }
  // the same rules matched through the runtime UPat interpreter (the oracle / benchmark baseline), no fold shortcut
  PatternMatcher dynamic() const {
    std::vector<Rule> all = rules_;
    for (Rule& r : all) r.use_dynamic = true;
    return PatternMatcher(std::move(all));
  }

  // A fold shortcut: fold(op, dtype, src, arg) returns the node that these rules rewrite op(src) to in one step, or an
  // empty UOp when it does not know. graph_rewrite calls it before matching a node with sources (never a leaf) and
  // before building a parent whose sources changed, so a node that folds is neither dispatched over the rules nor
  // interned (LLVM's IRBuilder folds constants at construction the same way). Only sound where the first rule to
  // fire on every node the shortcut folds gives exactly its result (symbolic_simple's constant folding).
  using Fold = UOp (*)(Ops op, DType dtype, std::span<const UOp> src, const Arg& arg);
  PatternMatcher with_fold(Fold f) const {
    PatternMatcher r = *this;
    r.fold_ = f;
    return r;
  }
  Fold fold() const { return fold_; }
  // whether any rule has `op` as its root op (a node of any other op is a fixed point of these rules)
  bool has_rules_for(Ops op) const { return !pdict_[size_t(op)].empty(); }
  const std::vector<Rule>& rules() const { return rules_; }
  size_t size() const { return rules_.size(); }

  // For each rule whose root op fits `u`: the rule's location and why it does not fire (or "matches").
  std::string explain(const UOp& u) const {
    std::string out;
    for (const Candidate& c : pdict_[size_t(u.op())]) {
      const Rule& r = rules_[c.rule];
      std::string why = r.early_reject.subset_of(u.src_ops()) ? r.upat->explain(u) : "early reject: a required child op is missing";
      out += r.where() + ": " + (why.empty() ? "matches" : why) + "\n";
    }
    return out.empty() ? "no rule for Ops." + std::string(op_name(u.op())) + "\n" : out;
  }

  // per-rule statistics (GRAFT_TRACK_MATCH_STATS=1), most expensive first
  std::string stats_report() const {
    std::vector<detail::StatsEntry> entries;
    for (const Rule& r : rules_) entries.push_back({r.stats, r.where(), r.upat->str()});
    return detail::format_stats(std::move(entries));
  }

 private:
  // the rules of one root op, in priority order, with what the hot loop reads stored inline (a Rule is ~10 words)
  struct Candidate {
    OpSet early_reject;
    Rule::Fn fn;
    const void* impl;
    Rule::Sieve sieve;
    uint32_t rule;
  };
  void index() {
    static std::atomic<uint64_t> next_id{1};
    id_ = next_id.fetch_add(1, std::memory_order_relaxed);
    for (auto& v : pdict_) v.clear();
    repeat_masks_ = {};
    for (uint32_t i = 0; i < rules_.size(); i++) {
      const Rule& r = rules_[i];
      // the runtime matcher (the oracle) gets no sieve: it checks every rule the long way
      Rule::Sieve sieve = r.use_dynamic ? nullptr : r.sieve;
      for (size_t o = 0; o < num_ops; o++)
        if (r.root_ops.has(Ops(o))) {
          size_t k = pdict_[o].size();
          if (!r.use_dynamic && r.repeat_depth && k < 64) repeat_masks_[o][r.repeat_depth - 1] |= uint64_t(1) << k;
          pdict_[o].push_back({r.early_reject, r.use_dynamic ? r.fn_dynamic : r.fn_static, r.impl.get(), sieve, i});
        }
    }
  }
  // The sieve: which of a root op's candidates can match nodes with this sieve key (bit i: cands[i]), cached per
  // thread and key (perf: a node's candidates are ~20 rules for ADD or MUL in symbolic, and most of them failed on
  // their root's source ops, dtypes or constants inside their own call; the answer depends on the key alone, and
  // a rewrite sees few distinct keys). Below kSieveMin candidates the plain loop is cheaper.
  static constexpr size_t kSieveMin = 4;
  uint64_t sieve_mask(const UOp& u, const std::vector<Candidate>& cands) const {
    struct Slot { uint64_t key, id, mask; };
    alignas(64) static thread_local Slot cache[1024];  // id 0 is no matcher's: an empty slot never hits
    const uint64_t key = pat::detail::sieve_key(u);
    Slot& s = cache[((key ^ id_) * 0x9E3779B97F4A7C15ull) >> 54];
    if (s.key == key && s.id == id_) [[likely]] return s.mask;
    uint64_t m = 0;
    for (size_t i = 0; i < cands.size(); i++)
      if (!cands[i].sieve || cands[i].sieve(cands[i].impl, key)) m |= uint64_t(1) << i;
    s = {key, id_, m};
    return m;
  }
  UOp rewrite_tracked(const UOp& u, const CtxRef& ctx) const {  // GRAFT_TRACK_MATCH_STATS=1: time every try
    OpSet have = u.src_ops();
    for (const Candidate& c : pdict_[size_t(u.op())]) {
      const Rule& r = rules_[c.rule];
      if (!c.early_reject.subset_of(have)) continue;
      auto t0 = std::chrono::steady_clock::now();
      UOp out = r.apply(u, ctx);
      r.stats->tries++;
      r.stats->ns += uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
      if (out && out != u) {
        r.stats->matches++;
        if (viz::detail::capture.load(std::memory_order_relaxed)) [[unlikely]] viz::detail::fired = &r;
        return out;
      }
    }
    return UOp();
  }
  std::vector<Rule> rules_;
  std::array<std::vector<Candidate>, num_ops> pdict_;
  // per root op: the candidates (bits as in the sieve mask) whose repeat_depth is 1, and those whose is 2
  std::array<std::array<uint64_t, 2>, num_ops> repeat_masks_{};
  uint64_t id_ = 0;  // the sieve cache's key for this rule set (copies share it: same rules, same answers)
  Fold fold_ = nullptr;
};

}  // namespace graft
