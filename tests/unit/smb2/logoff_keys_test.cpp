// The keys of a session that ended do not stay behind in the thread's
// table of keyed contexts (crypto/keyed_contexts.hpp): the reply to an
// encrypted LOGOFF is sealed after the session has gone, with copies of
// its keys, and those contexts go once it is sealed. Each case runs on a
// thread of its own, whose table starts empty.
#include <catch2/catch.hpp>
#include <thread>

#include "crypto/keyed_contexts.hpp"
#include "crypto/smb2_keys.hpp"
#include "fixture.hpp"
#include "smb2/engine/processor.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;
using namespace ringsmb::smb2::test;

namespace {

// One request of COMMAND with BODY for session 1, message id MID.
Bytes request(wire::Command command, const Bytes& body, uint64_t mid) {
  Bytes out;
  ByteWriter w(out);
  wire::Header h{};
  h.command = command;
  h.credit_charge = 1;
  h.credits = 10;
  h.message_id = mid;
  h.session_id = 1;
  h.tree_id = 1;
  wire::write_header(w, h);
  w.bytes(body);
  return out;
}

// The status of the one sealed reply in OUT (with its 4-byte length).
uint32_t opened_status(const Bytes& out, ByteSpan key) {
  REQUIRE(out.size() > 4);
  auto plain = crypto::decrypt_message(crypto::Aead::Aes128Gcm, key, ByteSpan(out).subspan(4));
  REQUIRE(plain);
  return load_le32(plain->data() + wire::hdr::Status);
}

}  // namespace

TEST_CASE("an encrypted LOGOFF leaves none of its session's keys in the thread's table", "[smb2][crypto]") {
  Smb2Fixture fx;
  fx.conn.cipher = crypto::Aead::Aes128Gcm;
  fx.conn.signing_algorithm = crypto::SigningAlgorithm::AesGmac;
  fx.session->keys.signing_key = Bytes(16, 0x31);
  fx.session->keys.encryption_key = Bytes(16, 0x32);
  fx.session->keys.decryption_key = Bytes(16, 0x33);
  const Bytes server_out = fx.session->keys.encryption_key, client_out = fx.session->keys.decryption_key;
  // Catch's assertions stay on this thread: the other one only runs the frames.
  size_t after_echo = 0, after_logoff = 0;
  FrameResult echo_result = FrameResult::Drop, logoff_result = FrameResult::Drop;
  Bytes echo_out, logoff_out;
  std::thread([&] {
    Bytes echo = crypto::encrypt_message(*fx.conn.cipher, client_out, 1, request(wire::Command::Echo, {4, 0, 0, 0}, 0));
    echo_result = process_frame(fx.conn, fx.server, echo, echo_out);
    after_echo = crypto::detail::live_keyed_contexts();
    Bytes logoff =
        crypto::encrypt_message(*fx.conn.cipher, client_out, 1, request(wire::Command::Logoff, {4, 0, 0, 0}, 1));
    logoff_result = process_frame(fx.conn, fx.server, logoff, logoff_out);
    after_logoff = crypto::detail::live_keyed_contexts();
  }).join();
  REQUIRE(echo_result == FrameResult::Ok);
  CHECK(opened_status(echo_out, server_out) == uint32_t(NtStatus::Success));
  CHECK(after_echo >= 2);  // opening the requests, sealing the replies
  REQUIRE(logoff_result == FrameResult::Ok);
  CHECK(opened_status(logoff_out, server_out) == uint32_t(NtStatus::Success));  // sealed with the ended session's key
  CHECK(fx.conn.tables->sessions.empty());
  CHECK(after_logoff == 0);
}
