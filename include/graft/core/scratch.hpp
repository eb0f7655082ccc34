// Per-thread memory reuse for short-lived work memory. Scratch<T>: a std::vector whose capacity is reused across
// calls on the same thread, for the work lists of graph walks and rewrites (perf: the scheduler runs ~20
// graph_rewrites per schedule, each growing its stack and keep list from empty: ~20 mallocs and frees a call).
// TableMemory: the slot arrays of the node-keyed hash tables.
#pragma once
#include <bit>
#include <cstring>
#include <new>
#include <vector>

namespace graft::detail {

// Memory kept for reuse (the lists below) is off under AddressSanitizer, so a stale pointer into dropped memory stays
// detectable.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kReuseMemory = false;
#else
inline constexpr bool kReuseMemory = true;
#endif

template <class T> class Scratch {
 public:
  Scratch() {
    Pool& p = pool();
    if (!p.free.empty()) v_ = std::move(p.free.back()), p.free.pop_back();
  }
  ~Scratch() {
    v_.clear();
    Pool& p = pool();
    if (!p.dead && p.free.size() < kKeep && v_.capacity() <= kMaxCapacity) p.free.push_back(std::move(v_));
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::vector<T>& operator*() { return v_; }
  std::vector<T>* operator->() { return &v_; }

 private:
  // lists kept per thread and type (the nesting depth of walks), and the largest kept (at most ~100 KiB each)
  static constexpr size_t kKeep = kReuseMemory ? 8 : 0;
  static constexpr size_t kMaxCapacity = size_t(1) << 12;
  struct Pool {
    std::vector<std::vector<T>> free;
    bool dead = false;  // after thread exit (a Scratch in a static destructor frees its own memory)
    ~Pool() { dead = true; }
  };
  static Pool& pool() {
    thread_local Pool p;
    return p;
  }
  std::vector<T> v_;
};

// TableMemory: zeroed blocks (sizes rounded up to a power of two) for the node-keyed hash tables (NodeMap, NodeSet),
// kept per thread and size when dropped (perf: a schedule builds and drops ~110 tables of 0.5-16 KiB, one per pass
// and walk, and each went through malloc's slow paths both ways). At most kKeep blocks of each size up to 128 KiB
// wait on a list.
class TableMemory {
 public:
  // a zeroed block of at least `bytes`; give() it back with the same `bytes`
  static void* take(size_t bytes) {
    void* p = nullptr;
    if (std::vector<void*>* l = list(bytes); l && !l->empty()) p = l->back(), l->pop_back();
    else p = ::operator new(std::bit_ceil(bytes));
    std::memset(p, 0, bytes);
    return p;
  }
  static void give(void* p, size_t bytes) noexcept {
    std::vector<void*>* l = list(bytes);
    if (l && l->size() < kKeep) l->push_back(p);  // capacity reserved: no allocation here
    else ::operator delete(p);
  }

 private:
  static constexpr size_t kKeep = kReuseMemory ? 4 : 0;
  static constexpr size_t kClasses = 18;  // 1 B .. 128 KiB
  struct Lists {
    std::vector<void*> free[kClasses];
    bool dead = false;  // after thread exit (a table in a static destructor frees its own memory)
    Lists() { for (auto& l : free) l.reserve(kKeep); }
    ~Lists() {
      dead = true;
      for (auto& l : free)
        for (void* p : l) ::operator delete(p);
    }
  };
  static std::vector<void*>* list(size_t bytes) {
    thread_local Lists lists;
    size_t c = size_t(std::bit_width(bytes - 1));  // blocks of 2^c bytes
    return !kKeep || lists.dead || c >= kClasses ? nullptr : &lists.free[c];
  }
};

}  // namespace graft::detail
