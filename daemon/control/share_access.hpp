// The control plane's per-share decisions at tree connect, with Samba's
// meaning: hosts allow / hosts deny, invalid users, valid users, read list,
// write list, force user / force group; and the per-share options it hands
// to the data plane. ringsmbd never decides any of this itself.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "config/config.hpp"
#include "ipc/control_plane.hpp"

namespace ringsmb::control {

// Who asks: the SMB account (empty for anonymous) and, when known, the Unix
// identity it maps to, against which "@group" entries are checked, and a
// domain account's SIDs (its PAC's, as text), against which SID entries are.
struct ShareSubject {
  std::string user;
  bool is_guest = false;  // guest or anonymous
  std::string client_address;
  std::optional<ipc::UnixUser> unix_user;
  std::vector<std::string> sids;
};

// Whether `identity` is a member of the Unix group `group` (primary or
// supplementary). The default looks the group up with getgrnam_r.
using GroupCheck = std::function<bool(const std::string& group, const ipc::UnixUser& identity)>;
bool unix_group_contains(const std::string& group, const ipc::UnixUser& identity);

// True when `subject` matches a user list entry: a name (ASCII
// case-insensitive), "@group" or "+group" (Unix group, looked up through
// NSS: @"DOMAIN\group" is a domain group as winbind or sssd name it),
// a SID ("S-1-5-21-...-1105", with or without "@"/"+": one of the
// subject's PAC SIDs, as Samba takes SIDs in these lists); "&netgroup" never.
bool user_list_contains(const std::vector<std::string>& list, const ShareSubject& subject, const GroupCheck& in_group);

struct ShareAccess {
  NtStatus status = NtStatus::AccessDenied;
  bool writable = false;
};

// Samba's order: the client address (hosts allow / deny), then guest ok for
// guests, invalid users, valid users; all refusals are ACCESS_DENIED. Then
// read only, read list, write list (which wins) decide writability.
ShareAccess decide_share_access(const config::ShareConfig& share, const ShareSubject& subject,
                                const GroupCheck& in_group = unix_group_contains);

// Copies the per-share options the data plane applies into `info`.
void fill_share_options(const config::ShareConfig& share, ipc::ShareInfo& info);

// Resolves force user / force group for this subject into `info`. A
// "+group" is forced only when the subject is a member. NO_SUCH_USER /
// NO_SUCH_GROUP when the configured name does not exist (as Samba).
NtStatus resolve_forced_identity(const config::ShareConfig& share, const ShareSubject& subject, ipc::ShareInfo& info,
                                 const GroupCheck& in_group = unix_group_contains);

}  // namespace ringsmb::control
