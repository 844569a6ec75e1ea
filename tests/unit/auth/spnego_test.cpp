// SPNEGO DER encoding/decoding: round trips, Windows' own tokens, and
// malformed input (every truncation, bad and huge lengths).
#include <catch2/catch.hpp>

#include "auth/blog_vectors.hpp"
#include "auth/ntlmssp.hpp"
#include "auth/spnego.hpp"
#include "crypto/test_hex.hpp"

using namespace ringsmb;
using namespace ringsmb::auth;
using test::hex;
using test::lower_hex;
using test::unhex;

namespace {

// Every strict prefix of a whole-blob token is invalid (its outer length no
// longer fits); none may crash or read past the end.
template <typename Parse>
void check_all_truncations_fail(const Bytes& blob, Parse parse) {
  for (size_t n = 0; n < blob.size(); ++n) {
    Bytes prefix(blob.begin(), blob.begin() + n);  // own allocation so ASan sees overreads
    INFO("prefix length " << n);
    CHECK_FALSE(parse(prefix).has_value());
  }
  Bytes longer = blob;
  longer.push_back(0);
  CHECK_FALSE(parse(longer).has_value());  // trailing garbage
}

// Flips and overwrites every byte; the parser may accept or reject, but must not crash.
template <typename Parse>
void mutate_every_byte(const Bytes& blob, Parse parse) {
  for (size_t i = 0; i < blob.size(); ++i) {
    for (uint8_t v : {uint8_t(0x00), uint8_t(0x7F), uint8_t(0x80), uint8_t(0x81), uint8_t(0x84), uint8_t(0xFF)}) {
      Bytes m = blob;
      m[i] = v;
      (void)parse(m);
    }
  }
}

}  // namespace

TEST_CASE("build_negotiate_hint produces the NegTokenInit2 servers send", "[auth]") {
  Bytes hint = build_negotiate_hint();
  // [APPLICATION 0] { SPNEGO OID, [0] { SEQUENCE { [0] mechTypes { NTLMSSP },
  // [3] negHints { [0] hintName "not_defined_in_RFC4178@please_ignore" } } } }
  CHECK(hex(hint) ==
        lower_hex("6048 0606 2b0601050502 a03e 303c a00e 300c 060a 2b06010401823702020a"
                  "a32a 3028 a026 1b24") +
            hex(as_bytes("not_defined_in_RFC4178@please_ignore")));
  auto init = parse_neg_token_init(hint);
  REQUIRE(init);
  REQUIRE(init->mech_types.size() == 1);
  CHECK(init->mech_types[0] == kOidNtlmssp);
  CHECK(init->mech_token.empty());
}

TEST_CASE("build_negotiate_hint lists the Kerberos mechanisms first when asked", "[auth]") {
  auto init = parse_neg_token_init(build_negotiate_hint(true));
  REQUIRE(init);
  REQUIRE(init->mech_types.size() == 3);
  CHECK(init->mech_types[0] == kOidMsKrb5);
  CHECK(init->mech_types[1] == kOidKrb5);
  CHECK(init->mech_types[2] == kOidNtlmssp);
  CHECK(is_krb5_oid(init->mech_types[0]));
  CHECK(is_krb5_oid(init->mech_types[1]));
  CHECK_FALSE(is_krb5_oid(init->mech_types[2]));
}

TEST_CASE("Parses Windows' NegTokenInit with an NTLMSSP NEGOTIATE", "[auth]") {
  Bytes blob = unhex(test::blog::kNegTokenInit);
  auto init = parse_neg_token_init(blob);
  REQUIRE(init);
  REQUIRE(init->mech_types.size() == 1);
  CHECK(init->mech_types[0] == kOidNtlmssp);
  REQUIRE(init->mech_token.size() == 40);
  CHECK(is_raw_ntlmssp(init->mech_token));
  auto neg = parse_ntlm_negotiate(init->mech_token);
  REQUIRE(neg);
  CHECK(neg->flags == 0xE2088297);
  check_all_truncations_fail(blob, [](ByteSpan b) { return parse_neg_token_init(b); });
  mutate_every_byte(blob, [](ByteSpan b) { return parse_neg_token_init(b); });
}

TEST_CASE("Parses a NegTokenInit with several mechs, reqFlags and a mechListMIC", "[auth]") {
  // As a domain-joined client sends it: MS-KRB5, KRB5, NEGOEX, NTLMSSP, then
  // reqFlags [1], the mechToken [2] and a mechListMIC [3]. Bare (no GSS-API wrapper).
  Bytes ntlm_negotiate = unhex("4E544C4D5353500001000000978208E2000000000000000000000000000000000A00637D0000000F");
  Bytes blob = unhex(
      "a0 6a 30 68"
      "a0 30 30 2e"
      "06 09 2a864882f712010202"
      "06 09 2a864886f712010202"
      "06 0a 2b06010401823702021e"
      "06 0a 2b06010401823702020a"
      "a1 04 03 02 0000"
      "a2 2a 04 28");
  blob.insert(blob.end(), ntlm_negotiate.begin(), ntlm_negotiate.end());
  Bytes mic = unhex("a3 02 04 00");
  blob.insert(blob.end(), mic.begin(), mic.end());
  REQUIRE(blob.size() == 0x6c);
  auto init = parse_neg_token_init(blob);
  REQUIRE(init);
  REQUIRE(init->mech_types.size() == 4);
  CHECK(hex(init->mech_types[0]) == "2a864882f712010202");
  CHECK(init->mech_types[3] == kOidNtlmssp);
  CHECK(init->mech_token == ntlm_negotiate);
  check_all_truncations_fail(blob, [](ByteSpan b) { return parse_neg_token_init(b); });
  mutate_every_byte(blob, [](ByteSpan b) { return parse_neg_token_init(b); });
}

TEST_CASE("NegTokenResp: Windows' tokens parse and ours match them byte for byte", "[auth]") {
  Bytes challenge_blob = unhex(test::blog::kNegTokenRespChallenge);
  auto resp = parse_neg_token_resp(challenge_blob);
  REQUIRE(resp);
  CHECK(resp->neg_state == uint32_t(NegState::AcceptIncomplete));
  CHECK(resp->supported_mech == kOidNtlmssp);
  CHECK(resp->response_token.size() == 0x94);
  CHECK(resp->mech_list_mic.empty());
  CHECK(build_neg_token_resp(NegState::AcceptIncomplete, kOidNtlmssp, resp->response_token) == challenge_blob);

  // The client's second leg: AUTHENTICATE plus mechListMIC.
  Bytes req2 = unhex(test::blog::kSessionSetupRequest2);
  Bytes auth_blob(req2.begin() + test::blog::kSessionSetupRequest2BlobOffset, req2.end());
  auto auth = parse_neg_token_resp(auth_blob);
  REQUIRE(auth);
  CHECK(auth->neg_state == uint32_t(NegState::AcceptIncomplete));
  CHECK(auth->supported_mech.empty());
  CHECK(auth->response_token.size() == 0x1A6);
  CHECK(hex(auth->mech_list_mic) == lower_hex("0100000063775A9A5FD97F0600000000"));

  // The server's final accept-completed with its mechListMIC.
  Bytes final_blob = unhex("A11B3019A0030A0100A3120410010000003B453CDC3524164200000000");
  auto fin = parse_neg_token_resp(final_blob);
  REQUIRE(fin);
  CHECK(fin->neg_state == 0u);
  CHECK(fin->response_token.empty());
  CHECK(build_neg_token_resp(NegState::AcceptCompleted, {}, {}, fin->mech_list_mic) == final_blob);

  for (const Bytes* b : {&challenge_blob, &auth_blob, &final_blob}) {
    check_all_truncations_fail(*b, [](ByteSpan x) { return parse_neg_token_resp(x); });
    mutate_every_byte(*b, [](ByteSpan x) { return parse_neg_token_resp(x); });
  }
}

TEST_CASE("NegTokenResp round trips, including long-form lengths", "[auth]") {
  Bytes big(70000, 0xAB);  // forces a 3-byte length
  for (size_t tok : {size_t(0), size_t(1), size_t(127), size_t(128), size_t(255), size_t(256), big.size()}) {
    ByteSpan token = ByteSpan(big).first(tok);
    Bytes b = build_neg_token_resp(NegState::RequestMic, kOidNtlmssp, token, unhex("0102"));
    auto r = parse_neg_token_resp(b);
    REQUIRE(r);
    CHECK(r->neg_state == 3u);
    CHECK(r->supported_mech == kOidNtlmssp);
    CHECK(r->response_token == Bytes(token.begin(), token.end()));
    CHECK(hex(r->mech_list_mic) == "0102");
  }
  Bytes reject = build_neg_token_resp(NegState::Reject, {}, {});
  CHECK(hex(reject) == "a1073005a0030a0102");
}

TEST_CASE("SPNEGO decoders reject bad and huge lengths", "[auth]") {
  auto init = [](const char* h) { return parse_neg_token_init(unhex(h)).has_value(); };
  auto resp = [](const char* h) { return parse_neg_token_resp(unhex(h)).has_value(); };
  CHECK_FALSE(init(""));
  CHECK_FALSE(resp(""));
  CHECK_FALSE(init("60"));
  CHECK_FALSE(init("6080"));                    // indefinite length
  CHECK_FALSE(init("6085ffffffffff"));          // 5 length octets
  CHECK_FALSE(init("6084ffffffff0606"));        // length far beyond the data
  CHECK_FALSE(init("60847fffffff"));
  CHECK_FALSE(resp("a184ffffffff3000"));
  CHECK_FALSE(resp("a1023001"));                // inner length past the parent
  CHECK_FALSE(resp("a103300100"));              // inner shorter than the parent
  CHECK_FALSE(resp("a1073005a0030a0100ff"));    // trailing byte
  CHECK_FALSE(resp("a1073005a1030a0100"));      // negState value with the wrong tag
  CHECK_FALSE(resp("a1073005a003020100"));      // INTEGER, not ENUMERATED
  CHECK_FALSE(resp("a1063004a0020a00"));        // empty enumerated
  CHECK_FALSE(resp("a10c300aa10306012aa0030a0100"));  // fields out of order
  CHECK_FALSE(resp("a10c300aa0030a0100a0030a0100"));  // repeated field
  CHECK_FALSE(resp("a1073005a5030a0100"));      // unknown field [5]
  CHECK_FALSE(resp("1f8101"));                  // high-tag-number form
  CHECK(resp("a1073005a0030a0101"));            // sanity: valid minimal token
  CHECK(resp("a10c300aa0030a0100a10306012a"));  // negState + supportedMech
  CHECK(resp("a1023000"));                      // every field is optional
  // GSS-API wrapper with a different mechanism OID.
  CHECK_FALSE(init("6013 0606 2b0601050501 a0093007a0053003 06012a"));
  CHECK(init("6013 0606 2b0601050502 a0093007a0053003 06012a"));
  CHECK_FALSE(init("6014 0606 2b0601050502 a0093007a0053003 06012a 00"));  // junk inside the wrapper
  // mechTypes must be present and contain only OIDs.
  CHECK_FALSE(init("a0023000"));
  CHECK_FALSE(init("a0083006a0043002" "0400"));
  CHECK_FALSE(init("a0083006a0043002" "0600"));  // empty OID
  CHECK(init("a0093007a0053003" "06012a"));
}

TEST_CASE("Deeply nested input is rejected without recursion", "[auth]") {
  // 20000 levels of [0] { ... }: a recursive decoder would overflow its stack.
  Bytes nested;
  for (int i = 0; i < 20000; ++i) {
    nested.insert(nested.begin(), {0xA0, 0x84, 0, 0, 0, 0});
  }
  // Patch the lengths so that every level is consistent.
  size_t inner = 0;
  for (int i = 19999; i >= 0; --i) {
    size_t at = size_t(i) * 6 + 2;
    nested[at + 0] = uint8_t(inner >> 24);
    nested[at + 1] = uint8_t(inner >> 16);
    nested[at + 2] = uint8_t(inner >> 8);
    nested[at + 3] = uint8_t(inner);
    inner += 6;
  }
  CHECK_FALSE(parse_neg_token_init(nested));
  nested[0] = 0xA1;
  CHECK_FALSE(parse_neg_token_resp(nested));
}

TEST_CASE("is_raw_ntlmssp", "[auth]") {
  CHECK(is_raw_ntlmssp(unhex("4E544C4D5353500001000000")));
  CHECK(is_raw_ntlmssp(unhex("4E544C4D53535000")));
  CHECK_FALSE(is_raw_ntlmssp(unhex("4E544C4D535350")));
  CHECK_FALSE(is_raw_ntlmssp(unhex("604806062B06")));
}
