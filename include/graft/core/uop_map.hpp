// UOpMap: an open-addressing hash map keyed by UOp identity (the node pointer). Keys are held as handles, so a key
// node stays alive (and its address unique) while it is in the map. Used by the rewrite driver's memo, where
// std::unordered_map's per-entry allocation dominated.
#pragma once
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <memory>
#include <utility>
#include <vector>

#include "graft/core/uop.hpp"

namespace graft {

template <class V> class UOpMap {
 public:
  struct Slot {
    UOp key;
    V value;
  };
  explicit UOpMap(size_t expected = 16) { rehash(std::max<size_t>(16, std::bit_ceil(expected * 2))); }

  V* find(const UOp& k) {
    size_t m = slots_.size() - 1;
    for (size_t i = detail::node_slot(k.node(), m);; i = (i + 1) & m) {
      Slot& s = slots_[i];
      if (s.key.empty()) return nullptr;
      if (s.key == k) return &s.value;
    }
  }
  const V* find(const UOp& k) const { return const_cast<UOpMap*>(this)->find(k); }
  bool contains(const UOp& k) const { return find(k) != nullptr; }
  // inserts when absent; returns the value slot and whether it was inserted
  std::pair<V*, bool> try_emplace(const UOp& k, V v) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    size_t m = slots_.size() - 1;
    for (size_t i = detail::node_slot(k.node(), m);; i = (i + 1) & m) {
      Slot& s = slots_[i];
      if (s.key.empty()) {
        s.key = k, s.value = std::move(v), size_++;
        return {&s.value, true};
      }
      if (s.key == k) return {&s.value, false};
    }
  }
  V& operator[](const UOp& k) { return *try_emplace(k, V{}).first; }
  // the value of a key that must be present (a missing key is an internal error, not a user one)
  const V& at(const UOp& k) const {
    if (const V* v = find(k)) return *v;
    throw Error("UOpMap::at: key not found");
  }
  size_t size() const { return size_; }
  template <class F> void for_each(F&& f) const {
    for (const Slot& s : slots_)
      if (!s.key.empty()) f(s.key, s.value);
  }

 private:
  void rehash(size_t n) {
    std::vector<Slot> old(n);
    old.swap(slots_);
    size_t m = n - 1;
    for (Slot& s : old) {  // move keys and values: no refcount traffic
      if (s.key.empty()) continue;
      size_t i = detail::node_slot(s.key.node(), m);
      while (!slots_[i].key.empty()) i = (i + 1) & m;
      slots_[i] = std::move(s);
    }
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

// NodeMap: node pointer -> value, open addressing, no ownership: for drivers whose nodes are all kept alive by other
// means (graph_rewrite's memo), where a handle per key and value would cost two atomic updates per entry.
// No table is allocated before the first insert (perf: the scheduler runs many graph_rewrites on a few nodes each,
// and each call has three maps, two of them mostly unused): until then lookups probe one shared empty slot.
template <class V> class NodeMap {
 public:
  explicit NodeMap(size_t expected = 0) {
    if (expected) rehash(std::max<size_t>(16, std::bit_ceil(expected * 2)));
  }
  ~NodeMap() { free_slots(storage_, storage_ ? mask_ + 1 : 0); }
  NodeMap(const NodeMap&) = delete;
  NodeMap& operator=(const NodeMap&) = delete;
  V* find(const UOpNode* k) {
    for (size_t i = slot(k);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.key == k) return &s.value;
      if (!s.key) return nullptr;
    }
  }
  const V* find(const UOpNode* k) const { return const_cast<NodeMap*>(this)->find(k); }
  bool contains(const UOpNode* k) const { return find(k) != nullptr; }
  std::pair<V*, bool> try_emplace(const UOpNode* k, V v) {
    if ((size_ + 1) * 2 > mask_ + 1) rehash(std::max<size_t>(kFirstSlots, (mask_ + 1) * 2));  // never writes the empty slot
    for (size_t i = slot(k);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.key == k) return {&s.value, false};
      if (!s.key) { s.key = k, s.value = std::move(v), size_++; return {&s.value, true}; }
    }
  }
  size_t size() const { return size_; }
 private:
  struct Slot {  // key and value side by side: one cache line per probe; all-zero bytes is the empty slot
    const UOpNode* key;
    V value;
  };
  static Slot* empty_slot() {
    static Slot s{};  // read only: its key stays null
    return &s;
  }
  // a table of n empty slots: zeroed memory from TableMemory when V is trivial (perf: a memset instead of a store
  // loop, and a reused block instead of a malloc), value-initialized slots otherwise
  static Slot* new_slots(size_t n) {
    if constexpr (std::is_trivial_v<V>) return static_cast<Slot*>(detail::TableMemory::take(n * sizeof(Slot)));
    else return new Slot[n]();
  }
  static void free_slots(Slot* p, size_t n) noexcept {
    if (!p) return;
    if constexpr (std::is_trivial_v<V>) detail::TableMemory::give(p, n * sizeof(Slot));
    else delete[] p;
  }
  // the first table of an unsized map holds 63 entries (perf: a pass over a scheduler graph grew from 16 slots up to
  // four times; zeroing 128 slots costs less than one rehash)
  static constexpr size_t kFirstSlots = 128;
  size_t slot(const UOpNode* p) const { return detail::node_slot(p, mask_); }
  void rehash(size_t n) {
    Slot* old = std::exchange(storage_, new_slots(n));
    size_t old_n = old ? mask_ + 1 : 0;  // none before the first insert (slots_ was the empty slot)
    slots_ = storage_, mask_ = n - 1;
    for (size_t j = 0; j < old_n; j++) {
      Slot& o = old[j];
      if (!o.key) continue;
      size_t i = slot(o.key);
      while (slots_[i].key) i = (i + 1) & mask_;
      slots_[i] = std::move(o);
    }
    free_slots(old, old_n);
  }
  Slot* storage_ = nullptr;
  Slot* slots_ = empty_slot();
  size_t mask_ = 0, size_ = 0;
};

// An identity set of UOps (a UOpMap without values).
class UOpSet {
 public:
  bool insert(const UOp& u) { return map_.try_emplace(u, Empty{}).second; }
  bool contains(const UOp& u) const { return map_.contains(u); }
  size_t size() const { return map_.size(); }

 private:
  struct Empty {};
  UOpMap<Empty> map_;
};

}  // namespace graft
