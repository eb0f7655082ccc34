// The device interface every backend implements (Vulkan, CPU C JIT, the reference interpreter).
//
// A kernel is compiled from a KernelSource (rendered source + launch geometry) into a Program; launching a Program
// records it into the device's current batch; synchronize() runs (Vulkan: submits the one command buffer of the
// batch, with a barrier between dispatches) and waits. The CPU device runs launches immediately.
// Threads: a kernel is a 1-D range of `threads` invocations (gid 0..threads-1); the renderer and the runtime agree
// on how gid is spread over a 3-D Vulkan grid through dispatch_grid() below.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graft/core/error.hpp"

namespace graft::codegen { struct Program; }

namespace graft::rt {

// Device memory: `nbytes` bytes, copied to and from the host.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual size_t nbytes() const = 0;
  virtual void copy_in(const void* src, size_t n) = 0;  // n <= nbytes(); waits for pending work that uses it
  virtual void copy_out(void* dst, size_t n) = 0;       // n <= nbytes(); waits for pending work that writes it
};

// What a backend compiles: the rendered source and how to launch it.
struct KernelSource {
  std::string name;        // entry point (C) / debug name (GLSL: the entry point is main)
  std::string source;      // GLSL 450 compute shader or C
  uint32_t num_buffers = 0;  // binding i / argument i = buffer slot i
  int64_t threads = 1;     // invocations, gid = 0 .. threads-1
  uint32_t local_size = 1; // Vulkan workgroup size (layout(local_size_x = local_size)); ignored by the CPU
  std::vector<uint8_t> var_bytes = {};  // per variable slot: 4 or 8 (its integer width; Vulkan packs push constants)
  std::shared_ptr<const codegen::Program> program = {};  // the linear IR it was rendered from (the interpreter runs this)
};

class Program {
 public:
  virtual ~Program() = default;
  // bufs[i] is slot i; the same Buffer may appear twice only if the kernel does not write it; vars[j] is the value
  // of variable slot j (KernelSource::var_bytes), checked against the kernel's count
  virtual void launch(std::span<Buffer* const> bufs, std::span<const int64_t> vars) = 0;
  void launch(std::span<Buffer* const> bufs) { launch(bufs, {}); }
};

// Push-constant layout of a kernel's variables (GLSL renderer and Vulkan runtime agree through this): each value at
// the next offset aligned to its width; `size` is the whole block, a multiple of 4 as Vulkan requires.
struct VarLayout {
  std::vector<uint32_t> offsets;
  uint32_t size = 0;
};
inline VarLayout var_layout(std::span<const uint8_t> var_bytes) {
  VarLayout l;
  uint32_t at = 0;
  for (uint8_t b : var_bytes) {
    if (b != 4 && b != 8) throw Error("variable of " + std::to_string(b) + " bytes (variables are 32- or 64-bit integers)");
    at = (at + b - 1) / b * b;
    l.offsets.push_back(at);
    at += b;
  }
  l.size = (at + 3) / 4 * 4;
  return l;
}

inline void check_var_count(const std::string& kernel, size_t want, size_t got) {
  if (want != got)
    throw Error("kernel '" + kernel + "' takes " + std::to_string(want) + " variable value" + (want == 1 ? "" : "s") +
                ", got " + std::to_string(got));
}

struct DeviceFeatures {
  bool int64 = true, float64 = true, float16 = true, int8_storage = true, int16 = true;
  uint32_t max_local_size = 1024;
  uint64_t max_buffer_bytes = UINT64_MAX;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;  // "VULKAN:<gpu name>", "CPU", "INTERP"
  virtual const DeviceFeatures& features() const = 0;
  virtual std::unique_ptr<Buffer> alloc(size_t nbytes) = 0;
  virtual std::unique_ptr<Program> compile(const KernelSource& k) = 0;
  virtual void synchronize() = 0;
  // seconds the kernels of the last synchronized batch took on the device (timestamps), in launch order; may be empty
  virtual std::vector<double> last_kernel_times() const { return {}; }
};

// How a 1-D range of `threads` invocations is laid out on a Vulkan grid of workgroups of `local` invocations:
// groups = ceil(threads / local) spread over x, y, z with at most 65535 per dimension. The shader computes
//   gid = ((wg.z * grid[1] + wg.y) * grid[0] + wg.x) * local + lid.x   and returns when gid >= threads.
inline std::array<uint32_t, 3> dispatch_grid(int64_t threads, uint32_t local) {
  constexpr uint64_t kMax = 65535;
  uint64_t groups = (uint64_t(threads) + local - 1) / local;
  if (groups == 0) groups = 1;
  if (groups > kMax * kMax * kMax) throw Error("dispatch: " + std::to_string(threads) + " threads exceed the Vulkan grid");
  // balanced: the fewest rows of at most 65535 groups, each row as short as possible (no idle groups beyond one row)
  uint64_t rows = (groups + kMax - 1) / kMax;
  uint64_t x = (groups + rows - 1) / rows;
  uint64_t planes = (rows + kMax - 1) / kMax;
  uint64_t y = (rows + planes - 1) / planes;
  uint64_t z = planes;
  return {uint32_t(x), uint32_t(y), uint32_t(z)};
}

}  // namespace graft::rt
