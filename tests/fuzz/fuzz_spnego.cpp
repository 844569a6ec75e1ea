// libFuzzer target for the SPNEGO decoders (and the NTLMSSP NEGOTIATE they
// usually carry). Build with -DRINGSMB_FUZZ=ON and clang.
#include <cstddef>
#include <cstdint>

#include "auth/ntlmssp.hpp"
#include "auth/spnego.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ringsmb::ByteSpan in(data, size);
  if (auto init = ringsmb::auth::parse_neg_token_init(in)) {
    (void)ringsmb::auth::parse_ntlm_negotiate(init->mech_token);
  }
  if (auto resp = ringsmb::auth::parse_neg_token_resp(in)) {
    // Re-encoding what was decoded must decode to the same fields.
    auto again = ringsmb::auth::parse_neg_token_resp(ringsmb::auth::build_neg_token_resp(
        ringsmb::auth::NegState(resp->neg_state.value_or(0) & 3), resp->supported_mech, resp->response_token,
        resp->mech_list_mic));
    if (!again || again->response_token != resp->response_token || again->mech_list_mic != resp->mech_list_mic) {
      __builtin_trap();
    }
  }
  (void)ringsmb::auth::is_raw_ntlmssp(in);
  return 0;
}
