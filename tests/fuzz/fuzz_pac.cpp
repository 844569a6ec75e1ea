// libFuzzer target for the MS-PAC decoder: the input is a whole PAC (as
// MIT krb5 hands it over after the server signature checked out) and, a
// second time, a bare LOGON_INFO buffer. Every input must be decoded or
// refused with a reason; a crash, a leak or a refusal without words is a
// finding. Build with -DRINGSMB_FUZZ=ON and clang.
#include <cstddef>
#include <cstdint>

#include "kerberos/pac.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ringsmb::ByteSpan in(data, size);
  auto pac = ringsmb::kerberos::parse_pac(in);
  if (!pac && pac.error().empty()) __builtin_trap();
  auto info = ringsmb::kerberos::parse_logon_info(in);
  if (!info && info.error().empty()) __builtin_trap();
  if (info) {
    // What the control plane does with a decoded one.
    for (const auto& sid : info->group_sids()) (void)sid.to_string();
    (void)info->user_sid().to_string();
  }
  return 0;
}
