// graft quickstart (`./dev.sh demo`): a small model through the whole compiler.
//   1. build an MLP (784-128-10, relu, softmax) and an attention block with graft::Tensor
//   2. schedule them into kernels (rangeify2) and print the schedule
//   3. run on Vulkan (lavapipe on a machine without a GPU) and on the CPU backend (C JIT), check they agree, time them
// GRAFT_DEBUG=4 ./build/examples/quickstart also prints every kernel's generated GLSL / C.
#include <graft/graft.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>

using namespace graft;

namespace {
Tensor randn(Shape s, uint64_t seed, float scale = 1.0f) {
  std::mt19937_64 g(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(size_t(prod(s)));
  for (float& x : v) x = d(g);
  return Tensor(v, std::move(s));
}

struct Result {
  std::vector<double> values;
  double first_ms = 0, second_ms = 0, kernel_ms = 0;
  std::string device;
};

// run a schedule twice on one device: the first run compiles, the second shows the steady state
Result run_on(const std::string& device, const Tensor& t) {
  Result r;
  Schedule s = schedule({t});
  auto dev = engine::device(device);
  for (int i = 0; i < 2; i++) {
    auto t0 = std::chrono::steady_clock::now();
    engine::RunStats st;
    auto out = engine::run(s, dev, &st);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    (i == 0 ? r.first_ms : r.second_ms) = ms;
    r.kernel_ms = 0;
    for (double k : st.kernel_seconds) r.kernel_ms += k * 1e3;
    r.device = st.device;
    r.values.clear();
    for (int64_t j = 0; j < out[0]->numel; j++) r.values.push_back(out[0]->get(j));
  }
  return r;
}

void print_schedule(const char* name, const Tensor& t) {
  Schedule s = schedule({t});
  std::printf("%s: %zu kernel%s:", name, s.size(), s.size() == 1 ? "" : "s");
  for (const Kernel& k : s) std::printf(" %s", codegen::lower(k.sink()).name.c_str());
  std::printf("\n");
}

bool compare(const char* name, const Tensor& t) {
  std::vector<std::string> devices;
  if (rt::VulkanDevice::available()) devices.push_back("VULKAN");
  else std::printf("  (no Vulkan device here: running on the CPU backend only)\n");
  devices.push_back("CPU");
  std::vector<Result> rs;
  for (const std::string& d : devices) {
    rs.push_back(run_on(d, t));
    const Result& r = rs.back();
    std::printf("  %-44s first run %8.1f ms (compiles), second %7.2f ms, kernels %7.3f ms\n", r.device.c_str(), r.first_ms,
                r.second_ms, r.kernel_ms);
  }
  double worst = 0;
  for (size_t i = 0; i < rs[0].values.size(); i++)
    worst = std::max(worst, std::abs(rs[0].values[i] - rs.back().values[i]) / std::max(0.01, std::abs(rs.back().values[i])));
  std::printf("  %s: %zu outputs, backends agree to %.2g (relative; absolute below 0.01)\n", name, rs[0].values.size(), worst);
  return worst < 1e-3;
}
}  // namespace

int main() {
  try {
    // an MLP: 784 -> 128 -> relu -> 10 -> softmax, batch 8
    Tensor x = randn({8, 784}, 1), w1 = randn({784, 128}, 2, 0.05f), w2 = randn({128, 10}, 3, 0.1f);
    Tensor probs = x.matmul(w1).relu().matmul(w2).softmax();
    // an attention block: softmax(q k^T / sqrt(d)) v, 4 heads of 64 tokens x 32
    Tensor q = randn({1, 4, 64, 32}, 4), k = randn({1, 4, 64, 32}, 5), v = randn({1, 4, 64, 32}, 6);
    Tensor att = (q.matmul(k.transpose(-1, -2)) * (1.0 / std::sqrt(32.0))).softmax().matmul(v);

    print_schedule("mlp", probs);
    print_schedule("attention", att);
    bool ok = compare("mlp", probs) & compare("attention", att);

    auto p = probs.to_vector<float>();
    std::printf("first row of the MLP's softmax:");
    double sum = 0;
    for (int i = 0; i < 10; i++) std::printf(" %.3f", p[size_t(i)]), sum += p[size_t(i)];
    std::printf("  (sum %.4f)\n", sum);
    ok = ok && std::abs(sum - 1.0) < 1e-4;
    std::printf(ok ? "quickstart: OK\n" : "quickstart: MISMATCH\n");
    return ok ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "graft error: %s\n", e.what());
    return 1;
  }
}
