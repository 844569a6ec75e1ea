// The UNIX owner, group and mode as NFS ACEs (smb2/security/nfs_aces.hpp).
#include <catch2/catch.hpp>

#include "smb2/security/nfs_aces.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
namespace nt = ringsmb::vfs::ntacl;

namespace {

nt::Sid nfs(uint32_t kind, uint32_t value) {
  nt::Sid s;
  s.authority = 5;
  s.sub = {88, kind, value};
  return s;
}

nt::Ace deny_nothing(const nt::Sid& sid) {
  nt::Ace a;
  a.type = nt::ACCESS_DENIED_ACE_TYPE;
  a.sid = sid;
  return a;
}

nt::SecurityDescriptor with_dacl(std::vector<nt::Ace> aces) {
  nt::SecurityDescriptor sd;
  sd.control |= nt::SE_DACL_PRESENT;
  sd.dacl.emplace();
  sd.dacl->aces = std::move(aces);
  return sd;
}

}  // namespace

TEST_CASE("nfs aces: one mode, uid and gid ACE is added, old ones replaced", "[smb2][fruit]") {
  nt::Ace everyone;
  everyone.mask = nt::kFileAllAccess;
  everyone.sid = nt::world_sid();
  auto sd = with_dacl({everyone, deny_nothing(nfs(1, 27)), deny_nothing(nfs(2, 300))});
  vfs::FileStat st;
  st.mode = 0100640;
  st.uid = 1001;
  st.gid = 1002;
  add_nfs_aces(sd, st);
  REQUIRE(sd.dacl->aces.size() == 4);
  CHECK(sd.dacl->aces[0] == everyone);
  CHECK(sd.dacl->aces[1] == deny_nothing(nfs(3, 0100640)));
  CHECK(sd.dacl->aces[2] == deny_nothing(nfs(1, 1001)));
  CHECK(sd.dacl->aces[3] == deny_nothing(nfs(2, 1002)));

  nt::SecurityDescriptor null_dacl;
  add_nfs_aces(null_dacl, st);
  CHECK_FALSE(null_dacl.dacl);  // a NULL DACL grants everything; it stays one
}

TEST_CASE("nfs aces: a DACL set loses them, and its mode ACE is the new mode", "[smb2][fruit]") {
  nt::Ace everyone;
  everyone.mask = nt::kFileAllAccess;
  everyone.sid = nt::world_sid();
  auto sd = with_dacl({everyone, deny_nothing(nfs(3, 0100755)), deny_nothing(nfs(1, 27)), deny_nothing(nfs(2, 3))});
  uint32_t info = nt::DACL_SECURITY_INFORMATION;
  auto mode = take_nfs_aces(sd, info);
  REQUIRE(mode);
  CHECK(*mode == 0755);
  REQUIRE(sd.dacl->aces.size() == 1);
  CHECK(sd.dacl->aces[0] == everyone);
  CHECK(info == nt::DACL_SECURITY_INFORMATION);

  // Nothing but NFS ACEs: a mode change alone, no DACL change.
  auto only = with_dacl({deny_nothing(nfs(3, 0600))});
  info = nt::DACL_SECURITY_INFORMATION | nt::OWNER_SECURITY_INFORMATION;
  mode = take_nfs_aces(only, info);
  REQUIRE(mode);
  CHECK(*mode == 0600);
  CHECK(info == nt::OWNER_SECURITY_INFORMATION);

  // Without DACL_SECURITY_INFORMATION the DACL is not looked at.
  auto untouched = with_dacl({deny_nothing(nfs(3, 0600))});
  info = nt::OWNER_SECURITY_INFORMATION;
  CHECK_FALSE(take_nfs_aces(untouched, info));
  CHECK(untouched.dacl->aces.size() == 1);
}
