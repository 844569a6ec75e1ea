// libFuzzer target: AppleDouble "._" files are written by clients, and the
// server parses them when it converts them into streams (smb2/fruit/
// adouble_convert.hpp). Any bytes, of any claimed file size, either parse
// or do not; what parses points inside the bytes it was given, and every
// attribute name maps to a stream name without NUL or '/'.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "smb2/fruit/appledouble.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringsmb::smb2::fruit;
  const ringsmb::ByteSpan head(data, size);
  for (uint64_t file_size : {uint64_t(size), uint64_t(size) + 4096}) {
    auto ad = parse_appledouble(head, file_size);
    if (!ad) continue;
    if (ad->resource_fork_offset + ad->resource_fork_length > file_size) std::abort();
    if (ad->finder_info && ad->finder_info_offset + kAdFinderInfoBytes > size) std::abort();
    for (const auto& a : ad->attributes) {
      if (a.value.size() > size) std::abort();
      std::string mapped = stream_name_of_attribute(a.name);
      if (mapped.find('\0') != std::string::npos || mapped.find('/') != std::string::npos) std::abort();
    }
  }
  (void)blank_resource_fork(head);
  return 0;
}
