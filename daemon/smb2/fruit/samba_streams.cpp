#include "smb2/fruit/samba_streams.hpp"

#include <string>
#include <vector>

#include "common/ntstatus.hpp"
#include "smb2/fruit/appledouble.hpp"
#include "vfs/stream_store.hpp"
#include "vfs/xattr_io.hpp"

namespace ringsmb::smb2::fruit {
namespace {

constexpr std::string_view kDataSuffix = ":$DATA";

// One Samba stream attribute `xattr` into ringsmb's store, then removed.
void import_one(int fd, const std::string& xattr) {
  std::string_view name(xattr);
  name.remove_prefix(sizeof kSambaStreamPrefix - 1);
  if (!name.ends_with(kDataSuffix)) return;  // not a data stream: left alone
  name.remove_suffix(kDataSuffix.size());
  std::string mapped = stream_name_of_attribute(name);
  if (mapped.empty()) return;
  auto key = vfs::stream_xattr_name(mapped);
  if (!key) return;
  std::vector<uint8_t> value;
  if (vfs::xattr_io::read_whole(fd, xattr.c_str(), value) != 0) return;
  if (!value.empty()) value.pop_back();  // Samba's trailing NUL
  NtStatus s = vfs::create_stream(fd, *key, mapped);
  if (s == NtStatus::ObjectNameCollision) return;  // ringsmb's own stream wins; Samba's stays
  if (s != NtStatus::Success) return;
  if (!value.empty() && vfs::write_stream_at(fd, *key, 0, value) != NtStatus::Success) {
    vfs::remove_stream(fd, *key);
    return;
  }
  vfs::xattr_io::remove_value(fd, xattr.c_str());
}

}  // namespace

void import_samba_streams(int fd) {
  std::string names;
  if (vfs::xattr_io::list_all(fd, names) != 0) return;
  std::vector<std::string> found;
  vfs::xattr_io::for_each_name(names, [&](std::string_view n) {
    if (n.starts_with(kSambaStreamPrefix)) found.emplace_back(n);
    return true;
  });
  for (const std::string& xattr : found) import_one(fd, xattr);
}

}  // namespace ringsmb::smb2::fruit
