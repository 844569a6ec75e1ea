// NTLMSSP message integrity (MS-NLMP 3.4.4.2, extended session security), as
// SPNEGO's mechListMIC needs it: the client signs the MechTypeList with its
// client-to-server keys, the server answers with its server-to-client keys.
#pragma once

#include <array>
#include <cstdint>

#include "common/bytes.hpp"

namespace ringsmb::auth {

enum class NtlmDirection { ClientToServer, ServerToClient };

// The 16-byte NTLMSSP_MESSAGE_SIGNATURE over `message` with sequence number
// `seq`, for the exported session key and negotiated flags. Each call uses a
// fresh RC4 sealing handle, which is right for the single MIC SPNEGO sends
// in each direction.
std::array<uint8_t, 16> ntlm_sign(ByteSpan exported_session_key, uint32_t flags, NtlmDirection dir, uint32_t seq,
                                  ByteSpan message);

}  // namespace ringsmb::auth
