// Host data of realized tensors: a side table from BUFFER nodes to their bytes.
//
// A HostStorage owns the bytes and a handle to its BUFFER node, and registers itself in a global table keyed by the
// node pointer (a weak_ptr, so the table never keeps data alive). Tensors hold shared_ptrs to every storage their graph
// reads, so the data lives exactly as long as some Tensor can still reach it; when the last one goes, ~HostStorage
// erases the table entry and drops its node handle, so the BUFFER node can be reclaimed too. Because the storage holds
// the node while the entry exists, a node address is never reused while it is still a key. Thread-safe (one mutex).
#pragma once
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "graft/core/shape.hpp"

namespace graft {

struct HostStorage {
  UOp buffer;                  // the BUFFER node (shape (numel,))
  DType dtype;
  int64_t numel = 0;
  std::vector<uint8_t> bytes;  // numel * itemsize, native layout of dtype
  HostStorage() = default;
  HostStorage(const HostStorage&) = delete;
  HostStorage& operator=(const HostStorage&) = delete;
  ~HostStorage();
  // element i as double (ints above 2^53 lose precision)
  double get(int64_t i) const;
  void set(int64_t i, double v);
};

namespace detail {
struct StorageTable {
  std::mutex mu;
  std::unordered_map<const UOpNode*, std::weak_ptr<HostStorage>> map;
  static StorageTable& get() {
    static StorageTable* t = new StorageTable();  // leaked on purpose (storages may die during static destruction)
    return *t;
  }
};
inline std::atomic<int64_t>& buffer_slot_counter() {
  static std::atomic<int64_t> c{0};
  return c;
}
inline void check_storable(DType dt) {
  if (dtypes::is_weak(dt) || dt == dtypes::void_)
    throw Error("host storage: dtype dtypes." + std::string(dt.py_name()) + " is not supported");
}
}  // namespace detail

inline HostStorage::~HostStorage() {
  if (!buffer) return;
  auto& t = detail::StorageTable::get();
  std::lock_guard<std::mutex> lk(t.mu);
  auto it = t.map.find(buffer.node());
  if (it != t.map.end() && it->second.expired()) t.map.erase(it);
}

// element i of a dtype-typed byte array as double, and back (ints above 2^53 lose precision)
inline double load_element(DType dtype, const uint8_t* base, int64_t i) {
  const uint8_t* p = base + size_t(i) * size_t(dtype.itemsize());
  auto rd = [&]<class T>(T) { T v; std::memcpy(&v, p, sizeof(T)); return double(v); };
  switch (dtype.id) {
    case DTypeId::bool_: return p[0] != 0;
    case DTypeId::int8: return rd(int8_t{});
    case DTypeId::uint8: return rd(uint8_t{});
    case DTypeId::int16: return rd(int16_t{});
    case DTypeId::uint16: return rd(uint16_t{});
    case DTypeId::int32: return rd(int32_t{});
    case DTypeId::uint32: return rd(uint32_t{});
    case DTypeId::int64: return rd(int64_t{});
    case DTypeId::uint64: return rd(uint64_t{});
    case DTypeId::float32: return rd(float{});
    case DTypeId::float64: return rd(double{});
    case DTypeId::float16: { uint16_t h; std::memcpy(&h, p, 2); return half_from_bits(h); }
    case DTypeId::bfloat16: { uint16_t h; std::memcpy(&h, p, 2); return bf16_from_bits(h); }
    default: throw Error("host storage: unsupported dtype dtypes." + std::string(dtype.py_name()));
  }
}

inline void store_element(DType dtype, uint8_t* base, int64_t i, double v) {
  uint8_t* p = base + size_t(i) * size_t(dtype.itemsize());
  auto wr = [&]<class T>(T x) { std::memcpy(p, &x, sizeof(T)); };
  auto iv = [&] { return int64_t(v); };
  switch (dtype.id) {
    case DTypeId::bool_: p[0] = v != 0; break;
    case DTypeId::int8: wr(int8_t(iv())); break;
    case DTypeId::uint8: wr(uint8_t(iv())); break;
    case DTypeId::int16: wr(int16_t(iv())); break;
    case DTypeId::uint16: wr(uint16_t(iv())); break;
    case DTypeId::int32: wr(int32_t(iv())); break;
    case DTypeId::uint32: wr(uint32_t(iv())); break;
    case DTypeId::int64: wr(iv()); break;
    case DTypeId::uint64: wr(uint64_t(v < 0 ? uint64_t(iv()) : uint64_t(v))); break;
    case DTypeId::float32: wr(float(v)); break;
    case DTypeId::float64: wr(v); break;
    case DTypeId::float16: wr(half_to_bits(v)); break;
    case DTypeId::bfloat16: wr(bf16_to_bits(v)); break;
    default: throw Error("host storage: unsupported dtype dtypes." + std::string(dtype.py_name()));
  }
}

inline double HostStorage::get(int64_t i) const { return load_element(dtype, bytes.data(), i); }
inline void HostStorage::set(int64_t i, double v) { store_element(dtype, bytes.data(), i, v); }

// A fresh BUFFER node: arg ParamArg{slot = fresh unique id, dtype, device "CPU"}, src = shape_arg({numel}).
inline UOp new_buffer_uop(int64_t numel, DType dt, const std::string& device = "CPU") {
  if (dtypes::is_weak(dt)) throw Error("BUFFER: cannot create storage for weak dtype dtypes." + std::string(dt.py_name()));
  ParamArg p;
  p.slot = detail::buffer_slot_counter().fetch_add(1);
  p.dtype = dt;
  p.device = device;
  return UOp::make(Ops::BUFFER, dt, {UOp::shape_arg({numel})}, Arg(std::move(p)));
}

// Allocate zero-filled host storage for a fresh BUFFER and register it.
inline std::shared_ptr<HostStorage> make_host_storage(int64_t numel, DType dt) {
  detail::check_storable(dt);
  auto s = std::make_shared<HostStorage>();
  s->buffer = new_buffer_uop(numel, dt);
  s->dtype = dt;
  s->numel = numel;
  s->bytes.assign(size_t(numel) * size_t(dt.itemsize()), 0);
  auto& t = detail::StorageTable::get();
  std::lock_guard<std::mutex> lk(t.mu);
  t.map[s->buffer.node()] = s;
  return s;
}

// The host data of an existing BUFFER node (a kernel wrote it: an assign target, a Tensor::full buffer): its live
// storage, written in place so every tensor reading the buffer sees the new bytes, or fresh zero-filled storage.
inline std::shared_ptr<HostStorage> attach_host_storage(const UOp& buffer) {
  if (buffer.op() != Ops::BUFFER) throw Error("host storage: " + std::string(op_name(buffer.op())) + " is not a BUFFER");
  auto& t = detail::StorageTable::get();
  std::lock_guard<std::mutex> lk(t.mu);
  if (auto it = t.map.find(buffer.node()); it != t.map.end())
    if (auto live = it->second.lock()) return live;
  DType dt = buffer.dtype();
  detail::check_storable(dt);
  auto s = std::make_shared<HostStorage>();
  s->buffer = buffer;
  s->dtype = dt;
  s->numel = graft::prod(buffer.shape());
  s->bytes.assign(size_t(s->numel) * size_t(dt.itemsize()), 0);
  t.map[buffer.node()] = s;
  return s;
}

// The host data of a BUFFER node, or nullptr.
inline std::shared_ptr<const HostStorage> host_storage(const UOp& buffer) {
  auto& t = detail::StorageTable::get();
  std::lock_guard<std::mutex> lk(t.mu);
  auto it = t.map.find(buffer.node());
  return it == t.map.end() ? nullptr : it->second.lock();
}

inline size_t host_storage_count() {
  auto& t = detail::StorageTable::get();
  std::lock_guard<std::mutex> lk(t.mu);
  return t.map.size();
}

}  // namespace graft
