// libFuzzer target: stream names come off the wire in CREATE and rename
// requests. Whatever parse_smb_path accepts as a stream, and whatever bytes
// reach stream_xattr_name directly, the key must name one attribute of the
// stream store on the one file that was opened: the fixed prefix, then a
// name without NUL, '/', '\\' or ':', within Linux's 255-byte xattr names;
// and the file part of the path never carries the stream.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "vfs/paths.hpp"
#include "vfs/stream_store.hpp"

namespace {

using namespace ringsmb;
using namespace ringsmb::vfs;

void check(bool ok) {
  if (!ok) abort();
}

void check_key(std::string_view name, const Result<std::string>& key) {
  if (!key) {
    check(key.error() == NtStatus::ObjectNameInvalid || key.error() == NtStatus::NameTooLong);
    return;
  }
  check(!name.empty());
  check(key->starts_with(kStreamXattrPrefix));
  check(key->size() <= 255);
  const std::string_view rest = std::string_view(*key).substr(kStreamXattrPrefix.size());
  check(!rest.empty());
  for (char c : rest) check(c != '\0' && c != '/' && c != '\\' && c != ':');
  // The key is a function of the case-folded name: folding again changes nothing.
  auto again = stream_xattr_name(rest);
  check(again && *again == *key);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view raw(reinterpret_cast<const char*>(data), size);
  check_key(raw, stream_xattr_name(raw));
  if (auto parsed = parse_smb_path(ByteSpan(data, size))) {
    check(parsed->path.find(':') == std::string::npos);
    if (!parsed->stream.empty()) check_key(parsed->stream, stream_xattr_name(parsed->stream));
  }
  return 0;
}
