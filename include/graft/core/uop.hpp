// UOp: a value handle to an interned, immutable DAG node. Identity = (op, dtype, src, arg, tag), so structural
// equality is pointer equality. Nodes are reference counted and leave the intern table with their last handle;
// release is iterative, so dropping a 10^6-deep chain does not recurse. The intern table is sharded and locked,
// safe to use from several threads.
#pragma once
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>  // glibc 2.32+: __libc_single_threaded
#endif
#include "graft/core/arg.hpp"
#include "graft/core/dtype.hpp"
#include "graft/core/error.hpp"
#include "graft/core/ops.hpp"
#include "graft/core/scratch.hpp"

namespace graft {

class UOp;
struct UOpNode;
namespace detail {
inline const Arg& no_tag() {
  static const Arg none;
  return none;
}
struct NodeCaches;
struct Interner;
inline void release_node(const UOpNode* n) noexcept;

// While the process has a single thread (glibc's __libc_single_threaded, which libstdc++'s shared_ptr reads for the
// same purpose), reference counts and the intern table's locks need no lock-prefixed instruction: no other thread
// can see them, and the pthread_create that ends this state orders everything before it. (perf: the atomic
// read-modify-writes were ~8 % of a schedule's time, invisible in instruction counts.) Elsewhere: always atomic.
[[gnu::always_inline]] inline bool single_threaded() noexcept {
#if __has_include(<sys/single_threaded.h>) && defined(__GLIBC__)
  return __libc_single_threaded;
#else
  return false;
#endif
}
// count + 1
[[gnu::always_inline]] inline void count_up(std::atomic<uint32_t>& c) noexcept {
  if (single_threaded()) c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  else c.fetch_add(1, std::memory_order_relaxed);
}
// count - 1; returns the count before
[[gnu::always_inline]] inline uint32_t count_down(std::atomic<uint32_t>& c) noexcept {
  if (single_threaded()) {
    uint32_t v = c.load(std::memory_order_relaxed);
    c.store(v - 1, std::memory_order_relaxed);
    return v;
  }
  return c.fetch_sub(1, std::memory_order_acq_rel);
}
// a.compare_exchange_strong(expected, desired, order), the same way
template <class T>
[[gnu::always_inline]] inline bool claim(std::atomic<T>& a, T& expected, T desired, std::memory_order order) noexcept {
  if (single_threaded()) {
    T cur = a.load(std::memory_order_relaxed);
    if (cur != expected) { expected = cur; return false; }
    a.store(desired, std::memory_order_relaxed);
    return true;
  }
  return a.compare_exchange_strong(expected, desired, order);
}
}  // namespace detail

// Field order is for the cache (perf: at 10^5 nodes the rewrite is memory bound): the sources trail the node, so
// the fields a rewrite reads on every visit (op, dtype, nsrc, the memo, src_ops, the count) sit right before them;
// the intern table reads `hash` first. The tag, which few nodes have, lives in the caches block (perf: 8 bytes less
// per node, which the memo took), so a node with its sources fits 96 bytes + 8 per source.
struct UOpNode {
  size_t hash = 0;
  mutable std::atomic<detail::NodeCaches*> caches{nullptr};  // lazily computed properties (shape, vmin/vmax), the tag
  Arg arg;
  mutable std::atomic<uint32_t> refcount{0};
  Ops op;
  DType dtype;
  bool carved : 1 = false;  // memory carved from a BlockPool chunk: it can only go back to a free list
  bool tagged : 1 = false;  // caches holds a tag (set before the node is published)
  uint8_t arg_class = kArgOther;  // graft::arg_class(arg), read by the pattern matcher's sieve
  uint32_t nsrc;
  // graph_rewrite's memo entry while the process has one thread: valid for the call whose epoch it names
  // (pattern/rewrite_memo.hpp)
  mutable uint32_t memo_epoch = 0;
  mutable const UOpNode* memo = nullptr;
  OpSet src_ops = {};    // union of the children's ops: the early-reject filter of the pattern matcher
  OpSet slice_ops = {};  // ops of this node and everything below it: O(1) "is there an X in the graph" tests
  const UOp* srcs() const { return reinterpret_cast<const UOp*>(this + 1); }
};
static_assert(alignof(UOpNode) >= alignof(void*));
static_assert(sizeof(UOpNode) >= 64, "node_slot keys nodes by their address in 64-byte units");
static_assert(sizeof(UOpNode) <= 96 || sizeof(void*) != 8, "a node's fixed part is meant to fit 96 bytes");

class UOp {
 public:
  UOp() = default;
  UOp(const UOp& o) noexcept : n_(o.n_) { retain(); }
  UOp(UOp&& o) noexcept : n_(o.n_) { o.n_ = nullptr; }
  UOp& operator=(const UOp& o) noexcept { UOp t(o); std::swap(n_, t.n_); return *this; }
  UOp& operator=(UOp&& o) noexcept { std::swap(n_, o.n_); return *this; }
  ~UOp() { if (n_) detail::release_node(n_); }

  // --- construction -------------------------------------------------------------------------------------------
  // explicit dtype
  static UOp make(Ops op, DType dtype, std::span<const UOp> src = {}, Arg arg = {}, Arg tag = {});
  static UOp make(Ops op, DType dtype, std::initializer_list<UOp> src, Arg arg = {}, Arg tag = {}) {
    return make(op, dtype, std::span<const UOp>(src.begin(), src.size()), std::move(arg), std::move(tag));
  }
  // dtype inferred from op/src/arg (tinygrad dtype_from_uop)
  static UOp infer(Ops op, std::span<const UOp> src = {}, Arg arg = {}, Arg tag = {});
  static UOp infer(Ops op, std::initializer_list<UOp> src, Arg arg = {}, Arg tag = {}) {
    return infer(op, std::span<const UOp>(src.begin(), src.size()), std::move(arg), std::move(tag));
  }
  static DType infer_dtype(Ops op, std::span<const UOp> src, const Arg& arg);

  static UOp const_(DType dtype, Arg value);
  static UOp const_(int64_t v) { return const_(dtypes::weakint, v); }
  static UOp const_int(int64_t v) { return const_int(dtypes::weakint, v); }  // const_'s result, without its checks
  static UOp const_int(DType dtype, int64_t v);  // a CONST of an int dtype whose value is already canonical for it
  static UOp const_float(double v) { return const_(dtypes::weakfloat, v); }
  static UOp const_bool(bool v) { return const_(dtypes::bool_, v); }
  static UOp invalid() { return const_(dtypes::bool_, Invalid); }
  static UOp variable(const std::string& name, int64_t lo, int64_t hi, DType dtype = dtypes::weakint, int64_t multiple_of = 1);
  static UOp range(const UOp& end, int64_t axis_id, AxisType t = AxisType::WEAK);
  static UOp range(int64_t end, int64_t axis_id, AxisType t = AxisType::WEAK) { return range(const_int(end), axis_id, t); }
  static UOp special(int64_t end, const std::string& name) { return infer(Ops::SPECIAL, {const_int(end)}, name); }
  static UOp sink(std::span<const UOp> srcs) { return make(Ops::SINK, dtypes::void_, srcs); }
  static UOp sink(std::initializer_list<UOp> srcs) { return make(Ops::SINK, dtypes::void_, srcs); }
  static UOp stack(std::span<const UOp> srcs) { return infer(Ops::STACK, srcs); }
  static UOp group(std::span<const UOp> srcs) { return make(Ops::GROUP, dtypes::void_, srcs); }
  // shape as the branch encodes it: () -> empty STACK, (n,) -> one weakint CONST, else a STACK of CONSTs
  static UOp shape_arg(std::span<const int64_t> shape);
  static UOp shape_arg(std::initializer_list<int64_t> shape) { return shape_arg(std::span<const int64_t>(shape.begin(), shape.size())); }

  // --- fields -------------------------------------------------------------------------------------------------
  explicit operator bool() const { return n_ != nullptr; }
  bool empty() const { return n_ == nullptr; }
  Ops op() const { return n_->op; }
  DType dtype() const { return n_->dtype; }
  std::span<const UOp> src() const { return {n_->srcs(), n_->nsrc}; }
  const UOp& src(size_t i) const { return n_->srcs()[i]; }
  size_t nsrc() const { return n_->nsrc; }
  const Arg& arg() const { return n_->arg; }
  const Arg& tag() const;  // none() when the node has no tag
  OpSet src_ops() const { return n_->src_ops; }
  // the ops that occur in this node's backward slice, itself included (a superset test costs O(1))
  OpSet slice_ops() const { return n_->slice_ops; }
  size_t hash() const { return n_ ? n_->hash : 0; }
  const UOpNode* node() const { return n_; }
  static UOp from_node(const UOpNode* n) { return UOp(n, false); }
  // A handle view of a node pointer stored in `slot`, without touching the count: for walks and drivers that keep
  // their nodes alive by other means (the caller's graph, a memo holding handles). Valid while the node lives.
  static const UOp& borrow(const UOpNode* const& slot) { return *std::launder(reinterpret_cast<const UOp*>(&slot)); }
  static std::span<const UOp> borrow(std::span<const UOpNode* const> slots) {
    return {std::launder(reinterpret_cast<const UOp*>(slots.data())), slots.size()};
  }
  uint32_t use_count() const { return n_ ? n_->refcount.load(std::memory_order_relaxed) : 0; }
  bool operator==(const UOp& o) const { return n_ == o.n_; }
  // a total order by address (for ordered containers); tinygrad's structural order is `tuplize_less`
  struct AddressLess { bool operator()(const UOp& a, const UOp& b) const { return a.n_ < b.n_; } };

  // CONST value helpers
  bool is_const() const { return n_ && n_->op == Ops::CONST; }
  const Arg& val() const;
  bool is_invalid() const { return is_const() && arg().is<InvalidT>(); }
  bool is_variable() const;
  // a BUFFER or PARAM that holds memory: not a Variable (a 0-d ALU BUFFER, a scalar that kernels take by value)
  bool is_storage() const { return n_ && ((op() == Ops::BUFFER && !is_variable()) || op() == Ops::PARAM); }
  // tinygrad bind(): a Variable bound to a value is AFTER(var, STORE(var, CONST value)); the value must lie in the
  // variable's range and be a multiple of its multiple_of
  UOp bind(int64_t value) const;
  bool is_bound_var() const;
  int64_t bound_value() const { return src(1).src(1).arg().as_int(); }  // of a bound var

  // replace any field; returns *this when nothing changed
  struct Replace {
    std::optional<Ops> op = {};
    std::optional<DType> dtype = {};
    std::optional<std::vector<UOp>> src = {};
    std::optional<Arg> arg = {};
    std::optional<Arg> tag = {};
  };
  UOp replace(Replace r) const;
  UOp with_src(std::span<const UOp> s) const;
  UOp rtag(Arg tag = true) const { return replace({.tag = std::move(tag)}); }

  // --- graph helpers ------------------------------------------------------------------------------------------
  std::vector<UOp> toposort(const std::function<bool(const UOp&)>& gate = {}) const;
  std::vector<UOp> backward_slice() const { auto t = toposort(); t.pop_back(); return t; }
  size_t slice_size() const;  // len(toposort()) without building it
  UOp substitute(const std::unordered_map<UOp, UOp>& map, bool walk = false) const;  // defined in pattern/rewrite.hpp
  UOp base() const;  // strip movement ops and DETACH

  // --- building (operator sugar lives in core/sugar.hpp) -----------------------------------------------------
  UOp alu(Ops op, std::span<const UOp> rest) const;
  UOp alu(Ops op) const { return alu(op, std::span<const UOp>{}); }
  UOp alu(Ops op, const UOp& a) const { UOp s[] = {a}; return alu(op, s); }
  UOp alu(Ops op, const UOp& a, const UOp& b) const { UOp s[] = {a, b}; return alu(op, s); }
  UOp f(Ops op, Arg arg = {}) const { return make(op, dtype(), {*this}, std::move(arg)); }
  UOp cast(DType dt) const { return dt == dtype() ? *this : make(Ops::CAST, dt, {*this}, dt); }
  UOp bitcast(DType dt) const { return make(Ops::BITCAST, dt, {*this}, dt); }
  UOp const_like(Arg v) const;  // a CONST of this dtype (scalar graphs only)

  // --- analysis (core/range.hpp, core/shape.hpp, core/print.hpp) ---------------------------------------------
  Arg vmin() const;
  Arg vmax() const;
  const std::vector<int64_t>& shape() const;  // raises graft::Error when the node has no shape
  bool has_shape() const;
  std::string str() const;     // tinygrad-style pretty print
  // rules/symbolic.hpp; templates so that only translation units that use them instantiate the rule tables
  template <class = void> std::string render() const;  // index-expression render
  template <class = void> UOp simplify() const;

 private:
  friend struct detail::Interner;
  explicit UOp(const UOpNode* n, bool adopt) : n_(n) { if (!adopt) retain(); }
  void retain() const noexcept { if (n_) detail::count_up(n_->refcount); }
  const UOpNode* n_ = nullptr;
};

}  // namespace graft
static_assert(sizeof(graft::UOp) == sizeof(void*) && std::is_standard_layout_v<graft::UOp>, "UOp::borrow relies on this");

template <> struct std::hash<graft::UOp> {
  size_t operator()(const graft::UOp& u) const noexcept { return std::hash<const void*>{}(u.node()); }
};

namespace graft {

namespace detail {

// A short list of handles built and dropped within one call, with room for N on the stack (perf: the source lists
// that rules and passes build per node were a malloc and a free each, ~200 per attention schedule).
template <size_t N = 8> class SmallUOps {
 public:
  void push_back(UOp u) {
    if (n_ < N) inline_[n_++] = std::move(u);
    else spill(std::move(u));
  }
  std::span<const UOp> span() const { return heap_.empty() ? std::span<const UOp>(inline_.data(), n_) : std::span<const UOp>(heap_); }
  operator std::span<const UOp>() const { return span(); }
  size_t size() const { return span().size(); }
  bool empty() const { return n_ == 0; }
  const UOp* begin() const { return span().data(); }
  const UOp* end() const { return begin() + size(); }

 private:
  void spill(UOp u) {
    if (heap_.empty()) heap_.assign(std::make_move_iterator(inline_.begin()), std::make_move_iterator(inline_.end()));
    heap_.push_back(std::move(u));
  }
  std::array<UOp, N> inline_;
  size_t n_ = 0;  // stops at N: then heap_ holds the list
  std::vector<UOp> heap_;
};

// vmin/vmax of a node (core/range.hpp): int64 bounds, or double bounds for floats
struct Interval {
  bool is_float = false;
  int64_t lo = 0, hi = 0;
  double flo = 0, fhi = 0;
  static Interval ints(int64_t a, int64_t b) { return {false, a, b, 0, 0}; }
  static Interval floats(double a, double b) { return {true, 0, 0, a, b}; }
  double dlo() const { return is_float ? flo : double(lo); }
  double dhi() const { return is_float ? fhi : double(hi); }
};


// Lazily computed per-node properties. Written once by the thread that wins a CAS on the state, read lock-free
// once the state says ready. The shape lives in place (perf: a separately allocated vector was a second malloc per
// shaped node).
struct NodeCaches {
  std::atomic<uint8_t> shape_state{0};  // 0 unknown, 1 has shape, 2 no shape, 3 being written by one thread
  std::atomic<uint8_t> minmax_state{0};  // 0 empty, 1 being written by one thread, 2 ready
  bool carved = false;                   // memory from a BlockPool chunk
  Interval minmax;
  std::unique_ptr<const Arg> tag;  // the node's tag, when UOpNode::tagged (written before the node is published)
  // the node's shape: own_shape, or the shape of a source it passes through (perf: no copy; the node keeps that
  // source, and so its caches, alive)
  const std::vector<int64_t>* shape = nullptr;
  std::vector<int64_t> own_shape;
};

// Memory for nodes (by source count) and their caches: per-thread free lists of fixed-size blocks, deep enough to
// absorb the bursts of short-lived intermediates that rewrites create and drop (glibc's tcache keeps only 7 per
// size). A block freed on another thread joins that thread's list. Fresh blocks are carved from 64 KiB chunks
// (perf: malloc from a cold heap cost ~175 instructions a block, 5-9 % of a rewrite that builds many nodes). A carved
// block cannot go back to operator delete: it always rejoins a free list (a thread's lists pass to the next thread
// that needs blocks when it exits), and each thread carves at most kCarveMax bytes, which the process keeps for
// reuse, as an arena would. Past that, blocks come from operator new and at most kMaxFree of them wait on a list.
// Off under AddressSanitizer, so use-after-free stays detectable.
template <size_t B> class BlockPool {
 public:
#if defined(__SANITIZE_ADDRESS__)
  static void* alloc(bool& carved) { carved = false; return ::operator new(B); }
  static void free(void* p, bool) noexcept { ::operator delete(p); }
#else
  static constexpr size_t kMaxFree = size_t(1) << 15, kChunk = size_t(1) << 16, kCarveMax = size_t(64) << 20;
  static void* alloc(bool& carved) {
    Local& l = local();
    carved = true;
    // perf: the next block of a list is cold (freed long ago); fetching it now hides the miss its pop would take
    if (void* p = l.carved) { l.carved = next(p), __builtin_prefetch(l.carved, 1); return p; }
    if (void* p = l.heap) { l.heap = next(p), l.heap_n--, carved = false, __builtin_prefetch(l.heap, 1); return p; }
    if (void* p = carve(l)) return p;
    carved = false;
    return ::operator new(B);
  }
  static void free(void* p, bool carved) noexcept {
    Local& l = local();
    if (l.dead) {  // freed during static destruction, after this thread's lists are gone
      if (carved) orphans().give(p, p);
      else ::operator delete(p);
    } else if (carved) {
      next(p) = l.carved, l.carved = p;
    } else if (l.heap_n < kMaxFree) {
      next(p) = l.heap, l.heap = p, l.heap_n++;
    } else {
      ::operator delete(p);
    }
  }

 private:
  static_assert(B % alignof(void*) == 0, "blocks are carved back to back");
  static void*& next(void* p) { return *static_cast<void**>(p); }
  struct Local {
    void* carved = nullptr;  // free carved blocks
    void* heap = nullptr;    // free blocks from operator new
    size_t heap_n = 0;
    char* cur = nullptr;  // the uncarved rest of the current chunk
    size_t left = 0;
    bool dead = false;
    ~Local() {
      while (heap) { void* n = next(heap); ::operator delete(heap); heap = n; }
      if (carved) {
        void* tail = carved;
        while (next(tail)) tail = next(tail);
        orphans().give(carved, tail);
      }
      dead = true;
    }
  };
  // free carved blocks of exited threads, one list
  struct Orphans {
    std::mutex mu;
    void* head = nullptr;
    std::atomic<bool> any{false};
    void give(void* first, void* last) {
      std::lock_guard<std::mutex> lk(mu);
      next(last) = head, head = first;
      any.store(true, std::memory_order_relaxed);
    }
    void* take() {
      if (!any.load(std::memory_order_relaxed)) return nullptr;
      std::lock_guard<std::mutex> lk(mu);
      void* h = head;
      head = nullptr;
      any.store(false, std::memory_order_relaxed);
      return h;
    }
  };
  static Orphans& orphans() {
    static Orphans* o = new Orphans();  // leaked on purpose: used during static destruction
    return *o;
  }
  static Local& local() { thread_local Local l; return l; }
  static size_t& carved_bytes() { thread_local size_t n = 0; return n; }  // this thread's chunks, all sizes
  static void* carve(Local& l) {
    if (l.left < B) {
      if (void* h = orphans().take()) { l.carved = next(h); return h; }
      if (carved_bytes() + kChunk > kCarveMax) return nullptr;
      carved_bytes() += kChunk;
      l.cur = static_cast<char*>(::operator new(kChunk)), l.left = kChunk;
    }
    void* p = l.cur;
    l.cur += B, l.left -= B;
    return p;
  }
#endif
};

struct CachesPool {
  static NodeCaches* make() {
    bool carved;
    void* p = BlockPool<sizeof(NodeCaches)>::alloc(carved);
    NodeCaches* c = new (p) NodeCaches();
    c->carved = carved;
    return c;
  }
  static void destroy(NodeCaches* c) noexcept {
    if (!c) return;
    bool carved = c->carved;
    c->~NodeCaches();
    BlockPool<sizeof(NodeCaches)>::free(c, carved);
  }
};

inline const Arg& tag_of(const UOpNode* n) {
  return n->tagged ? *n->caches.load(std::memory_order_acquire)->tag : no_tag();
}

inline NodeCaches& caches_of(const UOpNode* n) {
  NodeCaches* c = n->caches.load(std::memory_order_acquire);
  if (c) return *c;
  NodeCaches* fresh = CachesPool::make();
  if (claim(n->caches, c, fresh, std::memory_order_acq_rel)) return *fresh;
  CachesPool::destroy(fresh);
  return *c;
}

// arg_hash: arg.hash()
inline size_t node_key_hash(Ops op, DType dt, std::span<const UOp> src, size_t arg_hash, const Arg& tag) {
  size_t h = size_t(op) * 0x100000001B3ull ^ (size_t(dt.index()) << 8);
  for (const UOp& s : src) h = (h ^ size_t(s.node())) * 0x9E3779B97F4A7C15ull, h ^= h >> 29;
  h ^= arg_hash * 0xC2B2AE3D27D4EB4Full;
  if (!tag.is_none()) h ^= tag.hash() * 0x165667B19E3779F9ull;
  h ^= h >> 33, h *= 0xFF51AFD7ED558CCDull, h ^= h >> 33, h *= 0xC4CEB9FE1A85EC53ull, h ^= h >> 33;  // murmur3 finalizer
  return h;
}

// The home slot of a node address in an open-addressing table of mask + 1 (a power of two) slots: Fibonacci hashing,
// the top bits of the product. Tables keyed by node address use it with linear probing at most half full.
// (perf: a hash that kept nearby nodes in nearby slots averaged 7-9 probes per lookup whenever the node size or the
// allocator's order put the addresses at a regular stride; bench/README.md 3.8.) The key is the address in 64-byte
// units, unique per node since a node takes more: nodes carved back to back then differ by 1-2 units, the strides
// Fibonacci hashing spreads best (in 16-byte units, the 96- and 112-byte nodes' strides of 6 and 7 gave 3-7 times the
// probes on a 17k-node tree).
inline size_t node_slot(const void* p, size_t mask) {
  return ((reinterpret_cast<size_t>(p) >> 6) * 0x9E3779B97F4A7C15ull >> __builtin_clzll(mask | 1)) & mask;
}

// A set of node addresses (open addressing, linear probing; no ownership): the visited set of graph walks, where
// std::unordered_set's per-entry allocation dominated.
class NodeSet {
 public:
  bool contains(const UOpNode* p) const {
    for (size_t i = slot(p);; i = (i + 1) & mask_) {
      if (slots_[i] == p) return true;
      if (!slots_[i]) return false;
    }
  }
  bool insert(const UOpNode* p) {  // true when p was not there
    if ((size_ + 1) * 2 > mask_ + 1) grow();
    for (size_t i = slot(p);; i = (i + 1) & mask_) {
      if (slots_[i] == p) return false;
      if (!slots_[i]) { slots_[i] = p, size_++; return true; }
    }
  }
  size_t size() const { return size_; }

  NodeSet() = default;
  NodeSet(NodeSet&& o) noexcept
      : slots_(std::exchange(o.slots_, empty_slot())), mask_(std::exchange(o.mask_, 0)), size_(std::exchange(o.size_, 0)) {}
  NodeSet& operator=(NodeSet&&) = delete;
  ~NodeSet() { release(); }

 private:
  using P = const UOpNode*;
  // no table before the first insert (perf: many walks visit a handful of nodes, or none): lookups probe one shared
  // empty slot until then
  static P* empty_slot() {
    static P s = nullptr;  // read only
    return &s;
  }
  size_t slot(const UOpNode* p) const { return node_slot(p, mask_); }
  void release() noexcept {
    if (slots_ != empty_slot()) TableMemory::give(slots_, (mask_ + 1) * sizeof(P));
  }
  // the first table holds 127 members (perf: a toposort of a scheduler graph, 80-160 nodes, grew from 32 slots three
  // times; zeroing 2 KiB costs less than one rehash)
  static constexpr size_t kFirstSlots = 256;
  void grow() {
    size_t old_n = slots_ == empty_slot() ? 0 : mask_ + 1, n = old_n ? old_n * 2 : kFirstSlots;
    P* old = std::exchange(slots_, static_cast<P*>(TableMemory::take(n * sizeof(P))));
    mask_ = n - 1;
    for (size_t j = 0; j < old_n; j++)
      if (P p = old[j]) { size_t i = slot(p); while (slots_[i]) i = (i + 1) & mask_; slots_[i] = p; }
    if (old_n) TableMemory::give(old, old_n * sizeof(P));
  }
  P* slots_ = empty_slot();
  size_t mask_ = 0, size_ = 0;
};

// Node memory: BlockPool above for the common sizes (0-8 sources: the INDEX of a 4-D tensor has 5),
// operator new for the rest.
struct NodePool {
  static constexpr size_t bytes(size_t nsrc) { return sizeof(UOpNode) + nsrc * sizeof(UOp); }
  static void* alloc(size_t nsrc, bool& carved) {
    switch (nsrc) {
      case 0: return BlockPool<bytes(0)>::alloc(carved);
      case 1: return BlockPool<bytes(1)>::alloc(carved);
      case 2: return BlockPool<bytes(2)>::alloc(carved);
      case 3: return BlockPool<bytes(3)>::alloc(carved);
      case 4: return BlockPool<bytes(4)>::alloc(carved);
      case 5: return BlockPool<bytes(5)>::alloc(carved);
      case 6: return BlockPool<bytes(6)>::alloc(carved);
      case 7: return BlockPool<bytes(7)>::alloc(carved);
      case 8: return BlockPool<bytes(8)>::alloc(carved);
      default: carved = false; return ::operator new(bytes(nsrc));
    }
  }
  static void free(void* p, size_t nsrc, bool carved) noexcept {
    switch (nsrc) {
      case 0: return BlockPool<bytes(0)>::free(p, carved);
      case 1: return BlockPool<bytes(1)>::free(p, carved);
      case 2: return BlockPool<bytes(2)>::free(p, carved);
      case 3: return BlockPool<bytes(3)>::free(p, carved);
      case 4: return BlockPool<bytes(4)>::free(p, carved);
      case 5: return BlockPool<bytes(5)>::free(p, carved);
      case 6: return BlockPool<bytes(6)>::free(p, carved);
      case 7: return BlockPool<bytes(7)>::free(p, carved);
      case 8: return BlockPool<bytes(8)>::free(p, carved);
      default: ::operator delete(p);
    }
  }
};

// The intern table: 64 shards, each an open-addressing hash table under its own lock.
// The shards' lock: a test-and-test-and-set spin lock. Critical sections are a probe or an insert, and an
// uncontended std::mutex (two calls into libpthread) cost more than the lookup itself.
class SpinLock {
 public:
  void lock() noexcept {
    if (single_threaded()) return;  // nobody to exclude (unlock's store of false is then a no-op)
    while (f_.exchange(true, std::memory_order_acquire))
      while (f_.load(std::memory_order_relaxed)) std::this_thread::yield();
  }
  void unlock() noexcept { f_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> f_{false};
};

// A shard's slots: linear probing over 8-byte words, each a node pointer with 16 bits of its hash in the top bits
// (user-space pointers fit in 48 bits; intern checks). perf: a probe compares tags in the slot array and touches a
// node only when its tag matches; the chained table it replaces read every node of a bucket's chain, a cache miss
// each on large graphs (77 % of intern's time at 10^5 nodes). Deletion leaves a tombstone unless the next slot is
// empty. One counter, `used_` (live slots and tombstones), holds the load at most 1/2; the live count is only needed
// by a rehash and by live_uop_count(), which count them (perf: a second counter was two stores per insert and erase).
class InternSlots {
 public:
  static constexpr uint64_t kEmpty = 0, kTomb = 1;
  // hash bits 32-47: the shard takes bits 58-63 and the slot index the low bits
  static uint64_t tag(size_t h) { return (uint64_t(h) << 16) & ~kPtrMask; }
  static UOpNode* node(uint64_t s) { return reinterpret_cast<UOpNode*>(s & kPtrMask); }
  static bool tag_matches(uint64_t s, uint64_t tag) { return (s & ~kPtrMask) == tag; }
  static bool fits(const void* p) { return (reinterpret_cast<uintptr_t>(p) & ~kPtrMask) == 0; }
  static uint64_t pack(UOpNode* n, size_t h) { return reinterpret_cast<uintptr_t>(n) | tag(h); }
  size_t mask() const { return mask_; }
  const uint64_t* slots() const { return slots_.get(); }
  size_t count() const {
    size_t n = 0;
    for (size_t i = 0; i <= mask_; i++) n += slots_[i] > kTomb;
    return n;
  }
  // whether an insert into an empty slot would pass the load limit of 1/2
  bool full() const { return 2 * (used_ + 1) > mask_ + 1; }
  // rebuild without tombstones, the live slots at most a quarter full (shrinks after mass deletion). Strong
  // guarantee: a failed allocation leaves the table as it was.
  void rehash() {
    size_t live = count(), cap = std::max(kMinCap, std::bit_ceil(4 * (live + 1)));
    std::unique_ptr<uint64_t[]> fresh = std::make_unique<uint64_t[]>(cap);  // zeroed: all empty
    for (size_t i = 0; i <= mask_; i++)
      if (uint64_t s = slots_[i]; s > kTomb) fresh[first_empty(fresh.get(), cap - 1, node(s)->hash)] = s;
    slots_ = std::move(fresh), mask_ = cap - 1, used_ = live;
  }
  // the slot an insert of hash h takes right after rehash()
  size_t first_empty(size_t h) const { return first_empty(slots_.get(), mask_, h); }
  void put_in_empty(size_t i, uint64_t packed) { slots_[i] = packed, used_++; }
  void put_in_tomb(size_t i, uint64_t packed) { slots_[i] = packed; }
  // remove the slot holding `packed` (a node's pack() with its hash h), if any
  void remove(uint64_t packed, size_t h) {
    for (size_t i = h & mask_; slots_[i] != kEmpty; i = (i + 1) & mask_)
      if (slots_[i] == packed) return erase(i);
  }
  static constexpr size_t kNone = ~size_t(0);

 private:
  void erase(size_t i) {
    if (slots_[(i + 1) & mask_] != kEmpty) { slots_[i] = kTomb; return; }
    // no probe passes through i, nor through the tombstones right before it
    slots_[i] = kEmpty, used_--;
    for (size_t j = (i - 1) & mask_; slots_[j] == kTomb; j = (j - 1) & mask_) slots_[j] = kEmpty, used_--;
  }
  static constexpr uint64_t kPtrMask = (uint64_t(1) << 48) - 1;
  static constexpr size_t kMinCap = 512;
  static size_t first_empty(const uint64_t* s, size_t mask, size_t h) {
    size_t j = h & mask;
    while (s[j] != kEmpty) j = (j + 1) & mask;
    return j;
  }
  std::unique_ptr<uint64_t[]> slots_ = std::make_unique<uint64_t[]>(kMinCap);
  size_t mask_ = kMinCap - 1, used_ = 0;
};

struct Interner {
  struct Shard {
    SpinLock mu;
    InternSlots table;
  };
  static constexpr size_t kShards = 64;
  Shard shards[kShards];

  static Interner& get() {
    static Interner* inst = new Interner();  // leaked on purpose: nodes may be released during static destruction
    return *inst;
  }
  // shards take the top bits, slots the low bits, so the two never correlate
  static Shard& shard_for(size_t h) { return get().shards[h >> 58]; }

  static bool same_key(const UOpNode* n, Ops op, DType dt, std::span<const UOp> src, const Arg& arg, const Arg& tag) {
    if (n->op != op || n->dtype != dt || n->nsrc != src.size()) return false;
    const UOp* s = n->srcs();
    for (size_t i = 0; i < src.size(); i++)
      if (!(s[i] == src[i])) return false;
    return n->arg == arg && (n->tagged ? tag_of(n) == tag : tag.is_none());
  }

  static UOp intern(Ops op, DType dt, std::span<const UOp> src, Arg&& arg, Arg&& tag) {
    return find_or_insert(
        node_key_hash(op, dt, src, arg.hash(), tag), src.size(),
        [&](const UOpNode* n) { return same_key(n, op, dt, src, arg, tag); },
        [&](void* mem) {
          NodeCaches* tag_block = nullptr;  // first: the one step that may throw
          if (!tag.is_none()) {
            tag_block = CachesPool::make();
            try {
              tag_block->tag = std::make_unique<const Arg>(std::move(tag));
            } catch (...) {
              CachesPool::destroy(tag_block);
              throw;
            }
          }
          UOpNode* n = new (mem) UOpNode();
          n->op = op, n->dtype = dt, n->nsrc = uint32_t(src.size());
          n->arg = std::move(arg);
          n->arg_class = arg_class(n->arg);
          if (tag_block) n->caches.store(tag_block, std::memory_order_relaxed), n->tagged = true;
          UOp* s = const_cast<UOp*>(n->srcs());
          n->slice_ops.add(op);
          for (size_t k = 0; k < src.size(); k++) {
            new (&s[k]) UOp(src[k]);
            n->src_ops.add(src[k].op());
            n->slice_ops = n->slice_ops | src[k].node()->slice_ops;
          }
          return n;
        });
  }
  // intern(CONST, dt, {}, Arg(v), {}) without an Arg (perf: constant folding and the symbolic rules make many)
  static UOp intern_int_const(DType dt, int64_t v) {
    return find_or_insert(
        node_key_hash(Ops::CONST, dt, {}, Arg::hash_int(v), no_tag()), 0,
        [&](const UOpNode* n) {
          const int64_t* a = std::get_if<int64_t>(&n->arg.value());
          return a && *a == v && n->op == Ops::CONST && n->dtype == dt && n->nsrc == 0 && !n->tagged;
        },
        [&](void* mem) {
          UOpNode* n = new (mem) UOpNode{.arg = Arg(v), .op = Ops::CONST, .dtype = dt, .nsrc = 0};
          n->arg_class = arg_class(n->arg);
          n->slice_ops.add(Ops::CONST);
          return n;
        });
  }
  // The probe and insert: same(node) compares a candidate with the key, build(memory) constructs the node there
  // (it may throw before the node exists) and returns it.
  template <class Same, class Build> static UOp find_or_insert(size_t h, size_t nsrc, const Same& same, const Build& build) {
    Shard& sh = shard_for(h);
    std::lock_guard<SpinLock> lk(sh.mu);
    InternSlots& t = sh.table;
    const uint64_t* slots = t.slots();
    const uint64_t want = InternSlots::tag(h);
    size_t i = h & t.mask(), reuse = InternSlots::kNone;
    for (uint64_t s; (s = slots[i]) != InternSlots::kEmpty; i = (i + 1) & t.mask()) {
      if (s == InternSlots::kTomb) {
        if (reuse == InternSlots::kNone) reuse = i;
        continue;
      }
      if (!InternSlots::tag_matches(s, want)) continue;
      UOpNode* n = InternSlots::node(s);
      if (n->hash != h || !same(n)) continue;
      // revive only a live node: a count of 0 means it is being destroyed by another thread
      uint32_t c = n->refcount.load(std::memory_order_relaxed);
      while (c != 0)
        if (claim(n->refcount, c, c + 1, std::memory_order_acq_rel)) return UOp(n, true);
    }
    if (reuse == InternSlots::kNone && t.full()) t.rehash(), i = t.first_empty(h);
    bool carved;
    void* mem = NodePool::alloc(nsrc, carved);
    if (!InternSlots::fits(mem)) [[unlikely]] reject_address(mem, nsrc, carved);
    UOpNode* n;
    try {
      n = build(mem);
    } catch (...) {
      NodePool::free(mem, nsrc, carved);
      throw;
    }
    n->carved = carved, n->hash = h;
    n->refcount.store(1, std::memory_order_relaxed);
    if (reuse != InternSlots::kNone) t.put_in_tomb(reuse, InternSlots::pack(n, h));
    else t.put_in_empty(i, InternSlots::pack(n, h));
    return UOp(n, true);
  }

  [[gnu::cold, noreturn]] static void reject_address(void* mem, size_t nsrc, bool carved) {
    NodePool::free(mem, nsrc, carved);
    throw Error("UOp intern table: a node address above 2^48 (an address space this table does not support)");
  }

  static void unlink(UOpNode* n) {
    Shard& sh = shard_for(n->hash);
    std::lock_guard<SpinLock> lk(sh.mu);
    sh.table.remove(InternSlots::pack(n, n->hash), n->hash);
  }

  // f(node) for every live node, shard by shard under its lock
  template <class F> static void for_each_node(F&& f) {
    for (Shard& s : get().shards) {
      std::lock_guard<SpinLock> lk(s.mu);
      const uint64_t* slots = s.table.slots();
      for (size_t i = 0; i <= s.table.mask(); i++)
        if (slots[i] > InternSlots::kTomb) f(InternSlots::node(slots[i]));
    }
  }

  static size_t live_nodes() {
    size_t total = 0;
    for (Shard& s : get().shards) { std::lock_guard<SpinLock> lk(s.mu); total += s.table.count(); }
    return total;
  }
};

// Iterative destruction: children whose count drops to zero are queued, never recursed into. The queue starts in
// a small inline buffer (most releases free a handful of nodes; a heap vector each time would dominate).
struct DestroyQueue {
  UOpNode* buf[32];
  size_t n = 0;
  std::vector<UOpNode*> more;
  void push(UOpNode* x) { if (n < 32) buf[n++] = x; else more.push_back(x); }
  UOpNode* pop() {
    if (!more.empty()) { UOpNode* x = more.back(); more.pop_back(); return x; }
    return n ? buf[--n] : nullptr;
  }
};
inline void destroy_node(UOpNode* first) noexcept {
  thread_local DestroyQueue* pending = nullptr;
  if (pending) { pending->push(first); return; }  // already draining on this thread
  DestroyQueue work;
  work.push(first);
  pending = &work;
  while (UOpNode* n = work.pop()) {
    Interner::unlink(n);
    UOp* s = const_cast<UOp*>(n->srcs());
    for (uint32_t i = 0; i < n->nsrc; i++) {
      const UOpNode* c = s[i].node();
      if (count_down(c->refcount) == 1) work.push(const_cast<UOpNode*>(c));
      // the handle's pointer is dropped without running ~UOp (that would recurse)
      new (&s[i]) UOp();
    }
    CachesPool::destroy(n->caches.load(std::memory_order_acquire));
    uint32_t nsrc = n->nsrc;
    bool carved = n->carved;
    n->~UOpNode();
    NodePool::free(n, nsrc, carved);
  }
  pending = nullptr;
}

inline void release_node(const UOpNode* n) noexcept {
  if (count_down(n->refcount) == 1) destroy_node(const_cast<UOpNode*>(n));
}

}  // namespace detail

// number of live interned nodes (for leak tests and benchmarks)
inline size_t live_uop_count() { return detail::Interner::live_nodes(); }

// ------------------------------------------------------------------------------------------------------------------
// construction

inline const Arg& UOp::tag() const { return detail::tag_of(n_); }
inline UOp UOp::const_int(DType dtype, int64_t v) { return detail::Interner::intern_int_const(dtype, v); }

inline UOp UOp::make(Ops op, DType dtype, std::span<const UOp> src, Arg arg, Arg tag) {
  for (const UOp& s : src)
    if (s.empty()) throw Error("UOp::make(" + std::string(op_name(op)) + "): empty source handle");
  return detail::Interner::intern(op, dtype, src, std::move(arg), std::move(tag));
}

inline UOp UOp::infer(Ops op, std::span<const UOp> src, Arg arg, Arg tag) {
  DType dt = infer_dtype(op, src, arg);
  return make(op, dt, src, std::move(arg), std::move(tag));
}

namespace detail {
inline DType promo_dtype(std::span<const UOp> src) {
  DType d = src[0].dtype();
  bool same = true;
  for (const UOp& s : src) same &= s.dtype() == d;
  if (same) return d;
  std::vector<DType> ds;
  for (const UOp& s : src) ds.push_back(s.dtype());
  return least_upper_dtype_of(ds);
}
inline void need_src(Ops op, std::span<const UOp> src, size_t n) {
  if (src.size() < n)
    throw Error("UOp " + std::string(op_name(op)) + " needs " + std::to_string(n) + " source(s), got " + std::to_string(src.size()));
}
}  // namespace detail

inline DType UOp::infer_dtype(Ops op, std::span<const UOp> src, const Arg& arg) {
  using enum Ops;
  auto first = [&] { detail::need_src(op, src, 1); return src[0].dtype(); };
  switch (op) {
    case STORE: case LINEAR: case SINK: case PROGRAM: case SOURCE: case END: case BARRIER: case GROUP: case IF: case ENDIF:
    case TUPLE: case FUNCTION: case CUSTOM_FUNCTION: case REWRITE_ERROR: case NOOP: case CUSTOM: case CUSTOMI: case INS:
      return dtypes::void_;
    case CALL: return first() == dtypes::void_ ? dtypes::void_ : throw Error("a CALL of a value needs an explicit dtype");
    case INDEX: case LOAD: case UNSHARD: case REDUCE: case AFTER: case RANGE: case CONTIGUOUS: case CONTIGUOUS_BACKWARD:
    case COPY: case STAGE: case DETACH: case MSTACK: case MSELECT: case ALLREDUCE: case SPECIAL: case NEG: case TRUNC:
    case RESHAPE: case PERMUTE: case EXPAND: case PAD: case FLIP: case SHRINK:
      return first();
    case CMPLT: case CMPNE: case CMPEQ: return dtypes::bool_;
    case SIN: case LOG2: case EXP2: case SQRT: case RECIPROCAL: return least_upper_float(first());
    case WHERE:
      detail::need_src(op, src, 3);
      if (src[0].dtype() != dtypes::bool_)
        throw Error("WHERE condition must be bool, got dtypes." + std::string(src[0].dtype().py_name()));
      return detail::promo_dtype(src.subspan(1));
    case STACK: return src.empty() ? dtypes::void_ : detail::promo_dtype(src);
    case WMMA: detail::need_src(op, src, 3); return src[2].dtype();
    case GETTUPLE: {
      UOp t = first() == dtypes::void_ && src[0].op() == FUNCTION ? src[0].src(0) : src[0];
      return t.src(size_t(arg.as_int())).dtype();
    }
    case GETADDR: return dtypes::uint64;
    case SHL: case SHR:
      for (const UOp& s : src)
        if (!dtypes::is_int(s.dtype()))
          throw Error(std::string(op_name(op)) + ": shift operands must be int, got dtypes." + std::string(s.dtype().py_name()));
      return first();
    case BUFFER: case PARAM:
      if (!arg.is_param()) throw Error(std::string(op_name(op)) + " needs a ParamArg");
      return arg.param().dtype;
    case BINARY: return dtypes::uint8;
    case CAST: case BITCAST:
      if (!arg.is<DType>()) throw Error(std::string(op_name(op)) + " arg must be a DType");
      return arg.get<DType>();
    case CONST:
      if (arg.is<InvalidT>() || arg.is<bool>()) return dtypes::bool_;
      if (arg.is<int64_t>()) return dtypes::weakint;
      if (arg.is<double>()) return dtypes::weakfloat;
      throw Error("CONST arg must be a number, bool or Invalid, got " + arg.str());
    default:
      if (GroupOp::ALU.has(op)) { detail::need_src(op, src, 1); return detail::promo_dtype(src); }
      return src.empty() ? dtypes::void_ : src[0].dtype();
  }
}

// dtype.const(v): canonicalize a python-like value for the dtype
inline Arg canonical_const(DType dt, const Arg& v) {
  if (v.is<InvalidT>()) return v;
  if (dtypes::is_float(dt)) return truncate_float(dt, v.as_double());
  if (dtypes::is_bool(dt)) return Arg(v.as_double() != 0);
  if (dtypes::is_int(dt)) return v.as_int();
  if (dt == dtypes::void_) throw Error("CONST cannot be void");
  return v;
}

inline UOp UOp::const_(DType dtype, Arg value) {
  if (value.is<InvalidT>()) return make(Ops::CONST, dtypes::bool_, {}, value);
  if (!value.is_number()) throw Error("UOp::const_: value must be a number, bool or Invalid, got " + value.str());
  Arg v = canonical_const(dtype, value);
  if (const int64_t* i = std::get_if<int64_t>(&v.value())) return const_int(dtype, *i);
  return make(Ops::CONST, dtype, {}, std::move(v));
}

inline const Arg& UOp::val() const {
  if (!is_const()) throw Error("val() is only for CONST, got " + std::string(op_name(op())));
  return arg();
}

inline UOp UOp::shape_arg(std::span<const int64_t> shape) {
  if (shape.size() == 1) return const_int(shape[0]);
  if (shape.empty()) return make(Ops::STACK, dtypes::void_);
  detail::SmallUOps<> s;  // perf: no allocation up to 8 dims
  for (int64_t d : shape) s.push_back(const_int(d));
  return infer(Ops::STACK, s);
}

inline UOp UOp::variable(const std::string& name, int64_t lo, int64_t hi, DType dtype, int64_t multiple_of) {
  if (lo > hi) throw Error("variable " + name + ": empty range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  ParamArg p{-1, dtype, std::pair{lo, hi}, multiple_of, name, AddrSpace::ALU, ""};
  return make(Ops::BUFFER, dtype, {shape_arg({})}, Arg(std::move(p)));
}

inline bool UOp::is_variable() const {
  return n_ && op() == Ops::BUFFER && arg().is_param() && arg().param().vmin_vmax && arg().param().addrspace == AddrSpace::ALU;
}

inline UOp UOp::bind(int64_t value) const {
  if (!is_variable()) throw Error("bind: " + std::string(n_ ? op_name(op()) : "an empty UOp") + " is not a Variable");
  const ParamArg& p = arg().param();
  if (value < p.vmin_vmax->first || value > p.vmin_vmax->second)
    throw Error("bind: " + std::to_string(value) + " is outside the range [" + std::to_string(p.vmin_vmax->first) + ", " +
                std::to_string(p.vmin_vmax->second) + "] of variable " + p.name);
  if (p.multiple_of > 1 && value % p.multiple_of != 0)
    throw Error("bind: " + std::to_string(value) + " is not a multiple of " + std::to_string(p.multiple_of) + " (variable " + p.name + ")");
  UOp store = make(Ops::STORE, dtypes::void_, {*this, const_(dtype(), value)});
  return make(Ops::AFTER, dtype(), {*this, store});
}

inline bool UOp::is_bound_var() const {
  return n_ && op() == Ops::AFTER && nsrc() == 2 && src(0).is_variable() && src(1).op() == Ops::STORE &&
         src(1).nsrc() == 2 && src(1).src(0) == src(0) && src(1).src(1).is_const();
}

inline UOp UOp::range(const UOp& end, int64_t axis_id, AxisType t) {
  return make(Ops::RANGE, end.dtype(), {end}, Arg{Arg(axis_id), Arg(t)});
}

inline UOp UOp::replace(Replace r) const {
  Ops o = r.op.value_or(op());
  DType d = r.dtype.value_or(dtype());
  bool same_src = !r.src || (r.src->size() == nsrc() && std::equal(r.src->begin(), r.src->end(), src().begin()));
  bool same_arg = !r.arg || *r.arg == arg();
  bool same_tag = !r.tag || *r.tag == tag();
  if (o == op() && d == dtype() && same_src && same_arg && same_tag) return *this;
  std::span<const UOp> s = r.src ? std::span<const UOp>(*r.src) : src();
  return make(o, d, s, r.arg ? std::move(*r.arg) : arg(), r.tag ? std::move(*r.tag) : tag());
}

inline UOp UOp::with_src(std::span<const UOp> s) const {
  if (s.size() == nsrc() && std::equal(s.begin(), s.end(), src().begin())) return *this;
  return make(op(), dtype(), s, arg(), tag());
}

inline UOp UOp::alu(Ops o, std::span<const UOp> rest) const {
  if (rest.size() <= 2) {  // the common case without a heap vector: borrowed handles, the caller holds them
    const UOpNode* p[3] = {n_, rest.size() > 0 ? rest[0].n_ : nullptr, rest.size() > 1 ? rest[1].n_ : nullptr};
    return infer(o, borrow(std::span<const UOpNode* const>(p, rest.size() + 1)));
  }
  std::vector<UOp> s;
  s.reserve(rest.size() + 1);
  s.push_back(*this);
  s.insert(s.end(), rest.begin(), rest.end());
  return infer(o, s);
}

inline UOp UOp::const_like(Arg v) const { return const_(dtype(), std::move(v)); }

inline UOp UOp::base() const {
  UOp x = *this;
  while (GroupOp::Movement.has(x.op()) || x.op() == Ops::DETACH) x = x.src(0);
  return x;
}

namespace detail {
// Iterative DFS post-order, children first in source order (tinygrad's toposort order). `enter(n)` is asked once
// per edge and says whether to walk into n; it must say no to a node already visited. `visit(n)` runs after all of
// n's entered sources. A node entered but not yet visited is on the stack, an ancestor of the current node, so a
// DAG never meets it again: a cache filled by `visit` can serve as the visited set.
template <class Enter, class Visit> void post_order(const UOpNode* root, Enter&& enter, Visit&& visit) {
  if (!enter(root)) return;
  struct Frame { const UOpNode* n; uint32_t next; };
  Scratch<Frame> stack_buf;
  std::vector<Frame>& stack = *stack_buf;
  stack.push_back({root, 0});
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next < f.n->nsrc) {
      const UOpNode* c = f.n->srcs()[f.next++].node();
      if (enter(c)) stack.push_back({c, 0});
    } else {
      const UOpNode* n = f.n;
      stack.pop_back();
      visit(n);
    }
  }
}
}  // namespace detail

// `gate(x)` false: x and its sources are skipped (unless reached another way).
inline std::vector<UOp> UOp::toposort(const std::function<bool(const UOp&)>& gate) const {
  detail::Scratch<const UOpNode*> order;  // perf: one allocation of the exact size instead of a doubling vector
  detail::NodeSet seen;
  detail::post_order(
      n_, [&](const UOpNode* n) { return seen.insert(n) && (!gate || gate(borrow(n))); },
      [&](const UOpNode* n) { order->push_back(n); });
  std::vector<UOp> out;
  out.reserve(order->size());
  for (const UOpNode* n : *order) out.push_back(UOp(n, false));
  return out;
}

inline size_t UOp::slice_size() const {
  detail::NodeSet seen;
  std::vector<const UOpNode*> stack{n_};
  seen.insert(n_);
  while (!stack.empty()) {
    const UOpNode* n = stack.back();
    stack.pop_back();
    for (uint32_t i = 0; i < n->nsrc; i++)
      if (seen.insert(n->srcs()[i].node())) stack.push_back(n->srcs()[i].node());
  }
  return seen.size();
}

}  // namespace graft
