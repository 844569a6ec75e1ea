#include <catch2/catch.hpp>

#include <unistd.h>

#include "control/share_access.hpp"

using namespace ringsmb;
using namespace ringsmb::ipc;
using namespace ringsmb::control;

namespace {

// Users and groups without /etc/group: gid 100 is "staff", 200 "media".
bool fake_groups(const std::string& group, const UnixUser& u) {
  uint32_t gid = group == "staff" ? 100 : group == "media" ? 200 : 0;
  if (gid == 0) return false;
  return u.gid == gid || std::find(u.groups.begin(), u.groups.end(), gid) != u.groups.end();
}

ShareSubject alice() { return {"alice", false, "192.0.2.10", UnixUser{1000, 1000, {1000, 100}}}; }
ShareSubject bob() { return {"bob", false, "192.0.2.11", UnixUser{1001, 1001, {1001, 200}}}; }

config::ShareConfig share(bool read_only) {
  config::ShareConfig s;
  s.name = "data";
  s.path = "/srv/data";
  s.read_only = read_only;
  return s;
}

ShareAccess decide(const config::ShareConfig& s, const ShareSubject& who) {
  return decide_share_access(s, who, fake_groups);
}

}  // namespace

TEST_CASE("user lists: names, @group, +group, &netgroup", "[ipc][share-access]") {
  CHECK(user_list_contains({"ALICE"}, alice(), fake_groups));
  CHECK(user_list_contains({"carol", "@staff"}, alice(), fake_groups));
  CHECK(user_list_contains({"+staff"}, alice(), fake_groups));
  CHECK_FALSE(user_list_contains({"&staff"}, alice(), fake_groups));
  CHECK_FALSE(user_list_contains({"@staff"}, bob(), fake_groups));
  CHECK_FALSE(user_list_contains({}, alice(), fake_groups));
  ShareSubject anon{"", true, "192.0.2.1", std::nullopt};
  CHECK_FALSE(user_list_contains({"@staff", ""}, anon, fake_groups));
}

TEST_CASE("read list and write list decide writability", "[ipc][share-access]") {
  auto rw = share(false);
  CHECK(decide(rw, alice()).writable);
  rw.read_list = {"@staff"};
  auto a = decide(rw, alice());
  CHECK(a.status == NtStatus::Success);
  CHECK_FALSE(a.writable);
  CHECK(decide(rw, bob()).writable);

  auto ro = share(true);
  CHECK_FALSE(decide(ro, bob()).writable);
  ro.write_list = {"bob"};
  CHECK(decide(ro, bob()).writable);
  CHECK_FALSE(decide(ro, alice()).writable);
  // In both lists: write list wins, as in Samba.
  ro.read_list = {"bob"};
  CHECK(decide(ro, bob()).writable);
}

TEST_CASE("invalid users and valid users", "[ipc][share-access]") {
  auto s = share(false);
  s.invalid_users = {"@media"};
  CHECK(decide(s, bob()).status == NtStatus::AccessDenied);
  CHECK(decide(s, alice()).status == NtStatus::Success);
  s.invalid_users.clear();
  s.valid_users = {"@staff"};
  CHECK(decide(s, alice()).status == NtStatus::Success);
  CHECK(decide(s, bob()).status == NtStatus::AccessDenied);
  // invalid users wins over valid users.
  s.invalid_users = {"alice"};
  CHECK(decide(s, alice()).status == NtStatus::AccessDenied);
  // Being in write list does not get past valid users.
  s.invalid_users.clear();
  s.write_list = {"bob"};
  CHECK(decide(s, bob()).status == NtStatus::AccessDenied);
}

TEST_CASE("guests need guest ok", "[ipc][share-access]") {
  auto s = share(false);
  ShareSubject guest{"nobody", true, "192.0.2.1", std::nullopt};
  CHECK(decide(s, guest).status == NtStatus::AccessDenied);
  s.guest_ok = true;
  CHECK(decide(s, guest).status == NtStatus::Success);
  s.invalid_users = {"nobody"};
  CHECK(decide(s, guest).status == NtStatus::AccessDenied);
}

TEST_CASE("hosts allow and hosts deny are checked first", "[ipc][share-access]") {
  auto s = share(false);
  s.hosts_deny = {"192.0.2.10"};
  CHECK(decide(s, alice()).status == NtStatus::AccessDenied);
  CHECK(decide(s, bob()).status == NtStatus::Success);
  s.hosts_allow = {"192.0.2.10"};
  CHECK(decide(s, alice()).status == NtStatus::Success);  // allow takes precedence
  s.hosts_deny = {"ALL"};
  CHECK(decide(s, bob()).status == NtStatus::AccessDenied);
}

TEST_CASE("share options reach ShareInfo", "[ipc][share-access]") {
  auto s = share(false);
  s.hide_dot_files = false;
  s.oplocks = false;
  s.smb2_leases = false;
  s.store_dos_attributes = true;
  s.nt_acl_support = false;
  s.acl_flag_inherited_canonicalization = false;
  s.client_symlinks = true;
  s.create_mask = 0600;
  s.directory_mask = 0700;
  s.veto_files = {"*.tmp"};
  ShareInfo info;
  fill_share_options(s, info);
  CHECK_FALSE(info.hide_dot_files);
  CHECK_FALSE(info.oplocks);
  CHECK_FALSE(info.leases);
  CHECK(info.store_dos_attributes);
  CHECK(info.streams);  // the share default (yes); ShareInfo starts with no
  CHECK_FALSE(info.nt_acl_support);
  CHECK_FALSE(info.acl_flag_inherited_canonicalization);
  CHECK(info.client_symlinks);
  CHECK(info.create_mask == 0600);
  CHECK(info.directory_mask == 0700);
  CHECK(info.veto_files == std::vector<std::string>{"*.tmp"});
}

TEST_CASE("force user and force group resolve to ids", "[ipc][share-access]") {
  auto s = share(false);
  ShareInfo info;
  CHECK(resolve_forced_identity(s, alice(), info, fake_groups) == NtStatus::Success);
  CHECK_FALSE(info.force_user);
  CHECK_FALSE(info.force_gid);

  s.force_user = "root";  // exists everywhere
  s.force_group = "root";
  REQUIRE(resolve_forced_identity(s, alice(), info) == NtStatus::Success);
  REQUIRE(info.force_user);
  CHECK(info.force_user->uid == 0);
  CHECK(info.force_gid == std::optional<uint32_t>(0));

  // "+group": only for members of that group.
  s.force_user.clear();
  s.force_group = "+root";
  CHECK(resolve_forced_identity(s, alice(), info) == NtStatus::Success);
  CHECK_FALSE(info.force_gid);
  ShareSubject member{"r", false, "192.0.2.1", UnixUser{5000, 0, {}}};
  CHECK(resolve_forced_identity(s, member, info) == NtStatus::Success);
  CHECK(info.force_gid == std::optional<uint32_t>(0));

  s.force_group.clear();
  s.force_user = "no-such-user-ringsmb";
  CHECK(resolve_forced_identity(s, alice(), info) == NtStatus::NoSuchUser);
  s.force_user.clear();
  s.force_group = "no-such-group-ringsmb";
  CHECK(resolve_forced_identity(s, alice(), info) == NtStatus::NoSuchGroup);
}

TEST_CASE("SID entries of user lists match a domain login's PAC SIDs", "[control]") {
  ShareSubject domain_user{"EXAMPLE\\alice", false, "192.0.2.10", UnixUser{1500, 1500, {}},
                           {"S-1-5-21-1-2-3-1104", "S-1-5-21-1-2-3-513", "S-1-5-21-1-2-3-1105"}};
  config::ShareConfig s = share(false);
  s.valid_users = {"@S-1-5-21-1-2-3-1105"};
  CHECK(decide_share_access(s, domain_user, fake_groups).status == NtStatus::Success);
  s.valid_users = {"s-1-5-21-1-2-3-1104"};  // the user's own SID, any case
  CHECK(decide_share_access(s, domain_user, fake_groups).status == NtStatus::Success);
  s.valid_users = {"+S-1-5-21-1-2-3-1106"};
  CHECK(decide_share_access(s, domain_user, fake_groups).status == NtStatus::AccessDenied);
  // A local user has no PAC SIDs; the SID never matches a name either.
  s.valid_users = {"@S-1-5-21-1-2-3-1105"};
  CHECK(decide_share_access(s, alice(), fake_groups).status == NtStatus::AccessDenied);
  s.valid_users = {"S-1-5-21-1-2-3-1105"};
  ShareSubject named{"S-1-5-21-1-2-3-1105", false, "192.0.2.10", std::nullopt};
  CHECK(decide_share_access(s, named, fake_groups).status == NtStatus::AccessDenied);
  s.valid_users.clear();
  s.invalid_users = {"@S-1-5-21-1-2-3-513"};
  CHECK(decide_share_access(s, domain_user, fake_groups).status == NtStatus::AccessDenied);
  s.invalid_users.clear();
  s.write_list = {"@S-1-5-21-1-2-3-1105"};
  s.read_only = true;
  CHECK(decide_share_access(s, domain_user, fake_groups).writable);
}

TEST_CASE("fruit:veto_appledouble vetoes ._* names on a fruit share", "[ipc][share-access]") {
  config::ShareConfig share;
  share.veto_files = {"*.tmp"};
  ipc::ShareInfo info;
  fill_share_options(share, info);
  CHECK(info.veto_files == std::vector<std::string>{"*.tmp"});  // fruit off: nothing added
  share.fruit.enabled = true;
  fill_share_options(share, info);
  CHECK(info.veto_files == std::vector<std::string>{"*.tmp", "._*"});
  share.fruit.veto_appledouble = false;
  fill_share_options(share, info);
  CHECK(info.veto_files == std::vector<std::string>{"*.tmp"});
}
