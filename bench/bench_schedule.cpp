// Scheduling time (graft::schedule: prepare + rangeify2 + stage removal + kernel split) of the programs in
// shared/reference/tinygrad_rangeify.md section 6, with the same shapes; tinygrad's uncached scheduling time on the
// development VM (rewrite_rangeify2 branch, SCACHE=0, min of 9 CPU times; bench/tinygrad_schedule.py measures it, best
// of 5 runs of the script on 2026-12-03) is printed beside as a counter, with the speedup.
// Google Benchmark's time covers schedule() and freeing its result; the counters us_median / us_min are per-iteration
// CPU times of the schedule() call alone (iteration_times.hpp), the region tinygrad's timer covers (schedule_linear(),
// its result dropped after the timer stops); speedup_median = tinygrad_ms over that median. (PauseTiming around the
// free would cost more than the free.)
#include <benchmark/benchmark.h>

#include <graft/graft.hpp>

#include "iteration_times.hpp"

using namespace graft;

namespace {
void run(benchmark::State& state, double tinygrad_ms, const std::function<Tensor()>& build) {
  size_t kernels = 0;
  Tensor t = build();  // graft keeps no schedule cache: every iteration schedules from scratch
  IterationTimes times;
  for (auto _ : state) {
    const double t0 = IterationTimes::now();
    Schedule s = schedule({t});
    times.add(IterationTimes::now() - t0);
    kernels = s.size();
    benchmark::DoNotOptimize(s.graph);
  }
  state.counters["kernels"] = double(kernels);
  state.counters["tinygrad_ms"] = tinygrad_ms;
  state.counters["speedup"] = benchmark::Counter(tinygrad_ms / 1e3, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["speedup_median"] = tinygrad_ms / 1e3 / times.report(state, "us_", 1e6);
}
Tensor linear(const Tensor& x, int64_t in, int64_t out) { return x.matmul(Tensor::empty({in, out})) + Tensor::empty({out}); }
}  // namespace

static void mlp(benchmark::State& s) {
  run(s, 8.19, [] { return linear(linear(Tensor::empty({32, 784}), 784, 128).relu(), 128, 10); });
}
static void softmax(benchmark::State& s) {
  run(s, 7.49, [] { return Tensor::empty({64, 512}).softmax(); });
}
static void layernorm(benchmark::State& s) {
  run(s, 9.17, [] { return Tensor::empty({64, 768}).layernorm() * Tensor::empty({768}) + Tensor::empty({768}); });
}
static void conv2d(benchmark::State& s) {
  run(s, 4.74, [] { return Tensor::empty({1, 3, 32, 32}).conv2d(Tensor::empty({8, 3, 3, 3})); });
}
static void attention(benchmark::State& s) {
  run(s, 14.58, [] {
    Tensor q = Tensor::empty({1, 4, 64, 32}), k = Tensor::empty({1, 4, 64, 32}), v = Tensor::empty({1, 4, 64, 32});
    return (q.matmul(k.transpose(-1, -2)) * (1.0 / std::sqrt(32.0))).softmax().matmul(v);
  });
}
BENCHMARK(mlp)->Unit(benchmark::kMicrosecond);
BENCHMARK(softmax)->Unit(benchmark::kMicrosecond);
BENCHMARK(layernorm)->Unit(benchmark::kMicrosecond);
BENCHMARK(conv2d)->Unit(benchmark::kMicrosecond);
BENCHMARK(attention)->Unit(benchmark::kMicrosecond);
