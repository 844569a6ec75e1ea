#include "smb2/fruit/afp_streams.hpp"

#include <algorithm>
#include <cstring>

#include "smb2/fruit/fruit_share.hpp"
#include "smb2/fruit/netatalk.hpp"
#include "state/session.hpp"
#include "vfs/stream_store.hpp"

namespace ringsmb::smb2::fruit {
namespace {

bool zero_finder_info(ByteSpan info) {
  for (size_t i = 0; i < kAfpFinderInfoBytes; ++i)
    if (info[kAfpFinderInfoAt + i]) return false;
  return true;
}

}  // namespace

void filter_stream_list(const Request& req, int fd, std::vector<vfs::StreamEntry>& streams) {
  if (!fruit_share(req)) return;
  const bool hide_empty = aapl_negotiated(req);
  std::erase_if(streams, [&](const vfs::StreamEntry& s) {
    if (is_afp_info(s.name) && s.size != 0 && s.size != kAfpInfoBytes) {
      vfs::remove_stream(fd, afp_info_key());  // not an AfpInfo: Samba removes it too
      return true;
    }
    return s.size == 0 && (hide_empty || is_afp_info(s.name) || is_afp_resource(s.name));
  });
}

bool afp_absent(const Request& req, std::string_view stream_name, uint64_t size) {
  return size == 0 && afp_stream_of(req, stream_name) == kAfpResource;
}

bool empty_stream_hidden(const Request& req, uint64_t size) { return size == 0 && aapl_negotiated(req); }

bool keeps_resource_fork(const Request& req, std::string_view stream_name) {
  return afp_stream_of(req, stream_name) == kAfpResource &&
         req.tree->share.fruit.resource == config::FruitOptions::Resource::File;
}

Result<Bytes> read_afp_info(int fd, uint64_t offset, uint32_t length) {
  if (offset > kAfpInfoBytes) return Bytes{};  // macOS's own reads are off by one at most
  auto data = vfs::read_stream_range(fd, afp_info_key(), 0, std::min<size_t>(length, kAfpInfoBytes));
  if (!data) return data;
  if (data->empty()) {
    Bytes blank = afp_info_with({});
    blank.resize(std::min<size_t>(length, kAfpInfoBytes));
    return blank;
  }
  return data;
}

NtStatus write_afp_info(const state::Open& open, uint64_t offset, ByteSpan data) {
  if (data.size() < 3 || (offset != 0 && data.size() < kAfpInfoBytes) || std::memcmp(data.data(), "AFP", 3) != 0)
    return NtStatus::InvalidParameter;
  if (data.size() <= kAfpFinderInfoAt) return NtStatus::Success;  // no FinderInfo in it: nothing to keep
  Bytes info(kAfpInfoBytes, 0);
  std::memcpy(info.data(), data.data(), std::min(data.size(), kAfpInfoBytes));
  const int fd = open.fd.get();
  const std::string& key = open.stream->key;
  // Another open's close may have removed it while it was empty.
  if (NtStatus s = vfs::create_stream(fd, key, open.stream->name);
      s != NtStatus::Success && s != NtStatus::ObjectNameCollision)
    return s;
  if (open.stream->netatalk_metadata) export_netatalk_metadata(fd, info);
  if (zero_finder_info(info)) return vfs::set_stream_size(fd, key, 0);  // goes at close
  return vfs::write_stream_at(fd, key, 0, info);
}

NtStatus set_afp_info_eof(uint64_t eof) {
  return eof > kAfpInfoBytes ? NtStatus::AllottedSpaceExceeded : NtStatus::Success;
}

}  // namespace ringsmb::smb2::fruit
