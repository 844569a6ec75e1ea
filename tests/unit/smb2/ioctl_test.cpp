#include <catch2/catch.hpp>

#include <vector>

#include "fixture.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;

namespace {

constexpr uint32_t kValidateNegotiate = 0x00140204, kResumeKey = 0x00140078, kSetSparse = 0x000900C4,
                   kGetReparse = 0x000900A8, kDfsReferrals = 0x00060194,
                   kPipeTransceive = 0x0011C017, kCreateOrGetObjectId = 0x000900C0;
constexpr FileId kNoFile{~0ull, ~0ull};

Bytes validate_input(const ConnState& c, std::vector<uint16_t> dialects) {
  Bytes b;
  ByteWriter w(b);
  w.u32(c.client_capabilities);
  w.bytes(c.client_guid.data(), 16);
  w.u16(c.client_security_mode);
  w.u16(uint16_t(dialects.size()));
  for (uint16_t d : dialects) w.u16(d);
  return b;
}

}  // namespace

TEST_CASE("ioctl FSCTL_VALIDATE_NEGOTIATE_INFO", "[smb2]") {
  Smb2Fixture f;
  f.conn.dialect = 0x0302;
  f.conn.client_capabilities = 0x7F;
  f.conn.client_security_mode = 1;
  for (size_t i = 0; i < 16; ++i) f.conn.client_guid[i] = uint8_t(i);
  f.conn.client_dialects = {0x0202, 0x0210, 0x0300, 0x0302};
  f.conn.server_capabilities = 0x44;
  f.conn.server_security_mode = 1;
  f.server.config.global.max_protocol = 0x0302;

  Response r = f.call(handle_ioctl, wire::Command::Ioctl,
                      ioctl_body(kValidateNegotiate, kNoFile, validate_input(f.conn, f.conn.client_dialects), 24));
  REQUIRE(r.status == NtStatus::Success);
  REQUIRE(r.u16(0) == 49);
  CHECK(r.u32(4) == kValidateNegotiate);
  CHECK(r.u32(32) == 112);  // OutputOffset
  CHECK(r.u32(36) == 24);   // OutputCount
  REQUIRE(r.body.size() == 48 + 24);
  CHECK(r.u32(48) == 0x44);
  CHECK(r.body[52] == 0xA0);
  CHECK(r.u16(68) == 1);
  CHECK(r.u16(70) == 0x0302);

  SECTION("mismatches fail with ACCESS_DENIED (the client then drops the connection)") {
    ConnState tampered;
    tampered.client_capabilities = 0x7E;
    tampered.client_guid = f.conn.client_guid;
    tampered.client_security_mode = 1;
    CHECK(f.call(handle_ioctl, wire::Command::Ioctl,
                 ioctl_body(kValidateNegotiate, kNoFile, validate_input(tampered, f.conn.client_dialects), 24))
              .status == NtStatus::AccessDenied);
    CHECK(f.call(handle_ioctl, wire::Command::Ioctl,
                 ioctl_body(kValidateNegotiate, kNoFile, validate_input(f.conn, {0x0202, 0x0210}), 24))
              .status == NtStatus::AccessDenied);
    Bytes shortin = validate_input(f.conn, f.conn.client_dialects);
    shortin.resize(26);  // DialectCount says 4, none present
    CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kValidateNegotiate, kNoFile, shortin, 24)).status ==
          NtStatus::AccessDenied);
    CHECK(f.call(handle_ioctl, wire::Command::Ioctl,
                 ioctl_body(kValidateNegotiate, kNoFile, validate_input(f.conn, f.conn.client_dialects), 23))
              .status == NtStatus::AccessDenied);
  }
  SECTION("not for 3.1.1") {
    f.conn.dialect = 0x0311;
    CHECK(f.call(handle_ioctl, wire::Command::Ioctl,
                 ioctl_body(kValidateNegotiate, kNoFile, validate_input(f.conn, f.conn.client_dialects), 24))
              .status == NtStatus::AccessDenied);
  }
}

TEST_CASE("ioctl file FSCTLs and errors", "[smb2]") {
  Smb2Fixture f;
  f.write_file("a");
  FileId id = f.open_file("a");

  Response key = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kResumeKey, id, {}, 1024));
  REQUIRE(key.status == NtStatus::Success);
  CHECK(key.u32(36) == 32);
  CHECK(key.u64(8) == id.persistent);
  CHECK(key.u64(48) == id.persistent);
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kResumeKey, id, {}, 31)).status ==
        NtStatus::InvalidParameter);

  Response sparse = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kSetSparse, id, Bytes{1}, 0));
  CHECK(sparse.status == NtStatus::Success);
  CHECK(sparse.u32(36) == 0);

  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kGetReparse, id, {}, 1024)).status ==
        NtStatus::NotAReparsePoint);
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kDfsReferrals, kNoFile, Bytes(4, 0), 1024)).status ==
        NtStatus::FsDriverRequired);
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kPipeTransceive, id, {}, 1024)).status ==
        NtStatus::NotSupported);
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(0x00090000, id, {}, 1024)).status ==
        NtStatus::InvalidDeviceRequest);
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kResumeKey, FileId{3, 3}, {}, 1024)).status ==
        NtStatus::FileClosed);
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kResumeKey, id, {}, 1024, 0)).status ==
        NtStatus::NotSupported);

  Bytes bad = ioctl_body(kSetSparse, id, Bytes{1}, 0);
  store_le32(bad.data() + 28, 500);  // InputCount beyond the message
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, bad).status == NtStatus::InvalidParameter);
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kResumeKey, id, {}, (1 << 20) + 1)).status ==
        NtStatus::InvalidParameter);
  Bytes truncated = ioctl_body(kResumeKey, id, {}, 1024);
  truncated.resize(40);
  CHECK(f.call(handle_ioctl, wire::Command::Ioctl, truncated).status == NtStatus::InvalidParameter);
}

TEST_CASE("change_notify and oplock_break answers", "[smb2]") {
  Smb2Fixture f;
  f.write_file("a");
  FileId dir = f.open_dir("");
  FileId file = f.open_file("a");
  auto notify = [&](FileId id, uint32_t filter) {
    Body b;
    b.w.u16(32);
    b.w.u16(0);
    b.w.u32(4096);
    b.w.u64(id.persistent);
    b.w.u64(id.volatile_id);
    b.w.u32(filter);
    b.w.u32(0);
    return f.call(handle_change_notify, wire::Command::ChangeNotify, b.b).status;
  };
  CHECK(notify(dir, 0x17) == NtStatus::NotSupported);
  CHECK(notify(file, 0x17) == NtStatus::InvalidParameter);
  CHECK(notify(dir, 0) == NtStatus::NotSupported);  // any filter is accepted (smb2.notify.mask tries all 32 bits)
  CHECK(notify(FileId{8, 8}, 0x17) == NtStatus::FileClosed);

  Body ack;
  ack.w.u16(24);
  ack.w.u8(0);
  ack.w.zeros(5);
  ack.w.u64(file.persistent);
  ack.w.u64(file.volatile_id);
  CHECK(f.call(handle_oplock_break, wire::Command::OplockBreak, ack.b).status == NtStatus::InvalidOplockProtocol);
  Body lease;
  lease.w.u16(36);
  lease.w.zeros(34);
  CHECK(f.call(handle_oplock_break, wire::Command::OplockBreak, lease.b).status == NtStatus::ObjectNameNotFound);
  lease.b.resize(20);
  CHECK(f.call(handle_oplock_break, wire::Command::OplockBreak, lease.b).status == NtStatus::InvalidParameter);
}

TEST_CASE("ioctl FSCTL_CREATE_OR_GET_OBJECT_ID", "[smb2]") {
  Smb2Fixture f;
  f.write_file("a.txt", "A");
  f.write_file("b.txt", "B");
  FileId a = f.open_file("a.txt", FILE_READ_ATTRIBUTES);
  FileId b = f.open_file("b.txt", FILE_READ_ATTRIBUTES);
  Response ra = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kCreateOrGetObjectId, a, {}, 64));
  REQUIRE(ra.status == NtStatus::Success);
  REQUIRE(ra.u32(36) == 64);  // OutputCount: FILE_OBJECTID_BUFFER
  REQUIRE(ra.body.size() == 48 + 64);
  Bytes id_a(ra.body.begin() + 48, ra.body.begin() + 64);
  Bytes birth_a(ra.body.begin() + 80, ra.body.begin() + 96);
  CHECK(id_a == birth_a);  // BirthObjectId is the ObjectId
  for (size_t i = 96; i < 112; ++i) CHECK(ra.body[i] == 0);  // DomainId empty

  SECTION("stable for the file, different for another file") {
    Response again = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kCreateOrGetObjectId, a, {}, 64));
    CHECK(Bytes(again.body.begin() + 48, again.body.begin() + 64) == id_a);
    Response rb = f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kCreateOrGetObjectId, b, {}, 64));
    REQUIRE(rb.status == NtStatus::Success);
    CHECK(Bytes(rb.body.begin() + 48, rb.body.begin() + 64) != id_a);
  }
  SECTION("an output buffer smaller than the structure is INVALID_PARAMETER") {
    CHECK(f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kCreateOrGetObjectId, a, {}, 63)).status ==
          NtStatus::InvalidParameter);
  }
}

TEST_CASE("ioctl FSCTL_LMR_REQUEST_RESILIENCY makes the open resilient", "[smb2][durable]") {
  constexpr uint32_t kRequestResiliency = 0x001401D4;
  Smb2Fixture f;
  FileId id = f.open_file("r.txt");
  auto request = [&](uint32_t timeout_ms, size_t size = 8) {
    Bytes in(size, 0);
    if (size >= 4) store_le32(in.data(), timeout_ms);
    return f.call(handle_ioctl, wire::Command::Ioctl, ioctl_body(kRequestResiliency, id, in, 0));
  };
  state::Open& open = *f.find(id);
  CHECK(request(1000, 4).status == NtStatus::InvalidParameter);  // shorter than NETWORK_RESILIENCY_REQUEST
  CHECK(request(f.server.durable_max_timeout_ms + 1).status == NtStatus::InvalidParameter);  // MaxResiliencyTimeout
  CHECK_FALSE(open.resilient);
  Response r = request(5000);
  REQUIRE(r.status == NtStatus::Success);
  CHECK(r.u32(4) == kRequestResiliency);
  CHECK(r.u32(36) == 0);  // no output
  CHECK(open.resilient);
  CHECK(open.durable_timeout_ms == 5000);
  CHECK(open.lock_sequences);  // LockSequence checks from now on (3.3.5.14)
  CHECK(request(0).status == NtStatus::Success);
  CHECK(open.durable_timeout_ms == f.server.durable_timeout_ms);  // 0: the server's default
  f.conn.dialect = 0x0202;
  CHECK(request(1000).status == NtStatus::InvalidDeviceRequest);
}
