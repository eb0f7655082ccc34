// Scratch<T>: a std::vector whose capacity is reused across calls on the same thread. For the short-lived work lists
// of graph walks and rewrites (perf: the scheduler runs ~20 graph_rewrites per schedule, each growing its stack and
// keep list from empty: ~20 mallocs and frees a call).
#pragma once
#include <vector>

namespace graft::detail {

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
  // lists kept per thread and type (the nesting depth of walks), and the largest kept (at most ~100 KiB each); none
  // under AddressSanitizer, so a dangling reference into a finished list stays detectable
#if defined(__SANITIZE_ADDRESS__)
  static constexpr size_t kKeep = 0;
#else
  static constexpr size_t kKeep = 8;
#endif
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

}  // namespace graft::detail
