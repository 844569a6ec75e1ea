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
#include <vector>

#include "common/ntstatus.hpp"
#include "crypto/primitives.hpp"
#include "crypto/smb2_keys.hpp"
#include "smb2/credits.hpp"
#include "state/session.hpp"

namespace ringsmb::smb2 {

inline constexpr uint64_t kRelatedFileId = 0xFFFFFFFFFFFFFFFFull;

struct FileId {
  uint64_t persistent = 0;
  uint64_t volatile_id = 0;
};

// What a compound chain carries from one element to the next (MS-SMB2 3.3.5.2.7).
struct CompoundState {
  uint64_t session_id = 0;
  uint32_t tree_id = 0;
  FileId file_id{kRelatedFileId, kRelatedFileId};
  NtStatus last_status = NtStatus::Success;
  bool in_chain = false;  // at least one element done
  // The previous element had no valid session / tree: a related element
  // that would inherit it fails with STATUS_INVALID_PARAMETER.
  bool session_failed = false;
  bool tree_failed = false;
};

// A CREATE answered STATUS_PENDING (MS-SMB2 3.3.4.2) that waits for
// oplock/lease break acknowledgments. It is run again from its saved bytes
// (the rest of its chain) when woken. Pipe READs wait as AsyncRequests.
struct PendingRequest {
  Bytes pdu;  // header + body, as received (decrypted)
  uint64_t message_id = 0;
  bool encrypted = false;
  uint64_t transform_session = 0;
  std::shared_ptr<state::FileNode> node;  // the file whose breaks it waits for
  CompoundState compound;  // as it was before the element
  NtStatus create_error = NtStatus::Success;
};

// An open of an IPC$ named pipe: its state::Open (no fd, no FileNode) is in
// ConnState::opens like any other; this says which control-plane pipe it is.
struct PipeOpen {
  uint32_t handle = 0;  // the control plane's (ipc::PipeOpenRequest::handle)
  std::string name;     // as the client named it
  bool byte_mode = false;  // FilePipeInformation ReadMode: byte stream instead of message
};

// A request answered with an interim STATUS_PENDING whose final response is
// still owed (MS-SMB2 3.3.4.2) that is completed in place: a READ on an empty
// pipe. (A waiting CREATE is a PendingRequest; both draw their AsyncId from
// ConnState::next_async_id.)
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

// File data that goes out with a response without being copied into the
// output buffer: the transport sends the buffer's bytes before `at`, then
// `length` bytes of the file from `offset` (sendfile, from the page cache),
// then the rest. Only an unsigned, unencrypted, uncompounded READ response
// does this (smb2/read.cpp); its DataLength was fixed from the file size.
struct FileSegment {
  size_t at = 0;           // position in the output buffer
  state::UniqueFd fd;      // a dup of the open's fd: a CLOSE before the send cannot end it
  uint64_t offset = 0;     // in the file
  uint32_t length = 0;
};

struct ConnState {
  std::string client_address;
  // Set by a transport that sends FileSegments (transport::Worker); a READ
  // then may leave its data in the file. Tests and fuzzers leave it off.
  bool transport_sends_files = false;
  // The FileSegments of the responses in the transport's output buffer, in
  // order of `at`; the transport takes them with the buffer.
  std::vector<FileSegment> out_files;
  state::ConnAddress address;  // this connection's worker and id
  uint64_t next_async_id = 1;  // for every interim response: waiting CREATEs and pipe READs
  std::unordered_map<uint64_t, PendingRequest> pending;  // waiting CREATEs, by AsyncId
  // The login throttle (SESSION_SETUP, control/login_throttle.hpp): until
  // this monotonic time the transport sends none of this connection's
  // replies and processes none of its further requests (they wait, in
  // order). 0: not held. The transport clears it when the time has come.
  int64_t hold_replies_until_ms = 0;
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
  uint64_t going_async = 0;  // set with a STATUS_PENDING return: the interim response's AsyncId
  // CREATE's response contexts are built here before they are copied into
  // the response; kept per connection so its capacity is reused.
  Bytes create_contexts_scratch;

  state::Session* find_session(uint64_t id) {
    auto it = sessions.find(id);
    return it == sessions.end() ? nullptr : it->second.get();
  }
  bool is_smb3() const { return dialect >= 0x0300 && dialect != 0x02FF; }
};

}  // namespace ringsmb::smb2
