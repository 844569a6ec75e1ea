#include <catch2/catch.hpp>

#include <cerrno>
#include <filesystem>
#include <string>

#include "temp_dir.hpp"
#include "vfs/paths.hpp"

using namespace ringsmb;
using namespace ringsmb::vfs;

namespace {

Bytes u16(std::initializer_list<uint16_t> units) {
  Bytes b;
  for (uint16_t u : units) {
    b.push_back(uint8_t(u));
    b.push_back(uint8_t(u >> 8));
  }
  return b;
}

Result<SmbPath> parse(std::string_view utf8) { return parse_smb_path(utf8_to_utf16le(utf8)); }

NtStatus parse_error(std::string_view utf8) {
  auto r = parse(utf8);
  return r ? NtStatus::Success : r.error();
}

}  // namespace

TEST_CASE("UTF-16LE round trips", "[vfs]") {
  for (std::string s : {"", "hello.txt", "caf\xC3\xA9", "\xE4\xB8\xAD\xE6\x96\x87", "\xF0\x9F\x98\x80 smile",
                        "mixed\\path\\\xCE\xA3"}) {
    const Bytes b = utf8_to_utf16le(s);
    std::string back;
    REQUIRE(utf16le_to_utf8(b, back));
    CHECK(back == s);
  }
  // U+1F600 is a surrogate pair.
  CHECK(utf8_to_utf16le("\xF0\x9F\x98\x80") == u16({0xD83D, 0xDE00}));
  CHECK(utf8_to_utf16le("A\xC3\xA9") == u16({0x41, 0xE9}));
  Bytes appended = {0xAA};
  utf8_to_utf16le("b", appended);
  CHECK(appended == Bytes{0xAA, 'b', 0});
}

TEST_CASE("UTF-16LE rejects unpaired surrogates and odd lengths", "[vfs]") {
  std::string out;
  CHECK_FALSE(utf16le_to_utf8(u16({0xD83D}), out));               // lone high at end
  CHECK_FALSE(utf16le_to_utf8(u16({0xD83D, 0x0041}), out));       // high + non-low
  CHECK_FALSE(utf16le_to_utf8(u16({0xDE00, 0xD83D}), out));       // reversed pair
  CHECK_FALSE(utf16le_to_utf8(u16({0x0041, 0xDC00}), out));       // lone low
  CHECK_FALSE(utf16le_to_utf8(Bytes{0x41, 0x00, 0x42}, out));     // odd byte count
  CHECK(utf16le_to_utf8(u16({0xD83D, 0xDE00}), out));
  CHECK(out == "\xF0\x9F\x98\x80");
}

TEST_CASE("UTF-8 that is not valid becomes U+FFFD", "[vfs]") {
  CHECK(utf8_to_utf16le("a\xFFz") == u16({'a', 0xFFFD, 'z'}));
  CHECK(utf8_to_utf16le("\xC0\xAF") == u16({0xFFFD, 0xFFFD}));      // overlong '/'
  CHECK(utf8_to_utf16le("\xED\xA0\x80") == u16({0xFFFD, 0xFFFD, 0xFFFD}));  // encoded surrogate
}

TEST_CASE("parse_smb_path accepts ordinary names", "[vfs]") {
  auto r = parse("");
  REQUIRE(r);
  CHECK(r->path.empty());
  CHECK(r->stream.empty());

  r = parse("\\");
  REQUIRE(r);
  CHECK(r->path.empty());

  r = parse("dir\\sub\\file.txt");
  REQUIRE(r);
  CHECK(r->path == "dir/sub/file.txt");
  CHECK_FALSE(r->trailing_separator);

  r = parse("\\leading\\slash");
  REQUIRE(r);
  CHECK(r->path == "leading/slash");

  r = parse("dir\\");
  REQUIRE(r);
  CHECK(r->path == "dir");
  CHECK(r->trailing_separator);

  r = parse("with space . and...dots ~$x#%&{}[]'");
  REQUIRE(r);
  CHECK(r->path == "with space . and...dots ~$x#%&{}[]'");

  r = parse("\xE4\xB8\xAD\xE6\x96\x87\\\xF0\x9F\x98\x80");
  REQUIRE(r);
  CHECK(r->path == "\xE4\xB8\xAD\xE6\x96\x87/\xF0\x9F\x98\x80");

  CHECK(parse("...")->path == "...");
  // '..' inside the share names the directory above (smb2.notify.tree).
  CHECK(parse("a\\..\\b")->path == "b");
  CHECK(parse("dir\\sub\\..")->path == "dir");
  CHECK(parse("dir\\..")->path == "");
  CHECK(parse("a\\b\\..\\..\\c\\")->path == "c");
  CHECK(parse(".hidden")->path == ".hidden");
  // '/' separates as '\\' does (smb2.timestamps.test_close_not_attrib, Samba).
  CHECK(parse("dir/file.dat")->path == "dir/file.dat");
  CHECK(parse("/lead/mixed\\sep/")->path == "lead/mixed/sep");
  CHECK(parse("/lead/mixed\\sep/")->trailing_separator);
  CHECK(parse("a/b/../c")->path == "a/c");
}

TEST_CASE("parse_smb_path rejects bad names", "[vfs]") {
  // Above the share root: a bad path syntax, as Windows answers (smb2.mkdir).
  CHECK(parse_error("..") == NtStatus::ObjectPathSyntaxBad);
  CHECK(parse_error("..\\..\\..") == NtStatus::ObjectPathSyntaxBad);
  CHECK(parse_error("a\\..\\..\\b") == NtStatus::ObjectPathSyntaxBad);  // the same, after a detour
  CHECK(parse_error("a\\..\\..") == NtStatus::ObjectPathSyntaxBad);
  CHECK(parse_error("..\\etc\\passwd") == NtStatus::ObjectPathSyntaxBad);
  CHECK(parse_error("\\..\\") == NtStatus::ObjectPathSyntaxBad);
  CHECK(parse_error("a\\..:s") == NtStatus::ObjectNameInvalid);        // a stream of '..'
  CHECK(parse_error("a\\..::$DATA") == NtStatus::ObjectNameInvalid);
  CHECK(parse_error("a\\.") == NtStatus::ObjectNameInvalid);
  CHECK(parse_error(".\\a") == NtStatus::ObjectNameInvalid);
  CHECK(parse_error("a\\\\b") == NtStatus::ObjectNameInvalid);
  CHECK(parse_error("\\\\a") == NtStatus::ObjectNameInvalid);
  CHECK(parse_error("\\\\") == NtStatus::ObjectNameInvalid);
  CHECK(parse_error("a\\\\") == NtStatus::ObjectNameInvalid);
  // '/' as a separator climbs no higher than '\\' does.
  CHECK(parse_error("../etc/passwd") == NtStatus::ObjectPathSyntaxBad);
  CHECK(parse_error("a/../../b") == NtStatus::ObjectPathSyntaxBad);
  CHECK(parse_error("/\\a") == NtStatus::ObjectNameInvalid);
  CHECK(parse_error("a//b") == NtStatus::ObjectNameInvalid);
  CHECK(parse_error("a/./b") == NtStatus::ObjectNameInvalid);
  CHECK(parse_error("f:s/t") == NtStatus::ObjectNameInvalid);  // never a stream name with a separator
  for (char c : std::string("*?<>|\"")) {
    CHECK(parse_error(std::string("a") + c + "b") == NtStatus::ObjectNameInvalid);
  }
  CHECK(parse_error(std::string("a\0b", 3)) == NtStatus::ObjectNameInvalid);
  CHECK(parse_error("a\x01" "b") == NtStatus::ObjectNameInvalid);
  CHECK(parse_error("tab\there") == NtStatus::ObjectNameInvalid);
  CHECK(parse_smb_path(u16({'a', 0xD800})).error() == NtStatus::ObjectNameInvalid);
  CHECK(parse_smb_path(Bytes{'a', 0, 'b'}).error() == NtStatus::ObjectNameInvalid);
}

TEST_CASE("parse_smb_path component length limits", "[vfs]") {
  CHECK(parse(std::string(255, 'x')));
  CHECK(parse_error(std::string(256, 'x')) == NtStatus::ObjectNameInvalid);
  CHECK(parse_error("ok\\" + std::string(300, 'y') + "\\ok") == NtStatus::ObjectNameInvalid);
  // 100 CJK characters: 100 UTF-16 units, fine for Windows, 300 bytes on Linux.
  std::string cjk;
  for (int i = 0; i < 100; ++i) cjk += "\xE4\xB8\xAD";
  CHECK(parse_error(cjk) == NtStatus::NameTooLong);
  // 85 of them are 255 bytes: still storable.
  CHECK(parse(cjk.substr(0, 255)));
}

TEST_CASE("parse_smb_path streams", "[vfs]") {
  auto r = parse("dir\\file.txt:stream:$DATA");
  REQUIRE(r);
  CHECK(r->path == "dir/file.txt");
  CHECK(r->stream == "stream");

  r = parse("file.txt:stream");
  REQUIRE(r);
  CHECK(r->stream == "stream");
  CHECK(!r->data_stream_type);

  r = parse("file.txt:s:$data");
  REQUIRE(r);
  CHECK(r->stream == "s");
  CHECK(r->data_stream_type);

  r = parse("file.txt::$DATA");  // the unnamed stream is the file itself
  REQUIRE(r);
  CHECK(r->path == "file.txt");
  CHECK(r->stream.empty());
  CHECK(r->data_stream_type);
  CHECK(!parse("file.txt")->data_stream_type);

  CHECK(parse_error("file.txt:") == NtStatus::ObjectNameInvalid);
  CHECK(parse_error("file.txt:s:$INDEX_ALLOCATION") == NtStatus::ObjectNameInvalid);
  CHECK(parse_error("file.txt:s:$DATA:x") == NtStatus::ObjectNameInvalid);
  CHECK(parse_error("dir:s\\file") == NtStatus::ObjectNameInvalid);
  CHECK(parse_error(":s") == NtStatus::ObjectNameInvalid);
  CHECK(parse_error("file:s\\") == NtStatus::ObjectNameInvalid);
}

TEST_CASE("split_parent", "[vfs]") {
  std::string_view parent, leaf;
  split_parent("a/b/c", parent, leaf);
  CHECK(parent == "a/b");
  CHECK(leaf == "c");
  split_parent("c", parent, leaf);
  CHECK(parent.empty());
  CHECK(leaf == "c");
  split_parent("", parent, leaf);
  CHECK(parent.empty());
  CHECK(leaf.empty());
}

TEST_CASE("open_beneath confines opens to the share root", "[vfs]") {
  test::TempDir outside;
  outside.write_file("secret", "s");
  test::TempDir share;
  share.mkdir("dir/sub");
  share.write_file("dir/file", "hello");
  const int root = share.fd();
  REQUIRE(root >= 0);

  std::filesystem::create_symlink(outside.path() / "secret", share.path() / "abs_out");
  std::filesystem::create_symlink("../../" + outside.path().filename().string() + "/secret",
                                  share.path() / "dir/rel_out");
  std::filesystem::create_symlink("file", share.path() / "dir/in_link");
  std::filesystem::create_symlink("../file", share.path() / "dir/sub/up_in_link");
  std::filesystem::create_symlink("/proc/self/root", share.path() / "magic");

  auto ok = [&](const char* p) {
    const int fd = open_beneath(root, p, O_RDONLY, 0);
    if (fd >= 0) ::close(fd);
    return fd >= 0;
  };
  CHECK(ok("dir/file"));
  CHECK(ok("dir/in_link"));
  CHECK(ok("dir/sub/up_in_link"));
  CHECK(ok(""));
  CHECK(ok("."));
  CHECK(ok("dir/sub/.."));  // '..' that stays inside is fine

  CHECK(open_beneath(root, "../x", O_RDONLY, 0) == -EXDEV);
  CHECK(open_beneath(root, "..", O_RDONLY, 0) == -EXDEV);
  CHECK(open_beneath(root, "/etc/passwd", O_RDONLY, 0) == -EXDEV);
  CHECK(open_beneath(root, "abs_out", O_RDONLY, 0) == -EXDEV);
  CHECK(open_beneath(root, "dir/rel_out", O_RDONLY, 0) == -EXDEV);
  CHECK_FALSE(ok("magic/etc/passwd"));
  CHECK(open_beneath(root, "missing", O_RDONLY, 0) == -ENOENT);
  CHECK(open_beneath_status(open_beneath(root, "abs_out", O_RDONLY, 0)) == NtStatus::AccessDenied);
  CHECK(open_beneath_status(-ENOENT) == NtStatus::ObjectNameNotFound);

  // Creating passes the mode through; opening without O_CREAT ignores it.
  const int fd = open_beneath(root, "dir/new", O_CREAT | O_EXCL | O_WRONLY, 0640);
  REQUIRE(fd >= 0);
  CHECK((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
  ::close(fd);
  CHECK(std::filesystem::exists(share.path() / "dir/new"));
  const int fd2 = open_beneath(root, "dir/new", O_RDONLY, 0777);
  CHECK(fd2 >= 0);
  if (fd2 >= 0) ::close(fd2);
  CHECK(open_beneath(root, "dir/new", O_CREAT | O_EXCL | O_WRONLY, 0640) == -EEXIST);
}

namespace {
// A FILE_RENAME_INFORMATION / FILE_LINK_INFORMATION buffer (MS-FSCC 2.4.42).
Bytes name_change_buffer(bool ex, uint32_t replace_or_flags, uint64_t root_dir, const Bytes& name) {
  Bytes b;
  ByteWriter w(b);
  if (ex) {
    w.u32(replace_or_flags);
    w.zeros(4);
  } else {
    w.u8(uint8_t(replace_or_flags));
    w.zeros(7);
  }
  w.u64(root_dir);
  w.u32(uint32_t(name.size()));
  w.bytes(name);
  return b;
}
}  // namespace

TEST_CASE("rename and link information: one layout, classic and Ex", "[vfs][paths]") {
  const Bytes name = vfs::utf8_to_utf16le("dir\\new.txt");
  const Bytes classic_buffer = name_change_buffer(false, 1, 0, name);  // the name points into it
  auto classic = vfs::read_name_change(classic_buffer, false);
  REQUIRE(classic);
  CHECK(classic->replace);
  CHECK(Bytes(classic->name.begin(), classic->name.end()) == name);
  auto ex = vfs::read_name_change(name_change_buffer(true, 0x2, 0, name), true);  // POSIX_SEMANTICS only
  REQUIRE(ex);
  CHECK_FALSE(ex->replace);
  CHECK(vfs::read_name_change(name_change_buffer(false, 0, 7, name), false).error() == NtStatus::InvalidParameter);
  CHECK(vfs::read_name_change(name_change_buffer(false, 0, 0, {}), false).error() == NtStatus::InvalidParameter);
  Bytes odd = name_change_buffer(false, 0, 0, name);
  odd[16] = uint8_t(name.size() - 1);  // FileNameLength odd
  CHECK(vfs::read_name_change(odd, false).error() == NtStatus::InvalidParameter);
  Bytes longer = name_change_buffer(false, 0, 0, name);
  longer[16] = uint8_t(name.size() + 2);  // past the buffer
  CHECK(vfs::read_name_change(longer, false).error() == NtStatus::InvalidParameter);
  CHECK(vfs::read_name_change(ByteSpan(longer.data(), 19), false).error() == NtStatus::InfoLengthMismatch);
}
