// The user database: one line per SMB user, NT hashes only (never a password).
// Format (one record a line, '#' comments):  NAME:UNIX_USER:NTHASH_HEX[:FLAGS]
// FLAGS: comma-separated words; "disabled" (ringsmbctl user disable) is the
// only one. A record without FLAGS is an enabled user.
// The file is mode 0600 and rewritten atomically (temp file, fsync, rename).
#pragma once

#include <array>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ringsmb::auth {

struct UserRecord {
  std::string name;       // SMB user name as given (lookups are case-insensitive)
  std::string unix_user;  // the Unix account file operations run as
  std::array<uint8_t, 16> nt_hash{};
  // Refused at login with ACCOUNT_DISABLED (smbpasswd -d); the record and
  // its password stay.
  bool disabled = false;
};

class UserDb {
 public:
  // Loads FILE; a missing file is an empty database. A corrupt file is an
  // error "FILE:LINE: message".
  static std::expected<UserDb, std::string> load(const std::string& path);
  // Writes atomically with mode 0600; error text on failure.
  std::expected<void, std::string> save(const std::string& path) const;

  const UserRecord* find(std::string_view name) const;  // case-insensitive
  void upsert(UserRecord rec);
  bool remove(std::string_view name);
  const std::vector<UserRecord>& users() const { return users_; }

 private:
  std::vector<UserRecord> users_;
};

// True when NAME can be stored and sent by clients: 1..64 bytes, no control
// characters and none of the characters Windows forbids in account names
// ("/\[]:;|=,+*?<>@). ':' in particular would break the file format.
bool is_valid_user_name(std::string_view name);

// Resolved Unix identity of a user (getpwnam + getgrouplist).
struct UnixIdentity {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;
};
std::optional<UnixIdentity> lookup_unix_identity(const std::string& unix_user);

}  // namespace ringsmb::auth
