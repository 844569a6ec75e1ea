// NDR 2.0 (C706 chapter 14, little-endian, 32-bit) encoding and decoding of
// the few constructed types the IPC$ interfaces use.
//
// Alignment is relative to the start of the stub data, which is where the
// request/response PDU body begins, so each reader/writer has its own base.
// The reader keeps ByteReader's sticky failure flag: a decoder reads every
// field and checks ok() once; counts are capped before anything is reserved,
// so a hostile count can cost at most one failed read, never an allocation.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.hpp"

namespace ringsmb::rpc {

// A UUID in its NDR wire form (time_low, time_mid, time_hi little-endian,
// then 8 bytes as written).
struct Uuid {
  std::array<uint8_t, 16> bytes{};
  // "8a885d04-1ceb-11c9-9fe8-08002b104860"; a malformed text gives all zeros.
  static Uuid parse(std::string_view text);
  bool operator==(const Uuid&) const = default;
};

// An interface or transfer syntax: UUID and major.minor version.
struct SyntaxId {
  Uuid uuid;
  uint16_t major = 0;
  uint16_t minor = 0;
  bool operator==(const SyntaxId&) const = default;
};

// MS-DTYP 2.4.2 SID. The identifier authority is 48 bits.
struct Sid {
  uint8_t revision = 1;
  uint64_t authority = 0;
  std::vector<uint32_t> sub;
  std::string to_string() const;  // "S-1-5-21-1-2-3"
  static std::optional<Sid> parse(std::string_view text);
  Sid with_rid(uint32_t rid) const;
  bool operator==(const Sid&) const = default;
};
inline constexpr size_t kMaxSubAuthorities = 15;  // MS-DTYP 2.4.2.3

// A 20-byte context handle (MS-DTYP 2.2.3: attributes + GUID).
struct PolicyHandle {
  std::array<uint8_t, 20> bytes{};
  bool is_null() const;
  bool operator==(const PolicyHandle&) const = default;
};

// Longest string accepted from a client, in UTF-16 units. RPC_UNICODE_STRING
// cannot exceed 32767 units anyway; [string] parameters get the same cap.
inline constexpr uint32_t kMaxStringUnits = 32767;

// RPC_UNICODE_STRING's inline part; the buffer follows as a deferred referent.
struct UnicodeStringHeader {
  uint16_t length = 0;      // bytes
  uint16_t max_length = 0;  // bytes
  uint32_t referent = 0;    // 0: NULL buffer
};

class NdrReader {
 public:
  explicit NdrReader(ByteSpan stub) : r_(stub) {}

  bool ok() const { return r_.ok(); }
  void fail() { r_.fail(); }
  size_t offset() const { return r_.offset(); }
  size_t remaining() const { return r_.remaining(); }

  void align(size_t n);
  uint8_t u8() { return r_.u8(); }
  uint16_t u16() { align(2); return r_.u16(); }
  uint32_t u32() { align(4); return r_.u32(); }
  uint64_t u64() { align(8); return r_.u64(); }
  // A unique or full pointer's referent id; 0 is NULL.
  uint32_t pointer() { return u32(); }
  // A conformance (or variance) count; fails when above `limit`.
  uint32_t count(uint32_t limit);

  // [string] wchar_t* body: max_count, offset, actual_count, units. A
  // trailing NUL is dropped. Invalid UTF-16 fails the reader.
  std::string wstring();
  // A [unique, string] wchar_t*: nullopt for NULL.
  std::optional<std::string> unique_wstring();
  UnicodeStringHeader unicode_string_header();
  // The deferred buffer of an RPC_UNICODE_STRING ("" for a NULL buffer).
  std::string unicode_string_body(const UnicodeStringHeader& h);
  // A whole top-level RPC_UNICODE_STRING (header then its buffer).
  std::string unicode_string();
  // RPC_SID including its conformance count.
  Sid sid();
  PolicyHandle handle();

 private:
  std::string utf16_units(uint32_t units);
  ByteReader r_;
};

class NdrWriter {
 public:
  // Appends to `out`; alignment counts from out.size() at construction.
  explicit NdrWriter(Bytes& out) : w_(out), base_(out.size()) {}

  void align(size_t n) { w_.align(n, base_); }
  void u8(uint8_t v) { w_.u8(v); }
  void u16(uint16_t v) { align(2); w_.u16(v); }
  void u32(uint32_t v) { align(4); w_.u32(v); }
  void u64(uint64_t v) { align(8); w_.u64(v); }
  void bytes(ByteSpan b) { w_.bytes(b); }
  // Writes a fresh referent id, or 0 when !present.
  uint32_t pointer(bool present);

  // Queues a pointer's referent to be written after the enclosing
  // construct; flush() writes them depth-first (a referent's own deferred
  // referents come right after it), which is the NDR order.
  void defer(std::function<void()> f) { deferred_.push_back(std::move(f)); }
  void flush();

  // [string] wchar_t* body, NUL-terminated.
  void wstring(std::string_view utf8);
  // [unique, string] wchar_t*: referent id now, body deferred.
  void unique_wstring(std::string_view utf8);
  // RPC_UNICODE_STRING: header now, buffer (no NUL) deferred. An empty
  // string still gets a non-NULL buffer, as Windows sends it.
  void unicode_string(std::string_view utf8) { counted_string(utf8, 0); }
  // The same with MaximumLength = Length + 2 (room for a NUL that is not
  // sent), which is how Windows sends the domain names of LSA replies.
  void unicode_string_large(std::string_view utf8) { counted_string(utf8, 2); }
  void sid(const Sid& sid);
  void handle(const PolicyHandle& h);
  size_t size() const { return w_.size() - base_; }

 private:
  void counted_string(std::string_view utf8, uint16_t extra);
  ByteWriter w_;
  size_t base_;
  uint32_t next_referent_ = 0x00020000;  // Windows starts its ids here
  std::vector<std::function<void()>> deferred_;
};

// UTF-8 to UTF-16LE; invalid UTF-8 bytes become U+FFFD so output never fails.
Bytes to_utf16le(std::string_view utf8);

}  // namespace ringsmb::rpc
