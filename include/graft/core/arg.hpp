// Arg: the value a UOp carries besides op/dtype/src (tinygrad's `arg`), plus the arg kinds the scheduler needs.
// Identity (hash-consing) uses exact equality: int 1, float 1.0 and True are different args, and floats compare by
// bit pattern (0.0 != -0.0, all NaNs are one value). Pattern matching uses Python's numeric equality instead
// (`py_equal`: 0 == 0.0 == False), as tinygrad's UPat does.
#pragma once
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "graft/core/dtype.hpp"
#include "graft/core/ops.hpp"

namespace graft {

struct InvalidT {
  constexpr bool operator==(const InvalidT&) const = default;
};
// "this lane is masked off" (tinygrad's Invalid)
inline constexpr InvalidT Invalid{};

enum class AxisType : uint8_t { DEVICE, GLOBAL, WARP, LOCAL, WEAK, GROUP_REDUCE, REDUCE, UPCAST, UNROLL, THREAD, PLACEHOLDER, LOOP };
inline constexpr std::string_view axis_type_names[] = {"DEVICE", "GLOBAL", "WARP", "LOCAL", "WEAK", "GROUP_REDUCE",
                                                       "REDUCE", "UPCAST", "UNROLL", "THREAD", "PLACEHOLDER", "LOOP"};
enum class AddrSpace : uint8_t { GLOBAL = 1, LOCAL, REG, ALU };
inline constexpr std::string_view addrspace_names[] = {"", "GLOBAL", "LOCAL", "REG", "ALU"};

// Extension point for arg kinds defined by later layers (KernelInfo, CallInfo, ...).
struct ArgObject {
  virtual ~ArgObject() = default;
  virtual size_t hash() const = 0;
  virtual bool equals(const ArgObject& o) const = 0;
  virtual std::string str() const = 0;
};

struct ParamArg;
class Arg;
using ArgTuple = std::vector<Arg>;

// BUFFER/PARAM arg (tinygrad ParamArg). Variables are BUFFERs in the ALU addrspace with vmin_vmax set.
struct ParamArg {
  int64_t slot = -1;
  DType dtype = {};
  std::optional<std::pair<int64_t, int64_t>> vmin_vmax = {};
  int64_t multiple_of = 1;
  std::string name = {};
  AddrSpace addrspace = AddrSpace::GLOBAL;
  std::string device = {};
  bool operator==(const ParamArg&) const = default;
};

// Strings and tuples are held through shared pointers, so an Arg is 24 bytes, not 40 (perf: every node holds one;
// at 10^5 nodes a rewrite is memory bound). is<std::string>() / get<ArgTuple>() and friends hide the indirection.
class Arg {
  template <class T> struct stored { using type = T; };
  template <class T> requires(std::is_same_v<T, std::string> || std::is_same_v<T, ArgTuple>)
  struct stored<T> { using type = std::shared_ptr<const T>; };

 public:
  using Value = std::variant<std::monostate, bool, int64_t, double, InvalidT, DType, Ops, AxisType,
                             std::shared_ptr<const std::string>, std::shared_ptr<const ArgTuple>,
                             std::shared_ptr<const ParamArg>, std::shared_ptr<const ArgObject>>;
  Arg() = default;
  Arg(std::monostate) {}
  Arg(bool b) : v_(b) {}
  Arg(int v) : v_(int64_t(v)) {}
  Arg(long v) : v_(int64_t(v)) {}
  Arg(long long v) : v_(int64_t(v)) {}
  Arg(unsigned v) : v_(int64_t(v)) {}
  Arg(unsigned long v) : v_(int64_t(v)) {}
  Arg(unsigned long long v) : v_(int64_t(v)) {}
  Arg(double d) : v_(std::isnan(d) ? std::numeric_limits<double>::quiet_NaN() : d) {}
  Arg(float d) : Arg(double(d)) {}
  Arg(InvalidT i) : v_(i) {}
  Arg(DType d) : v_(d) {}
  Arg(Ops o) : v_(o) {}
  Arg(AxisType a) : v_(a) {}
  Arg(std::string s) : v_(std::make_shared<const std::string>(std::move(s))) {}
  Arg(const char* s) : Arg(std::string(s)) {}
  Arg(ArgTuple t) : v_(std::make_shared<const ArgTuple>(std::move(t))) {}
  Arg(std::initializer_list<Arg> t) : Arg(ArgTuple(t)) {}
  Arg(ParamArg p) : v_(std::make_shared<const ParamArg>(std::move(p))) {}
  Arg(std::shared_ptr<const ArgObject> o) : v_(std::move(o)) {}

  const Value& value() const { return v_; }
  bool is_none() const { return std::holds_alternative<std::monostate>(v_); }
  template <class T> bool is() const { return std::holds_alternative<typename stored<T>::type>(v_); }
  template <class T> const T& get() const {
    if (auto* p = std::get_if<typename stored<T>::type>(&v_)) {
      if constexpr (std::is_same_v<typename stored<T>::type, T>) return *p;
      else return **p;
    }
    throw Error("Arg: wrong kind (have " + str() + ")");
  }
  bool is_param() const { return is<std::shared_ptr<const ParamArg>>(); }
  const ParamArg& param() const { return *get<std::shared_ptr<const ParamArg>>(); }
  const ArgTuple& tuple() const { return get<ArgTuple>(); }
  bool is_number() const { return is<int64_t>() || is<double>() || is<bool>(); }
  // numeric value as double / int64 (bool and int and float all convert, Python style)
  double as_double() const {
    if (auto* i = std::get_if<int64_t>(&v_)) return double(*i);
    if (auto* d = std::get_if<double>(&v_)) return *d;
    if (auto* b = std::get_if<bool>(&v_)) return *b;
    throw Error("Arg: not a number: " + str());
  }
  int64_t as_int() const {
    if (auto* i = std::get_if<int64_t>(&v_)) return *i;
    if (auto* b = std::get_if<bool>(&v_)) return *b;
    if (auto* d = std::get_if<double>(&v_)) return int64_t(*d);
    throw Error("Arg: not an integer: " + str());
  }
  template <class T> const T* object() const {
    if (auto* p = std::get_if<std::shared_ptr<const ArgObject>>(&v_)) return dynamic_cast<const T*>(p->get());
    return nullptr;
  }

  // exact equality (identity of hash-consed nodes)
  bool operator==(const Arg& o) const {
    if (v_.index() != o.v_.index()) return false;
    // perf: the interning compares of most nodes (no arg, or an int CONST) skip the visit
    if (v_.index() == 0) return true;
    if (const int64_t* a = std::get_if<int64_t>(&v_)) return *a == *std::get_if<int64_t>(&o.v_);
    return std::visit(
        [&](const auto& a) -> bool {
          using T = std::decay_t<decltype(a)>;
          const T& b = std::get<T>(o.v_);
          if constexpr (std::is_same_v<T, double>) return std::memcmp(&a, &b, sizeof(double)) == 0;
          else if constexpr (std::is_same_v<T, std::shared_ptr<const ArgObject>>) return a == b || (a && b && a->equals(*b));
          else if constexpr (requires { *a; }) return a == b || *a == *b;  // string, tuple, ParamArg
          else return a == b;
        },
        v_);
  }

  // Python's `==` as used by UPat arg matching: numbers compare by value across int/float/bool.
  bool py_equal(const Arg& o) const {
    if (is_number() && o.is_number()) {
      if (is<double>() || o.is<double>()) {
        double a = as_double(), b = o.as_double();
        return a == b || (std::isnan(a) && std::isnan(b));
      }
      return as_int() == o.as_int();
    }
    if (is<ArgTuple>() && o.is<ArgTuple>()) {
      const auto &a = tuple(), &b = o.tuple();
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); i++)
        if (!a[i].py_equal(b[i])) return false;
      return true;
    }
    return *this == o;
  }

  // one step of hash(): folds x into h (boost::hash_combine's mix)
  static size_t hash_mix(size_t h, size_t x) { return h ^ (x + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2)); }
  // hash() of Arg(v), without an Arg
  static size_t hash_int(int64_t v) {
    static_assert(std::is_same_v<std::variant_alternative_t<2, Value>, int64_t>);
    return hash_mix(2 * 0x9E3779B97F4A7C15ull, size_t(v));
  }
  size_t hash() const {
    size_t h = v_.index() * 0x9E3779B97F4A7C15ull;
    auto mix = [&](size_t x) { h = hash_mix(h, x); };
    if (v_.index() == 0) return h;  // perf: no arg / int CONST without the visit (same values as below)
    if (const int64_t* a = std::get_if<int64_t>(&v_)) return hash_int(*a);
    std::visit(
        [&](const auto& a) {
          using T = std::decay_t<decltype(a)>;
          if constexpr (std::is_same_v<T, std::monostate> || std::is_same_v<T, InvalidT>) {
          } else if constexpr (std::is_same_v<T, double>) {
            uint64_t bits;
            std::memcpy(&bits, &a, 8);
            mix(bits);
          } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t>) mix(size_t(a));
          else if constexpr (std::is_same_v<T, DType>) mix(a.index());
          else if constexpr (std::is_same_v<T, Ops> || std::is_same_v<T, AxisType>) mix(size_t(a));
          else if constexpr (std::is_same_v<T, std::shared_ptr<const std::string>>) mix(std::hash<std::string>{}(*a));
          else if constexpr (std::is_same_v<T, std::shared_ptr<const ArgTuple>>) for (const Arg& x : *a) mix(x.hash());
          else if constexpr (std::is_same_v<T, std::shared_ptr<const ParamArg>>) {
            mix(size_t(a->slot)), mix(a->dtype.index()), mix(std::hash<std::string>{}(a->name)), mix(size_t(a->addrspace));
            if (a->vmin_vmax) mix(size_t(a->vmin_vmax->first)), mix(size_t(a->vmin_vmax->second));
          } else if constexpr (std::is_same_v<T, std::shared_ptr<const ArgObject>>) mix(a ? a->hash() : 0);
        },
        v_);
    return h;
  }

  std::string str() const;

 private:
  Value v_;
};

// Python's repr of a float (shortest round-trip digits, scientific below 1e-4 and from 1e16).
inline std::string py_float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string s(buf, r.ptr);
  size_t e = s.find('e');
  std::string mant = s.substr(0, e);
  int exp = std::stoi(s.substr(e + 1));
  bool neg = mant[0] == '-';
  if (neg) mant.erase(0, 1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  std::string out;
  if (exp < -4 || exp >= 16) {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += eb;
  } else if (exp < 0) {
    out = "0." + std::string(size_t(-exp - 1), '0') + digits;
  } else {
    if (digits.size() <= size_t(exp) + 1) out = digits + std::string(size_t(exp) + 1 - digits.size(), '0') + ".0";
    else out = digits.substr(0, size_t(exp) + 1) + "." + digits.substr(size_t(exp) + 1);
  }
  return neg ? "-" + out : out;
}

inline std::string Arg::str() const {
  return std::visit(
      [&](const auto& a) -> std::string {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, std::monostate>) return "None";
        else if constexpr (std::is_same_v<T, bool>) return a ? "True" : "False";
        else if constexpr (std::is_same_v<T, int64_t>) return std::to_string(a);
        else if constexpr (std::is_same_v<T, double>) return py_float_repr(a);
        else if constexpr (std::is_same_v<T, InvalidT>) return "Invalid";
        else if constexpr (std::is_same_v<T, DType>) return "dtypes." + std::string(a.py_name());
        else if constexpr (std::is_same_v<T, Ops>) return "Ops." + std::string(op_name(a));
        else if constexpr (std::is_same_v<T, AxisType>) return "AxisType." + std::string(axis_type_names[size_t(a)]);
        else if constexpr (std::is_same_v<T, std::shared_ptr<const std::string>>) return "'" + *a + "'";
        else if constexpr (std::is_same_v<T, std::shared_ptr<const ArgTuple>>) {
          std::string s = "(";
          for (size_t i = 0; i < a->size(); i++) s += (i ? ", " : "") + (*a)[i].str();
          return s + (a->size() == 1 ? ",)" : ")");
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const ParamArg>>) {
          std::string s = "ParamArg(" + std::to_string(a->slot) + ", dtypes." + std::string(a->dtype.py_name());
          if (a->vmin_vmax) s += ", vmin_vmax=(" + std::to_string(a->vmin_vmax->first) + ", " + std::to_string(a->vmin_vmax->second) + ")";
          // tinygrad prints multiple_of when it is not None; variables (vmin_vmax set) always carry one
          if (a->multiple_of != 1 || a->vmin_vmax) s += ", multiple_of=" + std::to_string(a->multiple_of);
          if (!a->name.empty()) s += ", name='" + a->name + "'";
          if (a->addrspace != AddrSpace::GLOBAL) s += ", addrspace=AddrSpace." + std::string(addrspace_names[size_t(a->addrspace)]);
          if (!a->device.empty()) s += ", device='" + a->device + "'";
          s += ")";
          return s;
        } else return a ? a->str() : "None";
      },
      v_);
}

// An arg's class for the pattern matcher's sieve (pattern/matcher.hpp): numbers that compare equal in Python
// (0 == 0.0 == False) share a class, so a pattern's arg constraint can reject a node by class alone.
inline constexpr uint8_t kArgOther = 0, kArgInvalid = 1, kArgZero = 2, kArgOne = 3, kArgMinusOne = 4, kArgNumber = 5;
// (a template, so an int64 is classed without a conversion to double)
template <class T> constexpr uint8_t number_class(T v) { return v == 0 ? kArgZero : v == 1 ? kArgOne : v == -1 ? kArgMinusOne : kArgNumber; }
inline uint8_t arg_class(const Arg& a) {  // perf: runs for every new node, so no get<>() and its throw path
  const Arg::Value& v = a.value();
  if (const int64_t* i = std::get_if<int64_t>(&v)) return number_class(*i);
  if (const double* d = std::get_if<double>(&v)) return number_class(*d);
  if (const bool* b = std::get_if<bool>(&v)) return *b ? kArgOne : kArgZero;
  return std::holds_alternative<InvalidT>(v) ? kArgInvalid : kArgOther;
}

}  // namespace graft
