// Vulkan runtime benchmarks: hand-written GLSL kernels over 16M floats (64 MiB per buffer) on VulkanDevice (lavapipe
// on the CI machine), one launch + synchronize() per iteration.
// Counters: GB/s = bytes moved per wall-clock second (copy: 1 read + 1 write; saxpy: 2 reads + 1 write, 4 B each);
// kernel_GB/s = the same bytes per second of GPU timestamp time (last_kernel_times), i.e. without submit overhead.
#include <benchmark/benchmark.h>
#include <graft/runtime/vulkan.hpp>

#include <string>
#include <vector>

using namespace graft::rt;

namespace {

constexpr int64_t kN = int64_t(16) << 20;  // 16M floats

// A kernel over `threads` invocations with device.hpp's gid layout over a (possibly 2-D) grid. texel0: binding 0 is
// `uniform samplerBuffer t0` (a uniform texel buffer of RGBA32F texels, read with texelFetch) instead of a storage buffer.
KernelSource kernel(const std::string& name, const std::string& type, const std::string& body, int64_t threads,
                    uint32_t num_buffers, uint32_t local = 256, bool texel0 = false) {
  auto g = dispatch_grid(threads, local);
  std::string src = "#version 450\nlayout(local_size_x = " + std::to_string(local) + ") in;\n";
  for (uint32_t i = 0; i < num_buffers; ++i)
    src += i == 0 && texel0 ? "layout(set = 0, binding = 0) uniform samplerBuffer t0;\n"
                            : "layout(std430, set = 0, binding = " + std::to_string(i) + ") buffer B" + std::to_string(i) +
                                  " { " + type + " d[]; } b" + std::to_string(i) + ";\n";
  src += "void main() {\n  uint gid = ((gl_WorkGroupID.z * " + std::to_string(g[1]) + "u + gl_WorkGroupID.y) * " +
         std::to_string(g[0]) + "u + gl_WorkGroupID.x) * " + std::to_string(local) +
         "u + gl_LocalInvocationID.x;\n  if (gid >= " + std::to_string(threads) + "u) return;\n" + body + "}\n";
  KernelSource k;
  k.name = name;
  k.source = src;
  k.num_buffers = num_buffers;
  k.threads = threads;
  k.local_size = local;
  return k;
}

// bytes_per_elem: bytes read + written per float element.
void run(benchmark::State& state, const KernelSource& k, double bytes_per_elem) {
  if (!VulkanDevice::available()) {
    state.SkipWithError("Vulkan not available");
    return;
  }
  auto dev = VulkanDevice::get();
  auto x = dev->alloc(kN * 4), y = dev->alloc(kN * 4);
  std::vector<float> ones(kN, 1.0f);
  x->copy_in(ones.data(), kN * 4);
  y->copy_in(ones.data(), kN * 4);
  auto prog = dev->compile(k);
  Buffer* bufs[] = {x.get(), y.get()};
  prog->launch(bufs);  // warm-up: lavapipe JITs the pipeline at its first dispatch
  dev->synchronize();
  double kernel_s = 0;
  for (auto _ : state) {
    prog->launch(bufs);
    dev->synchronize();
    for (double t : dev->last_kernel_times()) kernel_s += t;
  }
  double bytes = bytes_per_elem * double(kN);
  state.counters["GB/s"] = benchmark::Counter(bytes * double(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
  if (kernel_s > 0) state.counters["kernel_GB/s"] = bytes * double(state.iterations()) / kernel_s / 1e9;
  state.SetLabel(dev->name());
}

void BM_vulkan_copy_16M(benchmark::State& state) {
  run(state, kernel("copy", "float", "  b1.d[gid] = b0.d[gid];\n", kN, 2), 8);
}
BENCHMARK(BM_vulkan_copy_16M)->Unit(benchmark::kMillisecond)->UseRealTime();

// state.range(0): workgroup size. 256 gives 65536 groups, which dispatch_grid lays out as 65535 x 2 (65534 of them
// empty); 512 gives 32768 groups on a 1-D grid.
void BM_vulkan_saxpy_16M(benchmark::State& state) {
  auto local = uint32_t(state.range(0));
  run(state, kernel("saxpy", "float", "  b1.d[gid] = 2.0 * b0.d[gid] + b1.d[gid];\n", kN, 2, local), 12);
}
BENCHMARK(BM_vulkan_saxpy_16M)->Arg(256)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();

// One vec4 per invocation: a quarter of the invocations (lavapipe's per-invocation cost dominates the scalar case).
void BM_vulkan_saxpy_vec4_16M(benchmark::State& state) {
  run(state, kernel("saxpy4", "vec4", "  b1.d[gid] = 2.0 * b0.d[gid] + b1.d[gid];\n", kN / 4, 2), 12);
}
BENCHMARK(BM_vulkan_saxpy_vec4_16M)->Unit(benchmark::kMillisecond)->UseRealTime();

// x read through a uniform texel buffer (lavapipe: a gather instead of the per-lane loop of a storage-buffer load);
// the second variant gives each invocation 4 vec4s, grid-stride (fewer workgroups: lavapipe pays per workgroup).
void BM_vulkan_saxpy_texel_16M(benchmark::State& state) {
  if (!VulkanDevice::available() || VulkanDevice::get()->max_texel_elements() == 0) {
    state.SkipWithError("no uniform texel buffers");
    return;
  }
  int64_t per = state.range(0), inv = kN / 4 / per;
  std::string body = per == 1 ? "  b1.d[gid] = 2.0 * texelFetch(t0, int(gid)) + b1.d[gid];\n"
                              : "  for (uint k = 0u; k < " + std::to_string(per) + "u; k++) {\n    uint i = gid + k * " +
                                    std::to_string(inv) + "u;\n    b1.d[i] = 2.0 * texelFetch(t0, int(i)) + b1.d[i];\n  }\n";
  run(state, kernel("saxpy4t", "vec4", body, inv, 2, 256, true), 12);
}
BENCHMARK(BM_vulkan_saxpy_texel_16M)->Arg(1)->Arg(4)->Arg(8)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
