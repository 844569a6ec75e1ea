#include "smb2/fruit/time_machine.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <string>
#include <string_view>

#include "state/session.hpp"

namespace ringsmb::smb2::fruit {
namespace {

constexpr uint64_t kUnitBytes = 1024;  // 2 sectors of 512 bytes
constexpr uint32_t kSectorsPerUnit = 2, kBytesPerSector = 512;
constexpr size_t kMaxInfoPlistBytes = 64 * 1024;
constexpr std::string_view kBundleSuffix = ".sparsebundle";

// Info.plist's <key>band-size</key><integer>N</integer>; 0 when absent.
uint64_t band_size(int bundle_fd) {
  state::UniqueFd fd(openat(bundle_fd, "Info.plist", O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return 0;
  std::string text(kMaxInfoPlistBytes, '\0');
  ssize_t n = pread(fd.get(), text.data(), text.size(), 0);
  if (n <= 0) return 0;
  text.resize(size_t(n));
  size_t key = text.find("<key>band-size</key>");
  if (key == std::string::npos) return 0;
  size_t open = text.find("<integer>", key);
  if (open == std::string::npos) return 0;
  const char* first = text.data() + open + std::string_view("<integer>").size();
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(first, text.data() + text.size(), v);
  return ec == std::errc() && end < text.data() + text.size() && *end == '<' ? v : 0;
}

// Calls fn(fd, name) for each entry but "." and ".." of the directory
// `name` in `dir_fd` (fd: that directory's); nothing when it cannot be read.
template <class Fn>
void for_each_entry(int dir_fd, const char* name, Fn fn) {
  int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  DIR* d = fdopendir(fd);
  if (!d) {
    close(fd);
    return;
  }
  while (struct dirent* de = readdir(d)) {
    std::string_view s(de->d_name);
    if (s != "." && s != "..") fn(fd, de->d_name);
  }
  closedir(d);
}

uint64_t count_entries(int dir_fd, const char* name) {
  uint64_t n = 0;
  for_each_entry(dir_fd, name, [&](int, const char*) { ++n; });
  return n;
}

uint64_t bundle_bytes(int root_fd, const char* name) {
  state::UniqueFd bundle(openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!bundle) return 0;
  uint64_t band = band_size(bundle.get());
  if (band == 0) return 0;
  uint64_t bands = count_entries(bundle.get(), "bands");
  return bands > UINT64_MAX / band ? UINT64_MAX : band * bands;
}

}  // namespace

uint64_t sparse_bundle_bytes(int root_fd) {
  uint64_t total = 0;
  for_each_entry(root_fd, ".", [&](int fd, const char* name) {
    std::string_view s(name);
    if (s.size() <= kBundleSuffix.size() || !s.ends_with(kBundleSuffix)) return;
    uint64_t b = bundle_bytes(fd, name);
    total = total > UINT64_MAX - b ? UINT64_MAX : total + b;
  });
  return total;
}

void limit_time_machine_size(const Request& req, vfs::FsInfoClass cls, Bytes& data) {
  const config::FruitOptions& f = req.tree->share.fruit;
  if (!f.enabled || !f.time_machine || f.time_machine_max_size == 0) return;
  const bool full = cls == vfs::FsInfoClass::FullSize;
  if (!full && cls != vfs::FsInfoClass::Size) return;
  const size_t need = full ? 32 : 24;
  if (data.size() < need) return;
  const uint64_t used = sparse_bundle_bytes(req.tree->root.get());
  const uint64_t total = f.time_machine_max_size / kUnitBytes;
  const uint64_t free = used >= f.time_machine_max_size ? 0 : (f.time_machine_max_size - used) / kUnitBytes;
  store_le64(data.data(), total);
  store_le64(data.data() + 8, free);  // CallerAvailableAllocationUnits / AvailableAllocationUnits
  size_t at = 16;
  if (full) {
    store_le64(data.data() + at, free);  // ActualAvailableAllocationUnits
    at += 8;
  }
  store_le32(data.data() + at, kSectorsPerUnit);
  store_le32(data.data() + at + 4, kBytesPerSector);
}

}  // namespace ringsmb::smb2::fruit
