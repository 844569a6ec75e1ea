// The user database file: NAME:UNIX_USER:NTHASH_HEX[:FLAGS], one record a line.
#include "common/str_cat.hpp"
#include "auth/user_db.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <concepts>
#include <cstring>
#include <fstream>

namespace ringsmb::auth {

namespace {


// ASCII-only folding: Windows folds with its own upcase table, but the names
// an admin creates here are overwhelmingly ASCII, and a locale-dependent
// fold would make lookups differ between the daemon and the tool.
bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool parse_hash(std::string_view hex, std::array<uint8_t, 16>& out) {
  if (hex.size() != 32) return false;
  for (size_t i = 0; i < 16; ++i) {
    int hi = hex_value(hex[2 * i]);
    int lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

std::string hash_hex(const std::array<uint8_t, 16>& h) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : h) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> f;
  size_t start = 0;
  for (;;) {
    size_t colon = line.find(':', start);
    f.push_back(line.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
    if (colon == std::string_view::npos) return f;
    start = colon + 1;
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

constexpr std::string_view kDisabledFlag = "disabled";

// FLAGS, the optional fourth field: comma-separated words.
std::expected<void, std::string> parse_flags(std::string_view flags, UserRecord& rec) {
  size_t start = 0;
  while (start <= flags.size()) {
    size_t comma = flags.find(',', start);
    std::string_view word = trim(flags.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (word == kDisabledFlag) rec.disabled = true;
    else if (!word.empty()) return std::unexpected(cat("unknown flag '", word, "' for '", rec.name, "' (known: disabled)"));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return {};
}

std::expected<UserRecord, std::string> parse_record(std::string_view line) {
  auto f = split_fields(line);
  if (f.size() != 3 && f.size() != 4)
    return std::unexpected(cat("expected NAME:UNIX_USER:NTHASH[:FLAGS] (3 or 4 fields), got ", f.size(), " field",
                               f.size() == 1 ? "" : "s"));
  if (f[0].empty()) return std::unexpected("empty user name");
  if (f[1].empty()) return std::unexpected(cat("empty unix user for '", f[0], "'"));
  UserRecord rec{std::string(f[0]), std::string(f[1]), {}};
  if (!parse_hash(f[2], rec.nt_hash))
    return std::unexpected(cat("bad NT hash for '", f[0], "' (expected 32 hex digits)"));
  if (f.size() == 4)
    if (auto flags = parse_flags(f[3], rec); !flags) return std::unexpected(flags.error());
  return rec;
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string errno_text(std::string_view what, const std::string& path) {
  return cat(path, ": ", what, ": ", std::strerror(errno));
}

// Makes the rename itself durable: without this a crash can bring back the
// old file (or none) even though the new one was fsynced.
std::expected<void, std::string> fsync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return std::unexpected(errno_text("cannot open directory", dir));
  int rc = ::fsync(fd);
  int saved = errno;
  ::close(fd);
  errno = saved;
  if (rc != 0) return std::unexpected(errno_text("fsync failed", dir));
  return {};
}

std::string serialize(const std::vector<UserRecord>& users) {
  std::string out = "# ringsmb user database (NAME:UNIX_USER:NTHASH[:FLAGS]); edit with ringsmbctl\n";
  for (const auto& u : users)
    out += cat(u.name, ":", u.unix_user, ":", hash_hex(u.nt_hash), u.disabled ? cat(":", kDisabledFlag) : "", "\n");
  return out;
}

bool storable(std::string_view field) {
  return !field.empty() && field.find_first_of(":\n\r") == std::string_view::npos && trim(field) == field &&
         field.front() != '#';
}

}  // namespace

std::expected<UserDb, std::string> UserDb::load(const std::string& path) {
  UserDb db;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return db;  // nobody added yet: not an error
    return std::unexpected(errno_text("cannot stat", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(errno_text("cannot open", path));
  std::string raw;
  std::vector<int> first_line;  // parallel to users_, for duplicate messages
  for (int lineno = 1; std::getline(in, raw); ++lineno) {
    std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#') continue;
    auto rec = parse_record(line);
    if (!rec) return std::unexpected(cat(path, ":", lineno, ": ", rec.error()));
    for (size_t i = 0; i < db.users_.size(); ++i)
      if (iequals(db.users_[i].name, rec->name))
        return std::unexpected(cat(path, ":", lineno, ": duplicate user '", rec->name, "' (first on line ", first_line[i], ")"));
    db.users_.push_back(std::move(*rec));
    first_line.push_back(lineno);
  }
  if (in.bad()) return std::unexpected(errno_text("read error", path));
  return db;
}

std::expected<void, std::string> UserDb::save(const std::string& path) const {
  for (const auto& u : users_)
    if (!storable(u.name) || !storable(u.unix_user))
      return std::unexpected(cat(path, ": refusing to store user '", u.name, "': name not storable"));
  std::string dir = dir_of(path);
  std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  std::string tmp = cat(dir, "/.", base, ".XXXXXX");
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return std::unexpected(errno_text("cannot create temporary file", tmp));
  // mkstemp already uses 0600 on glibc; being explicit keeps the hashes
  // private even where it does not.
  bool ok = ::fchmod(fd, 0600) == 0 && write_all(fd, serialize(users_)) && ::fsync(fd) == 0;
  int saved = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    saved = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    errno = saved;
    return std::unexpected(errno_text("cannot write", path));
  }
  return fsync_dir(dir);
}

const UserRecord* UserDb::find(std::string_view name) const {
  for (const auto& u : users_)
    if (iequals(u.name, name)) return &u;
  return nullptr;
}

void UserDb::upsert(UserRecord rec) {
  for (auto& u : users_) {
    if (iequals(u.name, rec.name)) {
      u = std::move(rec);
      return;
    }
  }
  users_.push_back(std::move(rec));
}

bool UserDb::remove(std::string_view name) {
  auto it = std::find_if(users_.begin(), users_.end(), [&](const UserRecord& u) { return iequals(u.name, name); });
  if (it == users_.end()) return false;
  users_.erase(it);
  return true;
}

bool is_valid_user_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return false;
    if (std::string_view("\"/\\[]:;|=,+*?<>@").find(c) != std::string_view::npos) return false;
  }
  return trim(name) == name;
}

std::optional<UnixIdentity> lookup_unix_identity(const std::string& unix_user) {
  long hint = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(hint > 0 ? static_cast<size_t>(hint) : 4096);
  struct passwd pw {};
  struct passwd* res = nullptr;
  int rc = 0;
  // The hint is only a hint: NSS backends (LDAP, sssd) may need more.
  while ((rc = ::getpwnam_r(unix_user.c_str(), &pw, buf.data(), buf.size(), &res)) == ERANGE && buf.size() < (1u << 20))
    buf.resize(buf.size() * 2);
  if (rc != 0 || res == nullptr) return std::nullopt;
  UnixIdentity id{pw.pw_uid, pw.pw_gid, {}};
  std::vector<gid_t> groups(32);
  for (;;) {
    int n = static_cast<int>(groups.size());
    if (::getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n) >= 0) {
      groups.resize(static_cast<size_t>(n));
      break;
    }
    if (groups.size() >= 65536) return std::nullopt;  // NGROUPS_MAX is 65536 on Linux
    if (n <= static_cast<int>(groups.size())) n = static_cast<int>(groups.size()) * 2;  // older glibc leaves n alone
    groups.resize(static_cast<size_t>(n));
  }
  id.groups.assign(groups.begin(), groups.end());
  return id;
}

}  // namespace ringsmb::auth
