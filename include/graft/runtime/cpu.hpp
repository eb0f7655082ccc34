// The CPU backend: rendered C kernels JIT-compiled with the host C compiler, dlopen'ed and run on a thread pool.
//
// Kernel ABI (what the C renderer emits):
//   void <KernelSource::name>(void* const* bufs, long long gid_start, long long gid_end);
// computes the invocations gid_start <= gid < gid_end (the kernel contains its own loop over gid); bufs[i] is the
// host pointer of buffer slot i, followed by one pointer per variable slot to its value (a long long).
// Program::launch splits [0, threads) into contiguous chunks over a persistent thread pool when the kernel is big
// enough, else runs it on the calling thread; it returns when the kernel is done, so synchronize() only moves the
// launch times into last_kernel_times().
//
// Compiling: `${GRAFT_CC:-cc} -O3 -march=native -fno-math-errno -ffp-contract=off -fwrapv -pipe -shared -fPIC
//   $GRAFT_CFLAGS -o X.so X.c -lm`, spawned with posix_spawnp (no shell). GRAFT_CC and GRAFT_CFLAGS are split on
// whitespace (GRAFT_CC="ccache gcc" works). Compiled kernels are cached in memory (hash of compiler identity, flags,
// name and source -> loaded library) and on disk in $GRAFT_CACHE_DIR, else $XDG_CACHE_HOME/graft, else
// ~/.cache/graft, subdirectory cpu/<hash>.so (written to a temp name and renamed; skipped if the directory cannot
// be created). GRAFT_THREADS sets the worker count (1 = everything inline); default hardware_concurrency().
// POSIX only (dlopen, posix_spawn).
#pragma once
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "graft/core/error.hpp"
#include "graft/runtime/device.hpp"

extern char** environ;

namespace graft::rt {

// ---------------------------------------------------------------------------------------------------------------
// Buffer: 64-byte aligned host memory; buffers of 2 MiB and more are 2 MiB aligned and asked to be backed by huge pages
// (MADV_HUGEPAGE; ignored where transparent huge pages are off). perf: with 4 KiB pages, a 16M-float a+b kernel took
// 4-6 ms or 31-42 ms depending on which cached buffers it got (TLB misses under the VM's nested paging); with huge
// pages it takes 4-6 ms every run, and the copies in and out of the buffers speed up alike.
class CpuBuffer final : public Buffer {
 public:
  static constexpr size_t kAlign = 64, kHugePage = size_t(2) << 20;
  explicit CpuBuffer(size_t nbytes) : nbytes_(nbytes) {
    size_t align = nbytes >= kHugePage ? kHugePage : kAlign;
    size_t cap = nbytes == 0 ? align : (nbytes + align - 1) / align * align;  // aligned_alloc: multiple of align
    if (cap < nbytes) throw Error("CPU: cannot allocate " + std::to_string(nbytes) + " bytes");
    data_ = std::aligned_alloc(align, cap);
    if (!data_) throw Error("CPU: out of memory allocating " + std::to_string(nbytes) + " bytes");
    if (align == kHugePage) ::madvise(data_, cap, MADV_HUGEPAGE);  // a hint: failure leaves 4 KiB pages
  }
  ~CpuBuffer() override { std::free(data_); }
  CpuBuffer(const CpuBuffer&) = delete;
  CpuBuffer& operator=(const CpuBuffer&) = delete;

  size_t nbytes() const override { return nbytes_; }
  void* data() { return data_; }
  const void* data() const { return data_; }
  void copy_in(const void* src, size_t n) override {
    if (n > nbytes_) throw Error("CPU: copy_in of " + std::to_string(n) + " bytes into a buffer of " + std::to_string(nbytes_) + " bytes");
    if (n) std::memcpy(data_, src, n);
  }
  void copy_out(void* dst, size_t n) override {
    if (n > nbytes_) throw Error("CPU: copy_out of " + std::to_string(n) + " bytes from a buffer of " + std::to_string(nbytes_) + " bytes");
    if (n) std::memcpy(dst, data_, n);
  }

 private:
  size_t nbytes_;
  void* data_ = nullptr;
};

namespace cpu_detail {

using KernelFn = void (*)(void* const*, long long, long long);

inline std::string env_str(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

inline std::vector<std::string> split_ws(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// 128-bit (two independent 64-bit) hash rendered as 32 hex digits; stable across runs and builds.
inline std::string hash_hex(const std::string& data) {
  uint64_t a = 0xcbf29ce484222325ull, b = 0x9e3779b97f4a7c15ull ^ data.size();
  for (unsigned char c : data) {
    a = (a ^ c) * 0x100000001b3ull;
    b = (b ^ c) * 0xff51afd7ed558ccdull;
    b ^= b >> 29;
  }
  auto mix = [](uint64_t x) { x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33; return x; };
  a = mix(a), b = mix(b ^ a);
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
  return buf;
}

// Resolve a program name like execvp does; empty if not found.
inline std::string find_program(const std::string& prog) {
  if (prog.empty()) return {};
  auto is_exe = [](const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (prog.find('/') != std::string::npos) return is_exe(prog) ? prog : std::string();
  std::string path = env_str("PATH");
  if (path.empty()) path = "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    std::string cand = (dir.empty() ? std::string(".") : dir) + "/" + prog;
    if (is_exe(cand)) return cand;
    start = end + 1;
  }
  return {};
}

// What identifies the compiler binary and the host for the cache key (the .so uses -march=native).
inline std::string toolchain_identity(const std::string& resolved) {
  std::string id = resolved;
  char real[4096];
  if (!resolved.empty() && ::realpath(resolved.c_str(), real)) {
    struct stat st;
    id += std::string("|") + real;
    if (::stat(real, &st) == 0) id += "|" + std::to_string(st.st_size) + "|" + std::to_string((long long)st.st_mtime);
  }
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0 || line.rfind("flags", 0) == 0) id += "|" + line;
    if (line.empty()) break;  // first processor is enough
  }
  return id;
}

inline bool mkdir_p(const std::string& dir) {
  if (dir.empty()) return false;
  for (size_t i = 1; i <= dir.size(); i++) {
    if (i == dir.size() || dir[i] == '/') {
      std::string sub = dir.substr(0, i);
      if (::mkdir(sub.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
  }
  struct stat st;
  return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && ::access(dir.c_str(), W_OK | X_OK) == 0;
}

inline std::string default_cache_dir() {
  std::string base = env_str("GRAFT_CACHE_DIR");
  if (!base.empty()) return base;
  std::string xdg = env_str("XDG_CACHE_HOME");
  if (!xdg.empty()) return xdg + "/graft";
  std::string home = env_str("HOME");
  if (!home.empty()) return home + "/.cache/graft";
  return {};
}

inline bool write_file(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = (std::fclose(f) == 0) && ok;
  return ok;
}

struct RunResult {
  int status = -1;  // exit status; -1 if killed by a signal
  std::string output;
};

// Run argv (argv[0] looked up in PATH) without a shell; capture stdout+stderr. Throws on spawn failure with errno.
inline RunResult run_capture(const std::vector<std::string>& args, int* spawn_errno) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int fds[2];
  if (::pipe(fds) != 0) throw Error(std::string("CPU: pipe() failed: ") + std::strerror(errno));
  ::fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[1]);
  RunResult r;
  if (rc != 0) {
    ::close(fds[0]);
    *spawn_errno = rc;
    return r;
  }
  *spawn_errno = 0;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) r.output.append(buf, size_t(n));
    else if (n < 0 && errno == EINTR) continue;
    else break;
  }
  ::close(fds[0]);
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) { st = -1; break; }
  }
  r.status = (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
  if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 127 && r.output.empty()) *spawn_errno = ENOENT;
  return r;
}

// Quote the source lines the diagnostics point at ("<path>:<line>:"), with line numbers.
inline std::string offending_lines(const std::string& diag, const std::string& path, const std::string& source) {
  std::set<long> lines;
  std::string key = path + ":";
  for (size_t pos = diag.find(key); pos != std::string::npos; pos = diag.find(key, pos + 1)) {
    size_t p = pos + key.size();
    long v = 0;
    size_t q = p;
    while (q < diag.size() && q - p < 9 && diag[q] >= '0' && diag[q] <= '9') v = v * 10 + (diag[q++] - '0');
    if (q > p && q < diag.size() && diag[q] == ':' && v > 0) lines.insert(v);
  }
  if (lines.empty()) return {};
  std::vector<std::string> src;
  {
    std::istringstream in(source);
    for (std::string l; std::getline(in, l);) src.push_back(l);
  }
  std::string out;
  int shown = 0;
  for (long l : lines) {
    if (l > long(src.size())) continue;
    if (++shown > 20) { out += "  ...\n"; break; }
    char num[32];
    std::snprintf(num, sizeof num, "%6ld | ", l);
    out += num + src[size_t(l - 1)] + "\n";
  }
  return out;
}

// A dlopen'ed kernel library; dlclose'd when the last Program and the cache drop it.
struct Library {
  void* handle = nullptr;
  explicit Library(void* h) : handle(h) {}
  ~Library() { if (handle) ::dlclose(handle); }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
};

// Persistent pool: `size()` participants = the calling thread + size()-1 workers. run() hands out chunk indices
// 0..nchunks-1 dynamically and returns when all are done. Runs are serialized.
class ThreadPool {
 public:
  explicit ThreadPool(unsigned n) : n_(n < 1 ? 1 : n) {
    for (unsigned i = 1; i < n_; i++) workers_.emplace_back([this] { loop(); });
  }
  ~ThreadPool() {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }
  unsigned size() const { return n_; }

  template <class F>
  void run(unsigned nchunks, F&& f) {
    using Fn = std::remove_reference_t<F>;
    std::lock_guard run_lk(run_mu_);
    {
      std::lock_guard lk(mu_);
      ctx_ = const_cast<void*>(static_cast<const void*>(&f));
      fn_ = [](void* c, unsigned i) { (*static_cast<Fn*>(c))(i); };
      nchunks_ = nchunks;
      next_.store(0, std::memory_order_relaxed);
      pending_ = unsigned(workers_.size());
      ++gen_;
    }
    cv_.notify_all();
    work();
    std::unique_lock lk(mu_);
    done_cv_.wait(lk, [&] { return pending_ == 0; });
  }

 private:
  void work() {
    for (;;) {
      unsigned i = next_.fetch_add(1, std::memory_order_relaxed);
      if (i >= nchunks_) break;
      fn_(ctx_, i);
    }
  }
  void loop() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lk(mu_);
        cv_.wait(lk, [&] { return stop_ || gen_ != seen; });
        if (stop_) return;
        seen = gen_;
      }
      work();
      std::lock_guard lk(mu_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }

  unsigned n_;
  std::vector<std::thread> workers_;
  std::mutex run_mu_, mu_;
  std::condition_variable cv_, done_cv_;
  uint64_t gen_ = 0;
  bool stop_ = false;
  unsigned pending_ = 0, nchunks_ = 0;
  std::atomic<unsigned> next_{0};
  void (*fn_)(void*, unsigned) = nullptr;
  void* ctx_ = nullptr;
};

// State shared by the device and its programs (a Program may outlive its CpuDevice).
struct State {
  std::mutex pool_mu;
  std::shared_ptr<ThreadPool> pool;  // null when threads == 1
  unsigned threads = 1;
  int64_t min_parallel = 4096;
  std::mutex times_mu;
  std::vector<double> pending_times, last_times;

  std::shared_ptr<ThreadPool> get_pool(unsigned* n, int64_t* min_par) {
    std::lock_guard lk(pool_mu);
    *n = threads;
    *min_par = min_parallel;
    if (threads > 1 && !pool) pool = std::make_shared<ThreadPool>(threads);
    return threads > 1 ? pool : nullptr;
  }
  void record(double seconds) {
    std::lock_guard lk(times_mu);
    pending_times.push_back(seconds);
  }
};

}  // namespace cpu_detail

struct CpuOptions {
  std::string cc;                         // compiler command; empty: $GRAFT_CC, else "cc"
  std::string extra_cflags;               // appended after the defaults and $GRAFT_CFLAGS (whitespace separated)
  std::optional<std::string> cache_dir;   // base cache dir (kernels go to <dir>/cpu/); nullopt: env default; "": off
  unsigned threads = 0;                   // 0: $GRAFT_THREADS, else std::thread::hardware_concurrency()
};

class CpuProgram;

class CpuDevice final : public Device {
 public:
  struct Stats {
    uint64_t compiler_runs = 0;  // times the C compiler was spawned
    uint64_t memory_hits = 0;    // compile() served from the in-memory cache
    uint64_t disk_hits = 0;      // compile() served from the on-disk cache
  };

  explicit CpuDevice(CpuOptions opt = {}) : state_(std::make_shared<cpu_detail::State>()) {
    using namespace cpu_detail;
    std::string cc = opt.cc.empty() ? env_str("GRAFT_CC") : opt.cc;
    cc_ = split_ws(cc);
    if (cc_.empty()) cc_ = {"cc"};
    cc_name_ = cc.empty() ? std::string("cc") : cc;
    cc_path_ = find_program(cc_[0]);
    flags_ = {"-O3", "-march=native", "-fno-math-errno", "-ffp-contract=off", "-fwrapv", "-pipe", "-shared", "-fPIC"};
    for (auto& f : split_ws(env_str("GRAFT_CFLAGS"))) flags_.push_back(f);
    for (auto& f : split_ws(opt.extra_cflags)) flags_.push_back(f);
    std::string key_base = toolchain_identity(cc_path_);
    for (auto& a : cc_) key_base += "\x1f" + a;
    for (auto& f : flags_) key_base += "\x1e" + f;
    key_base_ = key_base;

    std::string base = opt.cache_dir ? *opt.cache_dir : default_cache_dir();
    if (!base.empty() && mkdir_p(base + "/cpu")) cache_dir_ = base + "/cpu";

    unsigned n = opt.threads;
    if (n == 0) {
      std::string t = env_str("GRAFT_THREADS");
      if (!t.empty()) {
        char* end = nullptr;
        long v = std::strtol(t.c_str(), &end, 10);
        if (end == t.c_str() || *end != '\0' || v < 1 || v > 4096) throw Error("CPU: bad GRAFT_THREADS='" + t + "' (want 1..4096)");
        n = unsigned(v);
      }
    }
    if (n == 0) n = std::max(1u, std::thread::hardware_concurrency());
    state_->threads = n;
  }
  ~CpuDevice() override {
    if (!tmp_dir_.empty()) ::rmdir(tmp_dir_.c_str());
  }
  CpuDevice(const CpuDevice&) = delete;
  CpuDevice& operator=(const CpuDevice&) = delete;

  // The process-wide device (created on first use from the environment).
  static std::shared_ptr<CpuDevice> get() {
    static std::shared_ptr<CpuDevice> dev = std::make_shared<CpuDevice>();
    return dev;
  }

  std::string name() const override { return "CPU"; }
  const DeviceFeatures& features() const override {
    static const DeviceFeatures f{.int64 = true, .float64 = true, .float16 = true, .int8_storage = true,
                                  .max_local_size = 1024, .max_buffer_bytes = UINT64_MAX};
    return f;
  }
  std::unique_ptr<Buffer> alloc(size_t nbytes) override { return std::make_unique<CpuBuffer>(nbytes); }
  std::unique_ptr<Program> compile(const KernelSource& k) override;
  void synchronize() override {
    std::lock_guard lk(state_->times_mu);
    state_->last_times = std::move(state_->pending_times);
    state_->pending_times.clear();
  }
  std::vector<double> last_kernel_times() const override {
    std::lock_guard lk(state_->times_mu);
    return state_->last_times;
  }

  // Worker threads used by launches (1 = inline). Changing it replaces the pool (waits for a running launch).
  unsigned threads() const {
    std::lock_guard lk(state_->pool_mu);
    return state_->threads;
  }
  void set_threads(unsigned n) {
    if (n == 0) n = std::max(1u, std::thread::hardware_concurrency());
    std::lock_guard lk(state_->pool_mu);
    if (n != state_->threads) state_->pool.reset(), state_->threads = n;
  }
  // Launches with fewer invocations run on the calling thread (unless an earlier launch of the same program was slow).
  void set_min_parallel(int64_t n) {
    std::lock_guard lk(state_->pool_mu);
    state_->min_parallel = n;
  }
  Stats stats() const {
    std::lock_guard lk(mu_);
    return stats_;
  }
  const std::string& cache_dir() const { return cache_dir_; }  // "" if disk caching is off
  std::vector<std::string> compile_command() const {           // compiler + flags (without -o/out/in/-lm)
    auto v = cc_;
    v.insert(v.end(), flags_.begin(), flags_.end());
    return v;
  }

 private:
  std::shared_ptr<cpu_detail::Library> build(const KernelSource& k, const std::string& hash);
  std::string temp_dir();

  std::shared_ptr<cpu_detail::State> state_;
  std::vector<std::string> cc_, flags_;
  std::string cc_name_, cc_path_, key_base_, cache_dir_, tmp_dir_;
  mutable std::mutex mu_;  // cache, stats, tmp dir
  std::unordered_map<std::string, std::shared_ptr<cpu_detail::Library>> cache_;
  Stats stats_;
  uint64_t tmp_counter_ = 0;
};

class CpuProgram final : public Program {
 public:
  CpuProgram(std::shared_ptr<cpu_detail::State> st, std::shared_ptr<cpu_detail::Library> lib, cpu_detail::KernelFn fn,
             const KernelSource& k)
      : st_(std::move(st)), lib_(std::move(lib)), fn_(fn), name_(k.name), nbufs_(k.num_buffers), nvars_(k.var_bytes.size()),
        threads_(k.threads) {}

  using Program::launch;
  void launch(std::span<Buffer* const> bufs, std::span<const int64_t> vars) override {
    if (bufs.size() < nbufs_)
      throw Error("CPU: kernel '" + name_ + "' needs " + std::to_string(nbufs_) + " buffers, got " + std::to_string(bufs.size()));
    check_var_count(name_, nvars_, vars.size());
    if (nvars_ && bufs.size() != nbufs_)  // the variables' pointers follow exactly nbufs_ buffers
      throw Error("CPU: kernel '" + name_ + "' needs " + std::to_string(nbufs_) + " buffers, got " + std::to_string(bufs.size()));
    void* small[16];
    std::vector<void*> big;
    void** ptrs = small;
    std::vector<long long> values(vars.begin(), vars.end());  // the kernel reads each through a pointer after the buffers
    if (bufs.size() + vars.size() > 16) big.resize(bufs.size() + vars.size()), ptrs = big.data();
    for (size_t j = 0; j < values.size(); j++) ptrs[bufs.size() + j] = &values[j];
    for (size_t i = 0; i < bufs.size(); i++) {
      auto* cb = dynamic_cast<CpuBuffer*>(bufs[i]);
      if (!cb) throw Error("CPU: kernel '" + name_ + "' buffer slot " + std::to_string(i) + " is not a CPU buffer");
      ptrs[i] = cb->data();
    }
    auto t0 = std::chrono::steady_clock::now();
    const long long n = threads_;
    unsigned nthreads = 1;
    int64_t min_par = 0;
    std::shared_ptr<cpu_detail::ThreadPool> pool = st_->get_pool(&nthreads, &min_par);
    bool parallel = pool && n >= 2 && (n >= min_par || slow_.load(std::memory_order_relaxed));
    if (n > 0 && !parallel) {
      fn_(ptrs, 0, n);
    } else if (n > 0) {
      // contiguous chunks, one per participant, multiples of 64 invocations where the size allows
      long long chunk = (n + nthreads - 1) / nthreads;
      if (n >= 64LL * nthreads) chunk = (chunk + 63) / 64 * 64;
      unsigned nchunks = unsigned((n + chunk - 1) / chunk);
      auto fn = fn_;
      void* const* p = ptrs;
      pool->run(nchunks, [fn, p, chunk, n](unsigned i) {
        long long s = (long long)i * chunk, e = std::min(n, s + chunk);
        fn(p, s, e);
      });
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // a small launch that still took long (inner loops) goes to the pool next time
    if (!parallel && pool && n >= 2 && secs > 200e-6) slow_.store(true, std::memory_order_relaxed);
    st_->record(secs);
  }

  const std::string& name() const { return name_; }
  cpu_detail::KernelFn function() const { return fn_; }

 private:
  std::shared_ptr<cpu_detail::State> st_;
  std::shared_ptr<cpu_detail::Library> lib_;
  cpu_detail::KernelFn fn_;
  std::string name_;
  uint32_t nbufs_;
  size_t nvars_;
  int64_t threads_;
  std::atomic<bool> slow_{false};
};

inline std::string CpuDevice::temp_dir() {
  std::lock_guard lk(mu_);
  if (tmp_dir_.empty()) {
    std::string base = cpu_detail::env_str("TMPDIR");
    if (base.empty()) base = "/tmp";
    std::string tmpl = base + "/graft-cpu-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!::mkdtemp(buf.data())) throw Error("CPU: cannot create a temp directory in " + base + ": " + std::strerror(errno));
    tmp_dir_ = buf.data();
  }
  return tmp_dir_;
}

inline std::shared_ptr<cpu_detail::Library> CpuDevice::build(const KernelSource& k, const std::string& hash) {
  using namespace cpu_detail;
  // runs without mu_ (compiles may proceed in parallel); a race on the same hash only compiles twice
  if (!cache_dir_.empty()) {
    std::string cached = cache_dir_ + "/" + hash + ".so";
    if (::access(cached.c_str(), R_OK) == 0) {
      if (void* h = ::dlopen(cached.c_str(), RTLD_NOW | RTLD_LOCAL)) {
        std::lock_guard lk(mu_);
        stats_.disk_hits++;
        return std::make_shared<Library>(h);
      }
      ::unlink(cached.c_str());  // unusable (truncated, other host): rebuild
    }
  }
  if (find_program(cc_[0]).empty()) throw Error("CPU: C compiler '" + cc_name_ + "' not found (set GRAFT_CC)");

  std::string dir = temp_dir();
  uint64_t serial;
  {
    std::lock_guard lk(mu_);
    serial = tmp_counter_++;
  }
  std::string uniq = hash + "_" + std::to_string(::getpid()) + "_" + std::to_string(serial);
  std::string src_path = dir + "/" + uniq + ".c";
  std::string so_tmp = (cache_dir_.empty() ? dir : cache_dir_) + "/." + uniq + ".so.tmp";
  if (!write_file(src_path, k.source)) throw Error("CPU: cannot write " + src_path + ": " + std::strerror(errno));

  std::vector<std::string> args = cc_;
  args.insert(args.end(), flags_.begin(), flags_.end());
  args.insert(args.end(), {"-o", so_tmp, src_path, "-lm"});
  int spawn_err = 0;
  RunResult r = run_capture(args, &spawn_err);
  {
    std::lock_guard lk(mu_);
    stats_.compiler_runs++;
  }
  if (spawn_err != 0) {
    ::unlink(src_path.c_str());
    ::unlink(so_tmp.c_str());
    if (spawn_err == ENOENT) throw Error("CPU: C compiler '" + cc_name_ + "' not found (set GRAFT_CC)");
    throw Error("CPU: cannot run C compiler '" + cc_name_ + "': " + std::strerror(spawn_err));
  }
  if (r.status != 0) {
    std::string lines = offending_lines(r.output, src_path, k.source);
    ::unlink(src_path.c_str());
    ::unlink(so_tmp.c_str());
    std::string out = r.output.size() > 16384 ? r.output.substr(0, 16384) + "\n... (truncated)" : r.output;
    std::string msg = "CPU: compiling kernel '" + k.name + "' failed (" + cc_name_ +
                      (r.status < 0 ? std::string(" killed by a signal") : " exit status " + std::to_string(r.status)) +
                      ")\ncompiler output:\n" + out;
    if (!lines.empty()) msg += "\noffending source lines:\n" + lines;
    throw Error(msg);
  }
  ::unlink(src_path.c_str());
  std::string so_path = so_tmp;
  if (!cache_dir_.empty()) {
    std::string final_path = cache_dir_ + "/" + hash + ".so";
    if (::rename(so_tmp.c_str(), final_path.c_str()) == 0) so_path = final_path;
  }
  void* h = ::dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  const char* dl_err = h ? nullptr : ::dlerror();
  std::string err = dl_err ? dl_err : "unknown error";
  if (so_path == so_tmp) ::unlink(so_tmp.c_str());  // not cached: the mapping stays valid after unlink
  if (!h) throw Error("CPU: dlopen of kernel '" + k.name + "' failed: " + err);
  return std::make_shared<Library>(h);
}

inline std::unique_ptr<Program> CpuDevice::compile(const KernelSource& k) {
  using namespace cpu_detail;
  std::string hash = hash_hex(key_base_ + "\x1d" + k.name + "\x1d" + k.source);
  std::shared_ptr<Library> lib;
  {
    std::lock_guard lk(mu_);
    auto it = cache_.find(hash);
    if (it != cache_.end()) {
      stats_.memory_hits++;
      lib = it->second;
    }
  }
  if (!lib) {
    auto built = build(k, hash);
    std::lock_guard lk(mu_);
    lib = cache_.emplace(hash, built).first->second;  // another thread may have won the race: use its library
  }
  ::dlerror();
  void* sym = ::dlsym(lib->handle, k.name.c_str());
  if (!sym) {
    const char* e = ::dlerror();
    throw Error("CPU: kernel '" + k.name + "' not found in the compiled library: " + std::string(e ? e : "dlsym returned null"));
  }
  return std::make_unique<CpuProgram>(state_, lib, reinterpret_cast<KernelFn>(sym), k);
}

}  // namespace graft::rt
