// READ, WRITE, FLUSH, CLOSE and TREE_CONNECT handlers: round trips and
// malformed bodies.
#include <catch2/catch.hpp>

#include "control/local_control_plane.hpp"
#include "fixture.hpp"
#include "ipc/control_plane.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;
using wire::Command;

namespace {

Bytes write_body(FileId id, uint64_t offset, ByteSpan data, uint16_t data_offset = 64 + 48) {
  Bytes b;
  ByteWriter w(b);
  w.u16(49);
  w.u16(data_offset);
  w.u32(uint32_t(data.size()));
  w.u64(offset);
  w.u64(id.persistent);
  w.u64(id.volatile_id);
  w.zeros(12);  // Channel, RemainingBytes, WriteChannelInfoOffset/Length
  w.u32(0);     // Flags
  w.bytes(data);
  return b;
}


Bytes close_body(FileId id, uint16_t flags) {
  Bytes b;
  ByteWriter w(b);
  w.u16(24);
  w.u16(flags);
  w.u32(0);
  w.u64(id.persistent);
  w.u64(id.volatile_id);
  return b;
}

Bytes tree_connect_body(std::string_view unc, int16_t offset_delta = 0) {
  Bytes path = u16le(unc), b;
  ByteWriter w(b);
  w.u16(9);
  w.u16(0);
  w.u16(uint16_t(64 + 8 + offset_delta));
  w.u16(uint16_t(path.size()));
  w.bytes(path);
  return b;
}

}  // namespace

TEST_CASE("WRITE then READ returns the same bytes", "[smb2]") {
  Smb2Fixture fx;
  FileId id = fx.open_file("data.bin");
  Bytes data(5000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 13);
  Response w = fx.call(handle_write, Command::Write, write_body(id, 100, data));
  REQUIRE(w.status == NtStatus::Success);
  CHECK(w.u32(4) == data.size());

  Response r = fx.call(handle_read, Command::Read, read_body(id, 100, 5000));
  REQUIRE(r.status == NtStatus::Success);
  CHECK(r.body[2] == 80);  // DataOffset
  REQUIRE(r.u32(4) == 5000);
  CHECK(Bytes(r.body.begin() + 16, r.body.begin() + 16 + 5000) == data);

  SECTION("a read past the end is END_OF_FILE") {
    CHECK(fx.call(handle_read, Command::Read, read_body(id, 1 << 20, 10)).status == NtStatus::EndOfFile);
  }
  SECTION("fewer bytes than MinimumCount is END_OF_FILE") {
    CHECK(fx.call(handle_read, Command::Read, read_body(id, 5000, 200, 150)).status == NtStatus::EndOfFile);
  }
  SECTION("a read longer than MaxReadSize is refused") {
    CHECK(fx.call(handle_read, Command::Read, read_body(id, 0, (1 << 20) + 1)).status == NtStatus::InvalidParameter);
  }
  SECTION("FLUSH and CLOSE with POSTQUERY_ATTRIB") {
    Bytes fb;
    ByteWriter fw(fb);
    fw.u16(24);
    fw.zeros(6);
    fw.u64(id.persistent);
    fw.u64(id.volatile_id);
    CHECK(fx.call(handle_flush, Command::Flush, fb).status == NtStatus::Success);
    Response c = fx.call(handle_close, Command::Close, close_body(id, 1));
    REQUIRE(c.status == NtStatus::Success);
    CHECK(c.u16(2) == 1);
    CHECK(c.u64(48) == 5100);  // EndOfFile
    CHECK(fx.call(handle_close, Command::Close, close_body(id, 0)).status == NtStatus::FileClosed);
  }
}

TEST_CASE("WRITE offsets as Windows answers them", "[smb2]") {
  Smb2Fixture fx;
  FileId id = fx.open_file("range.bin");
  Bytes one(1, 7), none;
  auto write_at = [&](uint64_t offset, const Bytes& data) {
    return fx.call(handle_write, Command::Write, write_body(id, offset, data)).status;
  };
  constexpr uint64_t kMaxFileSize = 0xFFFFFFF0000ull;  // NTFS's MAXFILESIZE
  CHECK(write_at(0xFFFFFFFFFFFFFFFFull, one) == NtStatus::InvalidParameter);  // not "append" over SMB2
  CHECK(write_at(0xFFFFFFFFFFFFFFFEull, one) == NtStatus::InvalidParameter);
  CHECK(write_at(uint64_t(INT64_MAX), none) == NtStatus::Success);
  CHECK(write_at(uint64_t(INT64_MAX), one) == NtStatus::InvalidParameter);
  CHECK(write_at(uint64_t(INT64_MAX) + 1, none) == NtStatus::InvalidParameter);
  CHECK(write_at(kMaxFileSize, one) == NtStatus::InvalidParameter);
  CHECK(write_at(kMaxFileSize - 1, one) == NtStatus::DiskFull);
  CHECK(write_at(kMaxFileSize, none) == NtStatus::Success);
  CHECK(write_at(4096, one) == NtStatus::Success);
}

TEST_CASE("WRITE with its data outside the message is refused", "[smb2]") {
  Smb2Fixture fx;
  FileId id = fx.open_file("x");
  Bytes data(10, 1);
  CHECK(fx.call(handle_write, Command::Write, write_body(id, 0, data, 60000)).status == NtStatus::InvalidParameter);
  CHECK(fx.call(handle_write, Command::Write, write_body(id, 0, data, 10)).status == NtStatus::InvalidParameter);
  Bytes truncated = write_body(id, 0, data);
  truncated.resize(truncated.size() - 5);  // Length says 10, 5 are there
  CHECK(fx.call(handle_write, Command::Write, truncated).status == NtStatus::InvalidParameter);
}

TEST_CASE("READ and WRITE on an unknown or read-only handle", "[smb2]") {
  Smb2Fixture fx;
  FileId bogus{77, 77};
  CHECK(fx.call(handle_read, Command::Read, read_body(bogus, 0, 10)).status == NtStatus::FileClosed);
  fx.write_file("ro.txt", "abc");
  FileId ro = fx.open_file("ro.txt", FILE_READ_DATA | FILE_READ_ATTRIBUTES, kOpen);
  Bytes data(3, 1);
  CHECK(fx.call(handle_write, Command::Write, write_body(ro, 0, data)).status == NtStatus::AccessDenied);
}

TEST_CASE("TREE_CONNECT resolves shares through the control plane", "[smb2]") {
  Smb2Fixture fx;
  config::ShareConfig share;
  share.name = "data";
  share.path = fx.dir().string();
  share.read_only = false;
  fx.server.config.shares.push_back(share);
  fx.session->user = "alice";  // anonymous sessions only reach guest-ok shares
  auto control = control::make_local_control_plane(fx.server.config);
  fx.server.control = control.get();

  Response ok = fx.call(handle_tree_connect, Command::TreeConnect, tree_connect_body("\\\\server\\DATA"));
  REQUIRE(ok.status == NtStatus::Success);
  CHECK(ok.body[2] == 1);  // disk share
  CHECK(fx.call(handle_tree_connect, Command::TreeConnect, tree_connect_body("\\\\server\\nope")).status ==
        NtStatus::BadNetworkName);
  CHECK(fx.call(handle_tree_connect, Command::TreeConnect, tree_connect_body("noslashes")).status ==
        NtStatus::BadNetworkName);
  CHECK(fx.call(handle_tree_connect, Command::TreeConnect, tree_connect_body("\\\\server\\data", 200)).status ==
        NtStatus::InvalidParameter);
  Response ipc = fx.call(handle_tree_connect, Command::TreeConnect, tree_connect_body("\\\\server\\IPC$"));
  REQUIRE(ipc.status == NtStatus::Success);
  CHECK(ipc.body[2] == 2);  // pipe share
}
