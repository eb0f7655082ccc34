// Smallest program using an installed graft: proves the include path, the
// C++20 flag and the link flags reach a consumer (the shaderc recipe: one GLSL
// compile; libvulkan is dlopen'ed, so the probe works without linking it).
// Otherwise deliberately independent of the (still moving) API.
#include <graft/graft.hpp>
#include <graft/runtime/spirv.hpp>
#include <graft/runtime/vulkan.hpp>

#include <cstdio>

static_assert(__cplusplus >= 202002L, "graft::graft must request C++20");

int main() {
  graft::rt::SpirvCompiler compiler{std::filesystem::path{}};  // no disk cache
  auto words = compiler.compile("downstream", "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n");
  std::printf("graft downstream consumer: OK (SPIR-V %zu words, Vulkan %s)\n", words.size(),
              graft::rt::VulkanDevice::available() ? "available" : "not available");
  return words.empty() ? 1 : 0;
}
