// NT security descriptors through the SMB2 handlers (smb2/security_info.cpp):
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
  sd.control |= nt::SE_DACL_AUTO_INHERITED;  // so the inherited ACEs are marked INHERITED (MS-DTYP 2.5.3.4.1)
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
