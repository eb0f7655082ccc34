// Per-iteration CPU times of a benchmark loop, reported as counters beside Google Benchmark's mean: the median and the
// minimum. On a shared VM a few iterations are preempted or meet a cold cache, and the mean carries them; tinygrad's
// scripts (bench/tinygrad_*.py) report their minimum and median over runs, so these give the like-for-like figures.
#pragma once
#include <benchmark/benchmark.h>

#include <algorithm>
#include <ctime>
#include <string>
#include <vector>

class IterationTimes {
 public:
  // this thread's CPU time in seconds (the clock Google Benchmark's cpu_time and Python's process_time read)
  static double now() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
  }
  void add(double seconds) { t_.push_back(seconds); }
  // counters `<prefix>median` and `<prefix>min` in `unit_per_s` units (1e3: ms, 1e6: us); returns the median (s)
  double report(benchmark::State& state, const std::string& prefix, double unit_per_s) {
    if (t_.empty()) return 0.0;
    std::sort(t_.begin(), t_.end());
    const double median = t_[t_.size() / 2];
    state.counters[prefix + "median"] = median * unit_per_s;
    state.counters[prefix + "min"] = t_.front() * unit_per_s;
    return median;
  }

 private:
  std::vector<double> t_;
};
