// SMB2/3 key derivation, signing and transform encryption against the
// examples Microsoft published on its Open Specifications blog:
//  - "SMB 2 and SMB 3 security in Windows 10: the anatomy of signing and
//    cryptographic keys" (3.0 and 3.1.1 key derivation, a signed 3.1.1
//    SESSION_SETUP response),
//  - "Encryption in SMB 3.0: a protocol perspective" (AES-128-CCM frames),
//  - "SMB 3.1.1 Encryption in Windows 10" (AES-128-GCM frames).
// The blog lists keys from the client's side: its EncryptionKey is our
// decryption_key (client-to-server) and its DecryptionKey our encryption_key.
#include <catch2/catch.hpp>

#include "crypto/plain_message.hpp"
#include "crypto/smb2_keys.hpp"
#include "crypto/test_hex.hpp"

using namespace ringsmb;
using namespace ringsmb::crypto;
using test::hex;
using test::lower_hex;
using test::unhex;

namespace {

const char* kPreauth311 =
    "0DD13628CC3ED218EF9DF9772D436D0887AB9814BFAE63A80AA845F36909DB79"
    "28622DDDAD522D9751640A459762C5A9D6BB084CBB3CE6BDADEF5D5BCE3C6C01";

// The final (STATUS_SUCCESS) SESSION_SETUP response of the 3.1.1 example,
// signed with AES-CMAC under the SigningKey derived below.
const char* kSignedSessionSetupResponse =
    "FE534D4240000100000000000100800009000000000000000300000000000000FFFE000000000000"
    "1900000000100000EBE146DA120BA25FC3376A49DFE31BC10900000048001D00A11B3019A0030A01"
    "00A3120410010000003B453CDC3524164200000000";

Bytes make_message(uint32_t flags, uint16_t command, uint64_t message_id, size_t body) {
  Bytes m(64 + body, 0);
  store_le32(&m[0], 0x424D53FE);
  store_le16(&m[4], 64);
  store_le16(&m[12], command);
  store_le32(&m[16], flags);
  store_le64(&m[24], message_id);
  store_le64(&m[40], 0x1122334455667788ull);
  for (size_t i = 0; i < body; ++i) m[64 + i] = uint8_t(i * 7);
  return m;
}

}  // namespace

TEST_CASE("SMB 3.0 key derivation matches Microsoft's example", "[crypto]") {
  SessionKeys k = derive_session_keys(0x0300, unhex("7CD451825D0450D235424E44BA6E78CC"), {}, std::nullopt);
  CHECK(hex(k.session_key) == lower_hex("7CD451825D0450D235424E44BA6E78CC"));
  CHECK(hex(k.signing_key) == lower_hex("0B7E9C5CAC36C0F6EA9AB275298CEDCE"));
  CHECK(hex(k.decryption_key) == lower_hex("FAD27796665B313EBB578F388632B4F7"));
  CHECK(hex(k.encryption_key) == lower_hex("B0F0427F7CEB416D1D9DCC0CD4F99447"));
  CHECK(hex(k.application_key) == lower_hex("BB23A4575AA26C721AF525AF15A87B4F"));

  // Second channel of the same example: only the signing key is per channel.
  SessionKeys k2 = derive_session_keys(0x0300, unhex("4E01A2B313BCF660CC250BEF021AEDE6"), {}, std::nullopt);
  CHECK(hex(k2.signing_key) == lower_hex("BA1A17DBBFEC349BCA105563D598952F"));

  // 3.0.2 uses the same labels.
  SessionKeys k302 = derive_session_keys(0x0302, unhex("7CD451825D0450D235424E44BA6E78CC"), {}, std::nullopt);
  CHECK(k302.signing_key == k.signing_key);
}

TEST_CASE("SMB 3.0 encryption example keys", "[crypto]") {
  // "Encryption in SMB 3.0: a protocol perspective".
  SessionKeys k = derive_session_keys(0x0300, unhex("B4546771B515F766A86735532DD6C4F0"), {}, Aead::Aes128Ccm);
  CHECK(hex(k.signing_key) == lower_hex("F773CD23C18FD1E08EE510CADA7CF852"));
  CHECK(hex(k.decryption_key) == lower_hex("261B72350558F2E9DCF613070383EDBF"));
  CHECK(hex(k.encryption_key) == lower_hex("8FE2B57EC34D2DB5B1A9727F526BBDB5"));
  CHECK(hex(k.application_key) == lower_hex("77432F808CE99156B5BC6A3676D730D1"));
}

TEST_CASE("SMB 3.1.1 key derivation matches Microsoft's example", "[crypto]") {
  SessionKeys k =
      derive_session_keys(0x0311, unhex("270E1BA896585EEB7AF3472D3B4C75A7"), unhex(kPreauth311), Aead::Aes128Gcm);
  CHECK(hex(k.signing_key) == lower_hex("73FE7A9A77BEF0BDE49C650D8CCB5F76"));
  CHECK(hex(k.decryption_key) == lower_hex("629BCBC54422A0F572B97F45989B6073"));
  CHECK(hex(k.encryption_key) == lower_hex("E2AF0DCEFAC68DA71A0DFBD0D1350D74"));
  CHECK(hex(k.application_key) == lower_hex("6D7AD7954E9EC61E907B4D473DC178FF"));
}

TEST_CASE("SMB 3.1.1 signed SESSION_SETUP response verifies (AES-CMAC)", "[crypto]") {
  Bytes key = unhex("73FE7A9A77BEF0BDE49C650D8CCB5F76");
  Bytes msg = unhex(kSignedSessionSetupResponse);
  CHECK(verify_message(SigningAlgorithm::AesCmac, key, msg));

  // Re-signing from a zeroed signature reproduces Windows' bytes.
  Bytes resigned = msg;
  std::fill(resigned.begin() + 48, resigned.begin() + 64, 0);
  sign_message(SigningAlgorithm::AesCmac, key, resigned);
  CHECK(resigned == msg);

  Bytes tampered = msg;
  tampered[80] ^= 0x01;
  CHECK_FALSE(verify_message(SigningAlgorithm::AesCmac, key, tampered));
  CHECK_FALSE(verify_message(SigningAlgorithm::HmacSha256, key, msg));
}

TEST_CASE("AES-256 ciphers get 256-bit keys from the full session key", "[crypto]") {
  Bytes full = unhex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
  Bytes preauth(64, 0x42);
  for (Aead c : {Aead::Aes256Ccm, Aead::Aes256Gcm}) {
    SessionKeys k = derive_session_keys(0x0311, full, preauth, c);
    REQUIRE(k.encryption_key.size() == 32);
    REQUIRE(k.decryption_key.size() == 32);
    CHECK(k.signing_key.size() == 16);
    CHECK(k.session_key == Bytes(full.begin(), full.begin() + 16));
    Bytes label(std::begin("SMBS2CCipherKey"), std::end("SMBS2CCipherKey"));
    CHECK(k.encryption_key == kdf_counter_hmac_sha256(full, label, preauth, 256));
  }
  // AES-128 ciphers on the same session: 16-byte keys from the truncated key.
  SessionKeys k128 = derive_session_keys(0x0311, full, preauth, Aead::Aes128Gcm);
  CHECK(k128.encryption_key.size() == 16);
  Bytes label(std::begin("SMBS2CCipherKey"), std::end("SMBS2CCipherKey"));
  CHECK(k128.encryption_key == kdf_counter_hmac_sha256(ByteSpan(full).first(16), label, preauth, 128));
}

TEST_CASE("SMB 2.x signs with the session key", "[crypto]") {
  Bytes sk = unhex("00112233445566778899aabbccddeeff");
  SessionKeys k = derive_session_keys(0x0210, sk, {}, std::nullopt);
  CHECK(k.signing_key == sk);
  CHECK(k.encryption_key.empty());
  // A shorter GSS key is right-padded with zeros to 16 bytes.
  SessionKeys shortk = derive_session_keys(0x0202, unhex("0102"), {}, std::nullopt);
  CHECK(hex(shortk.session_key) == "01020000000000000000000000000000");
}

TEST_CASE("Signing round trips for all three algorithms", "[crypto]") {
  Bytes key = unhex("0f0e0d0c0b0a09080706050403020100");
  for (auto alg : {SigningAlgorithm::HmacSha256, SigningAlgorithm::AesCmac, SigningAlgorithm::AesGmac}) {
    INFO(int(alg));
    Bytes m = make_message(0x1, 0x0008, 77, 100);
    sign_message(alg, key, m);
    CHECK((load_le32(&m[16]) & 0x8) != 0);  // SMB2_FLAGS_SIGNED set
    CHECK(verify_message(alg, key, m));
    for (size_t pos : {size_t(0), size_t(20), size_t(50), size_t(63), size_t(64), m.size() - 1}) {
      Bytes bad = m;
      bad[pos] ^= 0x04;
      CHECK_FALSE(verify_message(alg, key, bad));
    }
    Bytes other_key = key;
    other_key[0] ^= 1;
    CHECK_FALSE(verify_message(alg, other_key, m));
    CHECK_FALSE(verify_message(alg, key, ByteSpan(m).first(63)));  // shorter than a header
  }
}

TEST_CASE("AES-GMAC nonce separates direction and CANCEL", "[crypto]") {
  Bytes key = unhex("0f0e0d0c0b0a09080706050403020100");
  auto sig = [&](uint32_t flags, uint16_t command) {
    Bytes m = make_message(flags, command, 5, 24);
    sign_message(SigningAlgorithm::AesGmac, key, m);
    return Bytes(m.begin() + 48, m.begin() + 64);
  };
  // Same MessageId and bytes except the bits the nonce covers: the
  // request/response and CANCEL variants must not share a nonce.
  Bytes req = sig(0x0, 0x0008), resp = sig(0x1, 0x0008), cancel = sig(0x0, 0x000C);
  CHECK(req != resp);
  CHECK(req != cancel);
  // The MessageId is in the nonce: a replay under another MessageId fails.
  Bytes m = make_message(0x1, 0x0008, 5, 24);
  sign_message(SigningAlgorithm::AesGmac, key, m);
  store_le64(&m[24], 6);
  CHECK_FALSE(verify_message(SigningAlgorithm::AesGmac, key, m));
}

TEST_CASE("Decrypts Microsoft's SMB 3.0 AES-128-CCM frames", "[crypto]") {
  // Client WRITE request, decrypted by the server with its decryption key.
  Bytes frame = unhex(
      "FD534D4281A286535415445DAE393921E44FA42E66E69A111892584FB5ED524A"
      "744DA3EE87000000000001001100001400E4080025C8FEE16605A437832D1CD5"
      "2DA9F4645333482A175FE5384563F45FCDAFAEF38BC62BA4D5C62897996625A4"
      "4C29BE5658DE2E6117585779E7B59FFD971278D08580D7FA899E410E910EABF5"
      "AA1DB43050B33B49182637759AC15D84BFCDF5B6B238993C0F4CF4D6012023F6"
      "C627297075D84B7803912D0A9639634453595EF3E33FFE4E7AC2AB");
  auto hdr = parse_transform_header(frame);
  REQUIRE(hdr);
  CHECK(hdr->session_id == 0x8e40014000011ull);
  CHECK(hdr->original_message_size == 0x87);
  CHECK(hdr->flags == 1);
  auto plain = decrypt_message(Aead::Aes128Ccm, unhex("261B72350558F2E9DCF613070383EDBF"), frame);
  REQUIRE(plain);
  CHECK(hex(*plain) == lower_hex(
                           "FE534D4240000100000000000900400008000000000000000400000000000000"
                           "FFFE0000010000001100001400E4080000000000000000000000000000000000"
                           "3100700017000000000000000000000015010000390000020100000039020000"
                           "00000000000000007000000000000000536D623320656E6372797074696F6E20"
                           "74657374696E67"));

  // The server's WRITE response, under the server's encryption key.
  Bytes resp = unhex(
      "FD534D42A6015530A18F6D9AFFE22AFAE8E66484860000000000000011000014"
      "00E4080050000000000001001100001400E40800DBF46435C5F14169293CE079"
      "E344479BF670227E49873F458672C3098DAC467DD5809F369D67409166515787"
      "1483E01F7BECD02064EAC3E235F913668BBC2F097980D4B378F1993EFF6E60D1"
      "77309E5B");
  auto rplain = decrypt_message(Aead::Aes128Ccm, unhex("8FE2B57EC34D2DB5B1A9727F526BBDB5"), resp);
  REQUIRE(rplain);
  CHECK(hex(*rplain) == lower_hex(
                            "FE534D4240000100000000000900210009000000000000000400000000000000"
                            "FFFE0000010000001100001400E4080000000000000000000000000000000000"
                            "11000000170000000000000000000000"));
}

TEST_CASE("Decrypts Microsoft's SMB 3.1.1 AES-128-GCM frames", "[crypto]") {
  // "SMB 3.1.1 Encryption in Windows 10": keys from the session key and preauth hash.
  SessionKeys k = derive_session_keys(0x0311, unhex("419FDDF34C1E001909D362AE7FB6AF79"),
                                      unhex("B23F3CBFD69487D9832B79B1594A367CDD950909B774C3A4C412B4FCEA9EDDDB"
                                            "A7DB256BA2EA30E977F11F9B113247578E0E915C6D2A513B8F2FCA5707DC8770"),
                                      Aead::Aes128Gcm);
  CHECK(hex(k.decryption_key) == lower_hex("A2F5E80E5D59103034F32E52F698E5EC"));
  CHECK(hex(k.encryption_key) == lower_hex("748C50868C90F302962A5C35F5F9A8BF"));

  Bytes req = unhex(
      "FD534D42BD73D97D2BC9001BCAFAC0FDFF5FEEBCC7D6822D269CAF48904C664C0000000087000000"
      "0000010025000000001000006ECDD2A7AFC7B47763057A041B8FD4DAFFE990B70C9E09D36C084E02"
      "D14EF247F8BDE38ACF6256F8B1D3B56F77FBDEB312FEA5E92CBCC1ED8FB2EBBFAA75E49A4A394BB4"
      "4576545567C24D4C014D47C9FBDFDAFD2C4F9B72F8D256452620A299F48E29E53D6B61D1C13A19E9"
      "1AF013F00D17E3ABC2FC3D36C8C1B6B93973253852DBD442E46EE8");
  auto plain = decrypt_message(Aead::Aes128Gcm, k.decryption_key, req);
  REQUIRE(plain);
  CHECK(hex(*plain) == lower_hex(
                           "FE534D4240000100000000000900010008000000000000000500000000000000FFFE000001000000"
                           "25000000001000000000000000000000000000000000000031007000170000000000000000000000"
                           "0600000004000000010000000400000000000000000000007000000000000000536D623320656E63"
                           "72797074696F6E2074657374696E67"));

  Bytes resp = unhex(
      "FD534D42ACBE1CB7ED343ADF1725EF144D90D4B0E06831DD2E8EB7B4000000000000000050000000"
      "00000100250000000010000026BBBF949983A6C1C796559D0F2C510CB651D1F7B6AC8DED32A2A0B8"
      "F2D793A815C6F6B848D69767A215841A42D400AE6DDB5F0B44173A014973321FDD7950DA6179159B"
      "82E03C9E18A050FF0EA1C967");
  auto rplain = decrypt_message(Aead::Aes128Gcm, k.encryption_key, resp);
  REQUIRE(rplain);
  CHECK(hex(*rplain) == lower_hex(
                            "FE534D4240000100000000000900010001000000000000000500000000000000FFFE000001000000"
                            "25000000001000000000000000000000000000000000000011000000170000000000000000000000"));

  // Every single-byte change to the AAD part of the header or the
  // ciphertext is caught (the Signature is the tag itself).
  for (size_t pos = 4; pos < resp.size(); ++pos) {
    Bytes bad = resp;
    bad[pos] ^= 0x10;
    INFO(pos);
    CHECK_FALSE(decrypt_message(Aead::Aes128Gcm, k.encryption_key, bad));
  }
}

TEST_CASE("Encrypt/decrypt round trips for all four ciphers", "[crypto]") {
  for (Aead alg : {Aead::Aes128Ccm, Aead::Aes128Gcm, Aead::Aes256Ccm, Aead::Aes256Gcm}) {
    INFO(int(alg));
    Bytes key(aead_key_size(alg));
    random_bytes(key);
    Bytes msg = make_message(0x1, 0x0008, 9, 300);
    Bytes frame = encrypt_message(alg, key, 0xabcdef0123ull, msg);
    REQUIRE(frame.size() == kTransformHeaderSize + msg.size());
    auto h = parse_transform_header(frame);
    REQUIRE(h);
    CHECK(h->session_id == 0xabcdef0123ull);
    CHECK(h->original_message_size == msg.size());
    CHECK(h->flags == 1);
    // The nonce bytes beyond the cipher's nonce size stay zero.
    for (size_t i = aead_nonce_size(alg); i < 16; ++i) CHECK(h->nonce[i] == 0);

    auto back = decrypt_message(alg, key, frame);
    REQUIRE(back);
    CHECK(*back == msg);
    auto unzeroed = decrypt_message_unzeroed(alg, key, frame);  // the server's receive path
    REQUIRE(unzeroed);
    CHECK(Bytes(unzeroed->span().begin(), unzeroed->span().end()) == msg);

    // Two encryptions of one message use different nonces.
    Bytes frame2 = encrypt_message(alg, key, 0xabcdef0123ull, msg);
    CHECK(Bytes(frame.begin() + 20, frame.begin() + 36) != Bytes(frame2.begin() + 20, frame2.begin() + 36));

    Bytes bad_ct = frame;
    bad_ct[100] ^= 1;
    CHECK_FALSE(decrypt_message(alg, key, bad_ct));
    Bytes bad_sid = frame;
    bad_sid[44] ^= 1;  // SessionId is authenticated
    CHECK_FALSE(decrypt_message(alg, key, bad_sid));
    Bytes bad_tag = frame;
    bad_tag[4] ^= 1;
    CHECK_FALSE(decrypt_message(alg, key, bad_tag));
    Bytes bad_flags = frame;
    bad_flags[42] = 2;
    CHECK_FALSE(decrypt_message(alg, key, bad_flags));
    Bytes truncated(frame.begin(), frame.end() - 1);
    CHECK_FALSE(decrypt_message(alg, key, truncated));
    Bytes extended = frame;
    extended.push_back(0);
    CHECK_FALSE(decrypt_message(alg, key, extended));
    Bytes wrong_key = key;
    wrong_key[0] ^= 1;
    CHECK_FALSE(decrypt_message(alg, wrong_key, frame));
    for (const Bytes* bad : {&bad_ct, &bad_sid, &bad_tag, &bad_flags, &truncated, &extended})
      CHECK_FALSE(decrypt_message_unzeroed(alg, key, *bad));
    CHECK_FALSE(decrypt_message_unzeroed(alg, wrong_key, frame));
  }
}

TEST_CASE("decrypt_in_place decrypts where the frame lies, and reseal_in_place gives the frame back", "[crypto]") {
  // Microsoft's SMB 3.1.1 AES-128-GCM request (the test above).
  SessionKeys k = derive_session_keys(0x0311, unhex("419FDDF34C1E001909D362AE7FB6AF79"),
                                      unhex("B23F3CBFD69487D9832B79B1594A367CDD950909B774C3A4C412B4FCEA9EDDDB"
                                            "A7DB256BA2EA30E977F11F9B113247578E0E915C6D2A513B8F2FCA5707DC8770"),
                                      Aead::Aes128Gcm);
  const Bytes req = unhex(
      "FD534D42BD73D97D2BC9001BCAFAC0FDFF5FEEBCC7D6822D269CAF48904C664C0000000087000000"
      "0000010025000000001000006ECDD2A7AFC7B47763057A041B8FD4DAFFE990B70C9E09D36C084E02"
      "D14EF247F8BDE38ACF6256F8B1D3B56F77FBDEB312FEA5E92CBCC1ED8FB2EBBFAA75E49A4A394BB4"
      "4576545567C24D4C014D47C9FBDFDAFD2C4F9B72F8D256452620A299F48E29E53D6B61D1C13A19E9"
      "1AF013F00D17E3ABC2FC3D36C8C1B6B93973253852DBD442E46EE8");
  Bytes frame = req;
  auto plain = decrypt_in_place(Aead::Aes128Gcm, k.decryption_key, frame);
  REQUIRE(plain);
  CHECK(plain->data() == frame.data() + kTransformHeaderSize);
  CHECK(hex(Bytes(plain->begin(), plain->end())) ==
        lower_hex("FE534D4240000100000000000900010008000000000000000500000000000000FFFE000001000000"
                  "25000000001000000000000000000000000000000000000031007000170000000000000000000000"
                  "0600000004000000010000000400000000000000000000007000000000000000536D623320656E63"
                  "72797074696F6E2074657374696E67"));
  REQUIRE(reseal_in_place(Aead::Aes128Gcm, k.decryption_key, frame));
  CHECK(frame == req);

  for (Aead alg : {Aead::Aes128Ccm, Aead::Aes128Gcm, Aead::Aes256Ccm, Aead::Aes256Gcm}) {
    INFO(int(alg));
    Bytes key(aead_key_size(alg), 0x3A);
    Bytes msg = make_message(0x1, 0x0009, 12, 70000);
    const Bytes sealed = encrypt_message(alg, key, 5, msg);
    Bytes f = sealed;
    auto in_place = decrypt_in_place(alg, key, f);
    REQUIRE(in_place);
    CHECK(Bytes(in_place->begin(), in_place->end()) == msg);
    REQUIRE(reseal_in_place(alg, key, f));
    CHECK(f == sealed);
    Bytes bad_tag = sealed;
    bad_tag[4] ^= 1;
    CHECK_FALSE(decrypt_in_place(alg, key, bad_tag));
    Bytes truncated(sealed.begin(), sealed.end() - 1);
    CHECK_FALSE(decrypt_in_place(alg, key, truncated));
    Bytes wrong_key = key;
    wrong_key[0] ^= 1;
    Bytes f2 = sealed;
    CHECK_FALSE(decrypt_in_place(alg, wrong_key, f2));
  }
}

TEST_CASE("encrypt_in_place seals a message behind room for the header", "[crypto]") {
  for (Aead alg : {Aead::Aes128Ccm, Aead::Aes128Gcm, Aead::Aes256Gcm}) {
    INFO(int(alg));
    Bytes key(aead_key_size(alg), 0x5C);
    Bytes msg = make_message(0x1, 0x0008, 9, 1000);
    // The room holds whatever the buffer had (0xEE here): all of it must be
    // overwritten, the Reserved field and the nonce's unused tail included.
    Bytes frame(kTransformHeaderSize + msg.size(), 0xEE);
    std::copy(msg.begin(), msg.end(), frame.begin() + kTransformHeaderSize);
    REQUIRE(encrypt_in_place(alg, key, 77, frame));
    auto h = parse_transform_header(frame);
    REQUIRE(h);
    CHECK(h->session_id == 77);
    CHECK(h->original_message_size == msg.size());
    CHECK(h->flags == 1);
    CHECK(load_le16(&frame[40]) == 0);
    for (size_t i = aead_nonce_size(alg); i < 16; ++i) CHECK(h->nonce[i] == 0);
    CHECK(Bytes(frame.begin() + kTransformHeaderSize, frame.end()) != msg);
    auto back = decrypt_message(alg, key, frame);
    REQUIRE(back);
    CHECK(*back == msg);
  }
  Bytes too_short(kTransformHeaderSize - 1, 0);
  CHECK_FALSE(encrypt_in_place(Aead::Aes128Gcm, Bytes(16, 1), 1, too_short));
}

TEST_CASE("Transform header parsing rejects short and foreign frames", "[crypto]") {
  Bytes frame = encrypt_message(Aead::Aes128Gcm, Bytes(16, 1), 1, Bytes(70, 3));
  for (size_t n = 0; n < kTransformHeaderSize; ++n) {
    CHECK_FALSE(parse_transform_header(ByteSpan(frame).first(n)));
    CHECK_FALSE(decrypt_message(Aead::Aes128Gcm, Bytes(16, 1), ByteSpan(frame).first(n)));
  }
  CHECK(parse_transform_header(ByteSpan(frame).first(kTransformHeaderSize)));
  Bytes smb2 = frame;
  smb2[0] = 0xFE;
  CHECK_FALSE(parse_transform_header(smb2));
  // A header with no ciphertext at all is not a message.
  Bytes empty_body(frame.begin(), frame.begin() + kTransformHeaderSize);
  store_le32(&empty_body[36], 0);
  CHECK_FALSE(decrypt_message(Aead::Aes128Gcm, Bytes(16, 1), empty_body));
}

TEST_CASE("a message signed with its last bytes in another buffer carries the whole message's signature",
          "[crypto]") {
  auto alg = GENERATE(SigningAlgorithm::HmacSha256, SigningAlgorithm::AesCmac, SigningAlgorithm::AesGmac);
  Bytes key(16, 0x5a);
  Bytes whole(64 + 16 + 1000);
  for (size_t i = 0; i < whole.size(); ++i) whole[i] = uint8_t(i * 7 + 3);
  whole[0] = 0xFE;
  store_le32(whole.data() + 16, 1);  // SERVER_TO_REDIR
  size_t split = GENERATE(64, 80, 81);
  Bytes head(whole.begin(), whole.begin() + ptrdiff_t(split));
  Bytes tail(whole.begin() + ptrdiff_t(split), whole.end());
  sign_message(alg, key, head, tail);
  sign_message(alg, key, whole);
  CHECK(Bytes(whole.begin(), whole.begin() + ptrdiff_t(split)) == head);
  head.insert(head.end(), tail.begin(), tail.end());
  CHECK(verify_message(alg, key, head));
}

TEST_CASE("encryption in place takes the plaintext's end from another buffer (AES-GCM only)", "[crypto]") {
  Bytes plain(64 + 16 + 5000);
  for (size_t i = 0; i < plain.size(); ++i) plain[i] = uint8_t(i * 13 + 1);
  SECTION("GCM") {
    auto alg = GENERATE(Aead::Aes128Gcm, Aead::Aes256Gcm);
    Bytes key(aead_key_size(alg), 0x33);
    size_t split = GENERATE(1, 80, 81, 4096);
    Bytes frame(kTransformHeaderSize);
    frame.insert(frame.end(), plain.begin(), plain.begin() + ptrdiff_t(split));
    Bytes tail(plain.begin() + ptrdiff_t(split), plain.end());
    REQUIRE(encrypt_in_place(alg, key, 9, frame, tail));
    CHECK(tail != Bytes(plain.begin() + ptrdiff_t(split), plain.end()));
    frame.insert(frame.end(), tail.begin(), tail.end());
    auto h = parse_transform_header(frame);
    REQUIRE(h);
    CHECK(h->original_message_size == plain.size());
    CHECK(h->session_id == 9);
    auto back = decrypt_message(alg, key, frame);
    REQUIRE(back);
    CHECK(*back == plain);
  }
  SECTION("CCM refuses a second piece") {
    auto alg = GENERATE(Aead::Aes128Ccm, Aead::Aes256Ccm);
    Bytes key(aead_key_size(alg), 0x33);
    Bytes frame(kTransformHeaderSize + 80);
    Bytes tail(100, 1);
    CHECK_FALSE(encrypts_in_pieces(alg));
    CHECK_FALSE(encrypt_in_place(alg, key, 9, frame, tail));
  }
}
