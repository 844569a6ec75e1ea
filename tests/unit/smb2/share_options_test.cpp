// The per-share options ringsmbd applies in CREATE: veto files, create and
// directory masks, hide dot files, and the per-connection max open files.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include "fixture.hpp"
#include "smb2/files/share_options.hpp"
#include "vfs/short_names.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;

namespace {

mode_t mode_of(const Smb2Fixture& f, const std::string& rel) {
  struct stat st{};
  REQUIRE(::stat((f.dir() / rel).c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("create: vetoed names cannot be opened or created", "[smb2][share-options]") {
  Smb2Fixture f;
  f.write_file("a.tmp");
  f.mkdir("private");
  f.write_file("private/inner.txt");
  f.write_file("ok.txt");
  f.tree->share.veto_files = {"*.tmp", "Private"};
  FileId id;
  CHECK(f.create("a.tmp", FILE_ALL_ACCESS, kOpen, 0, id) == NtStatus::ObjectNameNotFound);
  CHECK(f.create("A.TMP", FILE_ALL_ACCESS, kOpen, 0, id) == NtStatus::ObjectNameNotFound);
  CHECK(f.create("new.tmp", FILE_ALL_ACCESS, kCreate, 0, id) == NtStatus::ObjectNameNotFound);
  CHECK_FALSE(f.exists("new.tmp"));
  CHECK(f.create("private", FILE_ALL_ACCESS, kOpen, kDirectoryFile, id) == NtStatus::ObjectNameNotFound);
  CHECK(f.create("private\\inner.txt", FILE_ALL_ACCESS, kOpen, 0, id) == NtStatus::ObjectPathNotFound);
  CHECK(f.create("ok.txt", FILE_ALL_ACCESS, kOpen, 0, id) == NtStatus::Success);
  // Case-sensitive shares compare exactly.
  f.tree->share.case_sensitive = true;
  CHECK(f.create("A.TMP", FILE_ALL_ACCESS, kOpenIf, 0, id) == NtStatus::Success);
}

// A vetoed name's 8.3 short name is a function of the name, so anyone who
// knows the one knows the other: the name it resolves to is vetoed too.
TEST_CASE("create: a vetoed name is not reached by its short name", "[smb2][share-options]") {
  Smb2Fixture f;
  f.write_file("topsecret.secret", "x");
  f.mkdir("private files");
  f.write_file("private files/inner.txt", "y");
  f.tree->share.veto_files = {"*.secret", "private files"};
  const std::string file_short = vfs::short_name_of("topsecret.secret");
  const std::string dir_short = vfs::short_name_of("private files");
  FileId id;
  CHECK(f.create(file_short, FILE_ALL_ACCESS, kOpen, 0, id) == NtStatus::ObjectNameNotFound);
  CHECK(f.create(file_short, FILE_ALL_ACCESS, kOverwriteIf, 0, id) == NtStatus::ObjectNameNotFound);
  CHECK(f.create(dir_short, FILE_ALL_ACCESS, kOpen, kDirectoryFile, id) == NtStatus::ObjectNameNotFound);
  CHECK(f.create(dir_short + "\\inner.txt", FILE_ALL_ACCESS, kOpen, 0, id) == NtStatus::ObjectPathNotFound);
  CHECK(std::filesystem::file_size(f.dir() / "topsecret.secret") == 1);
}

TEST_CASE("create: create mask and directory mask give the new mode", "[smb2][share-options]") {
  Smb2Fixture f;
  f.open_file("default.txt");
  f.open_dir("defaultdir");
  CHECK(mode_of(f, "default.txt") == 0644);  // 0666 & 0744, whatever the umask
  CHECK(mode_of(f, "defaultdir") == 0755);
  f.tree->share.create_mask = 0600;
  f.tree->share.directory_mask = 0700;
  f.open_file("private.txt");
  f.open_dir("privatedir");
  CHECK(mode_of(f, "private.txt") == 0600);
  CHECK(mode_of(f, "privatedir") == 0700);
  // Bits the process umask strips are put back: the mask is what the admin asked for.
  f.tree->share.create_mask = 0777;
  f.tree->share.directory_mask = 02777;
  f.open_file("open.txt");
  f.open_dir("opendir");
  CHECK(mode_of(f, "open.txt") == 0666);
  CHECK(mode_of(f, "opendir") == 0777);  // 0777 & mask: setgid is never asked for by the mode
}

TEST_CASE("create: hide dot files marks the response HIDDEN", "[smb2][share-options]") {
  Smb2Fixture f;
  auto attrs_of = [&](std::string_view name) {
    Body body;
    FileId id;
    REQUIRE(f.create(name, FILE_ALL_ACCESS, kOpenIf, 0, id) == NtStatus::Success);
    f.close(id);
    // Re-run to read the response body: CREATE FileAttributes is at offset 56.
    Bytes n = u16le(name);
    body.w.u16(57);
    body.w.u8(0);
    body.w.u8(0);
    body.w.u32(2);
    body.w.zeros(16);
    body.w.u32(FILE_READ_ATTRIBUTES);
    body.w.u32(0);
    body.w.u32(kShareAll);
    body.w.u32(kOpen);
    body.w.u32(0);
    body.w.u16(uint16_t(wire::kHeaderSize + 56));
    body.w.u16(uint16_t(n.size()));
    body.w.u32(0);
    body.w.u32(0);
    body.w.bytes(n);
    Response r = f.call(handle_create, wire::Command::Create, body.b);
    REQUIRE(r.status == NtStatus::Success);
    f.close({r.u64(64), r.u64(72)});
    return r.u32(56);
  };
  CHECK((attrs_of(".hidden") & 0x2) != 0);
  CHECK((attrs_of("shown") & 0x2) == 0);
  f.tree->share.hide_dot_files = false;
  CHECK((attrs_of(".hidden") & 0x2) == 0);
}

TEST_CASE("create: max open files per connection", "[smb2][share-options]") {
  Smb2Fixture f;
  f.server.config.global.max_open_files = 3;
  FileId a = f.open_file("a"), b = f.open_file("b");
  f.open_file("c");
  FileId id;
  CHECK(f.create("d", FILE_ALL_ACCESS, kOpenIf, 0, id) == NtStatus::TooManyOpenedFiles);
  CHECK_FALSE(f.exists("d"));
  f.close(a);
  CHECK(f.create("d", FILE_ALL_ACCESS, kOpenIf, 0, id) == NtStatus::Success);
  (void)b;
}

TEST_CASE("veto_status distinguishes the name from a directory on the way", "[smb2][share-options]") {
  ipc::ShareInfo s;
  s.veto_files = {"x*"};
  CHECK(veto_status(s, "xa") == NtStatus::ObjectNameNotFound);
  CHECK(veto_status(s, "d/xa") == NtStatus::ObjectNameNotFound);
  CHECK(veto_status(s, "xd/a") == NtStatus::ObjectPathNotFound);
  CHECK(veto_status(s, "d/a") == NtStatus::Success);
  CHECK(veto_status(s, "") == NtStatus::Success);
}
