// Running a schedule: pick a device, lower + linearize + render + compile each kernel (compiled programs are cached
// by device and source), allocate buffers (inputs copied in, intermediates drawn from a pool of dead ones: memory
// planning), launch in order, synchronize, copy the outputs back into host storage.
//
// Settings (environment): GRAFT_DEVICE = VULKAN | CPU | INTERP (default: VULKAN when a Vulkan device exists, else
// CPU, with a one-line notice at GRAFT_DEBUG>=1); GRAFT_DEBUG = 1 prints the schedule, 2 kernel timings, 4 sources.
#pragma once
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>

#include "graft/codegen/c.hpp"
#include "graft/codegen/glsl.hpp"
#include "graft/runtime/cpu.hpp"
#include "graft/runtime/interp.hpp"
#include "graft/runtime/vulkan.hpp"
#include "graft/schedule/schedule.hpp"

namespace graft {

namespace engine {

inline int debug_level() {
  const char* s = std::getenv("GRAFT_DEBUG");
  return s ? std::atoi(s) : 0;
}

// a device by name ("VULKAN", "CPU", "INTERP"; "" = GRAFT_DEVICE or the default)
inline std::shared_ptr<rt::Device> device(std::string name = "") {
  if (name.empty())
    if (const char* s = std::getenv("GRAFT_DEVICE")) name = s;
  for (char& c : name) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (name == "CPU" || name == "CLANG" || name == "C") return rt::CpuDevice::get();
  if (name == "INTERP") return rt::InterpDevice::get();
  if (name == "VULKAN" || name == "GPU") return rt::VulkanDevice::get();  // throws when there is none
  if (!name.empty()) throw Error("GRAFT_DEVICE=" + name + " is not a device (VULKAN, CPU or INTERP)");
  if (rt::VulkanDevice::available()) return rt::VulkanDevice::get();
  static std::once_flag noticed;
  if (debug_level() >= 1) std::call_once(noticed, [] { std::cerr << "graft: no Vulkan device, running on the CPU backend\n"; });
  return rt::CpuDevice::get();
}

// a kernel made ready for one device
struct CompiledKernel {
  std::shared_ptr<const codegen::Program> ir;
  std::string source;
  std::shared_ptr<rt::Program> program;
};

inline bool is_vulkan(const rt::Device& d) { return d.name().rfind("VULKAN", 0) == 0; }

// render (no compile): throws graft::Error when the device cannot express the kernel
inline rt::KernelSource render_for(const rt::Device& d, std::shared_ptr<const codegen::Program> ir) {
  rt::KernelSource k;
  k.name = ir->name;
  k.num_buffers = uint32_t(ir->bufs.size());
  k.threads = ir->threads;
  k.var_bytes = codegen::var_widths(*ir);
  if (is_vulkan(d)) {
    auto* vd = dynamic_cast<const rt::VulkanDevice*>(&d);
    codegen::GlslLaunch launch = codegen::glsl_launch(*ir, d.features().max_local_size, vd ? vd->max_texel_elements() : 0);
    k.local_size = launch.local;
    k.source = codegen::render_glsl(*ir, d.features(), launch);
    k.threads = ir->threads > 0 ? launch.invocations : 0;
  } else {
    k.source = codegen::render_c(*ir);
  }
  k.program = std::move(ir);
  return k;
}

inline std::shared_ptr<rt::Program> compile_cached(rt::Device& d, const rt::KernelSource& k) {
  static std::mutex mu;
  static std::map<std::pair<const rt::Device*, std::string>, std::shared_ptr<rt::Program>> cache;
  // the source alone is not the program: C and GLSL do not spell buffer sizes, the interpreter's IR checks them
  std::string key_text = k.source;
  if (k.program)
    for (const codegen::BufferInfo& b : k.program->bufs) key_text += '\n', key_text += std::to_string(b.numel);
  std::lock_guard<std::mutex> lk(mu);
  auto key = std::make_pair(&d, std::move(key_text));
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  std::shared_ptr<rt::Program> p = d.compile(k);
  cache.emplace(std::move(key), p);
  return p;
}

// the BUFFER node behind a kernel argument
inline UOp underlying_buffer(const UOp& u) {
  UOp b = sched::buf_uop(u);
  if (!b || b.op() != Ops::BUFFER) throw Error("realize: kernel argument is " + std::string(op_name(u.op())) + ", not a view of a BUFFER");
  return b;
}

using FreeBuffers = std::multimap<size_t, std::shared_ptr<rt::Buffer>>;

// the smallest free buffer of at least nbytes, unless it would waste more than half (+256 bytes); removed from `free`
inline std::shared_ptr<rt::Buffer> take_fitting(FreeBuffers& free, size_t nbytes) {
  auto it = free.lower_bound(nbytes);
  if (it == free.end() || it->first > 2 * nbytes + 256) return nullptr;
  auto b = std::move(it->second);
  free.erase(it);
  return b;
}

// Device buffers outlive a run in a per-device cache (as tinygrad's LRU allocator): the next run of the same program
// gets warm memory instead of fresh pages. Bounded by GRAFT_BUFFER_CACHE_MB (default 1024); oldest dropped first.
class BufferCache {
 public:
  static BufferCache& of(const rt::Device& d) {
    static std::mutex mu;
    static std::map<const rt::Device*, std::unique_ptr<BufferCache>> all;
    std::lock_guard<std::mutex> lk(mu);
    auto& c = all[&d];
    if (!c) c = std::make_unique<BufferCache>();
    return *c;
  }
  // a cached buffer of at least nbytes (and not wastefully larger), or null
  std::shared_ptr<rt::Buffer> take(size_t nbytes) {
    std::lock_guard<std::mutex> lk(mu_);
    auto b = take_fitting(free_, nbytes);
    if (b) bytes_ -= b->nbytes();
    return b;
  }
  void give(std::shared_ptr<rt::Buffer> b) {
    static const size_t limit = [] {
      const char* s = std::getenv("GRAFT_BUFFER_CACHE_MB");
      return size_t(s ? std::atoll(s) : 1024) << 20;
    }();
    std::lock_guard<std::mutex> lk(mu_);
    size_t n = b->nbytes();
    if (n > limit) return;
    while (bytes_ + n > limit && !free_.empty()) bytes_ -= free_.begin()->first, free_.erase(free_.begin());
    free_.emplace(n, std::move(b));
    bytes_ += n;
  }

 private:
  std::mutex mu_;
  FreeBuffers free_;
  size_t bytes_ = 0;
};

// Memory planning within a run: intermediates whose last reader has run are reused by later allocations of a size
// that fits; everything goes back to the device's BufferCache at the end.
class BufferPool {
 public:
  explicit BufferPool(rt::Device& d) : dev_(d), cache_(BufferCache::of(d)) {}
  ~BufferPool() {
    for (auto& [n, b] : free_) cache_.give(std::move(b));
  }
  std::shared_ptr<rt::Buffer> get(size_t nbytes) {
    if (auto b = take_fitting(free_, nbytes)) {
      reused_ += nbytes;
      return b;
    }
    allocated_ += nbytes;
    if (auto b = cache_.take(nbytes)) return b;
    return std::shared_ptr<rt::Buffer>(dev_.alloc(nbytes));
  }
  void put(std::shared_ptr<rt::Buffer> b) { free_.emplace(b->nbytes(), std::move(b)); }
  size_t allocated() const { return allocated_; }
  size_t reused() const { return reused_; }

 private:
  rt::Device& dev_;
  BufferCache& cache_;
  FreeBuffers free_;
  size_t allocated_ = 0, reused_ = 0;
};

// What one run did (for tests, benchmarks and GRAFT_DEBUG).
struct RunStats {
  std::string device;
  size_t kernels = 0, launches = 0;
  size_t bytes_allocated = 0, bytes_reused = 0;
  std::vector<double> kernel_seconds;
};

// Run a schedule; returns host storage for each output (nullptr where the output already was a buffer), then for
// each buffer of s.writes.
template <class = void>
std::vector<std::shared_ptr<HostStorage>> run(const Schedule& s, std::shared_ptr<rt::Device> dev, RunStats* stats = nullptr) {
  static std::mutex run_mu;  // one schedule at a time per process: devices batch their launches
  std::lock_guard<std::mutex> lk(run_mu);
  int dbg = debug_level();

  // lower and render every kernel first: a device that cannot express one (a dtype feature) hands the run to the CPU
  std::vector<rt::KernelSource> srcs;
  for (int attempt = 0;; attempt++) {
    srcs.clear();
    try {
      for (const Kernel& k : s) srcs.push_back(render_for(*dev, std::make_shared<const codegen::Program>(codegen::linearize(codegen::lower(k.sink())))));
      break;
    } catch (const Error& e) {
      if (attempt > 0 || !is_vulkan(*dev)) throw;
      if (dbg >= 1) std::cerr << "graft: " << e.what() << "; running this schedule on the CPU backend\n";
      dev = rt::CpuDevice::get();
    }
  }
  if (dbg >= 1) {
    std::cerr << "graft: schedule of " << s.size() << " kernel" << (s.size() == 1 ? "" : "s") << " on " << dev->name() << ":";
    for (const auto& k : srcs) std::cerr << " " << k.name;
    const char* sep = "; variables ";
    for (const auto& [name, v] : s.var_vals) std::cerr << sep << name << "=" << v, sep = ", ";
    std::cerr << "\n";
  }

  // buffers: inputs (host data) copied in; the rest allocated, intermediates pooled after their last use
  std::unordered_map<UOp, std::shared_ptr<rt::Buffer>> bufs;
  std::unordered_map<UOp, size_t> last_use;
  UOpSet outputs;  // buffers whose bytes go back to the host: never pooled
  for (const UOp& o : s.outputs)
    if (o) outputs.insert(underlying_buffer(o));
  for (const UOp& w : s.writes) outputs.insert(w);
  for (size_t i = 0; i < s.size(); i++)
    for (const UOp& a : s[i].buffers()) last_use[underlying_buffer(a)] = i;
  BufferPool pool(*dev);
  auto buffer_of = [&](const UOp& b) -> rt::Buffer* {
    auto it = bufs.find(b);
    if (it != bufs.end()) return it->second.get();
    size_t nbytes = size_t(prod(b.shape())) * b.dtype().itemsize();
    std::shared_ptr<rt::Buffer> buf;
    buf = pool.get(nbytes);
    if (auto st = host_storage(b)) buf->copy_in(st->bytes.data(), std::min(nbytes, st->bytes.size()));
    return bufs.emplace(b, std::move(buf)).first->second.get();
  };

  size_t launches = 0;
  for (size_t i = 0; i < s.size(); i++) {
    rt::KernelSource& k = srcs[i];
    if (dbg >= 4) std::cerr << "graft: kernel " << i << " " << k.name << "\n" << k.source << "\n";
    std::shared_ptr<rt::Program> prog = compile_cached(*dev, k);
    std::vector<UOp> kernel_bufs = s[i].buffers();
    std::vector<rt::Buffer*> args;
    for (const UOp& a : kernel_bufs) args.push_back(buffer_of(underlying_buffer(a)));
    std::vector<int64_t> vals;
    for (const UOp& v : s[i].vars()) {
      auto it = s.var_vals.find(v.arg().param().name);
      if (it == s.var_vals.end())
        throw Error("realize: variable '" + v.arg().param().name + "' is not bound (use Tensor(var.bind(value)))");
      vals.push_back(it->second);
    }
    if (k.threads > 0) prog->launch(args, vals), launches++;
    for (const UOp& a : kernel_bufs) {  // intermediates dead after this kernel go back to the pool
      UOp b = underlying_buffer(a);
      if (last_use.at(b) == i && !outputs.contains(b) && !host_storage(b))
        if (auto it = bufs.find(b); it != bufs.end()) pool.put(it->second), bufs.erase(it);
    }
  }
  dev->synchronize();

  // outputs, then written buffers of the tensor graphs: bytes copied into the buffer node's host storage (in place
  // when it has some, so every tensor reading the buffer sees the write)
  std::vector<std::shared_ptr<HostStorage>> result;
  auto copy_back = [&](const UOp& b) {
    auto st = attach_host_storage(b);
    if (!st->bytes.empty()) buffer_of(b)->copy_out(st->bytes.data(), st->bytes.size());
    return st;
  };
  for (const UOp& o : s.outputs) result.push_back(o ? copy_back(underlying_buffer(o)) : nullptr);
  for (const UOp& w : s.writes) result.push_back(copy_back(w));
  for (auto& [b, buf] : bufs) pool.put(std::move(buf));  // back to the device's cache with the pool
  bufs.clear();
  std::vector<double> times = dev->last_kernel_times();
  if (dbg >= 2)
    for (size_t i = 0; i < times.size() && i < srcs.size(); i++)
      std::cerr << "graft: " << srcs[i].name << " " << times[i] * 1e6 << " us\n";
  if (stats) *stats = RunStats{dev->name(), s.size(), launches, pool.allocated(), pool.reused(), times};
  return result;
}

}  // namespace engine

namespace detail {
// a tensor graph with every assign's AFTER replaced by the buffer view it wraps (what the graph reads once the writes
// ran)
inline UOp resolve_afters(const UOp& u, std::unordered_map<const UOpNode*, UOp>& memo) {
  if (!u.slice_ops().has(Ops::AFTER)) return u;
  if (auto it = memo.find(u.node()); it != memo.end()) return it->second;
  UOp r;
  if (u.op() == Ops::AFTER && !u.is_bound_var()) {  // a bound Variable stays bound
    r = resolve_afters(u.src(0), memo);
  } else {
    std::vector<UOp> ns;
    for (const UOp& x : u.src()) ns.push_back(resolve_afters(x, memo));
    r = u.with_src(ns);
  }
  return memo.emplace(u.node(), r).first->second;
}

// Run the schedule of `ts` and re-point every live tensor at the results (tinygrad's becomes_map): every assign
// (AFTER) into a buffer that ran becomes the buffer view it wrote (one into a CONTIGUOUS stays as it is: that
// buffer was a temporary), and (when `repoint_outputs`) each realized graph becomes its buffer. Returns each
// tensor's host storage (nullptr where it is a view of a buffer).
template <class = void>
std::vector<std::shared_ptr<HostStorage>> realize_impl(const std::vector<Tensor>& in, const std::string& device,
                                                       bool repoint_outputs) {
  Schedule s = schedule(in);
  auto res = engine::run(s, engine::device(device));
  std::unordered_map<UOp, UOp> becomes;
  std::unordered_map<const UOpNode*, UOp> memo;
  Tensor::Deps deps(res.begin() + long(in.size()), res.end());
  for (const Tensor& t : in)
    if (t.uop().slice_ops().has(Ops::AFTER))
      for (const UOp& u : t.uop().toposort())
        if (u.op() == Ops::AFTER && sched::buf_uop(u)) becomes.emplace(u, resolve_afters(u, memo));
  for (size_t i = 0; i < in.size() && repoint_outputs; i++)
    if (res[i]) becomes[in[i].uop()] = Tensor(res[i]->buffer).reshape(in[i].shape()).uop(), deps.push_back(res[i]);
  apply_map_to_tensors(becomes, deps);
  res.resize(in.size());
  return res;
}
}  // namespace detail

// Realize several tensors with one schedule (so shared work runs once); `device` as engine::device(). Afterwards
// every live tensor reads the results instead of recomputing them, and sees every assign that ran.
inline void realize(std::vector<Tensor*> ts, const std::string& device = "") {
  std::vector<Tensor> in;
  for (Tensor* t : ts) in.push_back(*t);
  detail::realize_impl(in, device, true);
}

inline Tensor& Tensor::realize(const std::string& device) {
  if (is_realized()) return *this;
  graft::realize({this}, device);
  return *this;
}

template <class T> std::vector<T> Tensor::to_vector(const std::string& device) const {
  // read like numpy(): pending assigns run, but this tensor is not re-pointed at a copy of itself
  auto stored = [](const Tensor& t) -> std::shared_ptr<const HostStorage> {
    UOp b = t.realized_buffer();
    return b ? host_storage(b) : nullptr;
  };
  std::shared_ptr<const HostStorage> st = stored(*this);
  if (!st) st = detail::realize_impl({*this}, device, false).at(0);
  if (!st) st = stored(*this);  // it was a view of assigned buffers: the assigns ran
  if (!st) st = detail::realize_impl({Tensor(UOp::make(Ops::CONTIGUOUS, dtype(), {uop_}), deps_)}, device, false).at(0);
  if (!st) throw Error("to_vector: the realized tensor has no host data");
  std::vector<T> r(size_t(st->numel));
  for (int64_t i = 0; i < st->numel; i++) {
    double v = st->get(i);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) r[size_t(i)] = std::isfinite(v) ? T(int64_t(v)) : T(0);
    else r[size_t(i)] = T(v);
  }
  return r;
}

}  // namespace graft
