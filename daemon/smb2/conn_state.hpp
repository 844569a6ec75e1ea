// The SMB2 protocol state of one TCP connection: what NEGOTIATE settled,
// the sessions, and the opens. The transport owns one per connection and
// hands it frames; everything here runs on the connection's worker thread.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "crypto/primitives.hpp"
#include "crypto/smb2_keys.hpp"
#include "smb2/credits.hpp"
#include "state/session.hpp"

namespace ringsmb::smb2 {

// An open of an IPC$ named pipe: its state::Open (no fd, no FileNode) is in
// ConnState::opens like any other; this says which control-plane pipe it is.
struct PipeOpen {
  uint32_t handle = 0;  // the control plane's (ipc::PipeOpenRequest::handle)
  std::string name;     // as the client named it
  bool byte_mode = false;  // FilePipeInformation ReadMode: byte stream instead of message
};

// A request answered with an interim STATUS_PENDING whose final response is
// still owed (MS-SMB2 3.3.4.2): so far only a READ on an empty pipe.
struct AsyncRequest {
  uint64_t async_id = 0;
  uint64_t message_id = 0;
  uint64_t session_id = 0;
  uint16_t command = 0;
  uint16_t credit_charge = 0;
  bool sign = false;         // the final response is signed...
  bool encrypt = false;      // ...or encrypted, as the request was
  uint64_t volatile_id = 0;  // the open it waits on
  uint32_t length = 0;       // READ Length
};

// A final response that became ready outside its request's own frame.
struct LateResponse {
  Bytes message;  // header + body, unsigned
  uint64_t session_id = 0;
  bool sign = false;
  bool encrypt = false;
};

struct ConnState {
  std::string client_address;
  // NEGOTIATE results
  bool negotiated = false;
  uint16_t dialect = 0;  // 0x02FF after an SMB1 upgrade until the SMB2 NEGOTIATE
  uint32_t client_capabilities = 0;
  uint16_t client_security_mode = 0;
  std::array<uint8_t, 16> client_guid{};
  uint16_t server_security_mode = 0;
  uint32_t server_capabilities = 0;
  std::vector<uint16_t> client_dialects;  // for FSCTL_VALIDATE_NEGOTIATE_INFO
  bool signing_required = false;          // server or client requires signing
  crypto::SigningAlgorithm signing_algorithm = crypto::SigningAlgorithm::HmacSha256;
  std::optional<crypto::Aead> cipher;     // negotiated encryption cipher (3.x)
  std::array<uint8_t, 64> preauth_hash{};  // 3.1.1 connection preauth integrity hash
  bool supports_multi_credit = false;
  CreditWindow credits;

  std::unordered_map<uint64_t, std::unique_ptr<state::Session>> sessions;
  std::unordered_map<uint64_t, std::unique_ptr<state::Open>> opens;  // by volatile id
  std::unordered_map<uint64_t, PipeOpen> pipes;                      // by volatile id, a subset of opens
  std::vector<AsyncRequest> async_requests;  // oldest first
  std::vector<LateResponse> late_responses;  // sent after the current frame's response
  uint64_t next_async_id = 1;
  uint64_t going_async = 0;  // set with a STATUS_PENDING return: the interim response's AsyncId

  state::Session* find_session(uint64_t id) {
    auto it = sessions.find(id);
    return it == sessions.end() ? nullptr : it->second.get();
  }
  bool is_smb3() const { return dialect >= 0x0300 && dialect != 0x02FF; }
};

}  // namespace ringsmb::smb2
