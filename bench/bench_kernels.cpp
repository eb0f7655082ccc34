// Kernel throughput of whole scheduled programs on the CPU backend (C JIT) and on Vulkan (lavapipe here).
// Time = the devices' own kernel times (Vulkan timestamps, CPU wall time per launch), summed over the schedule's
// kernels, via manual timing: compilation (cached after the warm-up run), copies in and out and host-side lowering
// are not counted. Counters: GB/s of the minimal traffic (inputs read once, output written once) or GFLOP/s.
#include <benchmark/benchmark.h>

#include <random>

#include <graft/graft.hpp>

using namespace graft;

namespace {
Tensor data(Shape s, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(size_t(prod(s)));
  for (float& x : v) x = d(g);
  return Tensor(v, std::move(s));
}

void run(benchmark::State& state, const std::string& device, const Tensor& out, double bytes, double flops) {
  std::shared_ptr<rt::Device> dev;
  try {
    dev = engine::device(device);
  } catch (const Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  Schedule s = schedule({out});
  engine::RunStats st;
  engine::run(s, dev, &st);  // warm-up: compiles every kernel
  for (auto _ : state) {
    engine::run(s, dev, &st);
    double t = 0;
    for (double k : st.kernel_seconds) t += k;
    state.SetIterationTime(t);
  }
  state.counters["kernels"] = double(s.size());
  if (bytes > 0) state.counters["GB/s"] = benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  if (flops > 0) state.counters["GFLOP/s"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(st.device);
}

void elementwise(benchmark::State& state, const std::string& dev) {
  int64_t n = int64_t(1) << 24;  // 16M floats, 64 MiB per array
  Tensor a = data({n}, 1), b = data({n}, 2);
  run(state, dev, a + b, 3.0 * 4 * double(n), 0);
}
void reduction(benchmark::State& state, const std::string& dev) {
  Tensor a = data({4096, 4096}, 3);  // row sums: 64 MiB read
  run(state, dev, a.sum(1), 4.0 * 4096 * 4096 + 4.0 * 4096, 0);
}
void softmax(benchmark::State& state, const std::string& dev) {
  Tensor a = data({4096, 1024}, 4);
  run(state, dev, a.softmax(), 2.0 * 4 * 4096 * 1024, 0);
}
void matmul(benchmark::State& state, const std::string& dev) {
  Tensor a = data({512, 512}, 5), b = data({512, 512}, 6);
  run(state, dev, a.matmul(b), 0, 2.0 * 512 * 512 * 512);
}
void attention(benchmark::State& state, const std::string& dev) {
  Tensor q = data({1, 4, 64, 32}, 7), k = data({1, 4, 64, 32}, 8), v = data({1, 4, 64, 32}, 9);
  Tensor att = (q.matmul(k.transpose(-1, -2)) * (1.0 / std::sqrt(32.0))).softmax().matmul(v);
  run(state, dev, att, 0, 2.0 * 2 * 4 * 64 * 64 * 32);
}
}  // namespace

#define GRAFT_KERNEL_BENCH(fn)                                                                          \
  BENCHMARK_CAPTURE(fn, cpu, std::string("CPU"))->UseManualTime()->Iterations(5)->Unit(benchmark::kMillisecond); \
  BENCHMARK_CAPTURE(fn, vulkan, std::string("VULKAN"))->UseManualTime()->Iterations(5)->Unit(benchmark::kMillisecond);
GRAFT_KERNEL_BENCH(elementwise)
GRAFT_KERNEL_BENCH(reduction)
GRAFT_KERNEL_BENCH(softmax)
GRAFT_KERNEL_BENCH(matmul)
GRAFT_KERNEL_BENCH(attention)
