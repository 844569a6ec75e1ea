// Samba's vfs_shadow_copy2 keys ("shadow:KEY"; "vfs objects" is read in
// recycle_keys.cpp): the
// share's snapshots as Previous Versions (config.hpp ShadowCopyConfig,
// vfs/snapshots.hpp). A value that would lead outside the share's file
// system ('..' in a path, a relative mount point) is refused here, so
// `config check` and a reload both name its line.
#include <ctime>

#include "config/config_internal.hpp"

namespace ringsmb::config::detail {
namespace {

bool has_dotdot(std::string_view path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (path.substr(start, end - start) == "..") return true;
    start = end + 1;
  }
  return false;
}

// A path of the snapshot layout: no '..' (it could climb out of the
// snapshot directory or the file system), trailing '/' dropped.
std::expected<std::string, Err> snapshot_path(std::string_view raw, std::string_view key, bool absolute) {
  std::string_view v = trim(raw);
  if (v.empty()) return std::unexpected(cat(key, " must not be empty"));
  if (has_dotdot(v)) return std::unexpected(cat(key, " '", v, "' must not contain '..'"));
  if (absolute && v.front() != '/') return std::unexpected(cat(key, " '", v, "' must be absolute"));
  while (v.size() > 1 && v.back() == '/') v.remove_suffix(1);
  return std::string(v);
}

// strptime must be able to read back what the format writes: one date
// written and parsed again.
std::expected<std::string, Err> snapshot_format(std::string_view raw) {
  std::string f(trim(raw));
  if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
  if (f.empty() || f.find('/') != std::string::npos)
    return std::unexpected(cat("shadow:format '", f, "' must be a file name format"));
  struct tm tm {};
  time_t t = 1700000000;
  gmtime_r(&t, &tm);
  char buf[256];
  size_t n = strftime(buf, sizeof buf, f.c_str(), &tm);
  struct tm back {};
  const char* end = n ? strptime(buf, f.c_str(), &back) : nullptr;
  if (!end || *end != '\0') return std::unexpected(cat("shadow:format '", f, "' cannot be read back by strptime"));
  return f;
}

}  // namespace

std::expected<bool, Err> apply_shadow_key(ShareConfig& s, const std::string& key, std::string_view v) {
  ShadowCopyConfig& sh = s.shadow;
  std::expected<void, Err> r;
  auto take = [&](std::string& dst, std::expected<std::string, Err> value) {
    if (value) dst = std::move(*value);
    else r = std::unexpected(std::move(value.error()));
  };
  if (key == "shadow:snapdir") {
    take(sh.snapdir, snapshot_path(v, "shadow:snapdir", false));
  } else if (key == "shadow:mountpoint") {
    take(sh.mountpoint, snapshot_path(v, "shadow:mountpoint", true));
  } else if (key == "shadow:basedir") {
    take(sh.basedir, snapshot_path(v, "shadow:basedir", true));
  } else if (key == "shadow:snapsharepath") {
    take(sh.snapsharepath, snapshot_path(v, "shadow:snapsharepath", false));
  } else if (key == "shadow:format") {
    take(sh.format, snapshot_format(v));
  } else if (key == "shadow:localtime") {
    auto b = parse_bool_value(v);
    if (b) sh.localtime = *b;
    else r = std::unexpected(b.error());
  } else if (key == "shadow:sort") {
    sh.sort_descending = to_lower(trim(v)) == "desc";
  } else {
    return false;
  }
  if (!r) return std::unexpected(std::move(r.error()));
  // An absolute snapshot directory with a given mount point must lie beneath it.
  if (sh.snapdir.starts_with('/') && !sh.mountpoint.empty() && sh.mountpoint != "/" &&
      !(sh.snapdir == sh.mountpoint || sh.snapdir.starts_with(sh.mountpoint + "/")))
    return std::unexpected(cat("shadow:snapdir ", sh.snapdir, " is outside shadow:mountpoint ", sh.mountpoint));
  return true;
}

}  // namespace ringsmb::config::detail
