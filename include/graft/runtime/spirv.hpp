// GLSL 450 compute source -> SPIR-V words, through the shaderc C++ API, with an in-memory and an on-disk cache.
//
// Link recipe (reference/toolchain.md §1): shaderc_combined + glslang + SPIRV + SPIRV-Tools; never libshaderc.so.
// Target: Vulkan 1.1 (SPIR-V 1.3), optimization level "performance".
// Caches, keyed by a 64-bit hash of source + compile options (the kernel name only labels errors):
//   memory: per SpirvCompiler, thread-safe;
//   disk:   <cache dir>/spirv/<hash>.spv, written atomically (temp file + rename). A file that is not a valid
//           SPIR-V module is ignored and rewritten; if the directory cannot be created, disk caching is off.
// The cache dir is $GRAFT_CACHE_DIR, else $XDG_CACHE_HOME/graft, else ~/.cache/graft (default_spirv_cache_dir()).
#pragma once
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <shaderc/shaderc.hpp>
#include <spirv-tools/libspirv.hpp>

#include "graft/core/error.hpp"

namespace graft::rt {

namespace spirv_detail {

// Bump when the options below change so stale disk entries are not reused.
inline constexpr std::string_view kOptionsTag = "graft-spirv-1;glsl450;comp;vulkan1.1;perf";

inline uint64_t fnv1a64(std::string_view s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// "name:12: error: ..." -> the source lines shaderc complains about, quoted with their numbers.
inline std::string quote_error_lines(std::string_view name, std::string_view source, const std::string& messages) {
  std::vector<std::string_view> lines;
  for (size_t pos = 0; pos <= source.size();) {
    size_t nl = source.find('\n', pos);
    if (nl == std::string_view::npos) nl = source.size();
    lines.push_back(source.substr(pos, nl - pos));
    pos = nl + 1;
  }
  std::map<size_t, bool> wanted;  // sorted, unique line numbers
  std::istringstream in(messages);
  std::string prefix = std::string(name) + ":";
  for (std::string msg; std::getline(in, msg);) {
    if (msg.compare(0, prefix.size(), prefix) != 0) continue;
    size_t i = prefix.size(), n = 0, digits = 0;
    while (i < msg.size() && msg[i] >= '0' && msg[i] <= '9') n = n * 10 + size_t(msg[i++] - '0'), ++digits;
    if (digits && i < msg.size() && msg[i] == ':' && n >= 1 && n <= lines.size()) wanted[n] = true;
  }
  std::string out;
  for (auto& [n, _] : wanted) {
    std::string num = std::to_string(n);
    out += "  " + std::string(num.size() < 5 ? 5 - num.size() : 0, ' ') + num + " | " + std::string(lines[n - 1]) + "\n";
  }
  return out;
}

inline bool valid_module(const std::vector<uint32_t>& words) {
  if (words.size() < 5 || words[0] != 0x07230203u) return false;
  // Catch truncated or scribbled files: a bad module would reach the driver otherwise.
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_1);
  return tools.IsValid() && tools.Validate(words);
}

inline std::vector<uint32_t> read_spv(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary | std::ios::ate);
  if (!f) return {};
  auto size = f.tellg();
  if (size <= 0 || size % 4 != 0) return {};
  std::vector<uint32_t> words(size_t(size) / 4);
  f.seekg(0);
  if (!f.read(reinterpret_cast<char*>(words.data()), size)) return {};
  return words;
}

// Temp file in the same directory + rename: readers never see a half-written file. Failures are ignored
// (the cache is an optimisation).
inline void write_spv_atomic(const std::filesystem::path& p, const std::vector<uint32_t>& words) {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}()};
  auto tmp = p;
  tmp += ".tmp" + std::to_string(rng()) + "." + std::to_string(counter++);
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return;
    f.write(reinterpret_cast<const char*>(words.data()), std::streamsize(words.size() * 4));
    if (!f.flush()) {
      f.close();
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, p, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

// One shaderc::Compiler per process: the first compile initialises glslang (~0.1-0.2 s). shaderc documents
// compiles on one const compiler as safe from several threads.
inline const shaderc::Compiler& shaderc_compiler() {
  static const shaderc::Compiler compiler;
  return compiler;
}

}  // namespace spirv_detail

// $GRAFT_CACHE_DIR, else $XDG_CACHE_HOME/graft, else $HOME/.cache/graft; empty if none can be determined.
inline std::filesystem::path default_cache_dir() {
  auto env = [](const char* k) -> std::string { const char* v = std::getenv(k); return v ? v : ""; };
  if (auto d = env("GRAFT_CACHE_DIR"); !d.empty()) return d;
  if (auto d = env("XDG_CACHE_HOME"); !d.empty()) return std::filesystem::path(d) / "graft";
  if (auto d = env("HOME"); !d.empty()) return std::filesystem::path(d) / ".cache" / "graft";
  return {};
}

class SpirvCompiler {
 public:
  struct Stats {
    uint64_t memory_hits = 0, disk_hits = 0, compiles = 0, disk_writes = 0;
  };

  // cache_dir: root of the disk cache (files go to cache_dir/spirv/); empty = no disk cache.
  explicit SpirvCompiler(std::filesystem::path cache_dir = default_cache_dir()) {
    if (cache_dir.empty()) return;
    std::error_code ec;
    auto dir = cache_dir / "spirv";
    std::filesystem::create_directories(dir, ec);
    if (!ec && std::filesystem::is_directory(dir, ec)) spirv_dir_ = dir;
  }

  // The process-wide compiler (disk cache from the environment at first use).
  static SpirvCompiler& shared() {
    static SpirvCompiler c;
    return c;
  }

  // Directory holding the .spv files; empty when disk caching is off.
  const std::filesystem::path& disk_dir() const { return spirv_dir_; }

  static uint64_t key(std::string_view source) {
    return spirv_detail::fnv1a64(source, spirv_detail::fnv1a64(spirv_detail::kOptionsTag));
  }
  std::filesystem::path disk_path(std::string_view source) const {
    if (spirv_dir_.empty()) return {};
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(key(source)));
    return spirv_dir_ / (std::string(hex) + ".spv");
  }

  // Throws graft::Error (kernel name, shaderc's messages, the offending lines) if the source does not compile.
  std::vector<uint32_t> compile(std::string_view name, std::string_view source) {
    uint64_t k = key(source);
    {
      std::lock_guard lock(mu_);
      if (auto it = memory_.find(k); it != memory_.end()) {
        ++stats_.memory_hits;
        return it->second;
      }
    }
    auto path = disk_path(source);
    if (!path.empty()) {
      auto words = spirv_detail::read_spv(path);
      if (!words.empty() && spirv_detail::valid_module(words)) {
        std::lock_guard lock(mu_);
        ++stats_.disk_hits;
        memory_.emplace(k, words);
        return words;
      }
    }
    auto words = compile_uncached(name, source);
    if (!path.empty()) spirv_detail::write_spv_atomic(path, words);
    std::lock_guard lock(mu_);
    ++stats_.compiles;
    if (!path.empty()) ++stats_.disk_writes;
    memory_.emplace(k, words);
    return words;
  }

  Stats stats() const {
    std::lock_guard lock(mu_);
    return stats_;
  }

  static std::vector<uint32_t> compile_uncached(std::string_view name, std::string_view source) {
    shaderc::CompileOptions opts;
    opts.SetTargetEnvironment(shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_1);
    opts.SetOptimizationLevel(shaderc_optimization_level_performance);
    std::string label = name.empty() ? std::string("kernel") : std::string(name);
    auto res = spirv_detail::shaderc_compiler().CompileGlslToSpv(source.data(), source.size(),
                                                                 shaderc_compute_shader, label.c_str(), "main", opts);
    if (res.GetCompilationStatus() != shaderc_compilation_status_success) {
      std::string msg = res.GetErrorMessage();
      std::string quoted = spirv_detail::quote_error_lines(label, source, msg);
      throw Error("GLSL compile of kernel '" + label + "' failed:\n" + msg +
                  (quoted.empty() ? std::string() : "offending source lines:\n" + quoted));
    }
    return {res.cbegin(), res.cend()};
  }

 private:
  std::filesystem::path spirv_dir_;
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> memory_;
  Stats stats_;
};

// GLSL 450 compute shader -> SPIR-V words, through the shared (cached) compiler.
inline std::vector<uint32_t> glsl_to_spirv(std::string_view name, std::string_view source) {
  return SpirvCompiler::shared().compile(name, source);
}

}  // namespace graft::rt
