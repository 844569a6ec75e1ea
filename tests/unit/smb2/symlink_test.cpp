// Symbolic links as clients make and meet them (smb2/fsctl/fsctl_symlink.cpp,
// fsctl_reparse.cpp, CREATE's STATUS_STOPPED_ON_SYMLINK): the reparse
// buffers of Windows, the Linux kernel client's NFS and WSL forms, the
// symlink error response, and a directory listing's reparse tag.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "fixture.hpp"
#include "smb2/fsctl/fsctl_reparse.hpp"
#include "vfs/paths.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;

namespace {

constexpr uint32_t kGetReparse = 0x000900A8, kSetReparse = 0x000900A4, kDeleteReparse = 0x000900AC;
constexpr uint32_t FILE_OPEN_REPARSE_POINT = 0x00200000;

Bytes windows_symlink(std::string_view target, bool relative) {
  Bytes name = vfs::utf8_to_utf16le(target);
  Bytes b;
  ByteWriter w(b);
  w.u32(0xA000000C);
  w.u16(uint16_t(12 + 2 * name.size()));
  w.u16(0);
  w.u16(0);
  w.u16(uint16_t(name.size()));
  w.u16(uint16_t(name.size()));
  w.u16(uint16_t(name.size()));
  w.u32(relative ? 1 : 0);
  w.bytes(name);
  w.bytes(name);
  return b;
}

Bytes nfs_symlink(std::string_view target, uint64_t type = NFS_SPECFILE_LNK) {
  Bytes name = vfs::utf8_to_utf16le(target);
  Bytes b;
  ByteWriter w(b);
  w.u32(IO_REPARSE_TAG_NFS);
  w.u16(uint16_t(8 + name.size()));
  w.u16(0);
  w.u64(type);
  w.bytes(name);
  return b;
}

Bytes wsl_symlink(std::string_view target) {
  Bytes b;
  ByteWriter w(b);
  w.u32(IO_REPARSE_TAG_LX_SYMLINK);
  w.u16(uint16_t(4 + target.size()));
  w.u16(0);
  w.u32(2);
  w.bytes(ByteSpan(reinterpret_cast<const uint8_t*>(target.data()), target.size()));
  return b;
}

Bytes create_body(std::string_view name) {
  Bytes n = vfs::utf8_to_utf16le(name);
  Body body;
  body.w.u16(57);
  body.w.u8(0);
  body.w.u8(0);
  body.w.u32(2);
  body.w.zeros(16);
  body.w.u32(FILE_READ_DATA);
  body.w.u32(0);
  body.w.u32(7);
  body.w.u32(1);  // FILE_OPEN
  body.w.u32(0);
  body.w.u16(uint16_t(wire::kHeaderSize + 56));
  body.w.u16(uint16_t(n.size()));
  body.w.u32(0);
  body.w.u32(0);
  body.w.bytes(n);
  return body.b;
}

std::string link_of(const Smb2Fixture& f, const std::string& name) {
  return std::filesystem::read_symlink(f.dir() / name).string();
}

// What a client does for `ln -s` / mklink: an empty file, then the reparse point.
NtStatus make_link(Smb2Fixture& f, std::string_view name, const Bytes& buffer, bool directory = false) {
  FileId id;
  NtStatus s = f.create(name, FILE_ALL_ACCESS, kCreate, FILE_OPEN_REPARSE_POINT | (directory ? 1u : 0x40u), id);
  if (s != NtStatus::Success) return s;
  s = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kSetReparse, id, buffer, 0)).status;
  f.close(id);
  return s;
}

}  // namespace

TEST_CASE("reparse buffers: Windows, NFS and WSL symlinks give the Linux target", "[smb2][symlink]") {
  CHECK(*symlink_target_from_reparse(windows_symlink("..\\dir\\f", true)) == "../dir/f");
  CHECK(*symlink_target_from_reparse(windows_symlink("\\etc\\passwd", false)) == "/etc/passwd");
  CHECK(symlink_target_from_reparse(windows_symlink("\\??\\C:\\Users", false)).error() == NtStatus::NotSupported);
  CHECK(*symlink_target_from_reparse(nfs_symlink("a/b")) == "a/b");
  CHECK(symlink_target_from_reparse(nfs_symlink("x", 0x524843)).error() == NtStatus::NotSupported);  // "CHR"
  CHECK(*symlink_target_from_reparse(wsl_symlink("/abs/t")) == "/abs/t");
  Bytes cut = windows_symlink("t", true);
  cut.pop_back();
  CHECK(symlink_target_from_reparse(cut).error() == NtStatus::IoReparseDataInvalid);
  CHECK(symlink_target_from_reparse(windows_symlink("", true)).error() == NtStatus::IoReparseDataInvalid);
  Bytes other = windows_symlink("t", true);
  store_le32(other.data(), 0x80000017);  // IO_REPARSE_TAG_WOF
  CHECK(symlink_target_from_reparse(other).error() == NtStatus::NotSupported);
  // Read back: relative with the flag, absolute without it.
  CHECK(*symlink_reparse_buffer("/etc/passwd") == windows_symlink("\\etc\\passwd", false));
  CHECK(*symlink_reparse_buffer("../x") == windows_symlink("..\\x", true));
}

TEST_CASE("the symlink error response (MS-SMB2 2.2.2.2.1)", "[smb2][symlink]") {
  Bytes link = *symlink_reparse_buffer("dir/t");
  Bytes old = symlink_error_body("dir/t", 0, 0x0302);
  CHECK(load_le16(old.data()) == 9);
  CHECK(old[2] == 0);                                    // no error contexts before 3.1.1
  CHECK(load_le32(old.data() + 4) == 8 + link.size());   // ByteCount
  CHECK(load_le32(old.data() + 8) == 4 + link.size());   // SymLinkLength
  CHECK(load_le32(old.data() + 12) == 0x4C4D5953);       // SymLinkErrorTag
  CHECK(load_le32(old.data() + 16) == 0xA000000C);
  Bytes ctx = symlink_error_body("dir/t", 6, 0x0311);
  CHECK(ctx[2] == 1);                                    // one error context
  CHECK(load_le32(ctx.data() + 8) == 8 + link.size());   // ErrorDataLength
  CHECK(load_le32(ctx.data() + 12) == 0);                // SMB2_ERROR_ID_DEFAULT
  CHECK(load_le16(ctx.data() + 16 + 8 + 6) == 6);        // UnparsedPathLength
}

TEST_CASE("FSCTL_SET_REPARSE_POINT makes a Linux symlink; GET reads it; DELETE leaves a file", "[smb2][symlink]") {
  Smb2Fixture f;
  f.mkdir("dir");
  f.write_file("dir/f", "data");
  CHECK(make_link(f, "off", windows_symlink("dir\\f", true)) == NtStatus::AccessDenied);  // client symlinks = no
  CHECK_FALSE(std::filesystem::is_symlink(f.dir() / "off"));
  f.tree->share.client_symlinks = true;
  REQUIRE(make_link(f, "win", windows_symlink("dir\\f", true)) == NtStatus::Success);
  CHECK(link_of(f, "win") == "dir/f");
  REQUIRE(make_link(f, "nfs", nfs_symlink("../../etc/passwd")) == NtStatus::Success);
  CHECK(link_of(f, "nfs") == "../../etc/passwd");
  REQUIRE(make_link(f, "wsl", wsl_symlink("/etc/passwd")) == NtStatus::Success);
  CHECK(link_of(f, "wsl") == "/etc/passwd");
  REQUIRE(make_link(f, "dlink", windows_symlink("dir", true), true) == NtStatus::Success);  // mklink /D
  CHECK(link_of(f, "dlink") == "dir");
  f.write_file("full", "x");
  FileId full;
  REQUIRE(f.create("full", FILE_ALL_ACCESS, kOpen, FILE_OPEN_REPARSE_POINT, full) == NtStatus::Success);
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kSetReparse, full, windows_symlink("t", true), 0))
            .status == NtStatus::NotSupported);  // its data would be lost

  FileId id;
  REQUIRE(f.create("nfs", FILE_ALL_ACCESS, kOpen, FILE_OPEN_REPARSE_POINT, id) == NtStatus::Success);
  Response got = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kGetReparse, id, {}, 1024));
  REQUIRE(got.status == NtStatus::Success);
  CHECK(Bytes(got.body.begin() + 48, got.body.end()) == windows_symlink("..\\..\\etc\\passwd", true));
  Bytes del{0x0C, 0x00, 0x00, 0xA0, 0, 0, 0, 0};
  Bytes wrong_tag{0x17, 0x00, 0x00, 0x80, 0, 0, 0, 0};
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kDeleteReparse, id, wrong_tag, 0)).status ==
        NtStatus::IoReparseTagMismatch);
  REQUIRE(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kDeleteReparse, id, del, 0)).status ==
          NtStatus::Success);
  CHECK(std::filesystem::is_regular_file(std::filesystem::symlink_status(f.dir() / "nfs")));
  CHECK(std::filesystem::file_size(f.dir() / "nfs") == 0);
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kGetReparse, id, {}, 1024)).status ==
        NtStatus::NotAReparsePoint);
}

TEST_CASE("a symlink met last answers STOPPED_ON_SYMLINK; nothing leads out of the share", "[smb2][symlink]") {
  Smb2Fixture f;
  f.mkdir("dir");
  f.write_file("dir/f", "data");
  REQUIRE(::symlink("dir/f", (f.dir() / "in").c_str()) == 0);
  REQUIRE(::symlink("/etc", (f.dir() / "abs").c_str()) == 0);
  REQUIRE(::symlink("../../../../../../etc", (f.dir() / "up").c_str()) == 0);
  REQUIRE(::symlink("dir", (f.dir() / "dlink").c_str()) == 0);
  FileId id;
  CHECK(f.create("in", FILE_READ_DATA, kOpen, 0, id) == NtStatus::StoppedOnSymlink);
  CHECK(f.create("abs", FILE_READ_DATA, kOpen, 0, id) == NtStatus::StoppedOnSymlink);
  // Through a symlink: resolved beneath the share root, never above it; one
  // that leads out goes back to the client with the rest of the name.
  CHECK(f.create("abs\\passwd", FILE_READ_DATA, kOpen, 0, id) == NtStatus::StoppedOnSymlink);
  CHECK(f.create("abs\\passwd", FILE_READ_DATA, kOpen, FILE_OPEN_REPARSE_POINT, id) == NtStatus::StoppedOnSymlink);
  f.conn.dialect = 0x0302;
  Response up = f.call(handle_create, wire::Command::Create, create_body("up\\x\\passwd"));
  REQUIRE(up.status == NtStatus::StoppedOnSymlink);
  CHECK(up.u32(8 + 4) == 0x4C4D5953);                  // SymLinkErrorTag
  CHECK(up.u16(8 + 14) == 2 * std::string("\\x\\passwd").size());  // UnparsedPathLength
  CHECK(load_le32(up.body.data() + 8 + 24) == 1);     // SYMLINK_FLAG_RELATIVE
  CHECK(f.create("up", FILE_READ_DATA, kOpen, 1, id) != NtStatus::Success);  // the directory it names is not opened
  REQUIRE(f.create("dlink\\f", FILE_READ_DATA, kOpen, 0, id) == NtStatus::Success);  // inside: followed
  REQUIRE(f.create("abs", FILE_READ_ATTRIBUTES, kOpen, FILE_OPEN_REPARSE_POINT, id) == NtStatus::Success);
  Response got = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kGetReparse, id, {}, 1024));
  REQUIRE(got.status == NtStatus::Success);
  CHECK(Bytes(got.body.begin() + 48, got.body.end()) == windows_symlink("\\etc", false));
}
