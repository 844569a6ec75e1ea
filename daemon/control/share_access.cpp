#include "control/share_access.hpp"

#include <grp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "auth/user_db.hpp"
#include "common/log.hpp"
#include "common/log_event.hpp"
#include "common/sid_text.hpp"
#include "config/host_match.hpp"

namespace ringsmb::control {

using namespace ipc;  // the contract types (ipc/control_plane.hpp)

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::optional<uint32_t> group_id(const std::string& name) {
  long hint = sysconf(_SC_GETGR_R_SIZE_MAX);
  std::vector<char> buf(hint > 0 ? size_t(hint) : 4096);
  struct group gr{};
  struct group* res = nullptr;
  int rc;
  // Large groups (many members) need more than the hint.
  while ((rc = getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &res)) == ERANGE && buf.size() < (1u << 22))
    buf.resize(buf.size() * 2);
  if (rc != 0 || !res) return std::nullopt;
  return uint32_t(gr.gr_gid);
}

bool has_gid(const UnixUser& u, uint32_t gid) {
  return u.gid == gid || std::find(u.groups.begin(), u.groups.end(), gid) != u.groups.end();
}

}  // namespace

bool unix_group_contains(const std::string& group, const UnixUser& identity) {
  auto gid = group_id(group);
  return gid && has_gid(identity, *gid);
}

namespace {

// A SID entry of a user list, in the canonical text the subject's SIDs
// come in; nullopt for any other entry.
std::optional<std::string> sid_entry(std::string_view entry) {
  if (entry.starts_with('@') || entry.starts_with('+')) entry.remove_prefix(1);
  auto sid = parse_sid_text(entry);
  if (!sid) return std::nullopt;
  return sid_text(sid->authority, sid->sub);
}

}  // namespace

bool user_list_contains(const std::vector<std::string>& list, const ShareSubject& subject, const GroupCheck& in_group) {
  for (const auto& entry : list) {
    if (entry.empty()) continue;
    if (auto sid = sid_entry(entry)) {
      if (std::find(subject.sids.begin(), subject.sids.end(), *sid) != subject.sids.end()) return true;
    } else if (entry[0] == '@' || entry[0] == '+') {
      if (subject.unix_user && in_group(entry.substr(1), *subject.unix_user)) return true;
    } else if (entry[0] == '&') {
      continue;  // NIS netgroups are not supported
    } else if (!subject.user.empty() && iequals(entry, subject.user)) {
      return true;
    }
  }
  return false;
}

ShareAccess decide_share_access(const config::ShareConfig& share, const ShareSubject& subject,
                                const GroupCheck& in_group) {
  ShareAccess a;
  if (!config::host_allowed(share.hosts_allow, share.hosts_deny, subject.client_address)) {
    log_event(LogLevel::Info, "share_access_refused",
              {{"client", subject.client_address}, {"user", subject.user}, {"share", share.name}},
              "share [%s]: client %s refused by hosts allow / hosts deny", share.name.c_str(),
              subject.client_address.c_str());
    return a;
  }
  if (subject.is_guest && !share.guest_ok) return a;
  if (user_list_contains(share.invalid_users, subject, in_group)) return a;
  // Guests pass valid users only by name (the guest account), as in Samba.
  if (!share.valid_users.empty() && !user_list_contains(share.valid_users, subject, in_group)) return a;
  bool read_only = share.read_only;
  if (!share.read_list.empty() && user_list_contains(share.read_list, subject, in_group)) read_only = true;
  if (!share.write_list.empty() && user_list_contains(share.write_list, subject, in_group)) read_only = false;
  a.status = NtStatus::Success;
  a.writable = !read_only;
  return a;
}

void fill_share_options(const config::ShareConfig& share, ShareInfo& info) {
  info.hide_dot_files = share.hide_dot_files;
  info.oplocks = share.oplocks;
  info.leases = share.smb2_leases;
  info.store_dos_attributes = share.store_dos_attributes;
  info.streams = share.streams;
  info.nt_acl_support = share.nt_acl_support;
  info.acl_flag_inherited_canonicalization = share.acl_flag_inherited_canonicalization;
  info.client_symlinks = share.client_symlinks;
  info.create_mask = share.create_mask;
  info.directory_mask = share.directory_mask;
  info.veto_files = share.veto_files;
  info.recycle = share.recycle;
  info.shadow_copy.reset();
  if (share.shadow.enabled) info.shadow_copy = share.shadow;
  info.fruit = share.fruit;
  // fruit:veto_appledouble (Samba's default): macOS keeps its metadata in
  // streams here, so "._" AppleDouble files are neither listed nor made.
  if (share.fruit.enabled && share.fruit.veto_appledouble) info.veto_files.push_back("._*");
}

NtStatus resolve_forced_identity(const config::ShareConfig& share, const ShareSubject& subject, ShareInfo& info,
                                 const GroupCheck& in_group) {
  info.force_user.reset();
  info.force_gid.reset();
  if (!share.force_user.empty()) {
    auto id = auth::lookup_unix_identity(share.force_user);
    if (!id) {
      LOG_ERROR("share [%s]: force user '%s' does not exist", share.name.c_str(), share.force_user.c_str());
      return NtStatus::NoSuchUser;
    }
    info.force_user = UnixUser{id->uid, id->gid, id->groups};
  }
  if (!share.force_group.empty()) {
    bool only_members = share.force_group[0] == '+';
    std::string name = only_members ? share.force_group.substr(1) : share.force_group;
    auto gid = group_id(name);
    if (!gid) {
      LOG_ERROR("share [%s]: force group '%s' does not exist", share.name.c_str(), name.c_str());
      return NtStatus::NoSuchGroup;
    }
    if (!only_members || (subject.unix_user && in_group(name, *subject.unix_user))) info.force_gid = *gid;
  }
  return NtStatus::Success;
}

}  // namespace ringsmb::control
