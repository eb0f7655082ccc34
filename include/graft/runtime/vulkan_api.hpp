// The Vulkan API as graft uses it: libvulkan.so.1 opened with dlopen (never linked, so programs start on machines
// without it), every entry point fetched through vkGetInstanceProcAddr / vkGetDeviceProcAddr into a table, and
// VkResult checking that throws graft::Error naming the call.
#pragma once
#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES  // <vulkan/vulkan.h> for types only; no symbol may bind to a linked libvulkan
#endif
#include <dlfcn.h>
#include <link.h>
#include <vulkan/vulkan.h>

#include <algorithm>
#include <string>
#include <vector>

#include "graft/core/error.hpp"

namespace graft::rt::vk {

inline const char* result_name(VkResult r) {
  switch (r) {
#define GRAFT_VK_RESULT(x) \
  case x: return #x;
    GRAFT_VK_RESULT(VK_SUCCESS) GRAFT_VK_RESULT(VK_NOT_READY) GRAFT_VK_RESULT(VK_TIMEOUT)
    GRAFT_VK_RESULT(VK_EVENT_SET) GRAFT_VK_RESULT(VK_EVENT_RESET) GRAFT_VK_RESULT(VK_INCOMPLETE)
    GRAFT_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY) GRAFT_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    GRAFT_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED) GRAFT_VK_RESULT(VK_ERROR_DEVICE_LOST)
    GRAFT_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED) GRAFT_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    GRAFT_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT) GRAFT_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    GRAFT_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER) GRAFT_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    GRAFT_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED) GRAFT_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    GRAFT_VK_RESULT(VK_ERROR_UNKNOWN) GRAFT_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    GRAFT_VK_RESULT(VK_ERROR_FRAGMENTATION) GRAFT_VK_RESULT(VK_ERROR_INVALID_SHADER_NV)
    GRAFT_VK_RESULT(VK_ERROR_VALIDATION_FAILED_EXT)
#undef GRAFT_VK_RESULT
    default: return "VkResult(unknown)";
  }
}

// A zeroed Vulkan info struct with its sType set.
template <class T>
T make(VkStructureType type) {
  T t{};
  t.sType = type;
  return t;
}

inline void check(VkResult r, const char* call) {
  if (r != VK_SUCCESS)
    throw Error(std::string("Vulkan: ") + call + " failed: " + result_name(r) + " (" + std::to_string(int(r)) + ")");
}

// Paths of the shared objects loaded in the process now.
inline std::vector<std::string> loaded_objects() {
  std::vector<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (info->dlpi_name && *info->dlpi_name) static_cast<std::vector<std::string>*>(out)->push_back(info->dlpi_name);
        return 0;
      },
      &names);
  return names;
}

// Keep the libraries that appeared since `before` (the drivers vkCreateInstance loaded) for the rest of the process.
// The loader unloads drivers at vkDestroyInstance; Mesa/LLVM do not unload cleanly (allocations held by their
// globals turn into leaks, atexit handlers of unmapped code), and reloading costs time at the next instance.
inline void pin_new_objects(const std::vector<std::string>& before) {
  for (auto& name : loaded_objects())
    if (std::find(before.begin(), before.end(), name) == before.end())
      dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);  // not dlclose'd on purpose
}

// Entry points, grouped by how they are loaded.
#define GRAFT_VK_GLOBAL_FNS(X) X(vkCreateInstance) X(vkEnumerateInstanceVersion)
#define GRAFT_VK_INSTANCE_FNS(X)                                                                                      \
  X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)                                 \
  X(vkGetPhysicalDeviceFeatures2) X(vkGetPhysicalDeviceQueueFamilyProperties)          \
  X(vkGetPhysicalDeviceMemoryProperties) X(vkEnumerateDeviceExtensionProperties) X(vkCreateDevice)                    \
  X(vkGetDeviceProcAddr) X(vkGetPhysicalDeviceFormatProperties)
#define GRAFT_VK_DEVICE_FNS(X)                                                                                        \
  X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkDeviceWaitIdle) X(vkQueueSubmit) X(vkCreateBuffer) X(vkDestroyBuffer)    \
  X(vkGetBufferMemoryRequirements) X(vkAllocateMemory) X(vkFreeMemory) X(vkBindBufferMemory) X(vkMapMemory)           \
  X(vkUnmapMemory) X(vkCreateShaderModule) X(vkDestroyShaderModule) X(vkCreateDescriptorSetLayout)                    \
  X(vkDestroyDescriptorSetLayout) X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout) X(vkCreatePipelineCache)       \
  X(vkDestroyPipelineCache) X(vkCreateComputePipelines) X(vkDestroyPipeline) X(vkCreateDescriptorPool)                \
  X(vkDestroyDescriptorPool) X(vkResetDescriptorPool) X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets)           \
  X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkResetCommandPool) X(vkAllocateCommandBuffers)                    \
  X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) X(vkCmdDispatch)      \
  X(vkCmdPushConstants) X(vkCmdPipelineBarrier) X(vkCmdWriteTimestamp) X(vkCmdResetQueryPool) X(vkCmdCopyBuffer)      \
  X(vkCreateQueryPool)                                                                                                \
  X(vkDestroyQueryPool) X(vkGetQueryPoolResults) X(vkCreateFence) X(vkDestroyFence) X(vkWaitForFences)                \
  X(vkResetFences) X(vkCreateBufferView) X(vkDestroyBufferView)

// libvulkan.so.1, opened and closed with the object; load_* fill the function pointers.
struct Api {
  void* lib = nullptr;
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
#define GRAFT_VK_DECLARE(f) PFN_##f f = nullptr;
  GRAFT_VK_GLOBAL_FNS(GRAFT_VK_DECLARE)
  GRAFT_VK_INSTANCE_FNS(GRAFT_VK_DECLARE)
  GRAFT_VK_DEVICE_FNS(GRAFT_VK_DECLARE)
#undef GRAFT_VK_DECLARE

  explicit Api(const std::string& library) {
    lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = dlerror();
      throw Error("Vulkan: " + library + " not found" + (why ? std::string(" (") + why + ")" : std::string()));
    }
    vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
    if (!vkGetInstanceProcAddr) {
      dlclose(lib);
      throw Error("Vulkan: " + library + " has no vkGetInstanceProcAddr");
    }
#define GRAFT_VK_LOAD(f) f = reinterpret_cast<PFN_##f>(vkGetInstanceProcAddr(nullptr, #f));
    GRAFT_VK_GLOBAL_FNS(GRAFT_VK_LOAD)
#undef GRAFT_VK_LOAD
    if (!vkCreateInstance) {
      dlclose(lib);
      throw Error("Vulkan: " + library + " does not provide vkCreateInstance");
    }
  }
  ~Api() {
    if (lib) dlclose(lib);
  }
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  void load_instance(VkInstance inst) {
#define GRAFT_VK_LOAD(f)                                                                   \
  f = reinterpret_cast<PFN_##f>(vkGetInstanceProcAddr(inst, #f));                          \
  if (!f) throw Error("Vulkan: the loader does not provide " #f " (Vulkan 1.1 required)");
    GRAFT_VK_INSTANCE_FNS(GRAFT_VK_LOAD)
#undef GRAFT_VK_LOAD
  }
  void load_device(VkDevice dev) {
#define GRAFT_VK_LOAD(f)                                          \
  f = reinterpret_cast<PFN_##f>(vkGetDeviceProcAddr(dev, #f));    \
  if (!f) throw Error("Vulkan: the device does not provide " #f);
    GRAFT_VK_DEVICE_FNS(GRAFT_VK_LOAD)
#undef GRAFT_VK_LOAD
  }
};

}  // namespace graft::rt::vk
