// NTLMSSP: MS-NLMP 4.2.4 NTLMv2 worked example, a real Windows logon from
// Microsoft's SMB 3.1.1 example (MIC, KEY_EXCH, preauth hash, signing key),
// CHALLENGE construction, and AUTHENTICATE parsing of malformed input.
#include <catch2/catch.hpp>

#include "auth/blog_vectors.hpp"
#include "auth/ntlmssp.hpp"
#include "auth/spnego.hpp"
#include "auth/ntlm_utf16.hpp"
#include "crypto/primitives.hpp"
#include "crypto/smb2_keys.hpp"
#include "crypto/test_hex.hpp"

using namespace ringsmb;
using namespace ringsmb::auth;
using test::hex;
using test::lower_hex;
using test::unhex;

namespace {

Bytes u16(std::string_view s) { return *detail::utf8_to_utf16le(s); }

// MS-NLMP 4.2.1 / 4.2.4 values.
const char* kNlmpChallengeMsg =  // 4.2.4.3 CHALLENGE_MESSAGE
    "4e544c4d53535000020000000c000c003800000033828ae20123456789abcdef"
    "00000000000000002400240044000000060070170000000f5300650072007600"
    "6500720002000c0044006f006d00610069006e0001000c005300650072007600"
    "6500720000000000";
const char* kNlmpAvPairs =  // MsvAvNbDomainName "Domain", MsvAvNbComputerName "Server", MsvAvEOL
    "02000c0044006f006d00610069006e0001000c0053006500720076006500720000000000";

// NTLMv2_CLIENT_CHALLENGE ("temp", MS-NLMP 3.3.2) with time 0 and client challenge aa*8.
Bytes nlmp_temp(ByteSpan av_pairs) {
  Bytes t = unhex("0101 000000000000 0000000000000000 aaaaaaaaaaaaaaaa 00000000");
  t.insert(t.end(), av_pairs.begin(), av_pairs.end());
  t.insert(t.end(), 4, 0);
  return t;
}

struct AuthFields {
  uint32_t flags = 0;
  Bytes lm, nt, domain, user, workstation, session_key;
  bool with_mic = true;  // leave room for Version + MIC (88-byte header)
};

// Builds an AUTHENTICATE_MESSAGE (MS-NLMP 2.2.1.3) the way a client does.
Bytes build_authenticate(const AuthFields& f) {
  size_t header = f.with_mic ? 88 : 64;
  Bytes m = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0};
  ByteWriter w(m);
  w.u32(3);
  size_t offset = header;
  for (const Bytes* b : {&f.lm, &f.nt, &f.domain, &f.user, &f.workstation, &f.session_key}) {
    w.u16(uint16_t(b->size()));
    w.u16(uint16_t(b->size()));
    w.u32(uint32_t(offset));
    offset += b->size();
  }
  w.u32(f.flags);
  if (f.with_mic) w.zeros(24);  // Version + MIC
  for (const Bytes* b : {&f.lm, &f.nt, &f.domain, &f.user, &f.workstation, &f.session_key}) w.bytes(*b);
  return m;
}

// An NTLMv2 client: NT response for (user, domain, password) against a CHALLENGE.
Bytes client_nt_response(std::string_view user, std::string_view domain, std::string_view password,
                         ByteSpan server_challenge, ByteSpan temp) {
  auto nt = nt_hash_from_password(password);
  auto key = crypto::hmac_md5(nt, u16(detail::to_upper_utf8(user) + std::string(domain)));
  Bytes msg(server_challenge.begin(), server_challenge.end());
  msg.insert(msg.end(), temp.begin(), temp.end());
  auto proof = crypto::hmac_md5(key, msg);
  Bytes out(proof.begin(), proof.end());
  out.insert(out.end(), temp.begin(), temp.end());
  return out;
}

// MS-NLMP 4.2.4's AUTHENTICATE, assembled from the section's values.
Bytes nlmp_authenticate() {
  AuthFields f;
  f.flags = 0xE28A8233;  // 4.2.4's negotiate flags
  f.lm = unhex("86c35097ac9cec102554764a57cccc19aaaaaaaaaaaaaaaa");
  f.nt = unhex("68cd0ab851e51c96aabc927bebef6a1c");
  Bytes temp = nlmp_temp(unhex(kNlmpAvPairs));
  f.nt.insert(f.nt.end(), temp.begin(), temp.end());
  f.domain = u16("Domain");
  f.user = u16("User");
  f.workstation = u16("COMPUTER");
  f.session_key = unhex("c5dad2544fc9799094ce1ce90bc9d03e");
  return build_authenticate(f);
}

const std::array<uint8_t, 8> kNlmpServerChallenge = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};

Result<NtlmVerifyResult> verify(ByteSpan neg, ByteSpan chal, ByteSpan auth_msg, const std::array<uint8_t, 8>& sc,
                                const std::array<uint8_t, 16>& nt_hash) {
  auto a = parse_ntlm_authenticate(auth_msg);
  if (!a) return Unexpected(NtStatus::InvalidParameter);
  NtlmVerifyInput in{neg, chal, auth_msg, sc};
  return ntlmv2_verify(in, *a, nt_hash);
}

std::array<uint8_t, 16> hash16(const char* h) {
  std::array<uint8_t, 16> a{};
  Bytes b = unhex(h);
  std::copy(b.begin(), b.end(), a.begin());
  return a;
}

// The blog's NEGOTIATE, CHALLENGE and AUTHENTICATE NTLMSSP messages.
struct BlogLogon {
  Bytes negotiate, challenge, authenticate, request2;
  BlogLogon() {
    negotiate = parse_neg_token_init(unhex(test::blog::kNegTokenInit))->mech_token;
    challenge = parse_neg_token_resp(unhex(test::blog::kNegTokenRespChallenge))->response_token;
    request2 = unhex(test::blog::kSessionSetupRequest2);
    authenticate = parse_neg_token_resp(ByteSpan(request2).subspan(test::blog::kSessionSetupRequest2BlobOffset))
                       ->response_token;
  }
};

std::array<uint8_t, 8> challenge_of(ByteSpan chal) {
  std::array<uint8_t, 8> sc{};
  std::copy_n(chal.begin() + 24, 8, sc.begin());
  return sc;
}

}  // namespace

TEST_CASE("MS-NLMP 4.2.4: NT hash, NTOWFv2, NTProofStr, SessionBaseKey", "[auth]") {
  auto nt = nt_hash_from_password("Password");
  CHECK(hex(nt) == "a4f49c406510bdcab6824ee7c30fd852");  // 4.2.2.1.2 NTOWFv1
  auto ntowfv2 = crypto::hmac_md5(nt, u16("USERDomain"));
  CHECK(hex(ntowfv2) == "0c868a403bfd7a93a3001ef22ef02e3f");  // 4.2.4.1.1

  Bytes temp = nlmp_temp(unhex(kNlmpAvPairs));
  Bytes nt_resp = client_nt_response("User", "Domain", "Password", kNlmpServerChallenge, temp);
  CHECK(hex(ByteSpan(nt_resp).first(16)) == "68cd0ab851e51c96aabc927bebef6a1c");  // 4.2.4.2.2
  auto base = crypto::hmac_md5(ntowfv2, ByteSpan(nt_resp).first(16));
  CHECK(hex(base) == "8de40ccadbc14a82f15cb0ad0de95ca3");  // 4.2.4.1.2

  // The CHALLENGE of 4.2.4.3 carries the same server challenge and AV pairs.
  Bytes chal = unhex(kNlmpChallengeMsg);
  CHECK(challenge_of(chal) == kNlmpServerChallenge);
  CHECK(hex(ByteSpan(chal).subspan(0x44, 0x24)) == lower_hex(kNlmpAvPairs));
}

TEST_CASE("MS-NLMP 4.2.4: ntlmv2_verify accepts the example and derives the exported key", "[auth]") {
  Bytes auth_msg = nlmp_authenticate();
  Bytes chal = unhex(kNlmpChallengeMsg);
  auto nt = nt_hash_from_password("Password");
  auto parsed = parse_ntlm_authenticate(auth_msg);
  REQUIRE(parsed);
  CHECK(parsed->user == "User");
  CHECK(parsed->domain == "Domain");
  CHECK(parsed->workstation == "COMPUTER");
  CHECK(parsed->flags == 0xE28A8233);

  auto r = verify({}, chal, auth_msg, kNlmpServerChallenge, nt);
  REQUIRE(r);
  // KEY_EXCH: RC4(SessionBaseKey, EncryptedRandomSessionKey) = 4.2.1's RandomSessionKey.
  CHECK(hex(r->session_key) == "55555555555555555555555555555555");

  // A flipped byte anywhere in the NT response fails: NTProofStr covers
  // ServerChallenge || temp, and the proof itself is compared. A flip in
  // an AV pair's length breaks the list itself: INVALID_PARAMETER then.
  size_t nt_off = load_le32(&auth_msg[24]), nt_len = load_le16(&auth_msg[20]);
  for (size_t i = nt_off; i < nt_off + nt_len; ++i) {
    Bytes bad = auth_msg;
    bad[i] ^= 0x01;
    INFO(i);
    auto rr = verify({}, chal, bad, kNlmpServerChallenge, nt);
    REQUIRE_FALSE(rr);
    CHECK((rr.error() == NtStatus::LogonFailure || rr.error() == NtStatus::InvalidParameter));
  }
  // Other server challenge, other password, other user: all LogonFailure.
  auto sc = kNlmpServerChallenge;
  sc[7] ^= 1;
  CHECK_FALSE(verify({}, chal, auth_msg, sc, nt));
  CHECK_FALSE(verify({}, chal, auth_msg, kNlmpServerChallenge, nt_hash_from_password("password")));
  // Only the user is upper-cased in NTOWFv2: a different case of "User" still verifies.
  AuthFields f;
  f.flags = 0xE28A8233 & ~uint32_t(NTLMSSP_NEGOTIATE_KEY_EXCH);
  f.nt = client_nt_response("user", "Domain", "Password", kNlmpServerChallenge, nlmp_temp(unhex(kNlmpAvPairs)));
  f.domain = u16("Domain");
  f.user = u16("uSeR");
  auto lower = verify({}, chal, build_authenticate(f), kNlmpServerChallenge, nt);
  REQUIRE(lower);
  CHECK(hex(lower->session_key) == "8de40ccadbc14a82f15cb0ad0de95ca3");  // no KEY_EXCH: the base key
}

TEST_CASE("Windows SMB 3.1.1 logon from Microsoft's example verifies end to end", "[auth]") {
  BlogLogon b;
  REQUIRE(b.negotiate.size() == 40);
  REQUIRE(b.challenge.size() == 0x94);
  REQUIRE(b.authenticate.size() == 0x1A6);

  auto a = parse_ntlm_authenticate(b.authenticate);
  REQUIRE(a);
  CHECK(a->user == "administrator");
  CHECK(a->domain == "SUT311");
  CHECK(a->workstation == "DRIVER311");
  CHECK(a->flags == 0xE2888215);
  CHECK(a->mic_offset == std::optional<size_t>(72));
  CHECK(a->nt_response.size() == 0xEE);
  CHECK(a->lm_response == Bytes(24, 0));  // LMv2 suppressed: the server sent MsvAvTimestamp

  auto nt = nt_hash_from_password("Password01!");
  CHECK(hex(nt) == lower_hex(test::blog::kNtHash));
  auto sc = challenge_of(b.challenge);
  auto r = verify(b.negotiate, b.challenge, b.authenticate, sc, nt);
  REQUIRE(r);
  CHECK(hex(r->session_key) == lower_hex(test::blog::kSessionKey));

  // From there on: the preauth hash over SESSION_SETUP request 2, the
  // signing key, and Windows' signature on the final response.
  auto preauth = crypto::sha512(unhex(test::blog::kPreauthBeforeRequest2), b.request2);
  CHECK(hex(preauth) == lower_hex(test::blog::kPreauthAfterRequest2));
  auto keys = crypto::derive_session_keys(0x0311, r->session_key, preauth, crypto::Aead::Aes128Gcm);
  CHECK(hex(keys.signing_key) == lower_hex(test::blog::kSigningKey));
  CHECK(crypto::verify_message(crypto::SigningAlgorithm::AesCmac, keys.signing_key,
                               unhex(test::blog::kSessionSetupResponse2)));
}

TEST_CASE("The MIC protects all three messages", "[auth]") {
  BlogLogon b;
  auto nt = hash16(test::blog::kNtHash);
  auto sc = challenge_of(b.challenge);
  // Bytes the NTProofStr does not cover but the MIC does: the MIC itself,
  // the workstation name, the NEGOTIATE and CHALLENGE messages.
  for (size_t i = 72; i < 88; ++i) {
    Bytes bad = b.authenticate;
    bad[i] ^= 0x20;
    CHECK_FALSE(verify(b.negotiate, b.challenge, bad, sc, nt));
  }
  Bytes ws = b.authenticate;
  ws[0x7E] ^= 0x01;  // Workstation "DRIVER311" -> "ERIVER311"
  CHECK_FALSE(verify(b.negotiate, b.challenge, ws, sc, nt));
  Bytes neg = b.negotiate;
  neg[12] ^= 0x01;
  CHECK_FALSE(verify(neg, b.challenge, b.authenticate, sc, nt));
  Bytes chal = b.challenge;
  chal[0x3A] ^= 0x01;  // inside TargetName
  CHECK_FALSE(verify(b.negotiate, chal, b.authenticate, sc, nt));
  // A MIC promised in MsvAvFlags but with no room for it in the header fails.
  auto a = parse_ntlm_authenticate(b.authenticate);
  REQUIRE(a);
  a->mic_offset.reset();
  NtlmVerifyInput in{b.negotiate, b.challenge, b.authenticate, sc};
  CHECK_FALSE(ntlmv2_verify(in, *a, nt));
}

TEST_CASE("build_ntlm_challenge answers the client's flags", "[auth]") {
  ChallengeParams p{{1, 2, 3, 4, 5, 6, 7, 8}, "WORKGROUP", "RINGSMB", "", "ringsmb.example", 0x01D0AECBADF5A1A1ull};
  Bytes c = build_ntlm_challenge(0xE2088297, p);  // Windows' NEGOTIATE flags from the example
  ByteReader r(c);
  CHECK(is_raw_ntlmssp(r.bytes(8)));
  CHECK(r.u32() == 2);
  uint16_t tn_len = r.u16();
  r.u16();
  uint32_t tn_off = r.u32();
  uint32_t flags = r.u32();
  CHECK(hex(r.bytes(8)) == "0102030405060708");
  r.skip(8);
  uint16_t ti_len = r.u16();
  r.u16();
  uint32_t ti_off = r.u32();
  REQUIRE(r.ok());
  CHECK(flags == (NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_REQUEST_TARGET | NTLMSSP_NEGOTIATE_SIGN |
                  NTLMSSP_NEGOTIATE_NTLM | NTLMSSP_NEGOTIATE_ALWAYS_SIGN | NTLMSSP_TARGET_TYPE_SERVER |
                  NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY | NTLMSSP_NEGOTIATE_TARGET_INFO |
                  NTLMSSP_NEGOTIATE_VERSION | NTLMSSP_NEGOTIATE_128 | NTLMSSP_NEGOTIATE_KEY_EXCH |
                  NTLMSSP_NEGOTIATE_56));
  CHECK((flags & NTLMSSP_NEGOTIATE_LM_KEY) == 0);  // asked for, never granted
  CHECK(tn_off == 56);
  CHECK(ByteSpan(c).subspan(tn_off, tn_len).size() == 14);
  CHECK(*detail::utf16le_to_utf8(ByteSpan(c).subspan(tn_off, tn_len)) == "RINGSMB");
  REQUIRE(ti_off + ti_len == c.size());

  // AV pairs: NbDomainName, NbComputerName, DnsDomainName (falls back to
  // the NetBIOS domain), DnsComputerName, Timestamp, EOL.
  ByteReader av(ByteSpan(c).subspan(ti_off, ti_len));
  std::vector<std::pair<uint16_t, Bytes>> pairs;
  while (av.remaining()) {
    uint16_t id = av.u16();
    ByteSpan v = av.bytes(av.u16());
    REQUIRE(av.ok());
    pairs.emplace_back(id, Bytes(v.begin(), v.end()));
  }
  REQUIRE(pairs.size() == 6);
  CHECK(pairs[0] == std::pair<uint16_t, Bytes>{2, u16("WORKGROUP")});
  CHECK(pairs[1] == std::pair<uint16_t, Bytes>{1, u16("RINGSMB")});
  CHECK(pairs[2] == std::pair<uint16_t, Bytes>{4, u16("WORKGROUP")});
  CHECK(pairs[3] == std::pair<uint16_t, Bytes>{3, u16("ringsmb.example")});
  CHECK(pairs[4].first == 7);
  CHECK(load_le64(pairs[4].second.data()) == 0x01D0AECBADF5A1A1ull);
  CHECK(pairs[5] == std::pair<uint16_t, Bytes>{0, {}});

  // An OEM-only client gets OEM and an 8-bit TargetName; no SIGN/KEY_EXCH unless asked.
  Bytes oem = build_ntlm_challenge(NTLMSSP_NEGOTIATE_OEM | NTLMSSP_NEGOTIATE_NTLM, p);
  uint32_t oflags = load_le32(&oem[20]);
  CHECK((oflags & NTLMSSP_NEGOTIATE_OEM) != 0);
  CHECK((oflags & NTLMSSP_NEGOTIATE_UNICODE) == 0);
  CHECK((oflags & (NTLMSSP_NEGOTIATE_SIGN | NTLMSSP_NEGOTIATE_KEY_EXCH)) == 0);
  CHECK(load_le16(&oem[12]) == 7);
  CHECK(std::string(oem.begin() + 56, oem.begin() + 63) == "RINGSMB");
}

TEST_CASE("A client answering our CHALLENGE with a MIC verifies", "[auth]") {
  ChallengeParams p{{9, 8, 7, 6, 5, 4, 3, 2}, "WORKGROUP", "RINGSMB", "", "", 0x01D0AECBADF5A1A1ull};
  Bytes neg = unhex("4E544C4D5353500001000000978208E2000000000000000000000000000000000A00637D0000000F");
  uint32_t client_flags = parse_ntlm_negotiate(neg)->flags;
  Bytes chal = build_ntlm_challenge(client_flags, p);
  uint32_t flags = load_le32(&chal[20]);
  ByteSpan target_info = ByteSpan(chal).subspan(load_le32(&chal[44]), load_le16(&chal[40]));

  // The client copies the server's AV pairs, adds MsvAvFlags = MIC present before EOL.
  Bytes av(target_info.begin(), target_info.end() - 4);
  Bytes flag_pair = unhex("0600 0400 02000000 0000 0000");
  av.insert(av.end(), flag_pair.begin(), flag_pair.end());
  Bytes temp = unhex("0101 000000000000 a1a1f5adcbaed001 1122334455667788 00000000");
  temp.insert(temp.end(), av.begin(), av.end());
  temp.insert(temp.end(), 4, 0);

  AuthFields f;
  f.flags = flags;
  f.lm = Bytes(24, 0);
  f.nt = client_nt_response("alice", "WORKGROUP", "s3cret", p.server_challenge, temp);
  f.domain = u16("WORKGROUP");
  f.user = u16("alice");
  f.workstation = u16("LAPTOP");
  // KEY_EXCH: the client picks a random exported key, sends it RC4'd under SessionBaseKey.
  auto nt = nt_hash_from_password("s3cret");
  auto key = crypto::hmac_md5(nt, u16("ALICEWORKGROUP"));
  auto base = crypto::hmac_md5(key, ByteSpan(f.nt).first(16));
  Bytes exported = unhex("000102030405060708090a0b0c0d0e0f");
  f.session_key = exported;
  crypto::rc4(base, f.session_key);
  Bytes auth_msg = build_authenticate(f);
  Bytes all = neg;
  all.insert(all.end(), chal.begin(), chal.end());
  all.insert(all.end(), auth_msg.begin(), auth_msg.end());
  auto mic = crypto::hmac_md5(exported, all);
  std::copy(mic.begin(), mic.end(), auth_msg.begin() + 72);

  auto r = verify(neg, chal, auth_msg, p.server_challenge, nt);
  REQUIRE(r);
  CHECK(Bytes(r->session_key.begin(), r->session_key.end()) == exported);
  auth_msg[75] ^= 1;
  CHECK_FALSE(verify(neg, chal, auth_msg, p.server_challenge, nt));
}

TEST_CASE("The empty domain is tried when the sent domain does not verify", "[auth]") {
  Bytes temp = nlmp_temp(unhex(kNlmpAvPairs));
  AuthFields f;
  f.flags = NTLMSSP_NEGOTIATE_UNICODE;
  f.nt = client_nt_response("User", "", "Password", kNlmpServerChallenge, temp);
  f.domain = u16("SOMEDOMAIN");
  f.user = u16("User");
  CHECK(verify({}, {}, build_authenticate(f), kNlmpServerChallenge, nt_hash_from_password("Password")));
}

TEST_CASE("LM/NTLMv1 and anonymous responses are refused", "[auth]") {
  auto nt = nt_hash_from_password("Password");
  AuthFields v1;
  v1.flags = NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_NEGOTIATE_NTLM;
  v1.lm = Bytes(24, 0x11);
  v1.nt = Bytes(24, 0x22);  // NTLMv1 response length
  v1.domain = u16("Domain");
  v1.user = u16("User");
  auto r = verify({}, {}, build_authenticate(v1), kNlmpServerChallenge, nt);
  REQUIRE_FALSE(r);
  CHECK(r.error() == NtStatus::LogonFailure);

  // Anonymous: empty user, empty NT response, 1-byte LM response. Parses
  // (the caller decides about guests), never verifies.
  AuthFields anon;
  anon.flags = NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_ANONYMOUS;
  anon.lm = Bytes(1, 0);
  Bytes msg = build_authenticate(anon);
  auto a = parse_ntlm_authenticate(msg);
  REQUIRE(a);
  CHECK(a->user.empty());
  CHECK(a->nt_response.empty());
  CHECK(a->lm_response.size() == 1);
  auto ar = verify({}, {}, msg, kNlmpServerChallenge, nt);
  REQUIRE_FALSE(ar);
  CHECK(ar.error() == NtStatus::LogonFailure);
  // Fully empty anonymous message without Version/MIC room.
  anon.lm.clear();
  anon.with_mic = false;
  CHECK(parse_ntlm_authenticate(build_authenticate(anon)));
}

TEST_CASE("AUTHENTICATE strings: Unicode and OEM", "[auth]") {
  AuthFields f;
  f.flags = 0;  // OEM
  f.domain = Bytes{'D', 'O', 'M'};
  f.user = Bytes{'J', 0xF6, 'r', 'g'};  // Latin-1 o-umlaut
  auto a = parse_ntlm_authenticate(build_authenticate(f));
  REQUIRE(a);
  CHECK(a->domain == "DOM");
  CHECK(a->user == "J\xC3\xB6rg");

  f.flags = NTLMSSP_NEGOTIATE_UNICODE;
  f.user = u16("J\xC3\xB6rg\xF0\x9F\x98\x80");  // with a surrogate pair
  f.domain = u16("DOM");
  a = parse_ntlm_authenticate(build_authenticate(f));
  REQUIRE(a);
  CHECK(a->user == "J\xC3\xB6rg\xF0\x9F\x98\x80");
  f.user = Bytes{'a', 0, 'b'};  // odd UTF-16 length
  CHECK_FALSE(parse_ntlm_authenticate(build_authenticate(f)));
  f.user = unhex("00d8 4100");  // unpaired high surrogate
  CHECK_FALSE(parse_ntlm_authenticate(build_authenticate(f)));
}

TEST_CASE("AUTHENTICATE parsing: every truncation is safe, bad offsets are rejected", "[auth]") {
  BlogLogon b;
  const Bytes& msg = b.authenticate;
  for (size_t n = 0; n <= msg.size(); ++n) {
    Bytes prefix(msg.begin(), msg.begin() + n);  // own buffer so ASan sees overreads
    auto a = parse_ntlm_authenticate(prefix);
    if (a) {
      // Whatever parsed must be backed by bytes inside the prefix.
      CHECK(a->nt_response.size() + a->lm_response.size() + a->encrypted_random_session_key.size() <= n);
    }
  }
  // The last field (EncryptedRandomSessionKey) ends exactly at the end: any
  // truncation cuts it, so no strict prefix parses.
  CHECK_FALSE(parse_ntlm_authenticate(ByteSpan(msg).first(msg.size() - 1)));

  // Offsets and lengths outside the message, or into the fixed header.
  for (size_t field = 12; field <= 52; field += 8) {
    INFO("field at " << field);
    Bytes bad = msg;
    store_le32(&bad[field + 4], uint32_t(bad.size()));  // offset == size, non-zero length
    CHECK_FALSE(parse_ntlm_authenticate(bad));
    bad = msg;
    store_le32(&bad[field + 4], 0xFFFFFFFF);
    CHECK_FALSE(parse_ntlm_authenticate(bad));
    bad = msg;
    store_le32(&bad[field + 4], 8);  // points into the header
    CHECK_FALSE(parse_ntlm_authenticate(bad));
    bad = msg;
    store_le16(&bad[field], 0xFFFF);  // length past the end
    CHECK_FALSE(parse_ntlm_authenticate(bad));
  }
  Bytes wrong_type = msg;
  wrong_type[8] = 2;
  CHECK_FALSE(parse_ntlm_authenticate(wrong_type));
  Bytes wrong_sig = msg;
  wrong_sig[0] = 'X';
  CHECK_FALSE(parse_ntlm_authenticate(wrong_sig));

  // NEGOTIATE: every truncation below the 16-byte minimum fails.
  for (size_t n = 0; n < 16; ++n) CHECK_FALSE(parse_ntlm_negotiate(ByteSpan(b.negotiate).first(n)));
  CHECK(parse_ntlm_negotiate(ByteSpan(b.negotiate).first(16)));
}

TEST_CASE("Malformed NTLMv2 client challenges fail verification, never crash; bad AV pairs are INVALID_PARAMETER", "[auth]") {
  BlogLogon b;
  auto nt = hash16(test::blog::kNtHash);
  auto sc = challenge_of(b.challenge);
  auto a = parse_ntlm_authenticate(b.authenticate);
  REQUIRE(a);
  NtlmVerifyInput in{b.negotiate, b.challenge, b.authenticate, sc};
  for (size_t n = 0; n < a->nt_response.size(); ++n) {
    NtlmAuthenticate cut = *a;
    cut.nt_response.resize(n);
    CHECK_FALSE(ntlmv2_verify(in, cut, nt));
  }
  NtlmAuthenticate no_key = *a;
  no_key.encrypted_random_session_key.clear();  // KEY_EXCH without the key
  CHECK_FALSE(ntlmv2_verify(in, no_key, nt));

  // AV pairs that do not parse are INVALID_PARAMETER, not LOGON_FAILURE.
  REQUIRE(ntlmv2_verify(in, *a, nt));
  // The first AV pair (after NTProofStr and the 28 fixed bytes) claims more
  // bytes than the response holds: no EOL can follow.
  NtlmAuthenticate overrun = *a;
  store_le16(overrun.nt_response.data() + 16 + 28 + 2, 0xFFFF);
  auto r = ntlmv2_verify(in, overrun, nt);
  REQUIRE_FALSE(r);
  CHECK(r.error() == NtStatus::InvalidParameter);
  // The same with a wrong password: still the structure that answers.
  auto other = hash16("00000000000000000000000000000000");
  auto r2 = ntlmv2_verify(in, overrun, other);
  REQUIRE_FALSE(r2);
  CHECK(r2.error() == NtStatus::InvalidParameter);
  // A well-formed response with the wrong password stays LOGON_FAILURE.
  auto r3 = ntlmv2_verify(in, *a, other);
  REQUIRE_FALSE(r3);
  CHECK(r3.error() == NtStatus::LogonFailure);
}
