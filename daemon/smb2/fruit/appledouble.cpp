#include "smb2/fruit/appledouble.hpp"

#include <algorithm>
#include <cstring>

namespace ringsmb::smb2::fruit {
namespace {

constexpr size_t kAdFillerAt = 8, kAdFillerBytes = 16, kAdCountAt = 24, kAdEntriesAt = 26, kAdEntryBytes = 12;
constexpr char kMacosFiller[] = "Mac OS X        ";
constexpr size_t kAdMaxEntries = 32;  // the format defines 15 ids; Netatalk adds 4
constexpr uint32_t kAttrMagic = 0x41545452;  // "ATTR"
constexpr size_t kAttrHeaderBytes = 36, kAttrEntryFixedBytes = 11;
constexpr size_t kAttrMaxCount = 1024;

uint16_t load_be16(const uint8_t* p) { return uint16_t((p[0] << 8) | p[1]); }
void store_be16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v >> 8), p[1] = uint8_t(v); }

// The attributes in the ATTR area that follows a Finder info entry at
// `fi_at` of `fi_len` bytes. False when the area is inconsistent.
bool parse_attributes(ByteSpan head, uint64_t fi_at, uint64_t fi_len, AppleDouble& ad) {
  uint64_t at = fi_at + kAdFinderInfoBytes + 2;  // 2 bytes of padding
  if (fi_len < kAdFinderInfoBytes + 2 + kAttrHeaderBytes || at + kAttrHeaderBytes > head.size()) return false;
  const uint8_t* h = head.data() + at;
  if (load_be32(h) != kAttrMagic) return false;
  const uint64_t total = load_be32(h + 8), data_start = load_be32(h + 12), data_length = load_be32(h + 16);
  const size_t count = load_be16(h + 34);
  if (total > head.size() || data_start < at + kAttrHeaderBytes || data_start + data_length > total ||
      count > kAttrMaxCount)
    return false;
  at += kAttrHeaderBytes;
  for (size_t i = 0; i < count; ++i) {
    at = (at + 3) & ~uint64_t{3};
    if (at + kAttrEntryFixedBytes > data_start) return false;
    const uint8_t* e = head.data() + at;
    const uint64_t offset = load_be32(e), length = load_be32(e + 4);
    const size_t name_len = e[10];
    if (name_len == 0 || at + kAttrEntryFixedBytes + name_len > data_start) return false;
    if (offset >= total || offset + length > total) return false;
    const char* name = reinterpret_cast<const char*>(e + kAttrEntryFixedBytes);
    AppleDouble::Attribute a;
    a.name.assign(name, strnlen(name, name_len));
    a.value.assign(head.begin() + offset, head.begin() + offset + length);
    ad.attributes.push_back(std::move(a));
    at += kAttrEntryFixedBytes + name_len;
  }
  return true;
}

}  // namespace

std::optional<AppleDouble> parse_appledouble(ByteSpan head, uint64_t file_size) {
  if (head.size() < kAdEntriesAt || load_be32(head.data()) != kAppleDoubleMagic ||
      load_be32(head.data() + 4) != kAppleDoubleVersion)
    return std::nullopt;
  AppleDouble ad;
  ad.from_macos = std::memcmp(head.data() + kAdFillerAt, kMacosFiller, kAdFillerBytes) == 0;
  const size_t count = load_be16(head.data() + kAdCountAt);
  if (count > kAdMaxEntries || kAdEntriesAt + count * kAdEntryBytes > head.size()) return std::nullopt;
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* e = head.data() + kAdEntriesAt + i * kAdEntryBytes;
    const uint32_t id = load_be32(e);
    const uint64_t offset = load_be32(e + 4);
    uint64_t length = load_be32(e + 8);
    if (offset > file_size) return std::nullopt;
    if (id == kAdEntryResourceFork) {
      ad.resource_fork_offset = offset;
      ad.resource_fork_length = std::min(length, file_size - offset);
    } else if (id == kAdEntryFinderInfo) {
      if (length < kAdFinderInfoBytes || offset + length > head.size()) return std::nullopt;
      ad.finder_info.emplace();
      ad.finder_info_offset = offset;
      std::memcpy(ad.finder_info->data(), head.data() + offset, kAdFinderInfoBytes);
      if (length > kAdFinderInfoBytes && !parse_attributes(head, offset, length, ad)) return std::nullopt;
    } else if (offset + length > file_size) {
      return std::nullopt;
    }
  }
  return ad;
}

Bytes converted_appledouble(bool from_macos) {
  Bytes b(kAdConvertedBytes, 0);
  store_be32(b.data(), kAppleDoubleMagic);
  store_be32(b.data() + 4, kAppleDoubleVersion);
  if (from_macos) std::memcpy(b.data() + kAdFillerAt, kMacosFiller, kAdFillerBytes);
  store_be16(b.data() + kAdCountAt, 2);
  uint8_t* e = b.data() + kAdEntriesAt;
  store_be32(e, kAdEntryFinderInfo);
  store_be32(e + 4, uint32_t(kAdEntriesAt + 2 * kAdEntryBytes));  // 50
  store_be32(e + 8, uint32_t(kAdFinderInfoBytes));
  store_be32(e + 12, kAdEntryResourceFork);
  store_be32(e + 16, uint32_t(kAdConvertedBytes));
  store_be32(e + 20, 0);
  return b;
}

std::string stream_name_of_attribute(std::string_view name) {
  static constexpr std::string_view kMapped = "\"*:<>?\\|";  // to U+F020..U+F027, in this order
  std::string out;
  for (char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    uint32_t private_use = 0;
    if (c >= 0x01 && c <= 0x1f) private_use = 0xF000 + c;
    else if (size_t i = kMapped.find(ch); i != std::string_view::npos) private_use = uint32_t(0xF020 + i);
    else if (c == 0 || c == '/') return {};
    if (!private_use) {
      out.push_back(ch);
      continue;
    }
    out.push_back(char(0xE0 | (private_use >> 12)));
    out.push_back(char(0x80 | ((private_use >> 6) & 0x3F)));
    out.push_back(char(0x80 | (private_use & 0x3F)));
  }
  return out;
}

bool blank_resource_fork(ByteSpan rfork) {
  // An empty Resource Manager file: data and map both at 256, no data, a
  // 30-byte map holding no types; the text in the header's spare bytes.
  if (rfork.size() != kAdBlankResourceForkBytes) return false;
  uint8_t blank[kAdBlankResourceForkBytes] = {};
  for (size_t at : {size_t{0}, size_t{256}}) {
    store_be32(blank + at, 256);
    store_be32(blank + at + 4, 256);
    store_be32(blank + at + 12, 30);
  }
  static constexpr char kText[] = "This resource fork intentionally left blank   ";
  std::memcpy(blank + 16, kText, sizeof kText - 1);
  store_be16(blank + 280, 28);      // type list offset
  store_be16(blank + 282, 30);      // name list offset
  store_be16(blank + 284, 0xFFFF);  // types - 1
  return std::memcmp(blank, rfork.data(), sizeof blank) == 0;
}

}  // namespace ringsmb::smb2::fruit
