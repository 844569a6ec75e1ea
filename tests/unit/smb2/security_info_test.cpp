// NT security descriptors through the SMB2 handlers (smb2/security/security_info.cpp):
// a stored descriptor is read back, enforced at CREATE (DENY, MAXIMUM_ALLOWED),
// inherited by a new file, and kept in trusted.ringsmb.ntacl.
#include <catch2/catch.hpp>

#include <sys/xattr.h>
#include <unistd.h>

#include "fixture.hpp"
#include "vfs/ntacl.hpp"
#include "vfs/ntacl_store.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;
namespace nt = ringsmb::vfs::ntacl;

namespace {

constexpr uint8_t kSecurity = 3;
constexpr uint32_t kDaclInfo = nt::DACL_SECURITY_INFORMATION;
constexpr uint32_t kAllInfo = nt::OWNER_SECURITY_INFORMATION | nt::GROUP_SECURITY_INFORMATION | kDaclInfo;

Bytes si_body(FileId id, const Bytes& buf, uint32_t additional) {
  Body body;
  body.w.u16(33);
  body.w.u8(kSecurity);
  body.w.u8(0);
  body.w.u32(uint32_t(buf.size()));
  body.w.u16(uint16_t(wire::kHeaderSize + 32));
  body.w.u16(0);
  body.w.u32(additional);
  body.w.u64(id.persistent);
  body.w.u64(id.volatile_id);
  body.w.bytes(buf);
  return body.b;
}

Bytes qi_body(FileId id, uint32_t additional) {
  Body body;
  body.w.u16(41);
  body.w.u8(kSecurity);
  body.w.u8(0);
  body.w.u32(65536);
  body.w.u16(0);
  body.w.u16(0);
  body.w.u32(0);
  body.w.u32(additional);
  body.w.u32(0);
  body.w.u64(id.persistent);
  body.w.u64(id.volatile_id);
  body.w.u8(0);
  return body.b;
}

NtStatus set_sd(Smb2Fixture& f, FileId id, const nt::SecurityDescriptor& sd, uint32_t info = kDaclInfo) {
  return f.call(handle_set_info, wire::Command::SetInfo, si_body(id, nt::serialize(sd), info)).status;
}

nt::SecurityDescriptor query_sd(Smb2Fixture& f, FileId id, uint32_t info = kAllInfo) {
  Response r = f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, info));
  REQUIRE(r.status == NtStatus::Success);
  uint32_t len = r.u32(4);
  auto sd = nt::parse(ByteSpan(r.body).subspan(8, len));
  REQUIRE(sd);
  return *sd;
}

nt::Ace ace(uint8_t type, uint8_t flags, uint32_t mask, nt::Sid sid) { return nt::Ace{type, flags, mask, sid, {}}; }

nt::SecurityDescriptor dacl_of(std::vector<nt::Ace> aces) {
  nt::SecurityDescriptor sd;
  sd.control = nt::SE_SELF_RELATIVE | nt::SE_DACL_PRESENT;
  sd.dacl = nt::Acl{2, std::move(aces)};
  return sd;
}

bool has_xattr(const Smb2Fixture& f, const char* rel) {
  return getxattr((f.dir() / rel).c_str(), vfs::kNtAclXattr, nullptr, 0) >= 0;
}

}  // namespace

TEST_CASE("security info: a DENY for this user is stored, read back and enforced at CREATE", "[smb2][ntacl]") {
  Smb2Fixture f;
  f.write_file("a.txt");
  FileId id = f.open_file("a.txt", FILE_ALL_ACCESS);
  const nt::Sid me = nt::unix_user_sid(getuid());
  auto sd = dacl_of({ace(nt::ACCESS_DENIED_ACE_TYPE, 0, FILE_WRITE_DATA, me),
                     ace(nt::ACCESS_ALLOWED_ACE_TYPE, 0, FILE_ALL_ACCESS, nt::world_sid())});
  REQUIRE(set_sd(f, id, sd) == NtStatus::Success);
  CHECK(has_xattr(f, "a.txt"));
  nt::SecurityDescriptor back = query_sd(f, id);
  CHECK(back.dacl == sd.dacl);
  CHECK(back.owner == me);  // the Unix owner, as before
  f.close(id);

  FileId out;
  CHECK(f.create("a.txt", FILE_WRITE_DATA, kOpen, kNonDirectoryFile, out) == NtStatus::AccessDenied);
  CHECK(f.create("a.txt", FILE_READ_DATA, kOpen, kNonDirectoryFile, out) == NtStatus::Success);
  FileId max;
  REQUIRE(f.create("a.txt", MAXIMUM_ALLOWED, kOpen, kNonDirectoryFile, max) == NtStatus::Success);
  CHECK((f.find(max)->granted_access & FILE_WRITE_DATA) == 0);
  CHECK((f.find(max)->granted_access & FILE_READ_DATA) != 0);

  // Setting back what the mode says removes the stored descriptor.
  auto st = vfs::stat_fd(f.find(max)->fd.get());
  REQUIRE(st);
  FileId dac;
  REQUIRE(f.create("a.txt", WRITE_DAC | WRITE_OWNER | READ_CONTROL, kOpen, kNonDirectoryFile, dac) == NtStatus::Success);
  CHECK(set_sd(f, dac, nt::from_mode(*st), kAllInfo) == NtStatus::Success);
  CHECK(!has_xattr(f, "a.txt"));
  CHECK(f.create("a.txt", FILE_WRITE_DATA, kOpen, kNonDirectoryFile, out) == NtStatus::Success);
}

TEST_CASE("security info: a directory's inheritable ACE reaches a new file", "[smb2][ntacl]") {
  Smb2Fixture f;
  f.mkdir("d");
  FileId d = f.open_dir("d", FILE_ALL_ACCESS);
  const nt::Sid other = nt::unix_user_sid(4242);
  auto sd = dacl_of({ace(nt::ACCESS_ALLOWED_ACE_TYPE, nt::OBJECT_INHERIT_ACE | nt::CONTAINER_INHERIT_ACE,
                         FILE_ALL_ACCESS, nt::world_sid()),
                     ace(nt::ACCESS_DENIED_ACE_TYPE, nt::OBJECT_INHERIT_ACE, FILE_READ_DATA, other)});
  // Auto-inherited (SE_DACL_AUTO_INHERITED kept only with ..._REQ), so the
  // inherited ACEs are marked INHERITED (MS-DTYP 2.5.3.4.1).
  sd.control |= nt::SE_DACL_AUTO_INHERITED | nt::SE_DACL_AUTO_INHERIT_REQ;
  REQUIRE(set_sd(f, d, sd) == NtStatus::Success);
  FileId file = f.open_file("d\\new.txt", FILE_ALL_ACCESS, kCreate);
  nt::SecurityDescriptor got = query_sd(f, file);
  REQUIRE(got.dacl);
  REQUIRE(got.dacl->aces.size() == 2);
  CHECK(got.dacl->aces[0].flags == nt::INHERITED_ACE);
  CHECK(got.dacl->aces[1].type == nt::ACCESS_DENIED_ACE_TYPE);
  CHECK(got.dacl->aces[1].sid == other);
  CHECK(has_xattr(f, "d/new.txt"));
  // A file in a directory without inheritable ACEs gets no xattr.
  FileId plain = f.open_file("plain.txt", FILE_ALL_ACCESS, kCreate);
  (void)plain;
  CHECK(!has_xattr(f, "plain.txt"));
}

TEST_CASE("security info: no FILE_ADD_FILE in the parent refuses a create", "[smb2][ntacl]") {
  Smb2Fixture f;
  f.mkdir("d");
  FileId d = f.open_dir("d", FILE_ALL_ACCESS);
  auto sd = dacl_of({ace(nt::ACCESS_DENIED_ACE_TYPE, 0, FILE_WRITE_DATA, nt::world_sid()),
                     ace(nt::ACCESS_ALLOWED_ACE_TYPE, 0, FILE_ALL_ACCESS, nt::world_sid())});
  REQUIRE(set_sd(f, d, sd) == NtStatus::Success);
  FileId out;
  CHECK(f.create("d\\x.txt", FILE_ALL_ACCESS, kCreate, kNonDirectoryFile, out) == NtStatus::AccessDenied);
  CHECK(!std::filesystem::exists(f.dir() / "d" / "x.txt"));
  // A subdirectory needs FILE_ADD_SUBDIRECTORY instead, which is granted.
  CHECK(f.create("d\\sub", FILE_ALL_ACCESS, kCreate, kDirectoryFile, out) == NtStatus::Success);
}

TEST_CASE("security info: SACL refused, malformed descriptors rejected", "[smb2][ntacl]") {
  Smb2Fixture f;
  f.write_file("a.txt");
  FileId id = f.open_file("a.txt", FILE_ALL_ACCESS);
  auto sd = dacl_of({});
  CHECK(set_sd(f, id, sd, nt::SACL_SECURITY_INFORMATION) == NtStatus::AccessDenied);
  CHECK(f.call(handle_query_info, wire::Command::QueryInfo, qi_body(id, nt::SACL_SECURITY_INFORMATION)).status ==
        NtStatus::AccessDenied);
  FileId out;
  CHECK(f.create("a.txt", ACCESS_SYSTEM_SECURITY, kOpen, kNonDirectoryFile, out) == NtStatus::PrivilegeNotHeld);
  Bytes bad = nt::serialize(dacl_of({ace(0, 0, 1, nt::world_sid())}));
  bad[20 + 8 + 2] = 3;  // an ACE size below its header and mask
  CHECK(f.call(handle_set_info, wire::Command::SetInfo, si_body(id, bad, kDaclInfo)).status ==
        NtStatus::InvalidParameter);
}

TEST_CASE("security info: a NULL DACL is stored, reads back present without a DACL, grants all", "[smb2][ntacl]") {
  Smb2Fixture f;
  f.write_file("n.txt");
  FileId id = f.open_file("n.txt", READ_CONTROL | WRITE_DAC | WRITE_OWNER);
  nt::SecurityDescriptor null_dacl;
  null_dacl.control = nt::SE_SELF_RELATIVE | nt::SE_DACL_PRESENT;
  REQUIRE(set_sd(f, id, null_dacl) == NtStatus::Success);
  nt::SecurityDescriptor back = query_sd(f, id);
  CHECK((back.control & nt::SE_DACL_PRESENT) != 0);
  CHECK(!back.dacl);
  CHECK(has_xattr(f, "n.txt"));
  // No SE_DACL_PRESENT at all ("set empty sd") is a NULL DACL too.
  nt::SecurityDescriptor empty;
  REQUIRE(set_sd(f, id, empty) == NtStatus::Success);
  back = query_sd(f, id);
  CHECK((back.control & nt::SE_DACL_PRESENT) != 0);
  CHECK(!back.dacl);
  // An empty DACL grants nothing but the owner's implicit rights.
  REQUIRE(set_sd(f, id, dacl_of({})) == NtStatus::Success);
  back = query_sd(f, id);
  REQUIRE(back.dacl);
  CHECK(back.dacl->aces.empty());
  FileId out;
  CHECK(f.create("n.txt", READ_CONTROL, kOpen, kNonDirectoryFile, out) == NtStatus::Success);
  CHECK(f.create("n.txt", FILE_WRITE_DATA, kOpen, kNonDirectoryFile, out) == NtStatus::AccessDenied);
}

TEST_CASE("security info: SE_DACL_AUTO_INHERITED is kept only with SE_DACL_AUTO_INHERIT_REQ", "[smb2][ntacl]") {
  Smb2Fixture f;
  f.write_file("c.txt");
  FileId id = f.open_file("c.txt", READ_CONTROL | WRITE_DAC);
  auto sd = dacl_of({ace(nt::ACCESS_ALLOWED_ACE_TYPE, nt::INHERITED_ACE, FILE_ALL_ACCESS, nt::world_sid())});
  const uint16_t kMask = nt::SE_DACL_AUTO_INHERITED | nt::SE_DACL_AUTO_INHERIT_REQ | nt::SE_DACL_PROTECTED;
  struct Case {
    uint16_t set, want;
  };
  for (Case c : {Case{nt::SE_DACL_AUTO_INHERITED, 0}, Case{nt::SE_DACL_AUTO_INHERIT_REQ, 0},
                 Case{nt::SE_DACL_AUTO_INHERITED | nt::SE_DACL_AUTO_INHERIT_REQ, nt::SE_DACL_AUTO_INHERITED},
                 Case{nt::SE_DACL_PROTECTED | nt::SE_DACL_AUTO_INHERIT_REQ, nt::SE_DACL_PROTECTED}}) {
    sd.control = uint16_t(nt::SE_SELF_RELATIVE | nt::SE_DACL_PRESENT | c.set);
    REQUIRE(set_sd(f, id, sd) == NtStatus::Success);
    nt::SecurityDescriptor back = query_sd(f, id);
    CHECK((back.control & kMask) == c.want);
    CHECK(back.dacl == sd.dacl);  // the ACEs as set, INHERITED_ACE included
  }
  // "acl flag inherited canonicalization = no": kept as sent.
  f.tree->share.acl_flag_inherited_canonicalization = false;
  sd.control = nt::SE_SELF_RELATIVE | nt::SE_DACL_PRESENT | nt::SE_DACL_AUTO_INHERITED;
  REQUIRE(set_sd(f, id, sd) == NtStatus::Success);
  CHECK((query_sd(f, id).control & kMask) == nt::SE_DACL_AUTO_INHERITED);
}

TEST_CASE("security info: root may make a SID without a Unix user the owner; it is stored", "[smb2][ntacl]") {
  if (getuid() != 0) return;  // the privilege is root's (docs/security.md)
  Smb2Fixture f;
  f.write_file("o.txt");
  FileId id = f.open_file("o.txt", READ_CONTROL | WRITE_DAC | WRITE_OWNER);
  const uint32_t uid_before = f.find(id) ? vfs::stat_fd(f.find(id)->fd.get())->uid : 0;
  nt::SecurityDescriptor owner_only;
  owner_only.owner = nt::world_sid();
  REQUIRE(set_sd(f, id, owner_only, nt::OWNER_SECURITY_INFORMATION) == NtStatus::Success);
  CHECK(query_sd(f, id).owner == nt::world_sid());
  CHECK(has_xattr(f, "o.txt"));
  CHECK(vfs::stat_fd(f.find(id)->fd.get())->uid == uid_before);  // the Unix owner stays
  // Back to the Unix owner: the mode says it all again, nothing stored.
  owner_only.owner = nt::unix_user_sid(uid_before);
  REQUIRE(set_sd(f, id, owner_only, nt::OWNER_SECURITY_INFORMATION) == NtStatus::Success);
  CHECK(query_sd(f, id).owner == nt::unix_user_sid(uid_before));
  CHECK(!has_xattr(f, "o.txt"));
  // A mode-only share cannot keep such an owner.
  f.tree->share.nt_acl_support = false;
  owner_only.owner = nt::world_sid();
  CHECK(set_sd(f, id, owner_only, nt::OWNER_SECURITY_INFORMATION) == NtStatus::InvalidOwner);
}

TEST_CASE("security info: nt acl support = no keeps the mode alone", "[smb2][ntacl]") {
  Smb2Fixture f;
  f.write_file("m.txt");
  f.write_file("s.txt");
  // A descriptor stored while the share still had descriptors.
  FileId s = f.open_file("s.txt", READ_CONTROL | WRITE_DAC);
  auto deny_me = dacl_of({ace(nt::ACCESS_DENIED_ACE_TYPE, 0, FILE_WRITE_DATA, nt::unix_user_sid(getuid())),
                          ace(nt::ACCESS_ALLOWED_ACE_TYPE, 0, FILE_ALL_ACCESS, nt::world_sid())});
  REQUIRE(set_sd(f, s, deny_me) == NtStatus::Success);
  REQUIRE(has_xattr(f, "s.txt"));
  f.close(s);

  f.tree->share.nt_acl_support = false;
  FileId id = f.open_file("m.txt", READ_CONTROL | WRITE_DAC | WRITE_OWNER);
  // Nothing the rwx bits cannot say is kept, or pretended.
  CHECK(set_sd(f, id, deny_me) == NtStatus::NotSupported);
  nt::SecurityDescriptor null_dacl;
  CHECK(set_sd(f, id, null_dacl) == NtStatus::NotSupported);
  CHECK(!has_xattr(f, "m.txt"));
  // What they can say is a chmod.
  auto st = vfs::stat_fd(f.find(id)->fd.get());
  REQUIRE(st);
  vfs::FileStat as_0600 = *st;
  as_0600.mode = (st->mode & ~07777u) | 0600;
  REQUIRE(set_sd(f, id, nt::from_mode(as_0600), kAllInfo) == NtStatus::Success);
  CHECK((vfs::stat_fd(f.find(id)->fd.get())->mode & 07777) == 0600);
  CHECK(!has_xattr(f, "m.txt"));
  // A stored descriptor is neither read nor enforced: the mode answers.
  FileId out;
  REQUIRE(f.create("s.txt", FILE_WRITE_DATA | READ_CONTROL, kOpen, kNonDirectoryFile, out) == NtStatus::Success);
  auto sst = vfs::stat_fd(f.find(out)->fd.get());
  REQUIRE(sst);
  CHECK(query_sd(f, out).dacl == nt::from_mode(*sst).dacl);
}

TEST_CASE("security info: the parent's descriptor is cached; an inherited DACL the mode says is a chmod",
          "[smb2][ntacl]") {
  Smb2Fixture f;
  f.mkdir("d");
  FileId d = f.open_dir("d", FILE_ALL_ACCESS);
  // What a new file's mode (0666 & create mask 0744) says, as inheritable
  // ACEs for CREATOR OWNER / CREATOR GROUP / Everyone; plus an ACE for the
  // directory itself that lets everyone add files.
  vfs::FileStat file_st{};
  file_st.mode = S_IFREG | 0644;
  file_st.uid = getuid();
  file_st.gid = getgid();
  nt::SecurityDescriptor mode_sd = nt::from_mode(file_st);
  REQUIRE(mode_sd.dacl);
  std::vector<nt::Ace> aces{ace(nt::ACCESS_ALLOWED_ACE_TYPE, 0, FILE_ALL_ACCESS, nt::world_sid())};
  for (nt::Ace a : mode_sd.dacl->aces) {
    if (a.sid == nt::unix_user_sid(getuid())) a.sid = nt::creator_owner_sid();
    else if (a.sid == nt::unix_group_sid(getgid())) a.sid = nt::creator_group_sid();
    a.flags = nt::OBJECT_INHERIT_ACE | nt::INHERIT_ONLY_ACE;
    aces.push_back(a);
  }
  REQUIRE(set_sd(f, d, dacl_of(aces)) == NtStatus::Success);
  REQUIRE(has_xattr(f, "d"));
  FileId a = f.open_file("d\\a.txt", FILE_ALL_ACCESS, kCreate);
  CHECK(!has_xattr(f, "d/a.txt"));  // inherited exactly what the mode says: no xattr write
  CHECK((vfs::stat_fd(f.find(a)->fd.get())->mode & 07777) == 0644);
  CHECK(query_sd(f, a).dacl == mode_sd.dacl);
  // Take the parent's attribute away behind the server's back: the next
  // create still inherits from the cached descriptor (it was not re-read).
  REQUIRE(removexattr((f.dir() / "d").c_str(), vfs::kNtAclXattr) == 0);
  FileId b_id;
  auto no_add = dacl_of({ace(nt::ACCESS_DENIED_ACE_TYPE, nt::OBJECT_INHERIT_ACE, FILE_READ_DATA, nt::world_sid()),
                         ace(nt::ACCESS_ALLOWED_ACE_TYPE, 0, FILE_ALL_ACCESS, nt::world_sid())});
  REQUIRE(set_sd(f, d, no_add) == NtStatus::Success);  // rewrites attribute and cache together
  REQUIRE(removexattr((f.dir() / "d").c_str(), vfs::kNtAclXattr) == 0);
  REQUIRE(f.create("d\\b.txt", FILE_ALL_ACCESS, kCreate, kNonDirectoryFile, b_id) == NtStatus::Success);
  nt::SecurityDescriptor b = query_sd(f, b_id);
  REQUIRE(b.dacl);
  REQUIRE(!b.dacl->aces.empty());
  CHECK(b.dacl->aces[0].type == nt::ACCESS_DENIED_ACE_TYPE);  // from the cache, not the (now empty) xattr
}

TEST_CASE("security info: overwriting needs FILE_WRITE_DATA from the descriptor", "[smb2][ntacl]") {
  Smb2Fixture f;
  f.write_file("r.txt", "data");
  FileId id = f.open_file("r.txt", READ_CONTROL | WRITE_DAC);
  const nt::Sid me = nt::unix_user_sid(getuid());
  REQUIRE(set_sd(f, id, dacl_of({ace(nt::ACCESS_ALLOWED_ACE_TYPE, 0, FILE_GENERIC_READ, me)})) == NtStatus::Success);
  FileId out;
  CHECK(f.create("r.txt", FILE_READ_DATA, kOpen, kNonDirectoryFile, out) == NtStatus::Success);
  CHECK(f.create("r.txt", FILE_READ_DATA, kOverwriteIf, kNonDirectoryFile, out) == NtStatus::AccessDenied);
  CHECK(std::filesystem::file_size(f.dir() / "r.txt") == 4);  // not truncated
}
