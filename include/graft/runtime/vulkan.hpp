// VulkanDevice: the Device interface (device.hpp) on Vulkan 1.1 compute, loaded with dlopen (vulkan_api.hpp).
//
// Shape of the backend:
//  - one VkDevice, one compute queue, one command buffer that collects a *batch* of launches; synchronize() submits
//    it with a fence, waits, reads the timestamps and resets the command/descriptor/query pools for the next batch;
//  - every dispatch is followed by a compute->compute memory barrier, so launches in a batch see each other's writes;
//  - bindings are storage buffers, or uniform texel buffers (RGBA32 views, made once per buffer) where the SPIR-V
//    declares a samplerBuffer (spirv_bindings); the GLSL renderer reads read-only buffers that way;
//  - buffers are persistently mapped device memory when the device shares memory with the host (lavapipe,
//    integrated GPUs); otherwise device-local memory, copied through a staging buffer;
//  - Buffer and Program hold a shared_ptr to the internal Context, so they may outlive the VulkanDevice object;
//    a batch holds references to the pipelines and buffers it uses, so destroying them before synchronize() is safe.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "graft/runtime/device.hpp"
#include "graft/runtime/spirv.hpp"
#include "graft/runtime/vulkan_api.hpp"

namespace graft::rt {

namespace vk {

struct Options {
  std::string library = "libvulkan.so.1";
  int device_index = -1;          // index into vkEnumeratePhysicalDevices; -1: $GRAFT_VULKAN_DEVICE, else best type
  bool force_staging = false;     // use device-local memory + staging copies even where mapped memory would do
  // allow uniform texel buffers (read-only bindings a shader declares as samplerBuffer; see spirv_bindings);
  // $GRAFT_VULKAN_TEXEL_BUFFERS=0 turns them off too (then max_texel_elements() is 0 and the renderer keeps SSBOs)
  bool texel_buffers = true;
  SpirvCompiler* spirv = nullptr;  // GLSL compiler and cache (must outlive the device); nullptr: shared()
};

class Context;

// A VkBuffer and its memory. Destroyed by whoever drops the last reference (the Buffer, or a batch using it).
struct BufferObj {
  Context* ctx;  // raw: the owner (VulkanBuffer or the Context's batch) keeps the Context alive longer than this
  VkBuffer buf = VK_NULL_HANDLE;
  VkDeviceMemory mem = VK_NULL_HANDLE;
  void* mapped = nullptr;  // non-null when host-visible
  VkDeviceSize size = 0;   // allocated bytes (a multiple of 16, >= 16)
  VkBufferView views[3] = {};  // RGBA32 texel views (SFLOAT, SINT, UINT), made at first use; guarded by Context::mu
  explicit BufferObj(Context* c) : ctx(c) {}
  ~BufferObj();
};

// A compute pipeline with its layouts (same lifetime rule as BufferObj).
struct PipelineObj {
  Context* ctx;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  std::vector<int> texel;  // per binding: -1 storage buffer, else the RGBA32 view (index into BufferObj::views)
  explicit PipelineObj(Context* c) : ctx(c) {}
  ~PipelineObj();
};

// Descriptor kinds of bindings 0..n-1 (set 0) read from SPIR-V: -1 for a storage buffer, v >= 0 for a uniform texel
// buffer (`uniform samplerBuffer` / `isamplerBuffer` / `usamplerBuffer`) whose texels are RGBA32 of component type
// v (0 float, 1 int, 2 uint), i.e. texelFetch(b, i) reads elements 4i..4i+3. lavapipe compiles every storage-buffer
// access to a loop over the SIMD lanes with a bounds check per lane and component, but a texel fetch to a gather
// (bench/README.md section 4), so the GLSL renderer reads read-only buffers through texel buffers.
inline std::vector<int> spirv_bindings(const std::vector<uint32_t>& w, uint32_t n) {
  std::vector<int> kind(n, -1);
  std::unordered_map<uint32_t, uint32_t> binding, var_type, ptr_to, sampled_image, image_component, scalar_kind;
  std::unordered_map<uint32_t, uint32_t> image_dim, image_sampled;
  std::vector<uint32_t> vars;
  for (size_t i = 5; i < w.size();) {
    uint32_t len = w[i] >> 16, op = w[i] & 0xffff;
    if (len == 0 || i + len > w.size()) throw Error("Vulkan: malformed SPIR-V");
    const uint32_t* a = &w[i + 1];
    switch (op) {
      case 71: if (len >= 4 && a[1] == 33) binding[a[0]] = a[2]; break;                        // OpDecorate Binding
      case 59: if (len >= 4 && a[2] == 0) var_type[a[1]] = a[0], vars.push_back(a[1]); break;  // OpVariable UniformConstant
      case 32: if (len >= 4) ptr_to[a[0]] = a[2]; break;                                        // OpTypePointer
      case 27: if (len >= 3) sampled_image[a[0]] = a[1]; break;                                 // OpTypeSampledImage
      case 25: if (len >= 9) image_component[a[0]] = a[1], image_dim[a[0]] = a[2], image_sampled[a[0]] = a[6]; break;
      case 22: scalar_kind[a[0]] = 0; break;                                                    // OpTypeFloat
      case 21: if (len >= 4) scalar_kind[a[0]] = a[2] ? 1 : 2; break;                           // OpTypeInt
      default: break;
    }
    i += len;
  }
  for (uint32_t v : vars) {
    auto b = binding.find(v);
    if (b == binding.end() || b->second >= n) continue;
    uint32_t t = ptr_to.count(var_type[v]) ? ptr_to[var_type[v]] : 0;
    bool sampled = sampled_image.count(t);
    uint32_t img = sampled ? sampled_image[t] : t;
    if (!image_dim.count(img)) continue;
    if (image_dim[img] != 5 || !sampled)  // 5: Dim Buffer
      throw Error("Vulkan: binding " + std::to_string(b->second) + " is an image or storage texel buffer (only storage "
                  "buffers and uniform texel buffers are supported)");
    kind[b->second] = int(scalar_kind.count(image_component[img]) ? scalar_kind[image_component[img]] : 0);
  }
  return kind;
}

inline constexpr VkFormat kTexelFormats[3] = {VK_FORMAT_R32G32B32A32_SFLOAT, VK_FORMAT_R32G32B32A32_SINT,
                                              VK_FORMAT_R32G32B32A32_UINT};

class Context {
 public:
  Api api;
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties mem_props{};
  uint32_t queue_family = 0;
  uint32_t timestamp_bits = 0;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  DeviceFeatures features;
  std::string name;
  bool host_mapped = false;  // buffers live in DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT memory
  uint64_t max_texels = 0;   // maxTexelBufferElements when uniform texel buffers of kTexelFormats are usable, else 0
  SpirvCompiler* spirv = nullptr;

  // probe_only: stop after picking the physical device (VulkanDevice::available()).
  Context(const Options& o, bool probe_only) : api(o.library) {
    try {
      create_instance();
      pick_device(o.device_index);
      if (probe_only) return;
      create_device();
      probe_texel_buffers(o);
      host_mapped = !o.force_staging && props.deviceType != VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU &&
                    find_memory_type(~0u, kMapped) >= 0;
      spirv = o.spirv ? o.spirv : &SpirvCompiler::shared();
      create_batch_objects();
    } catch (...) {
      destroy();
      throw;
    }
  }
  ~Context() { destroy(); }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // ---- memory --------------------------------------------------------------------------------------------------
  static constexpr VkMemoryPropertyFlags kMapped = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                                   VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                   VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  static constexpr VkMemoryPropertyFlags kHost = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

  int find_memory_type(uint32_t type_bits, VkMemoryPropertyFlags want) const {
    for (uint32_t i = 0; i < mem_props.memoryTypeCount; ++i)
      if ((type_bits & (1u << i)) && (mem_props.memoryTypes[i].propertyFlags & want) == want) return int(i);
    return -1;
  }

  // Buffer with memory of the first type that has all `want` flags (mapped if host-visible).
  std::shared_ptr<BufferObj> make_buffer(VkDeviceSize nbytes, VkMemoryPropertyFlags want) {
    auto b = std::make_shared<BufferObj>(this);
    // zero-size buffers are invalid; whole 16-byte texels so an RGBA32 view covers every byte
    b->size = std::max<VkDeviceSize>(16, (nbytes + 15) & ~VkDeviceSize(15));
    auto bi = make<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
    bi.size = b->size;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT | (max_texels ? VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT : 0);
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(api.vkCreateBuffer(device, &bi, nullptr, &b->buf), "vkCreateBuffer");
    VkMemoryRequirements req;
    api.vkGetBufferMemoryRequirements(device, b->buf, &req);
    int type = find_memory_type(req.memoryTypeBits, want);
    if (type < 0) throw Error("Vulkan: no memory type with the required properties for a buffer on " + name);
    auto ai = make<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = uint32_t(type);
    VkResult r = api.vkAllocateMemory(device, &ai, nullptr, &b->mem);
    if (r != VK_SUCCESS)
      throw Error("Vulkan: vkAllocateMemory of " + std::to_string(req.size) + " bytes failed: " + result_name(r));
    check(api.vkBindBufferMemory(device, b->buf, b->mem, 0), "vkBindBufferMemory");
    if (mem_props.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
      check(api.vkMapMemory(device, b->mem, 0, VK_WHOLE_SIZE, 0, &b->mapped), "vkMapMemory");
    return b;
  }

  // The RGBA32 texel view of component kind k (spirv_bindings) over the whole buffer, up to max_texels texels; with
  // mu held. Views live as long as the buffer.
  VkBufferView texel_view(BufferObj& b, int k) {
    if (!b.views[k]) {
      if (!max_texels) throw Error("Vulkan: a kernel reads a uniform texel buffer, which " + name + " does not support");
      auto vi = make<VkBufferViewCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO);
      vi.buffer = b.buf;
      vi.format = kTexelFormats[k];
      vi.offset = 0;
      vi.range = std::min<VkDeviceSize>(b.size / 16, max_texels) * 16;
      check(api.vkCreateBufferView(device, &vi, nullptr, &b.views[k]), "vkCreateBufferView");
    }
    return b.views[k];
  }

  // Staging copy (device-local buffers): buffer <-> staging in a one-off submit. Called with mu held, batch empty.
  void staged_copy(BufferObj& dev, size_t n, const void* in, void* out) {
    if (!staging || staging->size < n) {
      staging.reset();
      staging = make_buffer(n, kHost);
    }
    if (in) std::memcpy(staging->mapped, in, n);
    auto begin = make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(api.vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
    // Earlier batches' shader writes must be done before the copy touches the buffer.
    barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    VkBufferCopy region{0, 0, n};
    if (in)
      api.vkCmdCopyBuffer(cmd, staging->buf, dev.buf, 1, &region);
    else
      api.vkCmdCopyBuffer(cmd, dev.buf, staging->buf, 1, &region);
    barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT);
    submit_and_wait();
    if (out) std::memcpy(out, staging->mapped, n);
  }

  // ---- batch recording (all with mu held) -------------------------------------------------------------------------
  std::mutex mu;
  bool recording = false;
  uint32_t launches = 0;
  std::vector<std::shared_ptr<PipelineObj>> batch_pipelines;  // keep alive until the batch has run
  std::vector<std::shared_ptr<BufferObj>> batch_buffers;
  std::vector<double> kernel_times;

  void begin_batch() {
    if (recording) return;
    auto begin = make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(api.vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
    recording = true;
    launches = 0;
    queries_used = 0;
    query_pools_reset = 0;
    desc_pool_current = 0;
  }

  void barrier(VkPipelineStageFlags src_stage, VkAccessFlags src, VkPipelineStageFlags dst_stage, VkAccessFlags dst) {
    auto mb = make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
    mb.srcAccessMask = src;
    mb.dstAccessMask = dst;
    api.vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &mb, 0, nullptr, 0, nullptr);
  }

  // A descriptor set for `layout` with n storage buffers. Pools are never freed one set at a time: the whole list
  // is reset at synchronize(), and a new pool is added when the current ones are full.
  VkDescriptorSet alloc_descriptor_set(VkDescriptorSetLayout layout, uint32_t n) {
    while (desc_pool_current < desc_pools.size()) {
      auto& p = desc_pools[desc_pool_current];
      if (p.sets_left >= 1 && p.descs_left >= n) break;
      ++desc_pool_current;
    }
    if (desc_pool_current == desc_pools.size()) desc_pools.push_back(make_descriptor_pool(std::max(kPoolDescs, n)));
    auto& p = desc_pools[desc_pool_current];
    auto ai = make<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
    ai.descriptorPool = p.pool;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &layout;
    VkDescriptorSet set;
    check(api.vkAllocateDescriptorSets(device, &ai, &set), "vkAllocateDescriptorSets");
    p.sets_left -= 1;
    p.descs_left -= n;
    return set;
  }

  // Index of the next timestamp query as (pool, query). Pools fill in order; each is reset by its first use in a
  // batch; when all are full, a new one as large as all the others together is added.
  std::pair<VkQueryPool, uint32_t> next_query() {
    uint32_t q = queries_used++, base = 0;
    for (size_t i = 0;; ++i) {
      if (i == query_pools.size()) {
        uint32_t total = 0;
        for (auto& p : query_pools) total += p.capacity;
        query_pools.push_back(make_query_pool(std::max(kPoolQueries, total)));
      }
      auto& p = query_pools[i];
      if (q < base + p.capacity) {
        if (i >= query_pools_reset) {
          api.vkCmdResetQueryPool(cmd, p.pool, 0, p.capacity);
          query_pools_reset = uint32_t(i + 1);
        }
        return {p.pool, q - base};
      }
      base += p.capacity;
    }
  }

  void submit_and_wait() {
    check(api.vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
    auto si = make<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    check(api.vkQueueSubmit(queue, 1, &si, fence), "vkQueueSubmit");
    check(api.vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    check(api.vkResetFences(device, 1, &fence), "vkResetFences");
    check(api.vkResetCommandPool(device, cmd_pool, 0), "vkResetCommandPool");
  }

  void synchronize_locked() {
    if (!recording) return;
    // Make the batch's writes visible to the host (mapped reads) and to later transfers (staging copies).
    barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT);
    recording = false;
    submit_and_wait();
    read_kernel_times();
    batch_pipelines.clear();
    batch_buffers.clear();
    for (auto& p : desc_pools) {
      check(api.vkResetDescriptorPool(device, p.pool, 0), "vkResetDescriptorPool");
      p.sets_left = kPoolSets;
      p.descs_left = p.capacity;
    }
    // The batch outgrew the first query pool: replace the list by one pool that fits such a batch.
    if (query_pools.size() > 1) {
      uint32_t total = 0;
      for (auto& p : query_pools) {
        total += p.capacity;
        api.vkDestroyQueryPool(device, p.pool, nullptr);
      }
      query_pools.clear();
      query_pools.push_back(make_query_pool(total));
    }
  }

 private:
  static constexpr uint32_t kPoolSets = 256, kPoolDescs = 2048, kPoolQueries = 256;
  struct DescPool {
    VkDescriptorPool pool;
    uint32_t capacity, sets_left, descs_left;
  };
  struct QueryPool {
    VkQueryPool pool;
    uint32_t capacity;
  };
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  VkCommandPool cmd_pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  std::vector<DescPool> desc_pools;
  size_t desc_pool_current = 0;
  std::vector<QueryPool> query_pools;
  uint32_t queries_used = 0, query_pools_reset = 0;
  std::shared_ptr<BufferObj> staging;

 public:
  VkPipelineCache pipeline_cache() const { return pipeline_cache_; }
  VkCommandBuffer command_buffer() const { return cmd; }

 private:
  void create_instance() {
    uint32_t version = VK_API_VERSION_1_0;
    if (api.vkEnumerateInstanceVersion) api.vkEnumerateInstanceVersion(&version);
    if (version < VK_API_VERSION_1_1) throw Error("Vulkan: the loader supports only Vulkan 1.0 (1.1 required)");
    auto app = make<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
    app.pApplicationName = "graft";
    app.pEngineName = "graft";
    app.apiVersion = VK_API_VERSION_1_1;
    auto ci = make<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
    ci.pApplicationInfo = &app;
    auto before = loaded_objects();
    VkResult r = api.vkCreateInstance(&ci, nullptr, &instance);
    pin_new_objects(before);
    if (r != VK_SUCCESS) {
      instance = VK_NULL_HANDLE;
      throw Error(std::string("Vulkan: no instance (vkCreateInstance failed: ") + result_name(r) +
                  "; is a Vulkan driver installed, e.g. mesa-vulkan-drivers?)");
    }
    api.load_instance(instance);
  }

  static int type_rank(VkPhysicalDeviceType t) {
    switch (t) {
      case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
      case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
      case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
      case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
      default: return 4;
    }
  }

  // First queue family with compute, or -1.
  int compute_family(VkPhysicalDevice pd, uint32_t* ts_bits) const {
    uint32_t n = 0;
    api.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
    std::vector<VkQueueFamilyProperties> fams(n);
    api.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, fams.data());
    for (uint32_t i = 0; i < n; ++i)
      if ((fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && fams[i].queueCount > 0) {
        if (ts_bits) *ts_bits = fams[i].timestampValidBits;
        return int(i);
      }
    return -1;
  }

  void pick_device(int index) {
    uint32_t n = 0;
    VkResult r = api.vkEnumeratePhysicalDevices(instance, &n, nullptr);
    if (r != VK_SUCCESS || n == 0)
      throw Error(std::string("Vulkan: no physical device (vkEnumeratePhysicalDevices: ") + result_name(r) +
                  ", count " + std::to_string(n) + ")");
    std::vector<VkPhysicalDevice> devs(n);
    check(api.vkEnumeratePhysicalDevices(instance, &n, devs.data()), "vkEnumeratePhysicalDevices");
    devs.resize(n);
    std::string listing;
    auto usable = [&](uint32_t i, VkPhysicalDeviceProperties& p) {
      api.vkGetPhysicalDeviceProperties(devs[i], &p);
      listing += "\n  " + std::to_string(i) + ": " + p.deviceName;
      return p.apiVersion >= VK_API_VERSION_1_1 && compute_family(devs[i], nullptr) >= 0;
    };
    if (index < 0) {
      if (const char* env = std::getenv("GRAFT_VULKAN_DEVICE"); env && *env) {
        char* end = nullptr;
        long v = std::strtol(env, &end, 10);
        if (*end || v < 0) throw Error(std::string("Vulkan: GRAFT_VULKAN_DEVICE='") + env + "' is not an index");
        index = int(v);
      }
    }
    int best = -1, best_rank = 99;
    for (uint32_t i = 0; i < n; ++i) {
      VkPhysicalDeviceProperties p;
      bool ok = usable(i, p);
      if (index >= 0) {
        if (int(i) == index && ok) best = int(i);
      } else if (ok && type_rank(p.deviceType) < best_rank) {
        best = int(i);
        best_rank = type_rank(p.deviceType);
      }
    }
    if (index >= 0 && best < 0)
      throw Error("Vulkan: device " + std::to_string(index) +
                  (index >= int(n) ? " does not exist" : " has no Vulkan 1.1 compute queue") + "; devices:" + listing);
    if (best < 0) throw Error("Vulkan: no device with Vulkan 1.1 and a compute queue; devices:" + listing);
    phys = devs[best];
    api.vkGetPhysicalDeviceProperties(phys, &props);
    api.vkGetPhysicalDeviceMemoryProperties(phys, &mem_props);
    queue_family = uint32_t(compute_family(phys, &timestamp_bits));
    name = std::string("VULKAN:") + props.deviceName;
  }

  void create_device() {
    uint32_t n = 0;
    check(api.vkEnumerateDeviceExtensionProperties(phys, nullptr, &n, nullptr), "vkEnumerateDeviceExtensionProperties");
    std::vector<VkExtensionProperties> exts(n);
    check(api.vkEnumerateDeviceExtensionProperties(phys, nullptr, &n, exts.data()),
          "vkEnumerateDeviceExtensionProperties");
    auto has = [&](const char* e) {
      return std::any_of(exts.begin(), exts.end(), [&](auto& x) { return std::strcmp(x.extensionName, e) == 0; });
    };
    // Query: 16-bit storage is core in 1.1; 8-bit storage and float16/int8 arithmetic are extensions in 1.1.
    auto f2 = make<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
    auto s16 = make<VkPhysicalDevice16BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
    auto s8 = make<VkPhysicalDevice8BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES);
    auto f16 = make<VkPhysicalDeviceShaderFloat16Int8Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
    std::vector<const char*> enable_exts;
    void** tail = &f2.pNext;
    auto chain = [&](auto& s) { *tail = &s; tail = &s.pNext; };
    chain(s16);
    if (has(VK_KHR_8BIT_STORAGE_EXTENSION_NAME)) chain(s8), enable_exts.push_back(VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
    if (has(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME))
      chain(f16), enable_exts.push_back(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    api.vkGetPhysicalDeviceFeatures2(phys, &f2);

    // Enable exactly what graft uses, and only where present (asking for a missing feature fails device creation).
    VkPhysicalDeviceFeatures2 on = f2;
    on.features = VkPhysicalDeviceFeatures{};
    on.features.shaderInt64 = f2.features.shaderInt64;
    on.features.shaderFloat64 = f2.features.shaderFloat64;
    on.features.shaderInt16 = f2.features.shaderInt16;
    auto on16 = make<VkPhysicalDevice16BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
    on16.storageBuffer16BitAccess = s16.storageBuffer16BitAccess;
    auto on8 = make<VkPhysicalDevice8BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES);
    on8.storageBuffer8BitAccess = s8.storageBuffer8BitAccess;
    auto onf16 = make<VkPhysicalDeviceShaderFloat16Int8Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
    onf16.shaderFloat16 = f16.shaderFloat16;
    onf16.shaderInt8 = f16.shaderInt8;
    on.pNext = nullptr;
    tail = &on.pNext;
    chain(on16);
    if (has(VK_KHR_8BIT_STORAGE_EXTENSION_NAME)) chain(on8);  // the same optional structs as the query
    if (has(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME)) chain(onf16);

    features.int64 = f2.features.shaderInt64;
    features.float64 = f2.features.shaderFloat64;
    features.float16 = f16.shaderFloat16 && s16.storageBuffer16BitAccess;
    features.int8_storage = s8.storageBuffer8BitAccess;
    features.max_local_size =
        std::min(props.limits.maxComputeWorkGroupInvocations, props.limits.maxComputeWorkGroupSize[0]);
    features.max_buffer_bytes = props.limits.maxStorageBufferRange;

    float priority = 1.0f;
    auto qi = make<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
    qi.queueFamilyIndex = queue_family;
    qi.queueCount = 1;
    qi.pQueuePriorities = &priority;
    auto di = make<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
    di.pNext = &on;
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos = &qi;
    di.enabledExtensionCount = uint32_t(enable_exts.size());
    di.ppEnabledExtensionNames = enable_exts.data();
    VkResult r = api.vkCreateDevice(phys, &di, nullptr, &device);
    if (r != VK_SUCCESS) {
      device = VK_NULL_HANDLE;
      throw Error(std::string("Vulkan: vkCreateDevice failed on ") + props.deviceName + ": " + result_name(r));
    }
    api.load_device(device);
    api.vkGetDeviceQueue(device, queue_family, 0, &queue);
  }

  void probe_texel_buffers(const Options& o) {
    const char* env = std::getenv("GRAFT_VULKAN_TEXEL_BUFFERS");
    if (!o.texel_buffers || (env && std::string(env) == "0")) return;
    for (VkFormat f : kTexelFormats) {
      VkFormatProperties fp{};
      api.vkGetPhysicalDeviceFormatProperties(phys, f, &fp);
      if (!(fp.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT)) return;
    }
    max_texels = props.limits.maxTexelBufferElements;
  }

  void create_batch_objects() {
    auto pc = make<VkPipelineCacheCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO);
    check(api.vkCreatePipelineCache(device, &pc, nullptr, &pipeline_cache_), "vkCreatePipelineCache");
    auto cp = make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    cp.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    cp.queueFamilyIndex = queue_family;
    check(api.vkCreateCommandPool(device, &cp, nullptr, &cmd_pool), "vkCreateCommandPool");
    auto ca = make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    ca.commandPool = cmd_pool;
    ca.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ca.commandBufferCount = 1;
    check(api.vkAllocateCommandBuffers(device, &ca, &cmd), "vkAllocateCommandBuffers");
    auto fi = make<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    check(api.vkCreateFence(device, &fi, nullptr, &fence), "vkCreateFence");
    desc_pools.push_back(make_descriptor_pool(kPoolDescs));
    if (timestamp_bits) query_pools.push_back(make_query_pool(kPoolQueries));
  }

  DescPool make_descriptor_pool(uint32_t descs) {
    // `descs` of each kind: a set takes n descriptors of the two kinds together, counted against descs_left
    VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descs},
                                     {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, descs}};
    auto ci = make<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
    ci.maxSets = kPoolSets;
    ci.poolSizeCount = max_texels ? 2 : 1;
    ci.pPoolSizes = sizes;
    DescPool p{VK_NULL_HANDLE, descs, kPoolSets, descs};
    check(api.vkCreateDescriptorPool(device, &ci, nullptr, &p.pool), "vkCreateDescriptorPool");
    return p;
  }

  QueryPool make_query_pool(uint32_t count) {
    auto ci = make<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
    ci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    ci.queryCount = count;
    QueryPool p{VK_NULL_HANDLE, count};
    check(api.vkCreateQueryPool(device, &ci, nullptr, &p.pool), "vkCreateQueryPool");
    return p;
  }

  // Two queries per launch (begin, end), in launch order across the pools.
  void read_kernel_times() {
    kernel_times.clear();
    if (!timestamp_bits || queries_used == 0) return;
    std::vector<uint64_t> ticks(queries_used);
    uint32_t done = 0;
    for (auto& p : query_pools) {
      if (done == queries_used) break;
      uint32_t k = std::min(p.capacity, queries_used - done);
      check(api.vkGetQueryPoolResults(device, p.pool, 0, k, k * sizeof(uint64_t), ticks.data() + done,
                                      sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
            "vkGetQueryPoolResults");
      done += k;
    }
    uint64_t mask = timestamp_bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << timestamp_bits) - 1;
    for (uint32_t i = 0; i + 1 < queries_used; i += 2) {
      uint64_t dt = ((ticks[i + 1] & mask) - (ticks[i] & mask)) & mask;
      kernel_times.push_back(double(dt) * double(props.limits.timestampPeriod) * 1e-9);
    }
  }

  void destroy() {
    if (device) {
      api.vkDeviceWaitIdle(device);
      // What the batch kept alive (pipelines/buffers whose owners are gone) goes first: it needs the device.
      batch_pipelines.clear();
      batch_buffers.clear();
      staging.reset();
      for (auto& p : desc_pools) api.vkDestroyDescriptorPool(device, p.pool, nullptr);
      for (auto& p : query_pools) api.vkDestroyQueryPool(device, p.pool, nullptr);
      desc_pools.clear();
      query_pools.clear();
      if (fence) api.vkDestroyFence(device, fence, nullptr);
      if (cmd_pool) api.vkDestroyCommandPool(device, cmd_pool, nullptr);  // frees cmd
      if (pipeline_cache_) api.vkDestroyPipelineCache(device, pipeline_cache_, nullptr);
      api.vkDestroyDevice(device, nullptr);
      device = VK_NULL_HANDLE;
    }
    if (instance) {
      api.vkDestroyInstance(instance, nullptr);
      instance = VK_NULL_HANDLE;
    }
  }
};

inline BufferObj::~BufferObj() {
  auto& api = ctx->api;
  for (VkBufferView v : views)
    if (v) api.vkDestroyBufferView(ctx->device, v, nullptr);
  if (mapped) api.vkUnmapMemory(ctx->device, mem);
  if (buf) api.vkDestroyBuffer(ctx->device, buf, nullptr);
  if (mem) api.vkFreeMemory(ctx->device, mem, nullptr);
}

inline PipelineObj::~PipelineObj() {
  auto& api = ctx->api;
  if (pipeline) api.vkDestroyPipeline(ctx->device, pipeline, nullptr);
  if (layout) api.vkDestroyPipelineLayout(ctx->device, layout, nullptr);
  if (set_layout) api.vkDestroyDescriptorSetLayout(ctx->device, set_layout, nullptr);
}

// ---- Buffer and Program ------------------------------------------------------------------------------------------

class VulkanBuffer final : public Buffer {
 public:
  VulkanBuffer(std::shared_ptr<Context> ctx, std::shared_ptr<BufferObj> obj, size_t nbytes)
      : ctx_(std::move(ctx)), obj_(std::move(obj)), nbytes_(nbytes) {}
  size_t nbytes() const override { return nbytes_; }

  void copy_in(const void* src, size_t n) override { copy(n, src, nullptr, "copy_in"); }
  void copy_out(void* dst, size_t n) override { copy(n, nullptr, dst, "copy_out"); }

  const std::shared_ptr<BufferObj>& obj() const { return obj_; }
  const Context* context() const { return ctx_.get(); }

 private:
  void copy(size_t n, const void* in, void* out, const char* what) {
    if (n > nbytes_)
      throw Error(std::string("Vulkan: ") + what + " of " + std::to_string(n) + " bytes into a buffer of " +
                  std::to_string(nbytes_) + " bytes");
    std::lock_guard lock(ctx_->mu);
    ctx_->synchronize_locked();  // pending launches may read or write this buffer
    if (n == 0) return;
    if (!obj_->mapped)
      ctx_->staged_copy(*obj_, n, in, out);
    else if (in)
      std::memcpy(obj_->mapped, in, n);
    else
      std::memcpy(out, obj_->mapped, n);
  }

  std::shared_ptr<Context> ctx_;  // declared first: destroyed after obj_, whose destructor needs the device
  std::shared_ptr<BufferObj> obj_;
  size_t nbytes_;
};

class VulkanProgram final : public Program {
 public:
  VulkanProgram(std::shared_ptr<Context> ctx, std::shared_ptr<PipelineObj> obj, const KernelSource& k)
      : ctx_(std::move(ctx)), obj_(std::move(obj)), name_(k.name), num_buffers_(k.num_buffers),
        grid_(dispatch_grid(k.threads, k.local_size)), var_bytes_(k.var_bytes), vars_(var_layout(k.var_bytes)) {}

  using Program::launch;
  void launch(std::span<Buffer* const> bufs, std::span<const int64_t> vars) override {
    if (bufs.size() != num_buffers_)
      throw Error("Vulkan: kernel '" + name_ + "' takes " + std::to_string(num_buffers_) + " buffers, launched with " +
                  std::to_string(bufs.size()));
    check_var_count(name_, var_bytes_.size(), vars.size());
    std::vector<uint8_t> push(vars_.size);  // variables as push constants, each at its offset in its width
    for (size_t j = 0; j < vars.size(); j++) {
      int32_t v32 = int32_t(vars[j]);
      if (var_bytes_[j] == 4) std::memcpy(push.data() + vars_.offsets[j], &v32, 4);
      else std::memcpy(push.data() + vars_.offsets[j], &vars[j], 8);
    }
    std::vector<VulkanBuffer*> vb(bufs.size());
    for (size_t i = 0; i < bufs.size(); ++i) {
      vb[i] = dynamic_cast<VulkanBuffer*>(bufs[i]);
      if (!vb[i] || vb[i]->context() != ctx_.get())
        throw Error("Vulkan: kernel '" + name_ + "' buffer " + std::to_string(i) +
                    " is not a buffer of this Vulkan device");
    }
    auto& c = *ctx_;
    auto& api = c.api;
    std::lock_guard lock(c.mu);
    c.begin_batch();
    VkDescriptorSet set = c.alloc_descriptor_set(obj_->set_layout, num_buffers_);
    std::vector<VkDescriptorBufferInfo> infos(vb.size());
    std::vector<VkBufferView> views(vb.size());
    std::vector<VkWriteDescriptorSet> writes(vb.size());
    for (size_t i = 0; i < vb.size(); ++i) {
      auto& b = *vb[i]->obj();
      writes[i] = make<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
      writes[i].dstSet = set;
      writes[i].dstBinding = uint32_t(i);
      writes[i].descriptorCount = 1;
      if (int k = obj_->texel[i]; k >= 0) {
        views[i] = c.texel_view(b, k);
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
        writes[i].pTexelBufferView = &views[i];
      } else {
        infos[i] = {b.buf, 0, std::min<VkDeviceSize>(b.size, c.features.max_buffer_bytes)};
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
      }
      c.batch_buffers.push_back(vb[i]->obj());
    }
    if (!writes.empty()) api.vkUpdateDescriptorSets(c.device, uint32_t(writes.size()), writes.data(), 0, nullptr);
    c.batch_pipelines.push_back(obj_);

    VkCommandBuffer cmd = c.command_buffer();
    api.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, obj_->pipeline);
    api.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, obj_->layout, 0, 1, &set, 0, nullptr);
    if (!push.empty())
      api.vkCmdPushConstants(cmd, obj_->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, uint32_t(push.size()), push.data());
    // COMPUTE_SHADER stage on both: "begin" is written once earlier dispatches have finished, "end" once this one has.
    if (c.timestamp_bits) {
      auto [pool, q] = c.next_query();
      api.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, pool, q);
    }
    api.vkCmdDispatch(cmd, grid_[0], grid_[1], grid_[2]);
    if (c.timestamp_bits) {
      auto [pool, q] = c.next_query();
      api.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, pool, q);
    }
    // Later launches in the batch read (or overwrite) what this one wrote.
    c.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
              VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    ++c.launches;
  }

  const std::array<uint32_t, 3>& grid() const { return grid_; }

 private:
  std::shared_ptr<Context> ctx_;  // declared first: destroyed after obj_
  std::shared_ptr<PipelineObj> obj_;
  std::string name_;
  uint32_t num_buffers_;
  std::array<uint32_t, 3> grid_;
  std::vector<uint8_t> var_bytes_;
  VarLayout vars_;
};

}  // namespace vk

// ---- the device ----------------------------------------------------------------------------------------------------

class VulkanDevice final : public Device {
 public:
  using Options = vk::Options;

  VulkanDevice() : VulkanDevice(Options{}) {}
  explicit VulkanDevice(const Options& o) : ctx_(std::make_shared<vk::Context>(o, false)) {}

  // Can a VulkanDevice be created with the default options? Loads the library, creates an instance and looks for a
  // usable device (no VkDevice); the answer is computed once per process. Never throws.
  static bool available() {
    static const bool ok = [] {
      try {
        vk::Context probe(Options{}, true);
        return true;
      } catch (...) {
        return false;
      }
    }();
    return ok;
  }

  // The process-wide device, created on first use (throws graft::Error if Vulkan is unusable).
  static std::shared_ptr<VulkanDevice> get() {
    static std::mutex mu;
    static std::shared_ptr<VulkanDevice> dev;
    std::lock_guard lock(mu);
    if (!dev) dev = std::make_shared<VulkanDevice>();
    return dev;
  }

  std::string name() const override { return ctx_->name; }
  const DeviceFeatures& features() const override { return ctx_->features; }

  std::unique_ptr<Buffer> alloc(size_t nbytes) override {
    const auto limit = ctx_->features.max_buffer_bytes;
    if (nbytes > limit)
      throw Error("Vulkan: buffer of " + std::to_string(nbytes) + " bytes exceeds the device limit of " +
                  std::to_string(limit) + " bytes (maxStorageBufferRange) on " + ctx_->name);
    auto want = ctx_->host_mapped ? vk::Context::kMapped : VkMemoryPropertyFlags(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    std::shared_ptr<vk::BufferObj> obj;
    try {
      obj = ctx_->make_buffer(nbytes, want);
    } catch (const Error&) {
      if (!ctx_->host_mapped) throw;
      obj = ctx_->make_buffer(nbytes, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);  // mapped heap full: use staging
    }
    return std::make_unique<vk::VulkanBuffer>(ctx_, std::move(obj), nbytes);
  }

  std::unique_ptr<Program> compile(const KernelSource& k) override {
    auto& c = *ctx_;
    auto& api = c.api;
    if (k.local_size == 0 || k.local_size > c.features.max_local_size)
      throw Error("Vulkan: kernel '" + k.name + "' local size " + std::to_string(k.local_size) +
                  " is outside 1.." + std::to_string(c.features.max_local_size));
    if (k.num_buffers > c.props.limits.maxPerStageDescriptorStorageBuffers)
      throw Error("Vulkan: kernel '" + k.name + "' uses " + std::to_string(k.num_buffers) +
                  " buffers; the device allows " + std::to_string(c.props.limits.maxPerStageDescriptorStorageBuffers));
    std::vector<uint32_t> words = c.spirv->compile(k.name, k.source);

    auto obj = std::make_shared<vk::PipelineObj>(ctx_.get());
    obj->texel = vk::spirv_bindings(words, k.num_buffers);
    std::vector<VkDescriptorSetLayoutBinding> bindings(k.num_buffers);
    for (uint32_t i = 0; i < k.num_buffers; ++i) {
      if (obj->texel[i] >= 0 && !c.max_texels)
        throw Error("Vulkan: kernel '" + k.name + "' reads binding " + std::to_string(i) +
                    " as a uniform texel buffer, which is off or unsupported on " + c.name);
      bindings[i] = {i, obj->texel[i] >= 0 ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                     VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    }
    auto dl = vk::make<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
    dl.bindingCount = k.num_buffers;
    dl.pBindings = bindings.data();
    vk::check(api.vkCreateDescriptorSetLayout(c.device, &dl, nullptr, &obj->set_layout), "vkCreateDescriptorSetLayout");
    auto pl = vk::make<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    pl.setLayoutCount = 1;
    pl.pSetLayouts = &obj->set_layout;
    VarLayout vars = var_layout(k.var_bytes);
    if (vars.size > c.props.limits.maxPushConstantsSize)
      throw Error("Vulkan: kernel '" + k.name + "' needs " + std::to_string(vars.size) + " bytes of variables; the device allows " +
                  std::to_string(c.props.limits.maxPushConstantsSize) + " bytes of push constants");
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, vars.size};
    if (vars.size) pl.pushConstantRangeCount = 1, pl.pPushConstantRanges = &range;
    vk::check(api.vkCreatePipelineLayout(c.device, &pl, nullptr, &obj->layout), "vkCreatePipelineLayout");

    auto sm = vk::make<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    sm.codeSize = words.size() * sizeof(uint32_t);
    sm.pCode = words.data();
    VkShaderModule module;
    vk::check(api.vkCreateShaderModule(c.device, &sm, nullptr, &module), "vkCreateShaderModule");
    auto ci = vk::make<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
    ci.stage = vk::make<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = module;
    ci.stage.pName = "main";
    ci.layout = obj->layout;
    VkResult r = api.vkCreateComputePipelines(c.device, c.pipeline_cache(), 1, &ci, nullptr, &obj->pipeline);
    api.vkDestroyShaderModule(c.device, module, nullptr);  // the pipeline no longer needs it
    if (r != VK_SUCCESS) {
      obj->pipeline = VK_NULL_HANDLE;
      throw Error(std::string("Vulkan: vkCreateComputePipelines failed for kernel '") + k.name +
                  "': " + vk::result_name(r));
    }
    return std::make_unique<vk::VulkanProgram>(ctx_, std::move(obj), k);
  }

  void synchronize() override {
    std::lock_guard lock(ctx_->mu);
    ctx_->synchronize_locked();
  }

  std::vector<double> last_kernel_times() const override {
    std::lock_guard lock(ctx_->mu);
    return ctx_->kernel_times;
  }

  // Texels a uniform texel buffer view may hold (maxTexelBufferElements); 0 when texel buffers are off or unsupported.
  // The GLSL renderer reads a read-only 4-byte buffer of up to 4 * this many elements through a texel buffer.
  uint64_t max_texel_elements() const { return ctx_->max_texels; }

  // Buffers are mapped device memory (false: device-local memory with staging copies).
  bool host_mapped() const { return ctx_->host_mapped; }
  const VkPhysicalDeviceProperties& properties() const { return ctx_->props; }

 private:
  std::shared_ptr<vk::Context> ctx_;
};

}  // namespace graft::rt
