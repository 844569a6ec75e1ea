// Known-answer tests for daemon/crypto/primitives.hpp against published vectors.
#include <catch2/catch.hpp>

#include "crypto/mac_parts.hpp"
#include "crypto/primitives.hpp"
#include "crypto/test_hex.hpp"

using namespace ringsmb;
using namespace ringsmb::crypto;
using test::hex;
using test::lower_hex;
using test::unhex;

namespace {

// The published vectors are single messages: one part each. (SMB2 signing
// calls the *_parts functions with the signature field cut out.)
// RFC 4493; key 16 bytes.
Digest16 aes128_cmac(ByteSpan key, ByteSpan data) { return detail::aes128_cmac_parts(key, {data}); }
// AES-GMAC: GCM with all data as AAD and no plaintext; key 16 bytes, nonce 12.
Digest16 aes128_gmac(ByteSpan key, ByteSpan nonce12, ByteSpan data) {
  return detail::aes128_gmac_parts(key, nonce12, {data});
}

}  // namespace

TEST_CASE("MD4 matches the RFC 1320 test suite", "[crypto]") {
  struct V { const char* in; const char* out; };
  const V vectors[] = {
      {"", "31d6cfe0d16ae931b73c59d7e0c089c0"},
      {"a", "bde52cb31de33e46245e05fbdbd6fb24"},
      {"abc", "a448017aaf21d8525fc10ae87aa6729d"},
      {"message digest", "d9130a8164549fe818874806e1c7014b"},
      {"abcdefghijklmnopqrstuvwxyz", "d79e1c308aa5bbcdeea8ed63df412da9"},
      {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "043f8582f241db351ce627e153e7f0e4"},
      {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
       "e33b4ddc9c38f2199c3e7b164fcc0536"},
  };
  for (const V& v : vectors) {
    INFO(v.in);
    CHECK(hex(md4(as_bytes(v.in))) == v.out);
  }
}

TEST_CASE("MD4 pads correctly around the 56-byte boundary", "[crypto]") {
  // Lengths 55/56/64 take the one- and two-block padding paths; values
  // cross-checked with `openssl dgst -md4 -provider legacy`.
  std::string s55(55, 'a'), s56(56, 'a'), s64(64, 'a');
  CHECK(hex(md4(as_bytes(s55))) == "c889c81dd86c4d2e025778944ea02881");
  CHECK(hex(md4(as_bytes(s56))) == "d5f9a9e9257077a5f08b0b92f348b0ad");
  CHECK(hex(md4(as_bytes(s64))) == "52f5076fabd22680234a3fa9f9dc5732");
}

TEST_CASE("RC4 known keystreams", "[crypto]") {
  auto run = [](std::string_view key, std::string_view text) {
    Bytes data(text.begin(), text.end());
    rc4(as_bytes(key), data);
    return hex(data);
  };
  CHECK(run("Key", "Plaintext") == "bbf316e8d940af0ad3");
  CHECK(run("Wiki", "pedia") == "1021bf0420");
  CHECK(run("Secret", "Attack at dawn") == "45a01f645fc35b383552544b9bf5");
  // RFC 6229, 40-bit key 0x0102030405, keystream bytes 0..15.
  Bytes zeros(16, 0);
  rc4(unhex("0102030405"), zeros);
  CHECK(hex(zeros) == "b2396305f03dc027ccc3524a0a1118a8");
  // RC4 is its own inverse.
  Bytes msg = unhex("00112233445566778899");
  Bytes copy = msg;
  rc4(as_bytes("k"), copy);
  rc4(as_bytes("k"), copy);
  CHECK(copy == msg);
}

TEST_CASE("MD5 and SHA-512 basics", "[crypto]") {
  CHECK(hex(md5(as_bytes(""))) == "d41d8cd98f00b204e9800998ecf8427e");
  CHECK(hex(md5(as_bytes("abc"))) == "900150983cd24fb0d6963f7d28e17f72");
  CHECK(hex(sha512(as_bytes("abc"))) ==
        "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
        "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
  // The two-argument form hashes the concatenation (preauth integrity).
  CHECK(sha512(as_bytes("a"), as_bytes("bc")) == sha512(as_bytes("abc")));
}

TEST_CASE("HMAC-SHA256 matches RFC 4231", "[crypto]") {
  // Test case 1.
  CHECK(hex(hmac_sha256(Bytes(20, 0x0b), as_bytes("Hi There"))) ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  // Test case 2.
  CHECK(hex(hmac_sha256(as_bytes("Jefe"), as_bytes("what do ya want for nothing?"))) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 6: a key longer than the block size.
  CHECK(hex(hmac_sha256(Bytes(131, 0xaa), as_bytes("Test Using Larger Than Block-Size Key - Hash Key First"))) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST_CASE("HMAC-MD5 matches RFC 2104 / RFC 2202", "[crypto]") {
  CHECK(hex(hmac_md5(Bytes(16, 0x0b), as_bytes("Hi There"))) == "9294727a3638bb1c13f48ef8158bfc9d");
  CHECK(hex(hmac_md5(as_bytes("Jefe"), as_bytes("what do ya want for nothing?"))) ==
        "750c783e6ab0b503eaa86e310a5db738");
}

TEST_CASE("AES-CMAC matches all four RFC 4493 examples", "[crypto]") {
  Bytes key = unhex("2b7e151628aed2a6abf7158809cf4f3c");
  Bytes m = unhex(
      "6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51"
      "30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710");
  ByteSpan ms(m);
  CHECK(hex(aes128_cmac(key, ms.first(0))) == "bb1d6929e95937287fa37d129b756746");
  CHECK(hex(aes128_cmac(key, ms.first(16))) == "070a16b46b4d4144f79bdd9dd04a287c");
  CHECK(hex(aes128_cmac(key, ms.first(40))) == "dfa66747de9ae63030ca32611497c827");
  CHECK(hex(aes128_cmac(key, ms.first(64))) == "51f0bebf7e3b9d92fc49741779363cfe");
}

namespace {
// "The Galois/Counter Mode of Operation (GCM)" (McGrew & Viega, the NIST
// submission) test cases 4 (AES-128) and 16 (AES-256): 60-byte plaintext, 20-byte AAD.
const char* kGcmP =
    "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
    "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39";
const char* kGcmA = "feedfacedeadbeeffeedfacedeadbeefabaddad2";
const char* kGcmIv = "cafebabefacedbaddecaf888";
}  // namespace

TEST_CASE("AES-GCM matches the GCM specification test cases", "[crypto]") {
  struct V { Aead alg; const char* key; const char* c; const char* t; };
  const V vectors[] = {
      {Aead::Aes128Gcm, "feffe9928665731c6d6a8f9467308308",
       "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
       "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
       "5bc94fbc3221a5db94fae95ae7121a47"},
      {Aead::Aes256Gcm, "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
       "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
       "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
       "76fc6ece0f4e1768cddf8853bb2d551b"},
  };
  for (const V& v : vectors) {
    Bytes key = unhex(v.key), iv = unhex(kGcmIv), aad = unhex(kGcmA);
    Bytes data = unhex(kGcmP);
    std::array<uint8_t, 16> tag{};
    REQUIRE(aead_encrypt(v.alg, key, iv, aad, data, tag));
    CHECK(hex(data) == lower_hex(v.c));
    CHECK(hex(tag) == v.t);

    REQUIRE(aead_decrypt(v.alg, key, iv, aad, data, tag));
    CHECK(hex(data) == lower_hex(kGcmP));

    // Any flipped bit in ciphertext, AAD or tag fails.
    Bytes bad = unhex(v.c);
    bad[7] ^= 0x01;
    CHECK_FALSE(aead_decrypt(v.alg, key, iv, aad, bad, tag));
    Bytes ct = unhex(v.c);
    aad[0] ^= 0x80;
    CHECK_FALSE(aead_decrypt(v.alg, key, iv, aad, ct, tag));
    aad[0] ^= 0x80;
    tag[15] ^= 0x01;
    CHECK_FALSE(aead_decrypt(v.alg, key, iv, aad, ct, tag));
  }
}

TEST_CASE("AES-GMAC matches GCM vectors with an empty plaintext", "[crypto]") {
  // GCM spec test case 1 (all-zero key and IV, nothing else): T only.
  CHECK(hex(aes128_gmac(Bytes(16, 0), Bytes(12, 0), {})) == "58e2fccefa7e3061367f1d57a4e7455a");
  // NIST CAVS gcmEncryptExtIV128.rsp, [Keylen=128, IVlen=96, PTlen=0, AADlen=128, Taglen=128], Count 0.
  CHECK(hex(aes128_gmac(unhex("77be63708971c4e240d1cb79e8d77feb"), unhex("e0e00f19fed7ba0136a797f3"),
                        unhex("7a43ec1d9c0a5a78a0b16533a6213cab"))) == "209fcc8d3675ed938e9c7166709dd946");
  // The same through the AEAD interface: GMAC is GCM with no plaintext.
  std::array<uint8_t, 16> tag{};
  Bytes none;
  REQUIRE(aead_encrypt(Aead::Aes128Gcm, unhex("77be63708971c4e240d1cb79e8d77feb"), unhex("e0e00f19fed7ba0136a797f3"),
                       unhex("7a43ec1d9c0a5a78a0b16533a6213cab"), none, tag));
  CHECK(hex(tag) == "209fcc8d3675ed938e9c7166709dd946");
}

TEST_CASE("AES-128-CCM matches Microsoft's SMB 3.0 encryption example", "[crypto]") {
  // RFC 3610 and SP 800-38C's examples use nonce/tag sizes (13/8, 7/4 ...)
  // that this API (fixed to MS-SMB2's 11-byte nonce and 16-byte tag) does
  // not take, so the CCM vector is the one Microsoft published in "Encryption
  // in SMB 3.0: a protocol perspective" (Open Specifications blog): the WRITE
  // request, key = the client's EncryptionKey.
  Bytes key = unhex("261B72350558F2E9DCF613070383EDBF");
  Bytes nonce = unhex("66E69A111892584FB5ED52");
  Bytes aad = unhex("66E69A111892584FB5ED524A744DA3EE87000000000001001100001400E40800");
  const char* plain =
      "FE534D4240000100000000000900400008000000000000000400000000000000"
      "FFFE0000010000001100001400E4080000000000000000000000000000000000"
      "3100700017000000000000000000000015010000390000020100000039020000"
      "00000000000000007000000000000000536D623320656E6372797074696F6E20"
      "74657374696E67";
  const char* cipher =
      "25C8FEE16605A437832D1CD52DA9F4645333482A175FE5384563F45FCDAFAEF3"
      "8BC62BA4D5C62897996625A44C29BE5658DE2E6117585779E7B59FFD971278D0"
      "8580D7FA899E410E910EABF5AA1DB43050B33B49182637759AC15D84BFCDF5B6"
      "B238993C0F4CF4D6012023F6C627297075D84B7803912D0A9639634453595EF3"
      "E33FFE4E7AC2AB";
  Bytes data = unhex(plain);
  std::array<uint8_t, 16> tag{};
  REQUIRE(aead_encrypt(Aead::Aes128Ccm, key, nonce, aad, data, tag));
  CHECK(hex(data) == lower_hex(cipher));
  CHECK(hex(tag) == lower_hex("81A286535415445DAE393921E44FA42E"));

  REQUIRE(aead_decrypt(Aead::Aes128Ccm, key, nonce, aad, data, tag));
  CHECK(hex(data) == lower_hex(plain));

  Bytes bad = unhex(cipher);
  bad.back() ^= 0x01;
  CHECK_FALSE(aead_decrypt(Aead::Aes128Ccm, key, nonce, aad, bad, tag));
}

TEST_CASE("AEAD round trips for all four ciphers, including empty data", "[crypto]") {
  for (Aead alg : {Aead::Aes128Ccm, Aead::Aes128Gcm, Aead::Aes256Ccm, Aead::Aes256Gcm}) {
    INFO(int(alg));
    Bytes key(aead_key_size(alg)), nonce(aead_nonce_size(alg));
    random_bytes(key);
    random_bytes(nonce);
    Bytes aad = unhex("0102030405");
    for (size_t len : {size_t(0), size_t(1), size_t(16), size_t(1000)}) {
      Bytes data(len, 0x5a), orig = data;
      std::array<uint8_t, 16> tag{};
      REQUIRE(aead_encrypt(alg, key, nonce, aad, data, tag));
      // A one-byte ciphertext equals the plaintext once in 256 random keys.
      if (len >= 16) CHECK(data != orig);
      Bytes copy = data;
      REQUIRE(aead_decrypt(alg, key, nonce, aad, data, tag));
      CHECK(data == orig);
      tag[0] ^= 1;
      CHECK_FALSE(aead_decrypt(alg, key, nonce, aad, copy, tag));
    }
    // Wrong key or nonce sizes are refused, not truncated.
    std::array<uint8_t, 16> tag{};
    Bytes d(4);
    CHECK_FALSE(aead_encrypt(alg, Bytes(5), nonce, aad, d, tag));
    CHECK_FALSE(aead_encrypt(alg, key, Bytes(5), aad, d, tag));
  }
}

TEST_CASE("SP 800-108 KDF agrees with OpenSSL's KBKDF", "[crypto]") {
  // Computed independently with
  //   openssl kdf -keylen 16 -kdfopt digest:SHA256 -kdfopt mac:HMAC
  //     -kdfopt hexkey:000102030405060708090a0b0c0d0e0f
  //     -kdfopt hexsalt:534d4232414553434d414300 -kdfopt hexinfo:536d625369676e00 KBKDF
  // (label "SMB2AESCMAC\0", context "SmbSign\0"); OpenSSL's KBKDF inserts
  // the same 0x00 separator between label and context.
  Bytes key = unhex("000102030405060708090a0b0c0d0e0f");
  Bytes label(std::begin("SMB2AESCMAC"), std::end("SMB2AESCMAC"));
  Bytes context(std::begin("SmbSign"), std::end("SmbSign"));
  CHECK(hex(kdf_counter_hmac_sha256(key, label, context, 128)) == "6234814cbb8ea9227440ebfeb5eacbe1");
  // 256 bits run the counter twice; the L field differs, so the first half
  // is not the 128-bit output.
  Bytes k256 = kdf_counter_hmac_sha256(key, label, context, 256);
  CHECK(k256.size() == 32);
  CHECK(hex(ByteSpan(k256).first(16)) != "6234814cbb8ea9227440ebfeb5eacbe1");
}

TEST_CASE("equal_ct and random_bytes", "[crypto]") {
  CHECK(equal_ct(unhex("0102"), unhex("0102")));
  CHECK_FALSE(equal_ct(unhex("0102"), unhex("0103")));
  CHECK_FALSE(equal_ct(unhex("0102"), unhex("010203")));
  Bytes a(32), b(32);
  random_bytes(a);
  random_bytes(b);
  CHECK(a != b);
}
