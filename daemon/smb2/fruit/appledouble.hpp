// AppleDouble files (RFC 1740, version 2) as macOS writes them next to a
// file "NAME" as "._NAME" on servers without named streams: the Finder info
// entry (32 bytes, which macOS extends with the file's extended attributes
// in its own "ATTR" layout) and the resource fork entry. Netatalk keeps the
// same header in its org.netatalk.Metadata attribute. This only parses;
// smb2/fruit/adouble_convert.hpp moves what a "._" file holds into streams.
//
// Layout (big-endian): magic 0x00051607, version 0x00020000, 16 filler
// bytes ("Mac OS X        " from macOS, "Netatalk        " from Netatalk),
// an entry count, then per entry: id, offset, length (u32 each). Entry 9 is
// the Finder info, 2 the resource fork. macOS's Finder info entry is longer
// than 32 bytes when it carries attributes: 2 bytes of padding after the 32,
// then the "ATTR" header (36 bytes: magic, debug tag, total size, data
// start, data length, 12 reserved, flags u16, count u16), then per attribute,
// each at a 4-byte boundary: offset u32, length u32, flags u16, name length
// u8 (with the NUL), the name; offsets are from the file's start.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/bytes.hpp"

namespace ringsmb::smb2::fruit {

inline constexpr uint32_t kAppleDoubleMagic = 0x00051607, kAppleDoubleVersion = 0x00020000;
inline constexpr uint32_t kAdEntryResourceFork = 2, kAdEntryFinderInfo = 9;
inline constexpr size_t kAdFinderInfoBytes = 32;
// What a parser reads of a "._" file: the header and the attributes
// (macOS keeps them under 64 KiB); the resource fork is read apart.
inline constexpr size_t kAdMaxHeaderBytes = 65536;
// A "._" file once converted: header, two entries, an empty Finder info
// (offset 50) and an empty resource fork at 82.
inline constexpr size_t kAdConvertedBytes = 82;

struct AppleDouble {
  bool from_macos = false;  // filler "Mac OS X        "
  std::optional<std::array<uint8_t, kAdFinderInfoBytes>> finder_info;
  uint64_t finder_info_offset = 0;
  uint64_t resource_fork_offset = 0, resource_fork_length = 0;
  struct Attribute {
    std::string name;  // as macOS named it (UTF-8, may hold ':')
    Bytes value;
  };
  std::vector<Attribute> attributes;
};

// Parses the start of an AppleDouble file (`head`: its first bytes, up to
// kAdMaxHeaderBytes) of `file_size` bytes. nullopt when it is not one or is
// inconsistent (an entry past the end, an attribute outside its area); a
// resource fork that runs past the end is cut to the file's end, as Samba
// does.
std::optional<AppleDouble> parse_appledouble(ByteSpan head, uint64_t file_size);

// The 82-byte AppleDouble of a converted "._" file: `filler` kept, an empty
// Finder info and an empty resource fork.
Bytes converted_appledouble(bool from_macos);

// macOS's stream name for attribute `name`: the characters NTFS forbids
// (controls, " * : < > ? \ |) as the private-use characters U+F001..U+F027
// macOS and Samba's catia use. Empty when `name` cannot be a stream name.
std::string stream_name_of_attribute(std::string_view name);

// Whether `rfork` is the resource fork macOS writes for "no resource fork"
// ("This resource fork intentionally left blank").
bool blank_resource_fork(ByteSpan rfork);
inline constexpr size_t kAdBlankResourceForkBytes = 286;

}  // namespace ringsmb::smb2::fruit
