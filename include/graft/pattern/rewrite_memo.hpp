// RewriteMemo: graph_rewrite's node -> result table. While the process has one thread, entries live in the nodes
// themselves (UOpNode::memo_epoch / memo): each call takes a fresh epoch, and a node's entry belongs to the call whose
// epoch it names, so a lookup is a read of a node the driver touches anyway and a new call starts with no table to
// clear (perf: the hash-table memo was a cache miss per node on large graphs; bench/README 3.17).
// Calls nest (a rule that simplifies runs graph_rewrite inside graph_rewrite) and nested calls meet the outer calls'
// nodes: an entry of a call that is still running is never overwritten; such nodes go to a side hash table. With more
// than one thread, every entry goes to the side table, so concurrent rewrites of shared nodes never write to them.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "graft/core/uop.hpp"
#include "graft/core/uop_map.hpp"

namespace graft::detail {

// The epochs of the calls running on the (only) thread, innermost last. Epochs only grow, so an epoch below the
// outermost running call's is stale. When the counter would wrap, a call that starts with none running clears every
// live node's epoch first; one that starts inside another uses the side table.
struct MemoEpochs {
  static inline uint32_t last = 0;
  static inline std::vector<uint32_t> running;
  static inline bool in_nodes = true;  // tests turn the in-node entries off to exercise the side table alone

  static uint32_t begin() {
    if (!in_nodes || !single_threaded()) return 0;
    if (last == ~uint32_t(0)) {
      if (!running.empty()) return 0;
      Interner::for_each_node([](UOpNode* n) { n->memo_epoch = 0; });
      last = 0;
    }
    running.push_back(++last);
    return last;
  }
  static void end(uint32_t epoch) noexcept {
    if (epoch) running.pop_back();
  }
  // whether a node's entry from epoch e may be taken over: e is not a running call's
  static bool stale(uint32_t e) {
    if (e < running.front()) return true;
    for (uint32_t r : running)
      if (r == e) return false;
    return true;
  }
};

// while it lives, every memo entry goes to the side table (tests: the path of a process with several threads)
struct SideTableOnly {
  bool was = std::exchange(MemoEpochs::in_nodes, false);
  SideTableOnly() = default;
  SideTableOnly(const SideTableOnly&) = delete;
  ~SideTableOnly() { MemoEpochs::in_nodes = was; }
};

class RewriteMemo {
  using N = const UOpNode*;

 public:
  RewriteMemo() : epoch_(MemoEpochs::begin()) {}
  ~RewriteMemo() { MemoEpochs::end(epoch_); }
  RewriteMemo(const RewriteMemo&) = delete;
  RewriteMemo& operator=(const RewriteMemo&) = delete;

  N* find(N k) {
    if (epoch_ && k->memo_epoch == epoch_) return &k->memo;
    return side_.find(k);
  }
  const N* find(N k) const { return const_cast<RewriteMemo*>(this)->find(k); }
  bool contains(N k) const { return find(k) != nullptr; }
  // inserts when absent; returns the value slot and whether it was inserted. The slot stays valid until the next insert
  std::pair<N*, bool> try_emplace(N k, N v) {
    if (epoch_) {
      const uint32_t e = k->memo_epoch;
      if (e == epoch_) return {&k->memo, false};
      // a node met at a running outer call's epoch stays there; its entry for this call is in the side table
      if (MemoEpochs::stale(e)) {
        k->memo_epoch = epoch_, k->memo = v, size_++;
        return {&k->memo, true};
      }
    }
    auto r = side_.try_emplace(k, v);
    size_ += r.second;
    return r;
  }
  size_t size() const { return size_; }

 private:
  uint32_t epoch_;  // 0: side table only
  size_t size_ = 0;
  NodeMap<N> side_;
};

}  // namespace graft::detail
