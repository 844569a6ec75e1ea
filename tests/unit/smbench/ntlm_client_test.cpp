// smbench's NTLMSSP/SPNEGO client encoders against MS-NLMP 4.2.4's worked
// example and against ringsmb's own server-side parsers and verifier.
#include <catch2/catch.hpp>

#include "auth/ntlmssp.hpp"
#include "auth/spnego.hpp"
#include "crypto/test_hex.hpp"

// The encoders live with the tool, not in a layer library; compiling them here
// keeps the unit test target's CMake untouched.
#include "../../../tools/smbench/ntlm_client.cpp"

using namespace ringsmb;
using namespace ringsmb::smbench;
using test::hex;
using test::unhex;

namespace {

// MS-NLMP 4.2.4.3 CHALLENGE_MESSAGE (flags 0xE28A8233, challenge 0123456789abcdef).
const char* kChallenge =
    "4e544c4d53535000020000000c000c003800000033828ae20123456789abcdef"
    "00000000000000002400240044000000060070170000000f5300650072007600"
    "6500720002000c0044006f006d00610069006e0001000c005300650072007600"
    "6500720000000000";

NtlmAuthResult example_auth(const NtlmChallenge& ch) {
  std::array<uint8_t, 8> cc;
  cc.fill(0xAA);
  std::array<uint8_t, 16> rsk;
  rsk.fill(0x55);
  return ntlm_authenticate_message(ch, {"User", "Password", "Domain", "COMPUTER"}, cc, rsk, 0);
}

}  // namespace

TEST_CASE("smbench NTLM client: MS-NLMP 4.2.4 NTProofStr and encrypted session key", "[smbench]") {
  Bytes chal = unhex(kChallenge);
  auto ch = parse_ntlm_challenge(chal);
  REQUIRE(ch);
  CHECK(ch->target_name == "Server");
  CHECK(hex(ch->server_challenge) == "0123456789abcdef");
  CHECK_FALSE(ch->timestamp);

  auto res = example_auth(*ch);
  auto parsed = auth::parse_ntlm_authenticate(res.message);
  REQUIRE(parsed);
  CHECK(parsed->user == "User");
  CHECK(parsed->domain == "Domain");
  CHECK(hex(ByteSpan(parsed->nt_response).first(16)) == "68cd0ab851e51c96aabc927bebef6a1c");
  CHECK(hex(parsed->encrypted_random_session_key) == "c5dad2544fc9799094ce1ce90bc9d03e");
  CHECK(hex(res.session_key) == "55555555555555555555555555555555");

  // ringsmbd's verifier accepts it and derives the same exported key.
  auth::NtlmVerifyInput in{{}, chal, res.message, ch->server_challenge};
  auto v = auth::ntlmv2_verify(in, *parsed, auth::nt_hash_from_password("Password"));
  REQUIRE(v);
  CHECK(hex(v->session_key) == hex(res.session_key));
  auto wrong = auth::ntlmv2_verify(in, *parsed, auth::nt_hash_from_password("password"));
  CHECK_FALSE(wrong);
}

TEST_CASE("smbench SPNEGO tokens parse with the server's decoders", "[smbench]") {
  for (size_t n : {40u, 200u, 700u}) {  // short, one-byte and two-byte DER lengths
    Bytes token(n, 0x4E);
    auto init = auth::parse_neg_token_init(spnego_init_token(token));
    REQUIRE(init);
    REQUIRE(init->mech_types.size() == 1);
    CHECK(init->mech_types[0] == auth::kOidNtlmssp);
    CHECK(init->mech_token == token);
    auto resp = auth::parse_neg_token_resp(spnego_resp_token(token));
    REQUIRE(resp);
    CHECK(resp->response_token == token);
  }
}
