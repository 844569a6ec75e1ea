// The access checks every modifying request goes through (smb2/security/access_check.hpp):
// a read-only tree changes nothing whatever the open was granted, each change
// needs its access right, delete-on-close needs DELETE, and a delete the file
// system would refuse is refused when it is asked for, not lost at the close.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "fixture.hpp"
#include "smb2/security/access_check.hpp"
#include "smb2/engine/thread_identity.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;

namespace {

constexpr uint32_t kReadOnlyMaximalAccess = FILE_GENERIC_READ | FILE_GENERIC_EXECUTE;

void make_read_only(state::Tree& tree) {
  tree.writable = false;
  tree.maximal_access = kReadOnlyMaximalAccess;
}

Bytes set_info_body(FileId id, uint8_t info_class, const Bytes& buf) {
  Bytes b;
  ByteWriter w(b);
  w.u16(33);
  w.u8(1);  // SMB2_0_INFO_FILE
  w.u8(info_class);
  w.u32(uint32_t(buf.size()));
  w.u16(uint16_t(wire::kHeaderSize + 32));
  w.u16(0);
  w.u32(0);
  w.u64(id.persistent);
  w.u64(id.volatile_id);
  w.bytes(buf);
  return b;
}

Bytes write_body(FileId id, const Bytes& data) {
  Bytes b;
  ByteWriter w(b);
  w.u16(49);
  w.u16(uint16_t(wire::kHeaderSize + 48));
  w.u32(uint32_t(data.size()));
  w.u64(0);
  w.u64(id.persistent);
  w.u64(id.volatile_id);
  w.zeros(16);  // Channel, RemainingBytes, WriteChannelInfoOffset/Length, Flags
  w.bytes(data);
  return b;
}

constexpr uint8_t kDisposition = 13, kEndOfFile = 20;

}  // namespace

TEST_CASE("access checks: one rule per change, read-only trees change nothing", "[smb2][access]") {
  Smb2Fixture f;
  state::Open open;
  for (const ChangeRule& rule : change_rules()) {
    INFO(rule.name);
    CHECK(&change_rule(rule.change) == &rule);
    open.granted_access = FILE_ALL_ACCESS;
    CHECK(check_change(*f.tree, open, rule.change) == NtStatus::Success);
    f.tree->writable = false;
    CHECK(check_change(*f.tree, open, rule.change) == NtStatus::AccessDenied);
    CHECK(check_tree_change(*f.tree, rule.change) == NtStatus::AccessDenied);
    f.tree->writable = true;
    if (rule.any_of == 0) continue;
    open.granted_access = FILE_ALL_ACCESS & ~rule.any_of;
    CHECK(check_change(*f.tree, open, rule.change) == NtStatus::AccessDenied);
    open.granted_access = rule.any_of & (~rule.any_of + 1);  // the lowest bit alone is enough
    CHECK(check_change(*f.tree, open, rule.change) == NtStatus::Success);
  }
}

TEST_CASE("access checks: the access CREATE grants", "[smb2][access]") {
  Smb2Fixture f;
  SECTION("writable tree: MAXIMUM_ALLOWED is everything, delete-on-close allowed") {
    auto a = grant_create_access(*f.tree, MAXIMUM_ALLOWED, true);
    REQUIRE(a);
    CHECK((*a & DELETE) != 0);
    CHECK(*grant_create_access(*f.tree, GENERIC_WRITE, false) == FILE_GENERIC_WRITE);
  }
  SECTION("read-only tree: no write, delete or security right, whatever is asked") {
    make_read_only(*f.tree);
    auto a = grant_create_access(*f.tree, MAXIMUM_ALLOWED, false);
    REQUIRE(a);
    CHECK((*a & kWriteLikeAccess) == 0);
    CHECK((*a & FILE_READ_DATA) != 0);
    CHECK(grant_create_access(*f.tree, MAXIMUM_ALLOWED, true).error() == NtStatus::AccessDenied);
    CHECK(grant_create_access(*f.tree, MAXIMUM_ALLOWED | DELETE, false).error() == NtStatus::AccessDenied);
    CHECK(grant_create_access(*f.tree, GENERIC_ALL, false).error() == NtStatus::AccessDenied);
    CHECK(grant_create_access(*f.tree, DELETE, true).error() == NtStatus::AccessDenied);
    CHECK(*grant_create_access(*f.tree, GENERIC_READ, false) == FILE_GENERIC_READ);
  }
}

TEST_CASE("access checks: MAXIMUM_ALLOWED with delete-on-close on a read-only share deletes nothing",
          "[smb2][access]") {
  Smb2Fixture f;
  f.write_file("keep.txt", "data");
  f.mkdir("empty");
  make_read_only(*f.tree);
  FileId id;
  CHECK(f.create("keep.txt", MAXIMUM_ALLOWED, kOpen, kDeleteOnClose | kNonDirectoryFile, id) ==
        NtStatus::AccessDenied);
  CHECK(f.create("empty", MAXIMUM_ALLOWED, kOpen, kDeleteOnClose | kDirectoryFile, id) == NtStatus::AccessDenied);
  CHECK(f.exists("keep.txt"));
  CHECK(f.exists("empty"));

  SECTION("an open granted the maximum changes nothing") {
    REQUIRE(f.create("keep.txt", MAXIMUM_ALLOWED, kOpen, kNonDirectoryFile, id) == NtStatus::Success);
    CHECK((f.find(id)->granted_access & kWriteLikeAccess) == 0);
    CHECK(f.call(handle_set_info, wire::Command::SetInfo, set_info_body(id, kDisposition, {1})).status ==
          NtStatus::AccessDenied);
    CHECK(f.call(handle_set_info, wire::Command::SetInfo, set_info_body(id, kEndOfFile, Bytes(8, 0))).status ==
          NtStatus::AccessDenied);
    CHECK(f.call(handle_write, wire::Command::Write, write_body(id, {'x'})).status == NtStatus::AccessDenied);
    f.close(id);
    CHECK(std::filesystem::file_size(f.dir() / "keep.txt") == 4);
  }
  SECTION("an open made while writable loses its rights with the tree") {
    f.tree->writable = true;
    f.tree->maximal_access = FILE_ALL_ACCESS;
    REQUIRE(f.create("keep.txt", FILE_ALL_ACCESS, kOpen, kNonDirectoryFile, id) == NtStatus::Success);
    f.tree->writable = false;
    CHECK(f.call(handle_write, wire::Command::Write, write_body(id, {'x'})).status == NtStatus::AccessDenied);
    CHECK(f.call(handle_set_info, wire::Command::SetInfo, set_info_body(id, kDisposition, {1})).status ==
          NtStatus::AccessDenied);
    f.close(id);
    CHECK(f.exists("keep.txt"));
  }
}

// Runs the rest of a test as another Unix user (this thread only), back to
// root at the end.
struct AsUser {
  explicit AsUser(uint32_t uid) {
    ipc::UnixUser u;
    u.uid = u.gid = uid;
    become_user(u);
  }
  ~AsUser() { become_root(); }
};

TEST_CASE("access checks: a delete the sticky bit forbids is refused when asked for", "[smb2][access]") {
  if (geteuid() != 0) {
    WARN("skipped: needs root to act as two users");
    return;
  }
  Smb2Fixture f;
  constexpr uint32_t kOwner = 64101, kOther = 64102;
  REQUIRE(chmod(f.dir().c_str(), 0755) == 0);  // mkdtemp's 0700 would stop the users at the root
  f.mkdir("tmp");
  REQUIRE(chmod((f.dir() / "tmp").c_str(), 01777) == 0);
  f.write_file("tmp/owned", "x");
  REQUIRE(chown((f.dir() / "tmp/owned").c_str(), kOwner, kOwner) == 0);
  REQUIRE(chmod((f.dir() / "tmp/owned").c_str(), 0666) == 0);
  FileId id;
  {
    AsUser other(kOther);
    CHECK(check_unlink_allowed(*f.tree, "tmp/owned") == NtStatus::AccessDenied);
    CHECK(f.create("tmp\\owned", DELETE | FILE_READ_DATA, kOpen, kDeleteOnClose | kNonDirectoryFile, id) ==
          NtStatus::AccessDenied);
    REQUIRE(f.create("tmp\\owned", DELETE | FILE_READ_DATA, kOpen, kNonDirectoryFile, id) == NtStatus::Success);
    CHECK(f.call(handle_set_info, wire::Command::SetInfo, set_info_body(id, kDisposition, {1})).status ==
          NtStatus::AccessDenied);
    f.close(id);
  }
  CHECK(f.exists("tmp/owned"));
  {
    AsUser owner(kOwner);
    CHECK(check_unlink_allowed(*f.tree, "tmp/owned") == NtStatus::Success);
    REQUIRE(f.create("tmp\\owned", DELETE, kOpen, kDeleteOnClose | kNonDirectoryFile, id) == NtStatus::Success);
    f.close(id);
  }
  CHECK_FALSE(f.exists("tmp/owned"));
}

TEST_CASE("access checks: delete-on-close of a read-only file is CANNOT_DELETE at CREATE", "[smb2][access]") {
  Smb2Fixture f;
  f.write_file("ro.txt", "x");
  REQUIRE(chmod((f.dir() / "ro.txt").c_str(), 0444) == 0);
  FileId id;
  CHECK(f.create("ro.txt", DELETE, kOpen, kDeleteOnClose | kNonDirectoryFile, id) == NtStatus::CannotDelete);
  CHECK(f.exists("ro.txt"));
  REQUIRE(chmod((f.dir() / "ro.txt").c_str(), 0644) == 0);
  REQUIRE(f.create("ro.txt", DELETE, kOpen, kDeleteOnClose | kNonDirectoryFile, id) == NtStatus::Success);
  f.close(id);
  CHECK_FALSE(f.exists("ro.txt"));
}

TEST_CASE("access checks: a READONLY file refuses write access and overwrite, whoever asks", "[smb2][access]") {
  // MS-FSA 2.1.5.1.2.1. The unit tests run as root, whom the mode would not stop.
  CHECK(!apply_readonly_attribute(FILE_ALL_ACCESS, FILE_WRITE_DATA, false));
  CHECK(!apply_readonly_attribute(FILE_ALL_ACCESS, FILE_APPEND_DATA, false));
  CHECK(!apply_readonly_attribute(FILE_ALL_ACCESS, GENERIC_WRITE, false));
  CHECK(!apply_readonly_attribute(FILE_READ_DATA, FILE_READ_DATA, true));  // an overwrite writes
  CHECK(apply_readonly_attribute(FILE_READ_DATA | DELETE, FILE_READ_DATA | DELETE, false) ==
        uint32_t(FILE_READ_DATA | DELETE));
  auto max = apply_readonly_attribute(FILE_ALL_ACCESS, MAXIMUM_ALLOWED, false);
  REQUIRE(max);
  CHECK((*max & (FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_DELETE_CHILD)) == 0);
  CHECK((*max & FILE_READ_DATA) != 0);

  Smb2Fixture f;
  f.write_file("ro.txt", "x");
  REQUIRE(chmod((f.dir() / "ro.txt").c_str(), 0444) == 0);
  FileId id;
  CHECK(f.create("ro.txt", FILE_WRITE_DATA, kOpen, kNonDirectoryFile, id) == NtStatus::AccessDenied);
  CHECK(f.create("ro.txt", FILE_READ_DATA, kOverwriteIf, kNonDirectoryFile, id) == NtStatus::AccessDenied);
  REQUIRE(f.create("ro.txt", MAXIMUM_ALLOWED, kOpen, kNonDirectoryFile, id) == NtStatus::Success);
  CHECK((f.find(id)->granted_access & FILE_WRITE_DATA) == 0);
  CHECK(std::filesystem::file_size(f.dir() / "ro.txt") == 1);  // not overwritten
}

TEST_CASE("access checks: an existing file's descriptor narrows the grant (MS-DTYP 2.5.3.2)", "[smb2][access]") {
  // What another user's 0644 file gives it: Everyone's ACE (read).
  const uint32_t everyone_read = FILE_GENERIC_READ | FILE_GENERIC_EXECUTE;
  // Rights asked for by name must all be allowed.
  CHECK(!apply_allowed_access(FILE_ALL_ACCESS, FILE_WRITE_EA, everyone_read, 0, false));
  CHECK(!apply_allowed_access(FILE_ALL_ACCESS, WRITE_DAC, everyone_read, 0, false));
  CHECK(!apply_allowed_access(FILE_ALL_ACCESS, FILE_WRITE_ATTRIBUTES, everyone_read, 0, false));
  CHECK(!apply_allowed_access(FILE_ALL_ACCESS, GENERIC_ALL, everyone_read, 0, false));
  // (grant_create_access grants what was asked for by name.)
  CHECK(apply_allowed_access(FILE_READ_EA, FILE_READ_EA, everyone_read, 0, false) == uint32_t(FILE_READ_EA));
  // MAXIMUM_ALLOWED keeps only what is allowed, and what the tree grants.
  CHECK(apply_allowed_access(FILE_ALL_ACCESS, MAXIMUM_ALLOWED, everyone_read, 0, false) == everyone_read);
  CHECK(apply_allowed_access(kReadOnlyMaximalAccess & ~FILE_EXECUTE, MAXIMUM_ALLOWED, everyone_read, 0, false) ==
        (everyone_read & ~uint32_t(FILE_EXECUTE)));
  // DELETE through the parent's FILE_DELETE_CHILD, FILE_READ_ATTRIBUTES
  // through its FILE_LIST_DIRECTORY; delete-on-close needs DELETE.
  CHECK(rights_wanted_from_parent(DELETE, everyone_read) == uint32_t(DELETE));
  CHECK(rights_wanted_from_parent(FILE_READ_DATA, everyone_read) == 0);  // no need to look
  CHECK(rights_wanted_from_parent(MAXIMUM_ALLOWED, everyone_read) == uint32_t(DELETE));
  CHECK(!apply_allowed_access(FILE_ALL_ACCESS, DELETE, everyone_read, FILE_READ_DATA, false));
  CHECK(apply_allowed_access(DELETE, DELETE, everyone_read, FILE_DELETE_CHILD, false) == uint32_t(DELETE));
  CHECK(apply_allowed_access(FILE_READ_ATTRIBUTES, FILE_READ_ATTRIBUTES, 0, FILE_READ_DATA, false) ==
        uint32_t(FILE_READ_ATTRIBUTES));
  CHECK(!apply_allowed_access(FILE_ALL_ACCESS, MAXIMUM_ALLOWED, everyone_read, 0, true));
  CHECK(apply_allowed_access(FILE_ALL_ACCESS, MAXIMUM_ALLOWED, everyone_read, FILE_DELETE_CHILD, true));
}

TEST_CASE("access checks: another user's file grants what its mode gives, metadata included", "[smb2][access]") {
  if (geteuid() != 0) {
    WARN("skipped: needs root to act as two users");
    return;
  }
  Smb2Fixture f;
  constexpr uint32_t kOwner = 64101, kOther = 64102;
  REQUIRE(chmod(f.dir().c_str(), 0755) == 0);  // the directory is root's: nobody else may delete in it
  for (auto [name, mode] : {std::pair{"private", 0600}, std::pair{"public", 0644}}) {
    f.write_file(name, "x");
    REQUIRE(chown((f.dir() / name).c_str(), kOwner, kOwner) == 0);
    REQUIRE(chmod((f.dir() / name).c_str(), mode_t(mode)) == 0);
  }
  const ipc::UnixUser root = f.tree->identity;
  FileId id;
  {
    f.tree->identity.uid = f.tree->identity.gid = kOther;
    AsUser other(kOther);
    // EAs, the DACL, the owner, attributes and times: nothing the mode does not give.
    for (const char* name : {"private", "public"})
      for (uint32_t access : {uint32_t(FILE_WRITE_EA), uint32_t(WRITE_DAC), uint32_t(WRITE_OWNER),
                              uint32_t(FILE_WRITE_ATTRIBUTES), uint32_t(DELETE), uint32_t(GENERIC_ALL)}) {
        INFO(name << " access " << std::hex << access);
        CHECK(f.create(name, access, kOpen, 0, id) == NtStatus::AccessDenied);
      }
    CHECK(f.create("private", FILE_READ_EA, kOpen, 0, id) == NtStatus::AccessDenied);
    REQUIRE(f.create("public", FILE_READ_EA, kOpen, 0, id) == NtStatus::Success);
    f.close(id);
    // MAXIMUM_ALLOWED: the attributes and the descriptor of a 0600 file
    // (an O_PATH open), Everyone's read of a 0644 one.
    REQUIRE(f.create("private", MAXIMUM_ALLOWED, kOpen, 0, id) == NtStatus::Success);
    CHECK(f.find(id)->granted_access == uint32_t(READ_CONTROL | FILE_READ_ATTRIBUTES | SYNCHRONIZE));
    f.close(id);
    REQUIRE(f.create("public", MAXIMUM_ALLOWED, kOpen, 0, id) == NtStatus::Success);
    CHECK(f.find(id)->granted_access == FILE_GENERIC_READ);
    f.close(id);
  }
  {
    f.tree->identity.uid = f.tree->identity.gid = kOwner;
    AsUser owner(kOwner);
    REQUIRE(f.create("private", MAXIMUM_ALLOWED, kOpen, 0, id) == NtStatus::Success);
    CHECK(f.find(id)->granted_access == FILE_ALL_ACCESS);  // full control of its own file
    f.close(id);
    REQUIRE(f.create("public", FILE_WRITE_EA | WRITE_DAC | WRITE_OWNER | FILE_WRITE_ATTRIBUTES, kOpen, 0, id) ==
            NtStatus::Success);
    f.close(id);
  }
  f.tree->identity = root;
}
