// libFuzzer target for the Kerberos path of SESSION_SETUP: the SPNEGO
// NegTokenInit is decoded as the data plane decodes it, and its krb5
// mechanism token (or the whole input, as a bare GSS token) goes through
// MIT GSSAPI's acceptor exactly as ringsmb-ctld runs it, against a keytab
// with one key (written at start), so that the AP-REQ decoder, the key
// lookup and the decryption all see the fuzzer's bytes. Every input must
// be refused (no input can hold a ticket sealed with a key the fuzzer does
// not know), cleanly: a crash, a leak or an acceptance is a finding.
// Build with -DRINGSMB_FUZZ=ON and clang.
#include <krb5/krb5.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "auth/spnego.hpp"
#include "kerberos/gss_acceptor.hpp"

namespace {

ringsmb::kerberos::AcceptorSettings g_settings;

// A keytab holding an AES-256 key for cifs/fuzz.test@FUZZ.TEST.
std::string write_keytab() {
  char dir[] = "/tmp/fuzz_krb5_token.XXXXXX";
  if (!mkdtemp(dir)) abort();
  std::string name = std::string("FILE:") + dir + "/fuzz.keytab";
  krb5_context ctx = nullptr;
  if (krb5_init_context(&ctx) != 0) abort();
  krb5_keytab kt = nullptr;
  krb5_keytab_entry entry{};
  static uint8_t key[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                            17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
  if (krb5_kt_resolve(ctx, name.c_str(), &kt) != 0 ||
      krb5_parse_name(ctx, "cifs/fuzz.test@FUZZ.TEST", &entry.principal) != 0)
    abort();
  entry.vno = 1;
  entry.key.enctype = ENCTYPE_AES256_CTS_HMAC_SHA1_96;
  entry.key.length = sizeof(key);
  entry.key.contents = key;
  if (krb5_kt_add_entry(ctx, kt, &entry) != 0) abort();
  krb5_free_principal(ctx, entry.principal);
  krb5_kt_close(ctx, kt);
  krb5_free_context(ctx);
  return name;
}

void accept(ringsmb::ByteSpan token) {
  auto r = ringsmb::kerberos::accept_ap_req(g_settings, token);
  if (r) __builtin_trap();  // nothing the fuzzer writes can be a valid ticket
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("KRB5_CONFIG", "/dev/null", 1);  // no realm, no KDC: the acceptor needs neither
  g_settings = {write_keytab(), "FUZZ.TEST", "none:"};
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ringsmb::ByteSpan in(data, size);
  if (auto init = ringsmb::auth::parse_neg_token_init(in)) {
    if (!init->mech_types.empty() && ringsmb::auth::is_krb5_oid(init->mech_types[0])) accept(init->mech_token);
    return 0;
  }
  accept(in);
  return 0;
}
