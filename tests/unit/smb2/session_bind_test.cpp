// SESSION_SETUP naming a session of another connection (smb2/commands/session_bind.hpp):
// each refusal's status, and that it is signed with that session's key and
// algorithm exactly when the request's signature checked out with it.
#include "smb2/commands/session_bind.hpp"

#include <catch2/catch.hpp>

#include "crypto/smb2_keys.hpp"
#include "fixture.hpp"
#include "smb2/engine/processor.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;

namespace {

constexpr uint64_t kForeignSession = 0x77;
constexpr uint8_t kBinding = 0x1;

// One SESSION_SETUP (MS-SMB2 2.2.5) for `session_id`, a frame without its
// transport length.
Bytes session_setup(uint64_t session_id, uint8_t flags, uint64_t mid) {
  Bytes out;
  ByteWriter w(out);
  wire::Header h{};
  h.command = wire::Command::SessionSetup;
  h.credit_charge = 1;
  h.credits = 1;
  h.message_id = mid;
  h.session_id = session_id;
  wire::write_header(w, h);
  w.u16(25);
  w.u8(flags);
  w.u8(1);   // SecurityMode: signing enabled
  w.u32(0);  // Capabilities
  w.u32(0);  // Channel
  w.u16(uint16_t(wire::kHeaderSize + 24));
  w.u16(4);
  w.u64(0);  // PreviousSessionId
  w.bytes(Bytes{'N', 'T', 'L', 'M'});
  return out;
}

struct Answer {
  uint32_t status = 0;
  bool signed_flag = false;
  bool verifies = false;  // with the foreign session's key
};

struct BindFixture : Smb2Fixture {
  BindFixture() {
    home.conn = {1, 99};
    home.user = "alice";
    home.dialect = 0x0311;
    home.signing_algorithm = crypto::SigningAlgorithm::AesGmac;
    home.signing_key = Bytes(16, 0x5A);
    conn.signing_algorithm = crypto::SigningAlgorithm::AesGmac;
  }
  void publish() { server.sessions.add(kForeignSession, home); }

  Answer send(Bytes frame) {
    Bytes out;
    REQUIRE(process_frame(conn, server, frame, out) == FrameResult::Ok);
    REQUIRE(out.size() >= 4 + wire::kHeaderSize);
    ByteSpan reply(out.data() + 4, out.size() - 4);
    Answer a;
    a.status = load_le32(reply.data() + wire::hdr::Status);
    a.signed_flag = load_le32(reply.data() + wire::hdr::Flags) & wire::SMB2_FLAGS_SIGNED;
    a.verifies = crypto::verify_message(home.signing_algorithm, home.signing_key, reply);
    return a;
  }
  Bytes signed_setup(uint8_t flags) {
    Bytes f = session_setup(kForeignSession, flags, next_mid++);
    crypto::sign_message(home.signing_algorithm, home.signing_key, f);
    return f;
  }

  state::SessionHome home;
  uint64_t next_mid = 0;
};

}  // namespace

TEST_CASE("a binding attempt is refused, signed with the bound session's key", "[smb2][session_bind]") {
  BindFixture fx;
  fx.publish();
  Answer a = fx.send(fx.signed_setup(kBinding));
  CHECK(a.status == uint32_t(NtStatus::RequestNotAccepted));  // the connection was not offered multichannel
  CHECK(a.signed_flag);
  CHECK(a.verifies);
  CHECK(fx.conn.find_session(kForeignSession) == nullptr);  // nothing was created here
}

TEST_CASE("a binding offered multichannel but without the session's connection here is refused",
          "[smb2][session_bind]") {
  BindFixture fx;
  fx.conn.dialect = 0x0311;
  fx.conn.server_capabilities = kMultiChannelCapability;
  fx.publish();
  Answer a = fx.send(fx.signed_setup(kBinding));  // no transport: no connection to move to, none here
  CHECK(a.status == uint32_t(NtStatus::RequestNotAccepted));
  CHECK(a.verifies);
  CHECK(fx.conn.bindings.empty());
}

TEST_CASE("each binding case gets its own status", "[smb2][session_bind]") {
  BindFixture fx;
  SECTION("no such session anywhere") {
    CHECK(fx.send(fx.signed_setup(kBinding)).status == uint32_t(NtStatus::UserSessionDeleted));
  }
  SECTION("unsigned") {
    fx.publish();
    Answer a = fx.send(session_setup(kForeignSession, kBinding, 0));
    CHECK(a.status == uint32_t(NtStatus::InvalidParameter));
    CHECK_FALSE(a.signed_flag);
  }
  SECTION("a bad signature is refused and not signed back") {
    fx.publish();
    Bytes f = fx.signed_setup(kBinding);
    f.back() ^= 1;
    Answer a = fx.send(f);
    CHECK(a.status == uint32_t(NtStatus::AccessDenied));
    CHECK_FALSE(a.signed_flag);
  }
  SECTION("a session of another dialect") {
    fx.home.dialect = 0x0302;
    fx.publish();
    Answer a = fx.send(fx.signed_setup(kBinding));
    CHECK(a.status == uint32_t(NtStatus::InvalidParameter));
    CHECK(a.verifies);
  }
  SECTION("a 2.1 connection cannot bind at all, even to a 3.x session") {
    fx.home.dialect = 0x0300;
    fx.home.signing_algorithm = crypto::SigningAlgorithm::AesCmac;
    fx.conn.dialect = 0x0210;
    fx.conn.signing_algorithm = crypto::SigningAlgorithm::HmacSha256;
    fx.publish();
    Answer a = fx.send(fx.signed_setup(kBinding));
    CHECK(a.status == uint32_t(NtStatus::RequestNotAccepted));
    CHECK(a.verifies);  // in the session's algorithm, not the connection's HMAC
  }
  SECTION("a session signing with AES-GMAC, a connection with another algorithm") {
    fx.conn.signing_algorithm = crypto::SigningAlgorithm::AesCmac;
    fx.publish();
    Answer a = fx.send(fx.signed_setup(kBinding));
    CHECK(a.status == uint32_t(NtStatus::RequestOutOfSequence));
    CHECK(a.verifies);
  }
  SECTION("a connection signing with AES-GMAC, a session with another algorithm") {
    fx.home.signing_algorithm = crypto::SigningAlgorithm::AesCmac;
    fx.publish();
    CHECK(fx.send(fx.signed_setup(kBinding)).status == uint32_t(NtStatus::NotSupported));
  }
  SECTION("the algorithms are checked before the dialect") {
    fx.home.signing_algorithm = crypto::SigningAlgorithm::AesCmac;
    fx.home.dialect = 0x0300;
    fx.publish();
    CHECK(fx.send(fx.signed_setup(kBinding)).status == uint32_t(NtStatus::NotSupported));
  }
  SECTION("a session of another cipher") {
    fx.home.cipher = crypto::Aead::Aes128Gcm;
    fx.conn.cipher = crypto::Aead::Aes128Ccm;
    fx.publish();
    Answer a = fx.send(fx.signed_setup(kBinding));
    CHECK(a.status == uint32_t(NtStatus::InvalidParameter));
    CHECK(a.verifies);
  }
  SECTION("a guest or anonymous session") {
    fx.home.guest_or_anonymous = true;
    fx.publish();
    CHECK(fx.send(fx.signed_setup(kBinding)).status == uint32_t(NtStatus::NotSupported));
  }
}

TEST_CASE("a session of another connection without the binding flag is deleted here, signed",
          "[smb2][session_bind]") {
  BindFixture fx;
  fx.publish();
  Answer a = fx.send(fx.signed_setup(0));
  CHECK(a.status == uint32_t(NtStatus::UserSessionDeleted));
  CHECK(a.signed_flag);
  CHECK(a.verifies);
  // Unsigned: the same status, unsigned.
  Answer b = fx.send(session_setup(kForeignSession, 0, fx.next_mid++));
  CHECK(b.status == uint32_t(NtStatus::UserSessionDeleted));
  CHECK_FALSE(b.signed_flag);
}
