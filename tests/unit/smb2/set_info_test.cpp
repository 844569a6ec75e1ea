#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "fixture.hpp"
#include "state/file_table.hpp"
#include "vfs/file_info.hpp"
#include "vfs/ea_store.hpp"
#include "vfs/file_meta.hpp"
#include "vfs/short_names.hpp"
#include "vfs/stream_store.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;

namespace {

constexpr uint8_t kFile = 1, kFs = 2, kSecurity = 3, kQuota = 4;
constexpr uint8_t kBasic = 4, kRename = 10, kLink = 11, kDisposition = 13, kPosition = 14, kFullEa = 15,
                  kMode = 16, kAllocation = 19, kEndOfFile = 20, kDispositionEx = 64;

Bytes si_body(FileId id, uint8_t type, uint8_t cls, const Bytes& buf, uint32_t additional = 0) {
  Body body;
  body.w.u16(33);
  body.w.u8(type);
  body.w.u8(cls);
  body.w.u32(uint32_t(buf.size()));
  body.w.u16(uint16_t(wire::kHeaderSize + 32));
  body.w.u16(0);
  body.w.u32(additional);
  body.w.u64(id.persistent);
  body.w.u64(id.volatile_id);
  body.w.bytes(buf);
  if (buf.empty()) body.w.u8(0);
  return body.b;
}

Bytes rename_buf(std::string_view name, bool replace, uint32_t len_override = UINT32_MAX) {
  Bytes b;
  ByteWriter w(b);
  Bytes n = u16le(name);
  w.u8(replace ? 1 : 0);
  w.zeros(7);
  w.u64(0);
  w.u32(len_override == UINT32_MAX ? uint32_t(n.size()) : len_override);
  w.bytes(n);
  return b;
}

Bytes basic_buf(uint64_t ctime, uint64_t atime, uint64_t mtime, uint64_t chtime, uint32_t attrs) {
  Bytes b;
  ByteWriter w(b);
  w.u64(ctime);
  w.u64(atime);
  w.u64(mtime);
  w.u64(chtime);
  w.u32(attrs);
  w.u32(0);
  return b;
}

Bytes u64_buf(uint64_t v) {
  Bytes b(8);
  store_le64(b.data(), v);
  return b;
}

NtStatus set(Smb2Fixture& f, FileId id, uint8_t type, uint8_t cls, const Bytes& buf, uint32_t additional = 0) {
  Response r = f.call(handle_set_info, wire::Command::SetInfo, si_body(id, type, cls, buf, additional));
  if (r.status == NtStatus::Success) {
    REQUIRE(r.body.size() == 2);
    REQUIRE(r.u16(0) == 2);
  }
  return r.status;
}

struct stat stat_of(const Smb2Fixture& f, const std::string& rel) {
  struct stat st {};
  REQUIRE(::lstat((f.dir() / rel).c_str(), &st) == 0);
  return st;
}

}  // namespace

TEST_CASE("set_info rename", "[smb2]") {
  Smb2Fixture f;
  f.write_file("a.txt", "A");
  f.write_file("b.txt", "B");
  f.mkdir("sub");

  SECTION("to a new name, into a subdirectory") {
    FileId id = f.open_file("a.txt", DELETE | FILE_READ_ATTRIBUTES);
    REQUIRE(set(f, id, kFile, kRename, rename_buf("sub\\c.txt", false)) == NtStatus::Success);
    CHECK(!f.exists("a.txt"));
    CHECK(f.exists("sub/c.txt"));
    CHECK(f.find(id)->path == "sub/c.txt");
  }
  SECTION("leading backslash is tolerated") {
    FileId id = f.open_file("a.txt", DELETE);
    REQUIRE(set(f, id, kFile, kRename, rename_buf("\\z.txt", false)) == NtStatus::Success);
    CHECK(f.exists("z.txt"));
  }
  SECTION("existing target without replace: collision; with replace: replaced") {
    FileId id = f.open_file("a.txt", DELETE);
    CHECK(set(f, id, kFile, kRename, rename_buf("b.txt", false)) == NtStatus::ObjectNameCollision);
    CHECK(set(f, id, kFile, kRename, rename_buf("B.TXT", false)) == NtStatus::ObjectNameCollision);
    REQUIRE(set(f, id, kFile, kRename, rename_buf("b.txt", true)) == NtStatus::Success);
    CHECK(!f.exists("a.txt"));
    CHECK(stat_of(f, "b.txt").st_size == 1);
  }
  SECTION("replace over an open target is refused") {
    FileId id = f.open_file("a.txt", DELETE);
    FileId other = f.open_file("b.txt", FILE_READ_DATA);
    CHECK(set(f, id, kFile, kRename, rename_buf("b.txt", true)) == NtStatus::AccessDenied);
    f.close(other);
    CHECK(set(f, id, kFile, kRename, rename_buf("b.txt", true)) == NtStatus::Success);
  }
  SECTION("replacing a directory is refused") {
    FileId id = f.open_file("a.txt", DELETE);
    CHECK(set(f, id, kFile, kRename, rename_buf("sub", true)) == NtStatus::AccessDenied);
  }
  SECTION("case-only rename") {
    FileId id = f.open_file("a.txt", DELETE);
    REQUIRE(set(f, id, kFile, kRename, rename_buf("A.TXT", false)) == NtStatus::Success);
    CHECK(f.exists("A.TXT"));
    CHECK(!f.exists("a.txt"));
  }
  SECTION("missing target directory") {
    FileId id = f.open_file("a.txt", DELETE);
    CHECK(set(f, id, kFile, kRename, rename_buf("nodir\\x", false)) == NtStatus::ObjectPathNotFound);
  }
  SECTION("needs DELETE access") {
    FileId id = f.open_file("a.txt", FILE_READ_DATA | FILE_WRITE_ATTRIBUTES);
    CHECK(set(f, id, kFile, kRename, rename_buf("q", false)) == NtStatus::AccessDenied);
  }
  SECTION("another open without FILE_SHARE_DELETE: sharing violation") {
    // CREATE refuses that combination, so forge the other open's share mode.
    FileId id = f.open_file("a.txt", DELETE);
    FileId other = f.open_file("a.txt", FILE_READ_DATA);
    f.find(other)->node->opens.back().share_access = 3;
    CHECK(set(f, id, kFile, kRename, rename_buf("q", false)) == NtStatus::SharingViolation);
  }
  SECTION("a directory with open files below it cannot be renamed") {
    f.write_file("sub/inner.txt");
    FileId inner = f.open_file("sub\\inner.txt", FILE_READ_DATA);
    FileId d = f.open_dir("sub", DELETE | FILE_READ_ATTRIBUTES);
    CHECK(set(f, d, kFile, kRename, rename_buf("sub2", false)) == NtStatus::AccessDenied);
    f.close(inner);
    REQUIRE(set(f, d, kFile, kRename, rename_buf("sub2", false)) == NtStatus::Success);
    CHECK(f.find(d)->path == "sub2");
    CHECK(f.exists("sub2/inner.txt"));
  }
  SECTION("parent directory open with DELETE, or not sharing write: sharing violation") {
    f.write_file("sub/x");
    FileId x = f.open_file("sub\\x", DELETE);
    FileId parent;
    REQUIRE(f.create("sub", FILE_READ_DATA | DELETE, kOpen, kDirectoryFile, parent, 7) == NtStatus::Success);
    CHECK(set(f, x, kFile, kRename, rename_buf("sub\\y", false)) == NtStatus::SharingViolation);
    f.close(parent);
    REQUIRE(f.create("sub", FILE_READ_DATA, kOpen, kDirectoryFile, parent, 5) == NtStatus::Success);
    CHECK(set(f, x, kFile, kRename, rename_buf("sub\\y", false)) == NtStatus::SharingViolation);
    f.close(parent);
    REQUIRE(f.create("sub", FILE_READ_DATA, kOpen, kDirectoryFile, parent, 7) == NtStatus::Success);
    CHECK(set(f, x, kFile, kRename, rename_buf("sub\\y", false)) == NtStatus::Success);
  }
  SECTION("a directory is renamed inside a parent open with DELETE (a watcher's handle)") {
    f.mkdir("top/d");
    f.write_file("top/d/keep");
    FileId parent;
    REQUIRE(f.create("top", FILE_READ_DATA | DELETE, kOpen, kDirectoryFile, parent, 7) == NtStatus::Success);
    FileId d = f.open_dir("top\\d", DELETE | FILE_READ_ATTRIBUTES);
    CHECK(set(f, d, kFile, kRename, rename_buf("top\\d-r", false)) == NtStatus::Success);
    CHECK(f.exists("top/d-r/keep"));
  }
  SECTION("a parent open for attributes only, sharing nothing, does not block (how Word saves)") {
    f.write_file("sub/x");
    FileId x = f.open_file("sub\\x", DELETE);
    FileId parent;
    REQUIRE(f.create("sub", SYNCHRONIZE | FILE_READ_ATTRIBUTES, kOpen, kDirectoryFile, parent, 0) ==
            NtStatus::Success);
    CHECK(set(f, x, kFile, kRename, rename_buf("sub\\y", false)) == NtStatus::Success);
  }
  SECTION("malformed: name length beyond the buffer, odd, zero, bad names, RootDirectory") {
    FileId id = f.open_file("a.txt", DELETE);
    CHECK(set(f, id, kFile, kRename, rename_buf("x", false, 100)) == NtStatus::InvalidParameter);
    CHECK(set(f, id, kFile, kRename, rename_buf("xy", false, 3)) == NtStatus::InvalidParameter);
    CHECK(set(f, id, kFile, kRename, rename_buf("", false)) == NtStatus::InvalidParameter);
    CHECK(set(f, id, kFile, kRename, rename_buf("..\\escape", false)) == NtStatus::ObjectPathSyntaxBad);
    CHECK(set(f, id, kFile, kRename, rename_buf("a*b", false)) == NtStatus::ObjectNameInvalid);
    CHECK(set(f, id, kFile, kRename, Bytes(10, 0)) == NtStatus::InfoLengthMismatch);
    Bytes rooted = rename_buf("x", false);
    store_le64(rooted.data() + 8, 1);
    CHECK(set(f, id, kFile, kRename, rooted) == NtStatus::InvalidParameter);
    CHECK(f.exists("a.txt"));
  }
  SECTION("read-only share") {
    FileId id = f.open_file("a.txt", DELETE);
    f.tree->writable = false;
    CHECK(set(f, id, kFile, kRename, rename_buf("q", false)) == NtStatus::AccessDenied);
  }
}

// The target's short name stands for a vetoed name: no replacing it by that.
TEST_CASE("set_info rename onto a vetoed name's short name", "[smb2]") {
  Smb2Fixture f;
  f.write_file("topsecret.secret", "kept");
  f.mkdir("private files");
  f.write_file("x.txt", "x");
  f.tree->share.veto_files = {"*.secret", "private files"};
  FileId id = f.open_file("x.txt", DELETE);
  CHECK(set(f, id, kFile, kRename, rename_buf(vfs::short_name_of("topsecret.secret"), true)) ==
        NtStatus::ObjectNameNotFound);
  CHECK(set(f, id, kFile, kRename, rename_buf(vfs::short_name_of("private files") + "\\y.txt", true)) ==
        NtStatus::ObjectPathNotFound);
  CHECK(std::filesystem::file_size(f.dir() / "topsecret.secret") == 4);
  CHECK(f.exists("x.txt"));
}

TEST_CASE("set_info disposition", "[smb2]") {
  Smb2Fixture f;
  f.write_file("a.txt", "A");
  f.mkdir("full/x");
  f.mkdir("empty");

  SECTION("delete pending removes the file at the last close") {
    FileId id = f.open_file("a.txt", DELETE);
    REQUIRE(set(f, id, kFile, kDisposition, Bytes{1}) == NtStatus::Success);
    CHECK(f.server.files.is_delete_pending(f.find(id)->node));
    CHECK(f.exists("a.txt"));
    f.close(id);
    CHECK(!f.exists("a.txt"));
  }
  SECTION("clearing it keeps the file") {
    FileId id = f.open_file("a.txt", DELETE);
    REQUIRE(set(f, id, kFile, kDisposition, Bytes{1}) == NtStatus::Success);
    REQUIRE(set(f, id, kFile, kDisposition, Bytes{0}) == NtStatus::Success);
    f.close(id);
    CHECK(f.exists("a.txt"));
  }
  SECTION("non-empty directory") {
    FileId d = f.open_dir("full", DELETE);
    CHECK(set(f, d, kFile, kDisposition, Bytes{1}) == NtStatus::DirectoryNotEmpty);
    FileId e = f.open_dir("empty", DELETE);
    CHECK(set(f, e, kFile, kDisposition, Bytes{1}) == NtStatus::Success);
    f.close(e);
    CHECK(!f.exists("empty"));
  }
  SECTION("read-only file; DispositionEx can ignore it") {
    ::chmod((f.dir() / "a.txt").c_str(), 0444);
    FileId id = f.open_file("a.txt", DELETE | FILE_READ_DATA);
    CHECK(set(f, id, kFile, kDisposition, Bytes{1}) == NtStatus::CannotDelete);
    Bytes ex(4);
    store_le32(ex.data(), 0x1 | 0x10);
    CHECK(set(f, id, kFile, kDispositionEx, ex) == NtStatus::Success);
    store_le32(ex.data(), 0x100);
    CHECK(set(f, id, kFile, kDispositionEx, ex) == NtStatus::InvalidParameter);
  }
  SECTION("needs DELETE; the root cannot be deleted; short buffer") {
    FileId id = f.open_file("a.txt", FILE_READ_DATA);
    CHECK(set(f, id, kFile, kDisposition, Bytes{1}) == NtStatus::AccessDenied);
    FileId root = f.open_dir("", FILE_ALL_ACCESS);
    CHECK(set(f, root, kFile, kDisposition, Bytes{1}) == NtStatus::CannotDelete);
    CHECK(set(f, root, kFile, kDisposition, Bytes{}) == NtStatus::InfoLengthMismatch);
  }
}

TEST_CASE("set_info basic", "[smb2]") {
  Smb2Fixture f;
  f.write_file("a.txt", "A");
  FileId id = f.open_file("a.txt", FILE_WRITE_ATTRIBUTES | FILE_READ_ATTRIBUTES);
  const uint64_t t2001 = vfs::unix_to_filetime(978307200, 500000000);  // 2001-01-01 00:00:00.5

  SECTION("times: set mtime, leave atime alone (0) and ignore -1") {
    struct stat before = stat_of(f, "a.txt");
    REQUIRE(set(f, id, kFile, kBasic, basic_buf(0, 0, t2001, ~0ull, 0)) == NtStatus::Success);
    struct stat after = stat_of(f, "a.txt");
    CHECK(after.st_mtim.tv_sec == 978307200);
    CHECK(after.st_mtim.tv_nsec == 500000000);
    CHECK(after.st_atim.tv_sec == before.st_atim.tv_sec);
  }
  SECTION("invalid negative time") {
    CHECK(set(f, id, kFile, kBasic, basic_buf(0, uint64_t(-3), 0, 0, 0)) == NtStatus::InvalidParameter);
  }
  SECTION("READONLY toggles write bits") {
    REQUIRE(set(f, id, kFile, kBasic, basic_buf(0, 0, 0, 0, vfs::FILE_ATTRIBUTE_READONLY)) == NtStatus::Success);
    CHECK((stat_of(f, "a.txt").st_mode & 0222) == 0);
    REQUIRE(set(f, id, kFile, kBasic, basic_buf(0, 0, 0, 0, vfs::FILE_ATTRIBUTE_ARCHIVE)) == NtStatus::Success);
    CHECK((stat_of(f, "a.txt").st_mode & S_IWUSR) != 0);
  }
  SECTION("DIRECTORY on a file is invalid") {
    CHECK(set(f, id, kFile, kBasic, basic_buf(0, 0, 0, 0, vfs::FILE_ATTRIBUTE_DIRECTORY)) ==
          NtStatus::InvalidParameter);
  }
  SECTION("works on an attribute-only (O_PATH) open") {
    state::Open* o = f.find(id);
    int path_fd = ::open((f.dir() / "a.txt").c_str(), O_PATH | O_CLOEXEC);
    REQUIRE(path_fd >= 0);
    o->fd.reset(path_fd);
    REQUIRE(set(f, id, kFile, kBasic, basic_buf(0, t2001, t2001, 0, vfs::FILE_ATTRIBUTE_READONLY)) ==
            NtStatus::Success);
    CHECK(stat_of(f, "a.txt").st_mtim.tv_sec == 978307200);
    CHECK((stat_of(f, "a.txt").st_mode & 0222) == 0);
  }
  SECTION("needs FILE_WRITE_ATTRIBUTES; short buffer") {
    FileId ro = f.open_file("a.txt", FILE_READ_DATA);
    CHECK(set(f, ro, kFile, kBasic, basic_buf(0, 0, t2001, 0, 0)) == NtStatus::AccessDenied);
    CHECK(set(f, id, kFile, kBasic, Bytes(39, 0)) == NtStatus::InfoLengthMismatch);
  }
}

TEST_CASE("set_info end of file, allocation, position, mode and the rest", "[smb2]") {
  Smb2Fixture f;
  f.write_file("a.txt", "0123456789");
  FileId id = f.open_file("a.txt", FILE_READ_DATA | FILE_WRITE_DATA);

  CHECK(set(f, id, kFile, kEndOfFile, u64_buf(4)) == NtStatus::Success);
  CHECK(stat_of(f, "a.txt").st_size == 4);
  CHECK(set(f, id, kFile, kEndOfFile, u64_buf(100000)) == NtStatus::Success);
  CHECK(stat_of(f, "a.txt").st_size == 100000);
  CHECK(set(f, id, kFile, kEndOfFile, u64_buf(~0ull)) == NtStatus::InvalidParameter);
  CHECK(set(f, id, kFile, kEndOfFile, Bytes(7, 0)) == NtStatus::InfoLengthMismatch);

  CHECK(set(f, id, kFile, kAllocation, u64_buf(1 << 20)) == NtStatus::Success);  // larger: reserved
  CHECK(stat_of(f, "a.txt").st_size == 100000);
  // Smaller than EndOfFile: the file is cut to it (MS-FSA 2.1.5.15.1).
  CHECK(set(f, id, kFile, kAllocation, u64_buf(10)) == NtStatus::Success);
  CHECK(stat_of(f, "a.txt").st_size == 10);
  // A reservation that would leave the filesystem (nearly) full is refused
  // before anything is reserved.
  struct statvfs vfs;
  REQUIRE(statvfs(f.dir().c_str(), &vfs) == 0);
  uint64_t free_bytes = uint64_t(vfs.f_bavail) * vfs.f_frsize;
  auto blocks_before = stat_of(f, "a.txt").st_blocks;
  CHECK(set(f, id, kFile, kAllocation, u64_buf(free_bytes + (1 << 20))) == NtStatus::DiskFull);
  CHECK(set(f, id, kFile, kAllocation, u64_buf(free_bytes - free_bytes / 100)) == NtStatus::DiskFull);
  CHECK(stat_of(f, "a.txt").st_blocks == blocks_before);

  CHECK(set(f, id, kFile, kPosition, u64_buf(77)) == NtStatus::Success);
  CHECK(f.find(id)->position == 77);
  Bytes mode(4);
  store_le32(mode.data(), 0x2);
  CHECK(set(f, id, kFile, kMode, mode) == NtStatus::Success);
  CHECK((f.find(id)->create_options & 0x2) != 0);
  store_le32(mode.data(), 0x1000);
  CHECK(set(f, id, kFile, kMode, mode) == NtStatus::InvalidParameter);

  // FileLinkInformation without a name (smb2/links/hard_link.hpp).
  CHECK(set(f, id, kFile, kLink, Bytes(24, 0)) == NtStatus::InvalidParameter);
  // Setting EAs needs FILE_WRITE_EA (access_check.hpp) before the class says it has none.
  CHECK(set(f, id, kFile, kFullEa, Bytes(24, 0)) == NtStatus::AccessDenied);
  FileId ea_writer = f.open_file("a.txt", FILE_READ_DATA | FILE_WRITE_EA);
  CHECK(set(f, ea_writer, kFile, kFullEa, Bytes(24, 0)) == NtStatus::EasNotSupported);
  CHECK(set(f, id, kFile, 200, Bytes(8, 0)) == NtStatus::InvalidInfoClass);
  CHECK(set(f, id, kFs, 1, Bytes(8, 0)) == NtStatus::NotSupported);
  CHECK(set(f, id, kQuota, 0, Bytes(8, 0)) == NtStatus::InvalidParameter);  // only the quota index takes limits
  CHECK(set(f, id, 9, 0, Bytes(8, 0)) == NtStatus::InvalidParameter);

  FileId reader = f.open_file("a.txt", FILE_READ_DATA);
  CHECK(set(f, reader, kFile, kEndOfFile, u64_buf(1)) == NtStatus::AccessDenied);
  CHECK(set(f, reader, kFile, kAllocation, u64_buf(1)) == NtStatus::AccessDenied);
}

TEST_CASE("set_info security: re-applying the reported descriptor is accepted, others are stored", "[smb2]") {
  Smb2Fixture f;
  f.write_file("a.txt");
  FileId id = f.open_file("a.txt", FILE_ALL_ACCESS);
  auto st = vfs::stat_fd(f.find(id)->fd.get());
  REQUIRE(st);
  Bytes sd = vfs::build_security_descriptor(*st, 0x7);
  CHECK(set(f, id, kSecurity, 0, sd, 0x7) == NtStatus::Success);
  CHECK(!f.server.ntacls.in_use());  // the mode said it all: nothing stored
  Bytes other = sd;
  other.back() ^= 0xFF;  // a different DACL / SID: kept in trusted.ringsmb.ntacl
  CHECK(set(f, id, kSecurity, 0, other, 0x7) == NtStatus::Success);
  CHECK(f.server.ntacls.in_use());
  CHECK(set(f, id, kSecurity, 0, Bytes(10, 0), 0x7) == NtStatus::InvalidParameter);
  Bytes bad = sd;
  store_le32(bad.data() + 16, 0xFFFF);  // DACL offset beyond the buffer
  CHECK(set(f, id, kSecurity, 0, bad, 0x4) == NtStatus::InvalidParameter);
  CHECK(set(f, id, kSecurity, 0, sd, 0x8) == NtStatus::AccessDenied);
  FileId weak = f.open_file("a.txt", FILE_READ_DATA);
  CHECK(set(f, weak, kSecurity, 0, sd, 0x4) == NtStatus::AccessDenied);
}

namespace {
struct TestAce {
  uint8_t flags;
  uint32_t mask;
  uint64_t authority;
  std::vector<uint32_t> subs;
};
// A self-relative descriptor holding only a DACL.
Bytes dacl_sd(const std::vector<TestAce>& aces) {
  Bytes b;
  ByteWriter w(b);
  w.u8(1);
  w.u8(0);
  w.u16(0x8004);  // SE_SELF_RELATIVE | SE_DACL_PRESENT
  w.u32(0);
  w.u32(0);
  w.u32(0);
  w.u32(20);
  size_t acl = b.size();
  w.u8(2);
  w.u8(0);
  w.u16(0);  // AclSize, patched
  w.u16(uint16_t(aces.size()));
  w.u16(0);
  for (const auto& a : aces) {
    w.u8(0);
    w.u8(a.flags);
    w.u16(uint16_t(16 + 4 * a.subs.size()));
    w.u32(a.mask);
    w.u8(1);
    w.u8(uint8_t(a.subs.size()));
    for (int shift = 40; shift >= 0; shift -= 8) w.u8(uint8_t(a.authority >> shift));
    for (uint32_t sub : a.subs) w.u32(sub);
  }
  store_le16(b.data() + acl + 2, uint16_t(b.size() - acl));
  return b;
}
}  // namespace

TEST_CASE("set_info security: a DACL the mode bits express is applied as a chmod", "[smb2]") {
  Smb2Fixture f;
  f.mkdir("d");
  f.write_file("a.txt");
  uint32_t uid = getuid(), gid = getgid();
  auto mode_of = [&](const char* rel) { return stat_of(f, rel).st_mode & 07777; };
  SECTION("owner full control only, on a directory: 0700") {
    chmod((f.dir() / "d").c_str(), 0755);
    FileId d = f.open_dir("d", FILE_ALL_ACCESS);
    CHECK(set(f, d, kSecurity, 0, dacl_sd({{0, 0x1F01FF, 22, {1, uid}}}), 0x4) == NtStatus::Success);
    CHECK(mode_of("d") == 0700);
    // Inheritance flags: stored, the mode stays.
    CHECK(set(f, d, kSecurity, 0, dacl_sd({{0x1, 0x1F01FF, 22, {1, uid}}}), 0x4) == NtStatus::Success);
    CHECK(mode_of("d") == 0700);
  }
  SECTION("a file: full control for the owner, read for the group") {
    FileId id = f.open_file("a.txt", FILE_ALL_ACCESS);
    CHECK(set(f, id, kSecurity, 0, dacl_sd({{0, 0x1F01FF, 22, {1, uid}}, {0, 0x120089, 22, {2, gid}}}), 0x4) ==
          NtStatus::Success);
    CHECK(mode_of("a.txt") == 0740);
    // Write without read for Everyone has no rwx equivalent that grants no more.
    // It is stored instead, and the mode is left as it was.
    CHECK(set(f, id, kSecurity, 0, dacl_sd({{0, 0x1F01FF, 22, {1, uid}}, {0, 0x2, 1, {0}}}), 0x4) ==
          NtStatus::Success);
    // Somebody else's SID: stored too.
    CHECK(set(f, id, kSecurity, 0, dacl_sd({{0, 0x1F01FF, 22, {1, uid + 1}}}), 0x4) == NtStatus::Success);
    CHECK(mode_of("a.txt") == 0740);
  }
}

TEST_CASE("set_info malformed requests", "[smb2]") {
  Smb2Fixture f;
  f.write_file("a.txt");
  FileId id = f.open_file("a.txt");
  Bytes b = si_body(id, kFile, kPosition, u64_buf(1));
  SECTION("buffer beyond the message") {
    store_le32(b.data() + 4, 64);
    CHECK(f.call(handle_set_info, wire::Command::SetInfo, b).status == NtStatus::InvalidParameter);
  }
  SECTION("offset inside the header") {
    store_le16(b.data() + 8, 8);
    CHECK(f.call(handle_set_info, wire::Command::SetInfo, b).status == NtStatus::InvalidParameter);
  }
  SECTION("truncated body") {
    b.resize(16);
    CHECK(f.call(handle_set_info, wire::Command::SetInfo, b).status == NtStatus::InvalidParameter);
  }
  SECTION("closed file") {
    CHECK(f.call(handle_set_info, wire::Command::SetInfo, si_body(FileId{9, 9}, kFile, kPosition, u64_buf(1)))
              .status == NtStatus::FileClosed);
  }
}

namespace {

// QUERY_INFO FileBasicInformation: CreationTime, LastAccessTime,
// LastWriteTime, ChangeTime, FileAttributes.
struct Basic {
  uint64_t creation, access, write, change;
  uint32_t attributes;
};

Basic query_basic(Smb2Fixture& f, FileId id) {
  Body b;
  b.w.u16(41);
  b.w.u8(1);  // SMB2_0_INFO_FILE
  b.w.u8(4);  // FileBasicInformation
  b.w.u32(40);
  b.w.u16(0);
  b.w.u16(0);
  b.w.u32(0);
  b.w.u32(0);
  b.w.u32(0);
  b.w.u64(id.persistent);
  b.w.u64(id.volatile_id);
  Response r = f.call(handle_query_info, wire::Command::QueryInfo, b.b);
  REQUIRE(r.status == NtStatus::Success);
  return {r.u64(8), r.u64(16), r.u64(24), r.u64(32), r.u32(40)};
}

}  // namespace

TEST_CASE("set_info basic: CreationTime and ChangeTime are kept (sub-second, before 1970, across opens)",
          "[smb2]") {
  Smb2Fixture f;
  f.write_file("t.txt", "T");
  FileId id = f.open_file("t.txt", FILE_WRITE_ATTRIBUTES | FILE_READ_ATTRIBUTES);
  Basic before = query_basic(f, id);
  const uint64_t created = vfs::unix_to_filetime(-63158400, 123456700);  // 1968, sub-second
  const uint64_t changed = vfs::unix_to_filetime(978307200, 987654300);
  REQUIRE(set(f, id, kFile, kBasic, basic_buf(created, 0, 0, changed, 0)) == NtStatus::Success);
  Basic after = query_basic(f, id);
  if (after.creation == before.creation) {
    WARN("no trusted.* xattrs here (not root, or the filesystem lacks them): not tested");
    return;
  }
  CHECK(after.creation == created);
  CHECK(after.change == changed);
  CHECK(after.write == before.write);  // 0: unchanged
  f.close(id);
  FileId again = f.open_file("t.txt", FILE_READ_ATTRIBUTES);
  Basic reopened = query_basic(f, again);
  CHECK(reopened.creation == created);
  CHECK(reopened.change == changed);

  SECTION("a later change of the file moves ChangeTime again; CreationTime stays") {
    usleep(useconds_t(vfs::kChangeTimeGraceNs / 1000 + 50'000));
    REQUIRE(::chmod((f.dir() / "t.txt").c_str(), 0600) == 0);
    Basic changed_later = query_basic(f, again);
    CHECK(changed_later.change > changed);
    CHECK(changed_later.creation == created);
  }
  SECTION("a CreationTime equal to the birth time stores nothing") {
    f.write_file("n.txt", "N");
    FileId n = f.open_file("n.txt", FILE_WRITE_ATTRIBUTES | FILE_READ_ATTRIBUTES);
    Basic nb = query_basic(f, n);
    REQUIRE(set(f, n, kFile, kBasic, basic_buf(nb.creation, 0, 0, 0, 0)) == NtStatus::Success);
    CHECK(vfs::read_file_meta(f.find(n)->fd.get()).empty());
  }
}

TEST_CASE("set_info basic: LastWriteTime -1 freezes it for writes through the handle, -2 thaws it", "[smb2]") {
  Smb2Fixture f;
  f.write_file("w.txt", "0123");
  FileId id = f.open_file("w.txt", FILE_READ_DATA | FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES | FILE_READ_ATTRIBUTES);
  const uint64_t t2001 = vfs::unix_to_filetime(978307200, 0);
  REQUIRE(set(f, id, kFile, kBasic, basic_buf(0, 0, t2001, 0, 0)) == NtStatus::Success);
  REQUIRE(set(f, id, kFile, kBasic, basic_buf(0, 0, ~0ull, 0, 0)) == NtStatus::Success);  // -1
  auto write = [&](FileId h) {
    Body b;
    b.w.u16(49);
    b.w.u16(uint16_t(wire::kHeaderSize + 48));
    b.w.u32(4);
    b.w.u64(0);
    b.w.u64(h.persistent);
    b.w.u64(h.volatile_id);
    b.w.zeros(16);
    b.w.bytes("abcd", 4);
    return f.call(handle_write, wire::Command::Write, b.b).status;
  };
  REQUIRE(write(id) == NtStatus::Success);
  CHECK(stat_of(f, "w.txt").st_mtim.tv_sec == 978307200);  // frozen
  REQUIRE(set(f, id, kFile, kEndOfFile, u64_buf(2)) == NtStatus::Success);
  CHECK(stat_of(f, "w.txt").st_mtim.tv_sec == 978307200);
  SECTION("another handle is not frozen") {
    FileId other = f.open_file("w.txt", FILE_WRITE_DATA);
    REQUIRE(write(other) == NtStatus::Success);
    CHECK(stat_of(f, "w.txt").st_mtim.tv_sec > 978307200);
  }
  SECTION("-2 thaws") {
    REQUIRE(set(f, id, kFile, kBasic, basic_buf(0, 0, uint64_t(-2), 0, 0)) == NtStatus::Success);
    REQUIRE(write(id) == NtStatus::Success);
    CHECK(stat_of(f, "w.txt").st_mtim.tv_sec > 978307200);
  }
}

TEST_CASE("set_info FullEa: EAs set, refused when malformed, removed, where the tree stores them", "[smb2][ea]") {
  Smb2Fixture f;
  f.write_file("e.txt", "x");
  if (!vfs::streams_supported(f.tree->root.get())) {
    WARN("trusted.* xattrs unavailable here: not run");
    return;
  }
  f.tree->eas = true;
  FileId id = f.open_file("e.txt", FILE_READ_DATA | FILE_WRITE_EA);
  Bytes list;
  size_t previous = SIZE_MAX;
  vfs::append_full_ea(list, {"Name", 0, Bytes{'v'}}, &previous);
  vfs::append_full_ea(list, {"Other", 0, Bytes{'o', 'o'}}, &previous);
  REQUIRE(set(f, id, kFile, kFullEa, list) == NtStatus::Success);
  CHECK(vfs::read_eas(f.find(id)->fd.get()).value().size() == 2);
  Bytes bad = list;
  store_le32(bad.data(), 3);  // NextEntryOffset not 4-aligned
  CHECK(set(f, id, kFile, kFullEa, bad) == NtStatus::EaListInconsistent);
  Bytes remove;
  previous = SIZE_MAX;
  vfs::append_full_ea(remove, {"NAME", 0, {}}, &previous);
  REQUIRE(set(f, id, kFile, kFullEa, remove) == NtStatus::Success);
  auto left = vfs::read_eas(f.find(id)->fd.get()).value();
  REQUIRE(left.size() == 1);
  CHECK(left[0].name == "Other");
}

// A file this server made has no metadata until it stores some; its node
// knows (readers skip the getxattr), and a write through any of its opens
// ends that, so every open reports what was stored.
TEST_CASE("set_info basic: a new file's metadata, stored through another open, shows in every open", "[smb2]") {
  Smb2Fixture f;
  FileId a = f.open_file("new.txt", FILE_ALL_ACCESS, kCreate);
  REQUIRE(f.find(a)->node);
  CHECK(f.find(a)->node->no_stored_meta());
  FileId b = f.open_file("new.txt", FILE_WRITE_ATTRIBUTES | FILE_READ_ATTRIBUTES, kOpen);
  REQUIRE(f.find(b)->node == f.find(a)->node);
  const uint64_t created = vfs::unix_to_filetime(-63158400, 123456700);
  const uint64_t changed = vfs::unix_to_filetime(978307200, 987654300);
  REQUIRE(set(f, b, kFile, kBasic, basic_buf(created, 0, 0, changed, 0)) == NtStatus::Success);
  if (vfs::read_file_meta(f.find(b)->fd.get()).empty()) {
    WARN("no trusted.* xattrs here (not root, or the filesystem lacks them): not tested");
    return;
  }
  CHECK_FALSE(f.find(a)->node->no_stored_meta());
  Basic seen = query_basic(f, a);
  CHECK(seen.creation == created);
  CHECK(seen.change == changed);
  // An open of a file that existed before reads: its node learns what the
  // getxattr found, none here, and a file with metadata shows it.
  f.write_file("old.txt", "O");
  FileId old = f.open_file("old.txt");
  CHECK(f.find(old)->node->no_stored_meta());
  f.write_file("kept.txt", "K");
  {
    state::UniqueFd fd(::open((f.dir() / "kept.txt").c_str(), O_RDONLY | O_CLOEXEC));
    vfs::FileMeta meta;
    meta.creation_time = created;
    REQUIRE(vfs::write_file_meta(fd.get(), meta) == 0);
  }
  FileId kept = f.open_file("kept.txt");
  CHECK_FALSE(f.find(kept)->node->no_stored_meta());
  CHECK(query_basic(f, kept).creation == created);
  CHECK_FALSE(f.find(kept)->node->no_stored_meta());
}

// What this server stores through an open, its node keeps (the Linux
// client's CLOSE with POSTQUERY_ATTRIB after the SET_INFO of the times
// reads it there), as a getxattr reads it back.
TEST_CASE("set_info basic: the node keeps the metadata this server stored", "[smb2]") {
  Smb2Fixture f;
  FileId a = f.open_file("kept.txt", FILE_ALL_ACCESS, kCreate);
  const uint64_t created = vfs::unix_to_filetime(-63158400, 123456700);
  const uint64_t changed = vfs::unix_to_filetime(978307200, 987654300);
  REQUIRE(set(f, a, kFile, kBasic, basic_buf(created, 0, 0, changed, 0)) == NtStatus::Success);
  const vfs::FileMeta disk = vfs::read_file_meta(f.find(a)->fd.get());
  if (disk.empty()) {
    WARN("no trusted.* xattrs here (not root, or the filesystem lacks them): not tested");
    return;
  }
  vfs::FileMeta known;
  REQUIRE(f.find(a)->node->known_meta(known));
  CHECK((known.creation_time == disk.creation_time && known.change_time == disk.change_time));
  CHECK((known.change_valid_until == disk.change_valid_until && known.dos_attributes == disk.dos_attributes));
}

// A named stream's open stores its file's metadata (FileBasicInformation
// on the stream sets the file's times): the file's node learns it too.
TEST_CASE("set_info basic: through a named stream of a new file, the file's opens see it", "[smb2][streams]") {
  Smb2Fixture f;
  if (!vfs::streams_supported(f.tree->root.get())) {
    WARN("trusted.* xattrs unavailable here: not run");
    return;
  }
  f.tree->streams = f.tree->eas = true;
  FileId file = f.open_file("s.txt", FILE_ALL_ACCESS, kCreate);
  REQUIRE(f.find(file)->node->no_stored_meta());
  FileId stream = f.open_file("s.txt:extra", FILE_ALL_ACCESS, kCreate);
  REQUIRE(f.find(stream)->stream);
  const uint64_t created = vfs::unix_to_filetime(-63158400, 123456700);
  REQUIRE(set(f, stream, kFile, kBasic, basic_buf(created, 0, 0, 0, 0)) == NtStatus::Success);
  CHECK_FALSE(f.find(file)->node->no_stored_meta());
  CHECK(query_basic(f, file).creation == created);
}
