// Reading and writing the fixed-layout structures of ksmbd_abi.hpp.
#pragma once

#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "common/bytes.hpp"

namespace ringsmb::kmod {

// The structure at the start of P, or nothing when P is shorter.
template <typename T>
std::optional<T> read_struct(ByteSpan p) {
  if (p.size() < sizeof(T)) return std::nullopt;
  T t;
  std::memcpy(&t, p.data(), sizeof t);
  return t;
}

// A zero-filled structure (reserved room included).
template <typename T>
T zeroed() {
  T t;
  std::memset(&t, 0, sizeof t);
  return t;
}

template <typename T>
Bytes struct_bytes(const T& t, ByteSpan tail = {}) {
  Bytes b(sizeof t + tail.size());
  std::memcpy(b.data(), &t, sizeof t);
  if (!tail.empty()) std::memcpy(b.data() + sizeof t, tail.data(), tail.size());
  return b;
}

// Copies S into a fixed array, cut to leave room for the NUL.
template <size_t N>
void put_string(char (&dst)[N], std::string_view s) {
  size_t n = std::min(s.size(), N - 1);
  std::memcpy(dst, s.data(), n);
  dst[n] = '\0';
}

// A fixed array's string, up to its first NUL (the kernel always ends it
// with one, but nothing here relies on that).
template <size_t N>
std::string get_string(const char (&src)[N]) {
  return std::string(src, strnlen(src, N));
}

}  // namespace ringsmb::kmod
