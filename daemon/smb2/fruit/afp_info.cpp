#include "smb2/fruit/afp_info.hpp"

#include <strings.h>

#include <algorithm>

#include "smb2/fruit/fruit_share.hpp"
#include "vfs/stream_store.hpp"

namespace ringsmb::smb2::fruit {
namespace {

const std::string& key_of(std::string_view name) {
  // Both names are valid stream names, so the key always exists.
  static const std::string info = *vfs::stream_xattr_name(kAfpInfoStream);
  static const std::string resource = *vfs::stream_xattr_name(kAfpResourceStream);
  return name == kAfpInfoStream ? info : resource;
}

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

const std::string& afp_info_key() { return key_of(kAfpInfoStream); }
const std::string& afp_resource_key() { return key_of(kAfpResourceStream); }

bool is_afp_info(std::string_view name) { return same_name(name, kAfpInfoStream); }
bool is_afp_resource(std::string_view name) { return same_name(name, kAfpResourceStream); }

bool valid_afp_info(ByteSpan data) {
  return data.size() >= kAfpInfoBytes && load_be32(data.data()) == kAfpSignature &&
         load_be32(data.data() + 4) == kAfpVersion;
}

Bytes afp_info_with(ByteSpan finder_info) {
  Bytes info(kAfpInfoBytes, 0);
  store_be32(info.data(), kAfpSignature);
  store_be32(info.data() + 4, kAfpVersion);
  std::copy_n(finder_info.begin(), std::min(finder_info.size(), kAfpFinderInfoBytes), info.begin() + kAfpFinderInfoAt);
  return info;
}

uint8_t afp_stream_of(const Request& req, std::string_view stream_name) {
  if (!fruit_share(req)) return kAfpNone;
  return is_afp_info(stream_name) ? kAfpInfo : is_afp_resource(stream_name) ? kAfpResource : kAfpNone;
}

uint64_t max_resource_fork_bytes() { return std::max<uint64_t>(vfs::max_stream_bytes(), uint64_t{1} << 30); }

}  // namespace ringsmb::smb2::fruit
