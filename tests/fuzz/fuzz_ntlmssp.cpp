// libFuzzer target for NTLMSSP parsing and NTLMv2 verification. Build with
// -DRINGSMB_FUZZ=ON and clang.
#include <cstddef>
#include <cstdint>

#include "auth/ntlmssp.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringsmb::auth;
  ringsmb::ByteSpan in(data, size);
  (void)parse_ntlm_negotiate(in);
  auto auth = parse_ntlm_authenticate(in);
  if (!auth) return 0;
  // Verification walks the NTLMv2 client challenge and AV pairs from the
  // message; with a fixed hash it fails, but must do so safely.
  static const std::array<uint8_t, 16> kHash = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  NtlmVerifyInput vin{in.first(size / 3), in.first(size / 2), in, {1, 2, 3, 4, 5, 6, 7, 8}};
  (void)ntlmv2_verify(vin, *auth, kHash);
  return 0;
}
