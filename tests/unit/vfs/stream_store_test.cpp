// vfs::stream_store: the stream-name check and key, the trusted.* value
// layout and its operations (on a scratch file, where this process may
// use trusted.* xattrs), and the FILE_STREAM_INFORMATION encoding.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/xattr.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "temp_dir.hpp"
#include "vfs/stream_sidecar.hpp"
#include "vfs/stream_store.hpp"

using namespace ringsmb;
using namespace ringsmb::vfs;

namespace {

// A scratch file for stream operations; skips the test where trusted.*
// xattrs cannot be used (no CAP_SYS_ADMIN, or a filesystem without them).
struct StreamFile {
  test::TempDir dir;
  int fd = -1;
  StreamFile() {
    dir.write_file("f", "data");
    fd = ::open((dir.path() / "f").c_str(), O_RDWR | O_CLOEXEC);
  }
  ~StreamFile() {
    if (fd >= 0) ::close(fd);
  }
  bool usable() { return fd >= 0 && streams_supported(dir.fd()); }
};

std::string key_of(std::string_view name) { return *stream_xattr_name(name); }

// Sidecars in a scratch directory for one test, unconfigured again after.
struct Sidecars {
  test::TempDir dir;
  bool ok = false;
  explicit Sidecars(uint64_t max_bytes_per_owner = 0) {
    ok = configure_stream_sidecars((dir.path() / "streams").string(), {}, max_bytes_per_owner);
  }
  ~Sidecars() { reset_stream_sidecars(); }
  size_t files() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path() / "streams")) ++n;
    return n;
  }
};

Bytes pattern(size_t n) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = uint8_t(i * 7 + i / 251);
  return b;
}

}  // namespace

TEST_CASE("stream names: the key is the prefix and the folded name", "[vfs][streams]") {
  CHECK(stream_xattr_name("Zone.Identifier").value() == "trusted.ringsmb.stream.zone.identifier");
  CHECK(stream_xattr_name("AFP_AfpInfo").value() == "trusted.ringsmb.stream.afp_afpinfo");
  // Wildcards and control characters are legal in stream names (MS-FSCC 2.1.5.3).
  CHECK(stream_xattr_name("?Stream*").value() == "trusted.ringsmb.stream.?stream*");
  CHECK(stream_xattr_name("\x05Stream\n One"));
  CHECK(stream_xattr_name("ÄÖ").value() == stream_xattr_name("äö").value());
}

TEST_CASE("stream names: separators, NUL, colons, bad UTF-8 and overlong names are refused", "[vfs][streams]") {
  for (std::string_view bad : {std::string_view(""), std::string_view("a/b"), std::string_view("..\\x"),
                               std::string_view("a:b"), std::string_view("a\0b", 3), std::string_view("\xff\xfe")})
    CHECK(stream_xattr_name(bad).error() == NtStatus::ObjectNameInvalid);
  CHECK(stream_xattr_name(std::string(256, 'a')).error() == NtStatus::ObjectNameInvalid);  // > 255 UTF-16 units
  // Legal for Windows but the xattr name would pass Linux's 255 bytes.
  CHECK(stream_xattr_name(std::string(240, 'a')).error() == NtStatus::NameTooLong);
  CHECK(stream_xattr_name(std::string(255 - kStreamXattrPrefix.size(), 'a')));
}

TEST_CASE("stream store: create, write at offsets, read, resize, list, rename, remove", "[vfs][streams]") {
  StreamFile f;
  if (!f.usable()) {
    WARN("trusted.* xattrs unavailable here: not run");
    return;
  }
  const std::string k1 = key_of("One"), k2 = key_of("Two");
  CHECK(stream_size(f.fd, k1).error() == NtStatus::ObjectNameNotFound);
  REQUIRE(create_stream(f.fd, k1, "One") == NtStatus::Success);
  CHECK(create_stream(f.fd, k1, "ONE") == NtStatus::ObjectNameCollision);
  CHECK(stream_size(f.fd, k1).value() == 0);
  REQUIRE(write_stream_at(f.fd, k1, 0, ByteSpan(reinterpret_cast<const uint8_t*>("test data"), 9)) ==
          NtStatus::Success);
  REQUIRE(write_stream_at(f.fd, k1, 5, ByteSpan(reinterpret_cast<const uint8_t*>("MORE DATA "), 10)) ==
          NtStatus::Success);
  auto data = read_stream(f.fd, k1);
  REQUIRE(data);
  CHECK(std::string(data->begin(), data->end()) == "test MORE DATA ");
  REQUIRE(set_stream_size(f.fd, k1, 4) == NtStatus::Success);
  CHECK(stream_size(f.fd, k1).value() == 4);
  REQUIRE(set_stream_size(f.fd, k1, 8) == NtStatus::Success);  // extends with zeros
  data = read_stream(f.fd, k1);
  CHECK(std::string(data->begin(), data->end()) == std::string("test\0\0\0\0", 8));

  REQUIRE(create_stream(f.fd, k2, "Two") == NtStatus::Success);
  auto listed = list_streams(f.fd);
  REQUIRE(listed);
  std::vector<std::string> names;
  for (const auto& s : *listed) names.push_back(s.name);
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"One", "Two"});

  // MS-FSA 2.1.5.15.11.1: no replace -> collision; replace of a stream with
  // data -> INVALID_PARAMETER; replace of an empty one works.
  CHECK(rename_stream(f.fd, k2, k1, "One", false) == NtStatus::ObjectNameCollision);
  CHECK(rename_stream(f.fd, k2, k1, "One", true) == NtStatus::InvalidParameter);
  CHECK(rename_stream(f.fd, k1, k2, "Two", true) == NtStatus::Success);
  CHECK(stream_size(f.fd, k1).error() == NtStatus::ObjectNameNotFound);
  CHECK(stream_size(f.fd, k2).value() == 8);
  CHECK(rename_stream(f.fd, k2, key_of("three"), "Three", false) == NtStatus::Success);
  listed = list_streams(f.fd);
  REQUIRE(listed->size() == 1);
  CHECK((*listed)[0].name == "Three");

  CHECK(remove_stream(f.fd, key_of("THREE")) == NtStatus::Success);
  CHECK(remove_stream(f.fd, key_of("three")) == NtStatus::ObjectNameNotFound);
  CHECK(list_streams(f.fd)->empty());
}

TEST_CASE("stream store: a stream too large for one value is refused whole", "[vfs][streams]") {
  StreamFile f;
  if (!f.usable()) {
    WARN("trusted.* xattrs unavailable here: not run");
    return;
  }
  const std::string k = key_of("big");
  REQUIRE(create_stream(f.fd, k, "big") == NtStatus::Success);
  REQUIRE(write_stream_at(f.fd, k, 0, ByteSpan(reinterpret_cast<const uint8_t*>("keep"), 4)) == NtStatus::Success);
  Bytes big(kMaxStreamValueBytes, 'x');
  CHECK(write_stream_at(f.fd, k, 0, big) == NtStatus::DiskFull);
  CHECK(set_stream_size(f.fd, k, kMaxStreamValueBytes) == NtStatus::DiskFull);
  auto data = read_stream(f.fd, k);
  REQUIRE(data);
  CHECK(std::string(data->begin(), data->end()) == "keep");  // unchanged, not cut
}

TEST_CASE("stream store: a stream past one value moves to a sidecar and keeps every byte", "[vfs][streams]") {
  StreamFile f;
  if (!f.usable()) {
    WARN("trusted.* xattrs unavailable here: not run");
    return;
  }
  Sidecars sc;
  REQUIRE(sc.ok);
  const std::string k = key_of("Big");
  REQUIRE(create_stream(f.fd, k, "Big") == NtStatus::Success);
  REQUIRE(write_stream_at(f.fd, k, 0, ByteSpan(reinterpret_cast<const uint8_t*>("head"), 4)) == NtStatus::Success);
  CHECK(sc.files() == 0);  // small: still in the value
  const Bytes mib = pattern(1 << 20);
  REQUIRE(write_stream_at(f.fd, k, 0, mib) == NtStatus::Success);
  CHECK(sc.files() == 1);
  CHECK(stream_size(f.fd, k).value() == mib.size());
  auto all = read_stream(f.fd, k);
  REQUIRE(all);
  CHECK(*all == mib);
  auto part = read_stream_range(f.fd, k, 1000, 10);
  REQUIRE(part);
  CHECK(*part == Bytes(mib.begin() + 1000, mib.begin() + 1010));
  CHECK(read_stream_range(f.fd, k, mib.size() + 5, 10).value().empty());
  // Writes at an offset, past the end (a gap of zeros), and resizes.
  REQUIRE(write_stream_at(f.fd, k, (2 << 20), ByteSpan(reinterpret_cast<const uint8_t*>("end"), 3)) ==
          NtStatus::Success);
  CHECK(stream_size(f.fd, k).value() == (2u << 20) + 3);
  CHECK(read_stream_range(f.fd, k, (1 << 20) + 1, 2).value() == Bytes(2, 0));
  REQUIRE(set_stream_size(f.fd, k, 5) == NtStatus::Success);
  CHECK(read_stream(f.fd, k).value() == Bytes(mib.begin(), mib.begin() + 5));
  // A rename keeps the sidecar; the listing reports its size.
  REQUIRE(rename_stream(f.fd, k, key_of("other"), "Other", false) == NtStatus::Success);
  auto listed = list_streams(f.fd);
  REQUIRE(listed);
  REQUIRE(listed->size() == 1);
  CHECK((*listed)[0].name == "Other");
  CHECK((*listed)[0].size == 5);
  CHECK(sc.files() == 1);
  // Removing the stream removes the sidecar.
  CHECK(remove_stream(f.fd, key_of("other")) == NtStatus::Success);
  CHECK(sc.files() == 0);
  // A large stream made by setting the size: no buffer of that size built.
  REQUIRE(create_stream(f.fd, k, "Big") == NtStatus::Success);
  REQUIRE(set_stream_size(f.fd, k, max_stream_bytes()) == NtStatus::Success);
  CHECK(stream_size(f.fd, k).value() == max_stream_bytes());
  CHECK(remove_all_streams(f.fd) == NtStatus::Success);
  CHECK(sc.files() == 0);
}

TEST_CASE("stream store: no stream grows past max_stream_bytes", "[vfs][streams]") {
  StreamFile f;
  if (!f.usable()) {
    WARN("trusted.* xattrs unavailable here: not run");
    return;
  }
  Sidecars sc;
  REQUIRE(sc.ok);
  CHECK(max_stream_bytes() == kDefaultMaxStreamBytes);
  set_max_stream_bytes(1 << 20);
  const std::string k = key_of("s");
  REQUIRE(create_stream(f.fd, k, "s") == NtStatus::Success);
  const ByteSpan one(reinterpret_cast<const uint8_t*>("x"), 1);
  CHECK(set_stream_size(f.fd, k, (1 << 20) + 1) == NtStatus::DiskFull);
  CHECK(set_stream_size(f.fd, k, 2ull << 30) == NtStatus::DiskFull);
  CHECK(write_stream_at(f.fd, k, 1 << 20, one) == NtStatus::DiskFull);
  CHECK(write_stream_at(f.fd, k, UINT64_MAX, one) == NtStatus::DiskFull);  // no overflow past the bound
  CHECK(stream_size(f.fd, k).value() == 0);
  CHECK(write_stream_at(f.fd, k, (1 << 20) - 1, one) == NtStatus::Success);
  CHECK(stream_size(f.fd, k).value() == 1 << 20);
  set_max_stream_bytes(kDefaultMaxStreamBytes);
}

TEST_CASE("stream sidecars: they belong to the file's owner and are bounded per owner", "[vfs][streams]") {
  StreamFile f;
  constexpr uid_t kOwner = 54321;
  if (!f.usable() || fchown(f.fd, kOwner, kOwner) != 0) {
    WARN("trusted.* xattrs or chown unavailable here: not run");
    return;
  }
  Sidecars sc(300000);
  REQUIRE(sc.ok);
  REQUIRE(create_stream(f.fd, key_of("a"), "a") == NtStatus::Success);
  REQUIRE(create_stream(f.fd, key_of("b"), "b") == NtStatus::Success);
  REQUIRE(write_stream_at(f.fd, key_of("a"), 0, pattern(200000)) == NtStatus::Success);
  REQUIRE(sc.files() == 1);
  for (const auto& e : std::filesystem::directory_iterator(sc.dir.path() / "streams")) {
    struct stat st {};
    REQUIRE(::stat(e.path().c_str(), &st) == 0);
    CHECK(st.st_uid == kOwner);
    CHECK(st.st_gid == kOwner);
  }
  CHECK(sidecar_bytes_of(kOwner) == 200000);
  CHECK(sidecar_bytes_of(0) == 0);
  // 100000 more fit, one more byte does not: not as a new sidecar, a
  // write, or a size.
  CHECK(write_stream_at(f.fd, key_of("b"), 0, pattern(100001)) == NtStatus::DiskFull);
  CHECK(write_stream_at(f.fd, key_of("a"), 200000, pattern(100001)) == NtStatus::DiskFull);
  CHECK(set_stream_size(f.fd, key_of("a"), 300001) == NtStatus::DiskFull);
  CHECK(set_stream_size(f.fd, key_of("a"), 300000) == NtStatus::Success);
  CHECK(sidecar_bytes_of(kOwner) == 300000);
  CHECK(set_stream_size(f.fd, key_of("a"), 100000) == NtStatus::Success);
  CHECK(write_stream_at(f.fd, key_of("b"), 0, pattern(150000)) == NtStatus::Success);
  CHECK(sidecar_bytes_of(kOwner) == 250000);
  // Counted again from the directory at start.
  REQUIRE(configure_stream_sidecars((sc.dir.path() / "streams").string(), {}, 300000));
  CHECK(sidecar_bytes_of(kOwner) == 250000);
  CHECK(remove_stream(f.fd, key_of("a")) == NtStatus::Success);
  CHECK(sidecar_bytes_of(kOwner) == 150000);
  CHECK(remove_all_streams(f.fd) == NtStatus::Success);
  CHECK(sidecar_bytes_of(kOwner) == 0);
}

TEST_CASE("stream store: a deleted file's sidecars go with it", "[vfs][streams]") {
  StreamFile f;
  if (!f.usable()) {
    WARN("trusted.* xattrs unavailable here: not run");
    return;
  }
  Sidecars sc;
  REQUIRE(sc.ok);
  REQUIRE(create_stream(f.fd, key_of("s"), "s") == NtStatus::Success);
  REQUIRE(write_stream_at(f.fd, key_of("s"), 0, pattern(100000)) == NtStatus::Success);
  REQUIRE(sc.files() == 1);
  CHECK(stream_sidecars_in_use());
  REQUIRE(unlink((f.dir.path() / "f").c_str()) == 0);
  forget_deleted_streams(f.fd);
  CHECK(sc.files() == 0);
}

TEST_CASE("stream sidecars: a directory others can reach is refused", "[vfs][streams]") {
  test::TempDir dir;
  const auto path = dir.path() / "open";
  REQUIRE(::mkdir(path.c_str(), 0700) == 0);
  REQUIRE(::chmod(path.c_str(), 0755) == 0);
  CHECK_FALSE(configure_stream_sidecars(path.string(), {}));
  CHECK_FALSE(stream_sidecars_enabled());
  REQUIRE(::chmod(path.c_str(), 0700) == 0);
  CHECK(configure_stream_sidecars(path.string(), {}));
  CHECK(stream_sidecars_enabled());
  CHECK_FALSE(stream_sidecars_in_use());
  reset_stream_sidecars();
  SidecarId id{};
  id[0] = 0xab;
  id[15] = 0x01;
  CHECK(sidecar_name(id) == "ab000000000000000000000000000001");
}

TEST_CASE("stream store: remove_all_streams leaves other xattrs", "[vfs][streams]") {
  StreamFile f;
  if (!f.usable()) {
    WARN("trusted.* xattrs unavailable here: not run");
    return;
  }
  REQUIRE(create_stream(f.fd, key_of("a"), "a") == NtStatus::Success);
  REQUIRE(create_stream(f.fd, key_of("b"), "b") == NtStatus::Success);
  REQUIRE(fsetxattr(f.fd, "trusted.other", "v", 1, 0) == 0);
  CHECK(remove_all_streams(f.fd) == NtStatus::Success);
  CHECK(list_streams(f.fd)->empty());
  char v[4];
  CHECK(fgetxattr(f.fd, "trusted.other", v, sizeof v) == 1);
}

TEST_CASE("stream store: a value not written by the store is not a stream", "[vfs][streams]") {
  StreamFile f;
  if (!f.usable()) {
    WARN("trusted.* xattrs unavailable here: not run");
    return;
  }
  REQUIRE(fsetxattr(f.fd, key_of("junk").c_str(), "xy", 2, 0) == 0);
  CHECK(stream_size(f.fd, key_of("junk")).error() == NtStatus::InternalError);
  CHECK(list_streams(f.fd)->empty());
}

TEST_CASE("FILE_STREAM_INFORMATION: the unnamed stream first, entries 8-byte aligned", "[vfs][streams]") {
  Bytes out;
  encode_stream_information(false, 10, 4096, {{"ab", 3}}, out);
  // Entry 1: 24 bytes + "::$DATA" (7 UTF-16 units) = 38, padded to 40.
  // Entry 2: 24 bytes + ":ab:$DATA" (9 units) = 42, the last: no padding.
  REQUIRE(out.size() == 40 + 42);
  CHECK(load_le32(out.data()) == 40);       // NextEntryOffset
  CHECK(load_le32(out.data() + 4) == 14);   // StreamNameLength
  CHECK(load_le64(out.data() + 8) == 10);   // StreamSize
  CHECK(load_le64(out.data() + 16) == 4096);
  CHECK((out[24] == ':' && out[26] == ':' && out[28] == '$'));
  CHECK(load_le32(out.data() + 40) == 0);   // the last entry
  CHECK(load_le32(out.data() + 44) == 18);
  CHECK(load_le64(out.data() + 48) == 3);
  CHECK(load_le64(out.data() + 56) == 4096);
  CHECK((out[64] == ':' && out[66] == 'a' && out[68] == 'b'));

  Bytes dir;
  encode_stream_information(true, 0, 0, {}, dir);  // a directory has no unnamed stream
  CHECK(dir.empty());
}
