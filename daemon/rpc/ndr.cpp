#include "rpc/ndr.hpp"

#include <charconv>

#include "auth/ntlm_utf16.hpp"

namespace ringsmb::rpc {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes one UTF-8 sequence leniently: anything invalid is U+FFFD and
// consumes one byte, so names from the system can always be sent.
char32_t next_code_point(std::string_view s, size_t& i) {
  auto b0 = uint8_t(s[i]);
  int len = b0 < 0x80 ? 1 : (b0 >> 5) == 6 ? 2 : (b0 >> 4) == 14 ? 3 : (b0 >> 3) == 30 ? 4 : 0;
  if (len == 0 || i + len > s.size()) { ++i; return 0xFFFD; }
  char32_t cp = len == 1 ? b0 : b0 & (0x7F >> len);
  for (int k = 1; k < len; ++k) {
    auto b = uint8_t(s[i + k]);
    if ((b >> 6) != 2) { ++i; return 0xFFFD; }
    cp = (cp << 6) | (b & 0x3F);
  }
  static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) { ++i; return 0xFFFD; }
  i += len;
  return cp;
}

}  // namespace

Bytes to_utf16le(std::string_view utf8) {
  Bytes out;
  out.reserve(utf8.size() * 2);
  ByteWriter w(out);
  for (size_t i = 0; i < utf8.size();) {
    char32_t cp = next_code_point(utf8, i);
    if (cp >= 0x10000) {
      cp -= 0x10000;
      w.u16(uint16_t(0xD800 | (cp >> 10)));
      w.u16(uint16_t(0xDC00 | (cp & 0x3FF)));
    } else {
      w.u16(uint16_t(cp));
    }
  }
  return out;
}

Uuid Uuid::parse(std::string_view t) {
  Uuid u;
  // Field widths in hex digits; the first three fields are little-endian on the wire.
  static constexpr int kWidth[] = {8, 4, 4, 4, 12};
  if (t.size() != 36) return u;
  std::array<uint8_t, 16> raw{};
  size_t pos = 0, out = 0;
  for (int f = 0; f < 5; ++f) {
    if (f > 0 && t[pos++] != '-') return u;
    for (int k = 0; k < kWidth[f]; k += 2) {
      int hi = hex_value(t[pos]), lo = hex_value(t[pos + 1]);
      if (hi < 0 || lo < 0) return u;
      raw[out++] = uint8_t(hi * 16 + lo);
      pos += 2;
    }
  }
  static constexpr int kOrder[] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
  for (int i = 0; i < 16; ++i) u.bytes[i] = raw[kOrder[i]];
  return u;
}

std::string Sid::to_string() const {
  std::string s = "S-" + std::to_string(revision) + "-" + std::to_string(authority);
  for (uint32_t v : sub) s += "-" + std::to_string(v);
  return s;
}

std::optional<Sid> Sid::parse(std::string_view text) {
  if (text.size() < 4 || (text[0] != 'S' && text[0] != 's') || text[1] != '-') return std::nullopt;
  Sid sid;
  std::vector<uint64_t> parts;
  const char* p = text.data() + 2;
  const char* end = text.data() + text.size();
  while (p < end) {
    uint64_t v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc() || (next != end && *next != '-')) return std::nullopt;
    parts.push_back(v);
    p = next == end ? end : next + 1;
  }
  if (parts.size() < 2 || parts.size() > 2 + kMaxSubAuthorities || parts[0] > 255) return std::nullopt;
  if (parts[1] >= (uint64_t(1) << 48)) return std::nullopt;
  sid.revision = uint8_t(parts[0]);
  sid.authority = parts[1];
  for (size_t i = 2; i < parts.size(); ++i) {
    if (parts[i] > 0xFFFFFFFFu) return std::nullopt;
    sid.sub.push_back(uint32_t(parts[i]));
  }
  return sid;
}

Sid Sid::with_rid(uint32_t rid) const {
  Sid s = *this;
  s.sub.push_back(rid);
  return s;
}

bool PolicyHandle::is_null() const {
  for (uint8_t b : bytes) {
    if (b) return false;
  }
  return true;
}

// ---- reader ----

void NdrReader::align(size_t n) {
  size_t rem = r_.offset() % n;
  if (rem) r_.skip(n - rem);
}

uint32_t NdrReader::count(uint32_t limit) {
  uint32_t n = u32();
  if (n > limit) fail();
  return ok() ? n : 0;
}

std::string NdrReader::utf16_units(uint32_t units) {
  ByteSpan raw = r_.bytes(size_t(units) * 2);
  if (!ok()) return {};
  // A NUL terminator belongs to [string] semantics, not to the name.
  if (units > 0 && raw[raw.size() - 2] == 0 && raw[raw.size() - 1] == 0) raw = raw.first(raw.size() - 2);
  auto s = auth::detail::utf16le_to_utf8(raw);
  if (!s) {
    fail();
    return {};
  }
  return *s;
}

std::string NdrReader::wstring() {
  uint32_t max = count(kMaxStringUnits + 1);
  uint32_t offset = u32();
  uint32_t actual = count(kMaxStringUnits + 1);
  // Varying arrays from clients always start at 0; anything else is garbage.
  if (offset != 0 || actual > max) fail();
  return ok() ? utf16_units(actual) : std::string();
}

std::optional<std::string> NdrReader::unique_wstring() {
  if (pointer() == 0) return std::nullopt;
  return wstring();
}

UnicodeStringHeader NdrReader::unicode_string_header() {
  UnicodeStringHeader h;
  align(4);  // the struct aligns to its pointer, not its first u16
  h.length = u16();
  h.max_length = u16();
  h.referent = pointer();
  if (h.length > h.max_length || (h.length & 1)) fail();
  return h;
}

std::string NdrReader::unicode_string_body(const UnicodeStringHeader& h) {
  if (h.referent == 0) return {};
  uint32_t max = count(kMaxStringUnits + 1);
  uint32_t offset = u32();
  uint32_t actual = count(kMaxStringUnits + 1);
  if (offset != 0 || actual > max || actual * 2 != h.length) fail();
  return ok() ? utf16_units(actual) : std::string();
}

std::string NdrReader::unicode_string() {
  auto h = unicode_string_header();
  return unicode_string_body(h);
}

Sid NdrReader::sid() {
  Sid sid;
  uint32_t n = count(kMaxSubAuthorities);
  sid.revision = u8();
  uint8_t sub_count = u8();
  uint64_t auth = 0;
  for (int i = 0; i < 6; ++i) auth = (auth << 8) | u8();  // big-endian (MS-DTYP 2.4.1)
  sid.authority = auth;
  if (sub_count != n || sid.revision != 1) fail();
  if (!ok()) return {};
  for (uint32_t i = 0; i < n; ++i) sid.sub.push_back(u32());
  return sid;
}

PolicyHandle NdrReader::handle() {
  PolicyHandle h;
  align(4);
  ByteSpan b = r_.bytes(20);
  if (ok()) std::copy(b.begin(), b.end(), h.bytes.begin());
  return h;
}

// ---- writer ----

uint32_t NdrWriter::pointer(bool present) {
  uint32_t id = 0;
  if (present) {
    id = next_referent_;
    next_referent_ += 4;
  }
  u32(id);
  return id;
}

void NdrWriter::flush() {
  auto pending = std::move(deferred_);
  deferred_.clear();
  for (auto& f : pending) {
    f();
    flush();  // the referent's own referents follow it directly
  }
}

void NdrWriter::handle(const PolicyHandle& h) {
  align(4);
  // Byte by byte: GCC 12 warns falsely about a range insert into an empty vector.
  for (uint8_t b : h.bytes) w_.u8(b);
}

void NdrWriter::wstring(std::string_view utf8) {
  Bytes units = to_utf16le(utf8);
  uint32_t n = uint32_t(units.size() / 2 + 1);
  u32(n);
  u32(0);
  u32(n);
  w_.bytes(units);
  w_.u16(0);
}

void NdrWriter::unique_wstring(std::string_view utf8) {
  pointer(true);
  defer([this, s = std::string(utf8)] { wstring(s); });
}

void NdrWriter::counted_string(std::string_view utf8, uint16_t extra) {
  Bytes units = to_utf16le(utf8);
  uint16_t len = uint16_t(std::min<size_t>(units.size(), 0xFFFC));
  units.resize(len);
  align(4);  // the struct aligns to its pointer, not its first u16
  u16(len);
  u16(uint16_t(len + extra));
  pointer(true);
  defer([this, units = std::move(units), extra] {
    u32(uint32_t((units.size() + extra) / 2));  // max_count: MaximumLength / 2
    u32(0);
    u32(uint32_t(units.size() / 2));
    w_.bytes(units);
  });
}

void NdrWriter::sid(const Sid& sid) {
  u32(uint32_t(sid.sub.size()));
  u8(sid.revision);
  u8(uint8_t(sid.sub.size()));
  for (int i = 5; i >= 0; --i) u8(uint8_t(sid.authority >> (8 * i)));
  for (uint32_t v : sid.sub) u32(v);
}

}  // namespace ringsmb::rpc
