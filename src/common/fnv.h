// FNV-1a, 64 bits: the one digest zcoll uses where ranks (or a file and a process) must only
// tell equal inputs from different ones (the agreement's counts arrays, the drop-in layer's
// settings, the tuning file's keys and checksums, the HDF5 writer's fields). Not for
// anything adversarial.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace zcoll {

struct Fnv1a {
  uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
  template <class T>
  void add(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>, "hashed as its bytes");
    bytes(&v, sizeof v);
  }
};

}  // namespace zcoll
