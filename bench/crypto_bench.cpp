// crypto_bench: the CPU cost of signing and sealing, with a fresh OpenSSL
// context per message (the way daemon/crypto worked before its per-key
// contexts, kept here as the reference) against daemon/crypto as built.
// The two alternate over the same buffers in one process, round by round
// (the order flips each round), and each row gives the median of the
// rounds' own new/old CPU-time ratios with their range: the machine's
// speed moves, a ratio of neighbouring runs much less.
//
//   build/bench/crypto_bench [--rounds N] [--filter SUBSTRING]
//
// Rows also compare ways the new path could be built (OpenSSL's CMAC with
// a reused context; GMAC through EVP_MAC "GMAC") against the one taken.
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "crypto/mac_parts.hpp"
#include "crypto/primitives.hpp"

using namespace ringsmb;
using namespace ringsmb::crypto;

namespace {

void check(bool ok) {
  if (!ok) {
    std::fprintf(stderr, "crypto_bench: OpenSSL failed\n");
    std::exit(1);
  }
}

// ---- the reference: a context per message --------------------------------

Digest16 old_cmac(ByteSpan key, ByteSpan data) {
  static EVP_MAC* mac = EVP_MAC_fetch(nullptr, "CMAC", nullptr);
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, const_cast<char*>("AES-128-CBC"), 0),
      OSSL_PARAM_construct_end(),
  };
  Digest16 out;
  size_t got = 0;
  check(EVP_MAC_init(ctx, key.data(), key.size(), params) == 1 && EVP_MAC_update(ctx, data.data(), data.size()) == 1 &&
        EVP_MAC_final(ctx, out.data(), &got, out.size()) == 1);
  EVP_MAC_CTX_free(ctx);
  return out;
}

Digest32 old_hmac_sha256(ByteSpan key, ByteSpan data) { return detail::hmac_sha256_parts(key, {data}); }

const EVP_CIPHER* gcm128() {
  static EVP_CIPHER* c = EVP_CIPHER_fetch(nullptr, "AES-128-GCM", nullptr);
  return c;
}

Digest16 old_gmac(ByteSpan key, ByteSpan nonce, ByteSpan data) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int len = 0;
  uint8_t none[16];
  Digest16 out;
  check(EVP_EncryptInit_ex2(ctx, gcm128(), key.data(), nonce.data(), nullptr) == 1 &&
        EVP_EncryptUpdate(ctx, nullptr, &len, data.data(), int(data.size())) == 1 &&
        EVP_EncryptFinal_ex(ctx, none, &len) == 1 &&
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, out.data()) == 1);
  EVP_CIPHER_CTX_free(ctx);
  return out;
}

const EVP_CIPHER* cipher_for(Aead alg) {
  static EVP_CIPHER* c[4] = {EVP_CIPHER_fetch(nullptr, "AES-128-CCM", nullptr),
                             EVP_CIPHER_fetch(nullptr, "AES-128-GCM", nullptr),
                             EVP_CIPHER_fetch(nullptr, "AES-256-CCM", nullptr),
                             EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr)};
  return c[int(alg) - 1];
}

void old_encrypt(Aead alg, ByteSpan key, ByteSpan nonce, ByteSpan aad, std::span<uint8_t> data, uint8_t* tag) {
  bool ccm = alg == Aead::Aes128Ccm || alg == Aead::Aes256Ccm;
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int len = 0;
  bool ok = EVP_CipherInit_ex2(ctx, cipher_for(alg), nullptr, nullptr, 1, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, int(nonce.size()), nullptr) == 1;
  if (ccm) ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, nullptr) == 1;
  ok = ok && EVP_CipherInit_ex2(ctx, nullptr, key.data(), nonce.data(), 1, nullptr) == 1;
  if (ccm) ok = ok && EVP_CipherUpdate(ctx, nullptr, &len, nullptr, int(data.size())) == 1;
  ok = ok && EVP_CipherUpdate(ctx, nullptr, &len, aad.data(), int(aad.size())) == 1;
  ok = ok && EVP_CipherUpdate(ctx, data.data(), &len, data.data(), int(data.size())) == 1;
  uint8_t final_block[16];
  ok = ok && EVP_CipherFinal_ex(ctx, final_block, &len) == 1;
  ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag) == 1;
  EVP_CIPHER_CTX_free(ctx);
  check(ok);
}

// The server's receive path: from the frame into another buffer, checked.
void old_decrypt(Aead alg, ByteSpan key, ByteSpan nonce, ByteSpan aad, ByteSpan in, std::span<uint8_t> out,
                 const uint8_t* tag) {
  bool ccm = alg == Aead::Aes128Ccm || alg == Aead::Aes256Ccm;
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int len = 0;
  bool ok = EVP_CipherInit_ex2(ctx, cipher_for(alg), nullptr, nullptr, 0, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, int(nonce.size()), nullptr) == 1;
  if (ccm) ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, const_cast<uint8_t*>(tag)) == 1;
  ok = ok && EVP_CipherInit_ex2(ctx, nullptr, key.data(), nonce.data(), 0, nullptr) == 1;
  if (ccm) ok = ok && EVP_CipherUpdate(ctx, nullptr, &len, nullptr, int(in.size())) == 1;
  ok = ok && EVP_CipherUpdate(ctx, nullptr, &len, aad.data(), int(aad.size())) == 1;
  ok = ok && EVP_CipherUpdate(ctx, out.data(), &len, in.data(), int(in.size())) == 1;
  if (!ccm) {
    uint8_t final_block[16];
    ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, const_cast<uint8_t*>(tag)) == 1;
    ok = ok && EVP_CipherFinal_ex(ctx, final_block, &len) == 1;
  }
  EVP_CIPHER_CTX_free(ctx);
  check(ok);
}

// ---- other ways to build the new path -------------------------------------

// OpenSSL's CMAC, its context kept and restarted with a null key.
Digest16 reused_openssl_cmac(ByteSpan key, ByteSpan data) {
  static EVP_MAC_CTX* ctx = [&] {
    EVP_MAC_CTX* c = EVP_MAC_CTX_new(EVP_MAC_fetch(nullptr, "CMAC", nullptr));
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, const_cast<char*>("AES-128-CBC"), 0),
        OSSL_PARAM_construct_end(),
    };
    check(EVP_MAC_init(c, key.data(), key.size(), params) == 1);
    return c;
  }();
  Digest16 out;
  size_t got = 0;
  check(EVP_MAC_init(ctx, nullptr, 0, nullptr) == 1 && EVP_MAC_update(ctx, data.data(), data.size()) == 1 &&
        EVP_MAC_final(ctx, out.data(), &got, out.size()) == 1);
  return out;
}

// EVP_MAC "GMAC", its context kept; each message sets its IV.
Digest16 reused_evp_gmac(ByteSpan key, ByteSpan nonce, ByteSpan data) {
  static EVP_MAC_CTX* ctx = [&] {
    EVP_MAC_CTX* c = EVP_MAC_CTX_new(EVP_MAC_fetch(nullptr, "GMAC", nullptr));
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, const_cast<char*>("AES-128-GCM"), 0),
        OSSL_PARAM_construct_end(),
    };
    check(EVP_MAC_CTX_set_params(c, params) == 1);
    check(EVP_MAC_init(c, key.data(), key.size(), nullptr) == 1);
    return c;
  }();
  OSSL_PARAM iv[] = {
      OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_IV, const_cast<uint8_t*>(nonce.data()), nonce.size()),
      OSSL_PARAM_construct_end(),
  };
  Digest16 out;
  size_t got = 0;
  check(EVP_MAC_init(ctx, nullptr, 0, iv) == 1 && EVP_MAC_update(ctx, data.data(), data.size()) == 1 &&
        EVP_MAC_final(ctx, out.data(), &got, out.size()) == 1);
  return out;
}

// ---- timing -----------------------------------------------------------------

double thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

double time_ns(const std::function<void()>& fn, int iterations) {
  double t0 = thread_cpu_ns();
  for (int i = 0; i < iterations; ++i) fn();
  return (thread_cpu_ns() - t0) / iterations;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Row {
  std::string name;
  size_t bytes;
  std::function<void()> before, after;
};

void run(const Row& row, int rounds) {
  // About 20 ms of work per side per round.
  int iterations = std::max(1, int(20e6 / std::max(1.0, time_ns(row.before, 3))));
  std::vector<double> before, after, ratio;
  for (int r = 0; r < rounds; ++r) {
    double b, a;
    if (r % 2) {
      a = time_ns(row.after, iterations);
      b = time_ns(row.before, iterations);
    } else {
      b = time_ns(row.before, iterations);
      a = time_ns(row.after, iterations);
    }
    before.push_back(b);
    after.push_back(a);
    ratio.push_back(a / b);
  }
  auto [lo, hi] = std::minmax_element(ratio.begin(), ratio.end());
  std::printf("| %s | %zu | %.0f | %.0f | %.3f (%.3f-%.3f) |\n", row.name.c_str(), row.bytes, median(before),
              median(after), median(ratio), *lo, *hi);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 11;
  std::string filter;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--filter") == 0) filter = argv[i + 1];
  }
  Bytes key16(16, 0x3c), key32(32, 0x5a), nonce12(12, 0x11), nonce11(11, 0x22), aad(32, 0x44);
  random_bytes(key16);
  random_bytes(key32);
  std::vector<Row> rows;
  for (size_t size : {size_t(200), size_t(64 << 10), size_t(1 << 20)}) {
    // Shared by the row's closures, which outlive this loop.
    auto buf = std::make_shared<Bytes>(size, 0x6b);
    std::string sz = " " + std::to_string(size);
    rows.push_back({"CMAC: per message -> keyed CBC" + sz, size, [=] { old_cmac(key16, *buf); },
                    [=] { detail::aes128_cmac_parts(key16, {*buf}); }});
    rows.push_back({"CMAC: OpenSSL CMAC reused -> keyed CBC" + sz, size, [=] { reused_openssl_cmac(key16, *buf); },
                    [=] { detail::aes128_cmac_parts(key16, {*buf}); }});
    rows.push_back({"GMAC: per message -> keyed GCM" + sz, size, [=] { old_gmac(key16, nonce12, *buf); },
                    [=] { detail::aes128_gmac_parts(key16, nonce12, {*buf}); }});
    rows.push_back({"GMAC: EVP_MAC GMAC reused -> keyed GCM" + sz, size,
                    [=] { reused_evp_gmac(key16, nonce12, *buf); },
                    [=] { detail::aes128_gmac_parts(key16, nonce12, {*buf}); }});
    rows.push_back({"HMAC-SHA256: per message -> keyed" + sz, size, [=] { old_hmac_sha256(key16, *buf); },
                    [=] { detail::hmac_sha256_signing_parts(key16, {*buf}); }});
    for (Aead alg : {Aead::Aes128Gcm, Aead::Aes128Ccm, Aead::Aes256Gcm}) {
      static const char* names[] = {"", "AES-128-CCM", "AES-128-GCM", "AES-256-CCM", "AES-256-GCM"};
      ByteSpan key = aead_key_size(alg) == 32 ? ByteSpan(key32) : ByteSpan(key16);
      ByteSpan nonce = aead_nonce_size(alg) == 11 ? ByteSpan(nonce11) : ByteSpan(nonce12);
      auto data = std::make_shared<Bytes>(size, 0x6b);
      rows.push_back({std::string(names[int(alg)]) + " seal: per message -> keyed" + sz, size,
                      [=] { uint8_t tag[16]; old_encrypt(alg, key, nonce, aad, *data, tag); },
                      [=] {
                        std::array<uint8_t, 16> tag;
                        check(aead_encrypt(alg, key, nonce, aad, *data, tag));
                      }});
      // A sealed copy and its tag, opened into another buffer as the server does.
      auto sealed = std::make_shared<Bytes>(size, 0x6b), out = std::make_shared<Bytes>(size);
      auto tag = std::make_shared<std::array<uint8_t, 16>>();
      check(aead_encrypt(alg, key, nonce, aad, *sealed, *tag));
      rows.push_back({std::string(names[int(alg)]) + " open: per message -> keyed" + sz, size,
                      [=] { old_decrypt(alg, key, nonce, aad, *sealed, *out, tag->data()); },
                      [=] { check(aead_decrypt(alg, key, nonce, aad, *sealed, *out, *tag)); }});
    }
  }
  std::printf("| row | bytes | before ns | after ns | after/before CPU, median (range) of %d rounds |\n", rounds);
  std::printf("|---|---:|---:|---:|---:|\n");
  for (const Row& row : rows)
    if (filter.empty() || row.name.find(filter) != std::string::npos) run(row, rounds);
  return 0;
}
