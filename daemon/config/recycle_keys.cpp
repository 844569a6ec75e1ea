// "vfs objects" and Samba's vfs_recycle keys ("recycle:repository", ...),
// parsed as Samba reads them: booleans as everywhere, sizes with K/M/G,
// modes in octal, lists split at blanks, ',' and ';' (Samba's LIST_SEP).
#include "config/config_internal.hpp"

namespace ringsmb::config::detail {

namespace {

// Patterns match one name (a file's, or one directory component), so a
// '/' in one could never match: refused rather than silently useless.
std::expected<std::vector<std::string>, Err> parse_pattern_list(std::string_view v, std::string_view key) {
  std::vector<std::string> out;
  std::string token;
  auto flush = [&]() -> std::expected<void, Err> {
    if (token.empty()) return {};
    if (token.find('/') != std::string::npos)
      return std::unexpected(cat(key, ": pattern '", token, "' contains '/'; patterns match single names"));
    out.push_back(std::move(token));
    token.clear();
    return {};
  };
  for (char c : v) {
    if (c == ' ' || c == '\t' || c == ',' || c == ';' || c == '\r' || c == '\n') {
      if (auto ok = flush(); !ok) return std::unexpected(ok.error());
    } else if (c != '"') {
      token.push_back(c);
    }
  }
  if (auto ok = flush(); !ok) return std::unexpected(ok.error());
  if (v.size() > 4000) return std::unexpected(cat(key, " is longer than 4000 characters"));
  return out;
}

std::expected<std::string, Err> parse_repository(std::string_view raw) {
  std::string_view v = trim(raw);
  while (v.size() > 1 && v.back() == '/') v.remove_suffix(1);
  if (v.empty() || v == "/") return std::unexpected("recycle:repository must name a directory");
  return std::string(v);
}

std::expected<void, Err> set_vfs_objects(ShareConfig& s, std::string_view v) {
  auto list = split_list(v, true);
  if (!list) return std::unexpected(list.error());
  s.vfs_objects = std::move(*list);
  s.recycle.enabled = s.shadow.enabled = false;
  s.fruit.enabled = false;  // Apple's extensions (docs/macos-clients.md)
  for (const auto& m : s.vfs_objects) {
    if (iequals(m, "recycle")) s.recycle.enabled = true;
    // snapper: Samba's module for snapper's snapshots, found the same way here (vfs/snapshots.hpp)
    if (iequals(m, "shadow_copy2") || iequals(m, "snapper")) s.shadow.enabled = true;
    if (iequals(m, "fruit")) s.fruit.enabled = true;
  }
  return {};
}

template <typename T, typename U>
std::expected<void, Err> put(T& dst, std::expected<U, Err> v) {
  if (!v) return std::unexpected(std::move(v.error()));
  dst = std::move(*v);
  return {};
}

}  // namespace

std::expected<bool, Err> apply_recycle_key(ShareConfig& s, const std::string& key, std::string_view value) {
  RecycleConfig& r = s.recycle;
  std::expected<void, Err> done;
  if (key == "vfsobjects" || key == "vfsobject") done = set_vfs_objects(s, value);
  else if (key == "recycle:repository") done = put(r.repository, parse_repository(value));
  else if (key == "recycle:directory_mode") done = put(r.directory_mode, parse_mode_mask(value));
  else if (key == "recycle:subdir_mode") done = put(r.subdir_mode, parse_mode_mask(value));
  else if (key == "recycle:keeptree") done = put(r.keeptree, parse_bool_value(value));
  else if (key == "recycle:versions") done = put(r.versions, parse_bool_value(value));
  else if (key == "recycle:touch") done = put(r.touch, parse_bool_value(value));
  else if (key == "recycle:touch_mtime") done = put(r.touch_mtime, parse_bool_value(value));
  else if (key == "recycle:minsize") done = put(r.minsize_bytes, parse_size(value));
  else if (key == "recycle:maxsize") done = put(r.maxsize_bytes, parse_size(value));
  else if (key == "recycle:exclude") done = put(r.exclude, parse_pattern_list(value, "recycle:exclude"));
  else if (key == "recycle:exclude_dir") done = put(r.exclude_dir, parse_pattern_list(value, "recycle:exclude_dir"));
  else if (key == "recycle:noversions") done = put(r.noversions, parse_pattern_list(value, "recycle:noversions"));
  else return false;
  if (!done) return std::unexpected(std::move(done.error()));
  return true;
}

// Modules whose meaning ringsmb has (or does not need: its own stream and
// ACL storage stand in for them); any other is reported and ignored.
bool is_known_vfs_object(std::string_view name) {
  for (std::string_view m :
       {"recycle", "shadow_copy2", "snapper", "streams_xattr", "acl_xattr", "io_uring", "fruit", "catia", "xattr_tdb"})
    if (iequals(m, name)) return true;
  return false;
}

}  // namespace ringsmb::config::detail
