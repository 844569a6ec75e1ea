// Bounds-checked little-endian reading and writing of network bytes.
//
// No struct is ever overlaid on bytes from the network. A ByteReader that runs
// past its end sets a sticky failure flag and returns zeros from then on, so a
// decoder reads all its fields and checks ok() once at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ringsmb {

using Bytes = std::vector<uint8_t>;
using ByteSpan = std::span<const uint8_t>;

inline uint16_t load_le16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
inline uint32_t load_le32(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}
inline uint64_t load_le64(const uint8_t* p) { return load_le32(p) | (uint64_t(load_le32(p + 4)) << 32); }
inline void store_le16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v); p[1] = uint8_t(v >> 8); }
// Spelled out byte by byte: g++ -O2 merges such stores into one store (a
// byte swap and a store for big-endian), but leaves a loop of them a loop
// (eight shifts and byte stores for a 64-bit field).
inline void store_le32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v); p[1] = uint8_t(v >> 8); p[2] = uint8_t(v >> 16); p[3] = uint8_t(v >> 24);
}
inline void store_le64(uint8_t* p, uint64_t v) {
  store_le32(p, uint32_t(v));
  store_le32(p + 4, uint32_t(v >> 32));
}
inline void store_be32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24); p[1] = uint8_t(v >> 16); p[2] = uint8_t(v >> 8); p[3] = uint8_t(v);
}
inline uint32_t load_be24(const uint8_t* p) { return (uint32_t(p[0]) << 16) | (uint32_t(p[1]) << 8) | uint32_t(p[2]); }
inline uint32_t load_be32(const uint8_t* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

class ByteReader {
 public:
  explicit ByteReader(ByteSpan data) : data_(data) {}

  bool ok() const { return ok_; }
  size_t offset() const { return pos_; }
  size_t size() const { return data_.size(); }
  size_t remaining() const { return ok_ ? data_.size() - pos_ : 0; }
  bool has(size_t n) const { return ok_ && n <= data_.size() - pos_; }

  uint8_t u8() { return take(1) ? data_[pos_ - 1] : 0; }
  uint16_t u16() { return take(2) ? load_le16(&data_[pos_ - 2]) : 0; }
  uint32_t u32() { return take(4) ? load_le32(&data_[pos_ - 4]) : 0; }
  uint64_t u64() { return take(8) ? load_le64(&data_[pos_ - 8]) : 0; }
  uint32_t be32() { return take(4) ? load_be32(&data_[pos_ - 4]) : 0; }

  // A view of the next n bytes; empty (and failed) if fewer remain.
  ByteSpan bytes(size_t n) {
    if (!take(n)) return {};
    return data_.subspan(pos_ - n, n);
  }
  void skip(size_t n) { take(n); }
  // Moves to an absolute offset inside the data (offset == size() is allowed).
  void seek(size_t off) {
    if (off > data_.size()) ok_ = false;
    else pos_ = off;
  }
  void fail() { ok_ = false; }

 private:
  bool take(size_t n) {
    if (!has(n)) {
      ok_ = false;
      return false;
    }
    pos_ += n;
    return true;
  }
  ByteSpan data_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// Appends to a caller-owned buffer, so one reply buffer can be reused.
//
// A field is stored into a local array and appended from it: the vector
// grows without first zero-filling what is then written over (resize
// value-initialises the new bytes through an out-of-line call and memset,
// about 65 instructions a field). Up to 4 bytes go in through push_back,
// whose path with room left is inline (about 8 instructions a byte);
// longer ones through one insert (an out-of-line call, about 60).
class ByteWriter {
 public:
  explicit ByteWriter(Bytes& out) : out_(out) {}

  size_t size() const { return out_.size(); }
  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint16_t v) {
    uint8_t b[2];
    store_le16(b, v);
    append(b);
  }
  void u32(uint32_t v) {
    uint8_t b[4];
    store_le32(b, v);
    append(b);
  }
  void u64(uint64_t v) {
    uint8_t b[8];
    store_le64(b, v);
    append(b);
  }
  void be32(uint32_t v) {
    uint8_t b[4];
    store_be32(b, v);
    append(b);
  }
  void bytes(ByteSpan b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void bytes(const void* p, size_t n) {
    auto c = static_cast<const uint8_t*>(p);
    out_.insert(out_.end(), c, c + n);
  }
  void zeros(size_t n) { out_.resize(out_.size() + n, 0); }
  // Pads with zeros so that (size() - base) is a multiple of `alignment`.
  void align(size_t alignment, size_t base = 0) {
    size_t rem = (out_.size() - base) % alignment;
    if (rem) zeros(alignment - rem);
  }
  void patch_u16(size_t off, uint16_t v) { store_le16(&out_[off], v); }
  void patch_u32(size_t off, uint32_t v) { store_le32(&out_[off], v); }
  Bytes& buffer() { return out_; }

 private:
  template <size_t N>
  void append(const uint8_t (&b)[N]) {
    if constexpr (N <= 4) {
      for (uint8_t c : b) out_.push_back(c);
    } else {
      out_.insert(out_.end(), b, b + N);
    }
  }
  Bytes& out_;
};

inline ByteSpan as_bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace ringsmb
