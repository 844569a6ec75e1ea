// The FSCTL families of smb2/fsctl_*.cpp: server-side copy, sparse
// ranges, reparse points, network interfaces; and the dialect's sizes.
#include <algorithm>

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "fixture.hpp"
#include "smb2/fsctl/fsctl_copychunk.hpp"
#include "smb2/fsctl/fsctl_network.hpp"
#include "smb2/fsctl/fsctl_ranges.hpp"
#include "smb2/fsctl/fsctl_reparse.hpp"
#include "smb2/engine/negotiated_sizes.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;

namespace {

constexpr uint32_t kResumeKey = 0x00140078, kCopychunk = 0x001440F2, kCopychunkWrite = 0x001480F2,
                   kSetZeroData = 0x000980C8, kQueryAllocatedRanges = 0x000940CF, kNetworkInterfaces = 0x001401FC,
                   kFileLevelTrim = 0x00098208, kSetSparse = 0x000900C4;
constexpr FileId kNoFile{~0ull, ~0ull};

struct Chunk {
  uint64_t src, dst;
  uint32_t len;
};

Bytes copychunk_input(ByteSpan key, const std::vector<Chunk>& chunks, uint32_t count_field = ~0u) {
  Bytes b;
  ByteWriter w(b);
  w.bytes(key);
  w.u32(count_field == ~0u ? uint32_t(chunks.size()) : count_field);
  w.u32(0);
  for (const Chunk& c : chunks) {
    w.u64(c.src);
    w.u64(c.dst);
    w.u32(c.len);
    w.u32(0);
  }
  return b;
}

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = char('a' + (i * 7) % 26);
  return s;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Bytes resume_key(Smb2Fixture& f, FileId id) {
  Response r = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kResumeKey, id, {}, 32));
  REQUIRE(r.status == NtStatus::Success);
  return Bytes(r.body.begin() + 48, r.body.begin() + 72);
}

}  // namespace

TEST_CASE("FSCTL_SRV_REQUEST_RESUME_KEY answers 32 bytes (MS-SMB2 2.2.32.3, 3.3.5.15.5)", "[smb2][fsctl]") {
  Smb2Fixture f;
  f.write_file("a", "data");
  FileId id = f.open_file("a");
  Response r = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kResumeKey, id, {}, 32));
  REQUIRE(r.status == NtStatus::Success);
  CHECK(r.u32(36) == 32);              // OutputCount
  REQUIRE(r.body.size() == 48 + 32);
  CHECK(r.u32(48 + 24) == 0);          // ContextLength
  CHECK(r.u32(48 + 28) == 0);          // Context
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kResumeKey, id, {}, 31)).status ==
        NtStatus::InvalidParameter);
}

TEST_CASE("FSCTL_SRV_COPYCHUNK copies, checks and reports", "[smb2][fsctl]") {
  Smb2Fixture f;
  const std::string data = pattern(3 * 4096 + 100);
  f.write_file("src", data);
  FileId src = f.open_file("src");
  FileId dst = f.open_file("dst");
  Bytes key = resume_key(f, src);

  SECTION("two chunks land where asked, the response counts them") {
    Bytes in = copychunk_input(key, {{0, 0, 4096}, {4096, 4096, uint32_t(data.size() - 4096)}});
    Response r = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kCopychunk, dst, in, 12));
    REQUIRE(r.status == NtStatus::Success);
    REQUIRE(r.u32(36) == 12);
    CHECK(r.u32(48) == 2);
    CHECK(r.u32(52) == 0);
    CHECK(r.u32(56) == data.size());
    CHECK(slurp(f.dir() / "dst") == data);
  }
  SECTION("COPYCHUNK_WRITE into a write-only target") {
    FileId wo = f.open_file("wo", FILE_WRITE_DATA);
    Bytes in = copychunk_input(key, {{100, 10, 50}});
    CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kCopychunk, wo, in, 12)).status ==
          NtStatus::AccessDenied);  // plain COPYCHUNK also needs read access to the target
    REQUIRE(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kCopychunkWrite, wo, in, 12)).status ==
            NtStatus::Success);
    CHECK(slurp(f.dir() / "wo") == std::string(10, '\0') + data.substr(100, 50));
  }
  SECTION("overlapping ranges of one file copy as memmove") {
    Bytes self = copychunk_input(key, {{0, 10, 4096}});
    REQUIRE(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kCopychunk, src, self, 12)).status ==
            NtStatus::Success);
    CHECK(slurp(f.dir() / "src") == data.substr(0, 10) + data.substr(0, 4096) + data.substr(4106));
  }
  SECTION("over the limits: INVALID_PARAMETER with the limits in the body") {
    for (const Bytes& in : {copychunk_input(key, {{0, 0, kMaxChunkSize + 1}}), copychunk_input(key, {{0, 0, 0}}),
                            copychunk_input(key, {}, kMaxChunks + 1), copychunk_input(key, {{0, 0, 10}}, 2)}) {
      Response r = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kCopychunk, dst, in, 12));
      CHECK(r.status == NtStatus::InvalidParameter);
      REQUIRE(r.body.size() == 48 + 12);
      CHECK(r.u32(48) == kMaxChunks);
      CHECK(r.u32(52) == kMaxChunkSize);
      CHECK(r.u32(56) == kMaxDataSize);
    }
    std::vector<Chunk> many(17, Chunk{0, 0, kMaxChunkSize});  // 17 MiB in all
    Response r = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kCopychunk, dst, copychunk_input(key, many), 12));
    CHECK(r.status == NtStatus::InvalidParameter);
    CHECK(r.body.size() == 48 + 12);
  }
  SECTION("errors") {
    Bytes bad_key = key;
    bad_key[0] ^= 0xFF;
    CHECK(f.call(handle_ioctl, wire::Command::Ioctl,
                 ioctl_body(kCopychunk, dst, copychunk_input(bad_key, {{0, 0, 10}}), 12))
              .status == NtStatus::ObjectNameNotFound);
    Bytes in = copychunk_input(key, {{0, 0, 10}});
    Response small = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kCopychunk, dst, in, 11));
    CHECK(small.status == NtStatus::InvalidParameter);
    CHECK(f.call(handle_ioctl, wire::Command::Ioctl,
                 ioctl_body(kCopychunk, dst, copychunk_input(key, {{data.size() - 5, 0, 10}}), 12))
              .status == NtStatus::InvalidViewSize);  // past the source's end
    FileId ro_src = f.open_file("src", FILE_READ_ATTRIBUTES);
    Bytes ro_key = resume_key(f, ro_src);
    CHECK(f.call(handle_ioctl, wire::Command::Ioctl,
                 ioctl_body(kCopychunk, dst, copychunk_input(ro_key, {{0, 0, 10}}), 12))
              .status == NtStatus::AccessDenied);
    FileId ro_dst = f.open_file("dst", FILE_READ_DATA);
    CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kCopychunk, ro_dst, in, 12)).status ==
          NtStatus::AccessDenied);
    Bytes truncated(key.begin(), key.begin() + 20);
    CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kCopychunk, dst, truncated, 12)).status ==
          NtStatus::InvalidParameter);
  }
}

TEST_CASE("SRV_COPYCHUNK_COPY parser and limits", "[smb2][fsctl]") {
  Bytes key(24, 7);
  auto c = parse_copychunk_copy(copychunk_input(key, {{1, 2, 3}, {4, 5, 6}}));
  REQUIRE(c);
  CHECK(c->complete);
  REQUIRE(c->chunks.size() == 2);
  CHECK(c->chunks[1].source_offset == 4);
  CHECK(c->chunks[1].target_offset == 5);
  CHECK(c->chunks[1].length == 6);
  CHECK(copychunk_within_limits(*c));
  // Every prefix of the input: never more than what is there.
  Bytes full = copychunk_input(key, {{1, 2, 3}, {4, 5, 6}});
  for (size_t n = 0; n < full.size(); ++n) {
    auto p = parse_copychunk_copy(ByteSpan(full.data(), n));
    if (n < 32) CHECK_FALSE(p);
    else CHECK_FALSE(copychunk_within_limits(*p));
  }
}

TEST_CASE("FSCTL_SET_ZERO_DATA and QUERY_ALLOCATED_RANGES", "[smb2][fsctl]") {
  Smb2Fixture f;
  const std::string data = pattern(256 * 1024);
  f.write_file("s", data);
  FileId id = f.open_file("s");
  REQUIRE(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kSetSparse, id, Bytes{1}, 0)).status ==
          NtStatus::Success);
  auto range_input = [](uint64_t a, uint64_t b) {
    Bytes in;
    ByteWriter w(in);
    w.u64(a);
    w.u64(b);
    return in;
  };
  Response z = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kSetZeroData, id, range_input(64 * 1024, 128 * 1024), 0));
  REQUIRE(z.status == NtStatus::Success);
  std::string now = slurp(f.dir() / "s");
  REQUIRE(now.size() == data.size());  // never changes the size
  CHECK(now.substr(0, 65536) == data.substr(0, 65536));
  CHECK(now.substr(65536, 65536) == std::string(65536, '\0'));
  CHECK(now.substr(131072) == data.substr(131072));
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kSetZeroData, id, range_input(10, 5), 0)).status ==
        NtStatus::InvalidParameter);
  // Zeroing beyond EOF does not extend the file.
  REQUIRE(f.call(handle_ioctl, wire::Command::Ioctl,
                 ioctl_body(kSetZeroData, id, range_input(data.size(), data.size() + 4096), 0))
              .status == NtStatus::Success);
  CHECK(std::filesystem::file_size(f.dir() / "s") == data.size());

  Response q = f.call(handle_ioctl, wire::Command::Ioctl,
                      ioctl_body(kQueryAllocatedRanges, id, range_input(0, data.size()), 1024));
  REQUIRE(q.status == NtStatus::Success);
  uint32_t n = q.u32(36) / 16;
  REQUIRE(n >= 1);
  CHECK(q.u64(48) == 0);  // data starts at 0
  // Every reported range lies within the file, and (where the filesystem
  // punched the hole) none covers the zeroed middle.
  for (uint32_t i = 0; i < n; ++i) CHECK(q.u64(48 + 16 * i) + q.u64(56 + 16 * i) <= data.size());
  Response tiny = f.call(handle_ioctl, wire::Command::Ioctl,
                         ioctl_body(kQueryAllocatedRanges, id, range_input(0, data.size()), 8));
  CHECK(tiny.status == NtStatus::BufferTooSmall);
}

TEST_CASE("allocated_ranges follows SEEK_DATA / SEEK_HOLE", "[smb2][fsctl]") {
  Smb2Fixture f;
  f.write_file("h");
  int fd = ::open((f.dir() / "h").c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  std::string block(4096, 'x');
  REQUIRE(pwrite(fd, block.data(), block.size(), 0) == 4096);
  REQUIRE(pwrite(fd, block.data(), block.size(), 1 << 20) == 4096);
  uint64_t size = (1 << 20) + 4096;
  auto r = allocated_ranges(fd, 0, size, size);
  REQUIRE(!r.empty());
  CHECK(r.front().offset == 0);
  CHECK(r.back().offset + r.back().length == size);
  if (r.size() == 2) CHECK(r[1].offset == (1 << 20));  // a filesystem with holes
  CHECK(allocated_ranges(fd, size, 100, size).empty());  // at EOF: nothing
  auto clipped = allocated_ranges(fd, 100, 200, size);
  REQUIRE(clipped.size() == 1);
  CHECK(clipped[0] == ByteRange64{100, 200});
  ::close(fd);
}

TEST_CASE("FSCTL_FILE_LEVEL_TRIM", "[smb2][fsctl]") {
  Smb2Fixture f;
  f.write_file("t", pattern(8192));
  FileId id = f.open_file("t");
  Bytes in;
  ByteWriter w(in);
  w.u32(0);
  w.u32(1);
  w.u64(0);
  w.u64(4096);
  Response r = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kFileLevelTrim, id, in, 4));
  REQUIRE(r.status == NtStatus::Success);
  REQUIRE(r.u32(36) == 4);
  if (r.u32(48) == 1) CHECK(slurp(f.dir() / "t").substr(0, 4096) == std::string(4096, '\0'));
  CHECK(std::filesystem::file_size(f.dir() / "t") == 8192);
  in.resize(20);  // NumRanges 1, the range cut short
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kFileLevelTrim, id, in, 4)).status ==
        NtStatus::InvalidParameter);
}

TEST_CASE("symlink reparse buffer (MS-FSCC 2.1.2.4)", "[smb2][fsctl]") {
  auto b = symlink_reparse_buffer("dir/target");
  REQUIRE(b);
  Bytes name = vfs::utf8_to_utf16le("dir\\target");
  REQUIRE(b->size() == 20 + 2 * name.size());
  CHECK(load_le32(b->data()) == 0xA000000C);
  CHECK(load_le16(b->data() + 4) == 12 + 2 * name.size());  // ReparseDataLength
  CHECK(load_le16(b->data() + 8) == 0);                     // SubstituteNameOffset
  CHECK(load_le16(b->data() + 10) == name.size());
  CHECK(load_le16(b->data() + 12) == name.size());          // PrintNameOffset
  CHECK(load_le32(b->data() + 16) == 1);                    // SYMLINK_FLAG_RELATIVE
  CHECK(Bytes(b->begin() + 20, b->begin() + 20 + long(name.size())) == name);
  CHECK(load_le32(symlink_reparse_buffer("/etc/passwd")->data() + 16) == 0);  // absolute: no SYMLINK_FLAG_RELATIVE
  CHECK_FALSE(symlink_reparse_buffer(""));
}

TEST_CASE("NETWORK_INTERFACE_INFO encoding and the bound interfaces", "[smb2][fsctl]") {
  NetInterface v4{"eth0", 2, false, {192, 168, 1, 5}, 0, 10'000'000'000, true};
  NetInterface v6{"eth0", 2, true, {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 2, 1'000'000'000, false};
  Bytes b = encode_network_interfaces({v4, v6});
  REQUIRE(b.size() == 2 * kNetworkInterfaceInfoSize);
  CHECK(load_le32(b.data()) == 152);  // Next
  CHECK(load_le32(b.data() + 4) == 2);
  CHECK(load_le32(b.data() + 8) == 1);  // RSS_CAPABLE
  CHECK(load_le64(b.data() + 16) == 10'000'000'000);
  CHECK(load_le16(b.data() + 24) == 2);  // AF_INET
  CHECK(b[28] == 192);
  CHECK(b[31] == 5);
  const uint8_t* e = b.data() + 152;
  CHECK(load_le32(e) == 0);  // last
  CHECK(load_le16(e + 24) == 0x17);  // AF_INET6 as Windows numbers it
  CHECK(e[32] == 0xfe);
  CHECK(e[47] == 1);
  CHECK(load_le32(e + 48) == 2);  // ScopeId

  config::GlobalConfig g;
  g.bind_interfaces_only = true;
  g.interfaces = {"127.0.0.1"};
  auto bound = bound_interfaces(g);
  REQUIRE(bound.size() == 1);
  CHECK(bound[0].name == "lo");
  CHECK(bound[0].address[0] == 127);

  Smb2Fixture f;
  f.server.config.global = g;
  Response r = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kNetworkInterfaces, kNoFile, {}, 1024));
  REQUIRE(r.status == NtStatus::Success);
  CHECK(r.u32(36) == 152);
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kNetworkInterfaces, kNoFile, {}, 100)).status ==
        NtStatus::BufferTooSmall);
}

TEST_CASE("an interfaces entry's options replace what the kernel says", "[smb2][fsctl]") {
  config::GlobalConfig g;
  g.bind_interfaces_only = true;
  g.interfaces = {"lo"};
  auto plain = bound_interfaces(g);
  REQUIRE_FALSE(plain.empty());
  CHECK_FALSE(plain[0].rss_capable);
  CHECK(plain[0].link_speed_bps == 10'000'000'000);  // loopback
  g.interface_overrides = {{"lo", 25'000'000'000, true, false, 42}};
  for (const NetInterface& i : bound_interfaces(g)) {
    CHECK(i.name == "lo");
    CHECK(i.rss_capable);
    CHECK(i.link_speed_bps == 25'000'000'000);
    CHECK(i.if_index == 42);
  }
  // Not bound to it, the server still listens on loopback (any address):
  // reported when an entry names it, left out otherwise.
  g.bind_interfaces_only = false;
  auto named = bound_interfaces(g);
  CHECK(std::ranges::any_of(named, [](const NetInterface& i) { return i.name == "lo"; }));
  g.interfaces.clear();
  g.interface_overrides.clear();
  auto all = bound_interfaces(g);
  CHECK_FALSE(std::ranges::any_of(all, [](const NetInterface& i) { return i.name == "lo"; }));
}

TEST_CASE("dialect 2.0.2 advertises and enforces 64 KiB sizes", "[smb2]") {
  ServerContext server;
  server.max_read = 8 << 20;
  server.max_write = 1 << 20;
  server.max_trans = 8 << 20;
  NegotiatedSizes s202 = negotiated_sizes(0x0202, server);
  CHECK(s202.max_read == 65536);
  CHECK(s202.max_write == 65536);
  CHECK(s202.max_trans == 65536);
  for (uint16_t d : {0x0210, 0x0300, 0x0302, 0x0311}) {
    NegotiatedSizes s = negotiated_sizes(d, server);
    CHECK(s.max_read == server.max_read);
    CHECK(s.max_write == server.max_write);
    CHECK(s.max_trans == server.max_trans);
  }

  Smb2Fixture f;
  f.server.max_read = 1 << 20;
  f.server.max_write = 1 << 20;
  f.write_file("r", pattern(70000));
  FileId id = f.open_file("r");
  f.conn.dialect = 0x0202;
  CHECK(f.call(handle_read, wire::Command::Read, read_body(id, 0, 65537)).status == NtStatus::InvalidParameter);
  CHECK(f.call(handle_read, wire::Command::Read, read_body(id, 0, 65536)).status == NtStatus::Success);
  f.conn.dialect = 0x0210;
  CHECK(f.call(handle_read, wire::Command::Read, read_body(id, 0, 65537)).status == NtStatus::Success);
}

TEST_CASE("FSCTL_GET_REPARSE_POINT reads a symlink opened with FILE_OPEN_REPARSE_POINT", "[smb2][fsctl]") {
  constexpr uint32_t kGetReparse = 0x000900A8, FILE_OPEN_REPARSE_POINT = 0x00200000;
  Smb2Fixture f;
  f.mkdir("dir");
  f.write_file("dir/target", "x");
  REQUIRE(::symlink("dir/target", (f.dir() / "link").c_str()) == 0);
  REQUIRE(::symlink("/etc/passwd", (f.dir() / "abs").c_str()) == 0);
  FileId id;
  CHECK(f.create("link", FILE_READ_ATTRIBUTES, kOpen, 0, id) == NtStatus::StoppedOnSymlink);  // not followed
  REQUIRE(f.create("link", FILE_READ_ATTRIBUTES, kOpen, FILE_OPEN_REPARSE_POINT, id) == NtStatus::Success);
  Response r = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kGetReparse, id, {}, 1024));
  REQUIRE(r.status == NtStatus::Success);
  Bytes expected = *symlink_reparse_buffer("dir/target");
  REQUIRE(r.u32(36) == expected.size());
  CHECK(Bytes(r.body.begin() + 48, r.body.end()) == expected);
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kGetReparse, id, {}, 10)).status ==
        NtStatus::BufferTooSmall);
  FileId abs;
  REQUIRE(f.create("abs", FILE_READ_ATTRIBUTES, kOpen, FILE_OPEN_REPARSE_POINT, abs) == NtStatus::Success);
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kGetReparse, abs, {}, 1024)).status ==
        NtStatus::Success);  // an absolute target reads back without SYMLINK_FLAG_RELATIVE
  FileId file = f.open_file("dir\\target");
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kGetReparse, file, {}, 1024)).status ==
        NtStatus::NotAReparsePoint);
}

TEST_CASE("FSCTL_DUPLICATE_EXTENTS_TO_FILE: a clone, or NOT_SUPPORTED where blocks cannot be shared", "[smb2][fsctl]") {
  constexpr uint32_t kDuplicateExtents = 0x00098344;
  Smb2Fixture f;
  const std::string data = pattern(65536);
  f.write_file("src", data);
  FileId src = f.open_file("src");
  FileId dst = f.open_file("dst");
  Bytes in;
  ByteWriter w(in);
  w.u64(src.persistent);
  w.u64(src.volatile_id);
  w.u64(0);
  w.u64(0);
  w.u64(65536);
  NtStatus s = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kDuplicateExtents, dst, in, 0)).status;
  if (s == NtStatus::Success) CHECK(slurp(f.dir() / "dst") == data);
  else CHECK(s == NtStatus::NotSupported);  // ext4, tmpfs
  Bytes bad = in;
  store_le64(bad.data() + 8, 999);  // no such open
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kDuplicateExtents, dst, bad, 0)).status ==
        NtStatus::InvalidHandle);
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kDuplicateExtents, dst, Bytes(39, 0), 0)).status ==
        NtStatus::InvalidParameter);
}
