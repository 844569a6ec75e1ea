// `import samba|ksmbd`: what can be brought over from a Samba or ksmbd
// installation (shares from its smb.conf-format file, users with their NT
// hashes), and what cannot, with the reason and the file:line it comes from.
#pragma once

#include <array>
#include <cstdint>
#include <expected>
#include <string>
#include <utility>
#include <vector>

#include "config/config_editor.hpp"

namespace ringsmb::ctl::import {

using Setting = std::pair<std::string, std::string>;  // key as written, value

// One thing left behind: WHERE is "FILE:LINE" (or a source name), WHAT the reason.
struct Skipped {
  std::string where;
  std::string what;
};

struct SharePlan {
  std::string name;
  std::string where;              // FILE:LINE of its section header
  std::vector<Setting> settings;  // every key ringsmb accepts, in file order
};

struct ConfigPlan {
  std::vector<Setting> global;  // [global] keys ringsmb accepts and takes over
  std::vector<SharePlan> shares;
  std::vector<Skipped> skipped;
  // Settings taken over that docs/windows-clients.md says keep Windows
  // clients out (guest sessions): imported all the same, and reported.
  std::vector<Skipped> warnings;
};

// Reads an smb.conf-format file (Samba's or ksmbd's) and sorts its keys: a
// key ringsmb knows with a value it accepts is taken, anything else is
// reported with its line. Share defaults in [global] are copied into each
// share, as Samba applies them.
std::expected<ConfigPlan, std::string> plan_config(const std::string& path);

struct UserPlan {
  std::string name;
  std::array<uint8_t, 16> nt_hash{};
  std::string where;  // where the hash came from
};

struct UsersPlan {
  std::vector<UserPlan> users;
  std::vector<Skipped> skipped;
};

// `pdbedit -L -w` output (smbpasswd format):
//   NAME:UID:LMHASH:NTHASH:[FLAGS]:LCT-XXXXXXXX:
// Normal accounts ([U]) with an NT hash are taken; disabled ones, machine
// and trust accounts, and accounts without a hash are reported. SOURCE
// names the input in the report.
UsersPlan parse_smbpasswd(const std::string& text, const std::string& source);

// ksmbdpwd.db: NAME:BASE64(NT hash), one user a line.
UsersPlan parse_ksmbdpwd(const std::string& text, const std::string& source);

// Runs Samba's own tool on the passdb that CONF names: pdbedit -s CONF -L -w.
std::expected<std::string, std::string> run_pdbedit(const std::string& pdbedit, const std::string& conf);

}  // namespace ringsmb::ctl::import
