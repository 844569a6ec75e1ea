// libFuzzer target: SMB CREATE names and QUERY_DIRECTORY patterns come
// straight off the wire, so parse_smb_path, wildcard_match and the 8.3
// short-name recognizer must cope with any bytes. Checks the invariants the
// VFS relies on.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "vfs/dir_entries.hpp"
#include "vfs/paths.hpp"
#include "vfs/short_names.hpp"

namespace {

using namespace ringsmb;
using namespace ringsmb::vfs;

void check(bool ok) {
  if (!ok) abort();
}

// A path that parsed must be safe to hand to openat2 beneath the root.
void check_parsed(const SmbPath& p) {
  check(!p.path.starts_with('/') && !p.path.ends_with('/'));
  check(p.path.find("//") == std::string::npos);
  check(p.path.find('\0') == std::string::npos);
  check(p.path.find('\\') == std::string::npos);
  check(p.path.find(':') == std::string::npos);
  size_t start = 0;
  while (start <= p.path.size() && !p.path.empty()) {
    const size_t slash = p.path.find('/', start);
    const std::string_view comp = std::string_view(p.path).substr(start, slash - start);
    check(comp != "." && comp != "..");
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  // Round trip: the path's UTF-8 is valid, so it converts back losslessly.
  std::string back;
  check(utf16le_to_utf8(utf8_to_utf16le(p.path), back) && back == p.path);
}

// Any name's short name is empty (an 8.3 name, "." or "..") or an 8.3 name
// of the generated form, never a path or stream; a name the recognizer
// takes for a generated short name is an 8.3 name. For any bytes: names
// read from the disk (find_by_short_name) can hold control characters and
// invalid UTF-8, which an 8.3 name cannot (MS-FSCC 2.1.5.2.1), so they are
// dropped from the short name.
void check_short_names(std::string_view name) {
  const std::string short_name = short_name_of(name);
  if (short_name.empty()) {
    check(name.empty() || name == "." || name == ".." || is_8dot3_name(name));
  } else {
    check(short_name.size() <= 12);
    check(is_8dot3_name(short_name) && looks_like_short_name(short_name));
    check(short_name.find_first_of(std::string_view("/\\:\0", 4)) == std::string::npos);
    check(short_name_of(short_name).empty());  // stable: a short name is its own
  }
  if (looks_like_short_name(name)) check(is_8dot3_name(name));
  // What FileAlternateNameInformation reports is an 8.3 name, for every
  // name but "", "." and "..".
  const std::string alternate = alternate_name(name);
  check(alternate.empty() == (name.empty() || name == "." || name == ".."));
  check(alternate.empty() || is_8dot3_name(alternate));
  // A short name a client was told leads back to its long name.
  static ShortNameMemory memory;
  memory.remember("share", "dir", name);
  if (!short_name.empty()) check(memory.recall("share", "dir", short_name) == std::string(name));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ByteSpan input(data, size);
  if (auto parsed = parse_smb_path(input)) check_parsed(*parsed);
  // '/' separates as a backslash does: the input with every '/' made one parses alike.
  if (size % 2 == 0) {
    Bytes swapped(data, data + size);
    for (size_t i = 0; i + 1 < size; i += 2)
      if (swapped[i] == '/' && swapped[i + 1] == 0) swapped[i] = '\\';
    const auto a = parse_smb_path(input), b = parse_smb_path(swapped);
    check(a.has_value() == b.has_value());
    if (a && b) check(a->path == b->path && a->stream == b->stream && a->trailing_separator == b->trailing_separator);
  }

  // Split the input in two as pattern and name for the matcher.
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const size_t cut = size ? data[0] % (size + 1) : 0;
  const std::string_view pattern = text.substr(0, cut);
  const std::string_view name = text.substr(cut);
  const bool ci = wildcard_match(pattern, name, false);
  const bool cs = wildcard_match(pattern, name, true);
  check(!cs || ci);  // a case-sensitive match is also a case-insensitive one
  check(wildcard_match("*", name, size % 2));
  check_short_names(text);
  return 0;
}
