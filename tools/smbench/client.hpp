// A small blocking SMB2 client connection for smbench: NEGOTIATE (2.1 or
// 3.1.1), SESSION_SETUP (SPNEGO + NTLMv2), TREE_CONNECT, then pipelined
// requests. One thread drives one connection; requests may be in flight
// many at a time, and responses are matched by MessageId by the caller.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/bytes.hpp"
#include "crypto/smb2_keys.hpp"
#include "wire/smb2_header.hpp"

namespace ringsmb::smbench {

struct ClientOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 445;
  std::string user, password, domain, share;
  std::vector<uint16_t> dialects = {0x0210, 0x0311};
  bool force_signing = false;
  // Encrypt every request after SESSION_SETUP with AES-128-GCM (3.x): the
  // cipher is offered in any case, this makes the client use it.
  bool encrypt = false;
  // Offer SMB2_GLOBAL_CAP_MULTI_CHANNEL and send CLIENT_GUID (all zero: a
  // random one): the connections of one client that bind to its session
  // (Connection::bind) send the same, as Samba hands a connection to the
  // process of the client with that ClientGuid.
  bool multichannel = false;
  std::array<uint8_t, 16> client_guid{};
};

// One request of a frame. The body is encoded as if the header preceded it
// (offsets count from the header's start, MS-SMB2 style).
struct Request {
  wire::Command command;
  Bytes body;
  uint16_t credit_charge = 1;
};

struct Response {
  wire::Header hdr;
  Bytes body;  // the body with the 64-byte header in front, so offsets work
  uint32_t status() const { return hdr.status; }
};

// A request with room reserved for its body: the common sizes never
// reallocate, and GCC 12 stops misreading growth from an empty vector as an
// overflow (-Wstringop-overflow).
inline Request new_request(wire::Command command, uint16_t credit_charge = 1, size_t body_bytes = 128) {
  Request r{command, {}, credit_charge};
  r.body.reserve(body_bytes);
  return r;
}

using FileId = std::array<uint8_t, 16>;
inline constexpr FileId kRelatedFileId = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                          0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

class Connection {
 public:
  Connection() = default;
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Connects, negotiates, logs in and connects the tree. Throws std::runtime_error.
  void open(const ClientOptions& opt);
  // Connects, negotiates and binds this connection to PRIMARY's session as
  // a new channel (MS-SMB2 3.2.4.2.3: SESSION_SETUP with
  // SMB2_SESSION_FLAG_BINDING, signed with the session's key), then uses
  // PRIMARY's tree. Every request on it is signed with the channel's key.
  // 3.x only. Throws std::runtime_error.
  void bind(const Connection& primary, const ClientOptions& opt);

  // Sends the requests as one frame (a related compound when more than one)
  // and returns the MessageId of each.
  std::vector<uint64_t> send(std::span<Request> reqs);
  uint64_t send(Request req);
  // Blocks for the next frame and returns its responses; adds their credits.
  std::vector<Response> receive();
  // Sends and waits for that one response (setup, the large-file test).
  Response call(Request req);

  uint32_t credits() const { return credits_; }
  uint32_t max_write() const { return max_write_; }
  uint32_t max_read() const { return max_read_; }
  uint16_t dialect() const { return dialect_; }
  bool signing() const { return signing_; }
  bool encrypting() const { return encrypt_; }
  crypto::SigningAlgorithm signing_algorithm() const { return sign_alg_; }

 private:
  void connect_tcp(const ClientOptions& opt);
  void negotiate(const ClientOptions& opt);
  void read_negotiate_contexts(const Response& r);
  void start_encrypting();
  void session_setup(const ClientOptions& opt, const Connection* bind_to = nullptr);
  void take_channel_keys(const Connection& primary, Bytes channel_signing_key);
  void tree_connect(const ClientOptions& opt);
  Response setup_call(Request req, Bytes* sent_message);
  void write_all(const Bytes& frame);
  void read_exact(uint8_t* p, size_t n);

  int fd_ = -1;
  uint16_t dialect_ = 0;
  uint16_t server_security_mode_ = 0;
  uint32_t max_write_ = 65536, max_read_ = 65536;
  uint64_t next_message_id_ = 0;
  uint32_t credits_ = 1;
  uint64_t session_id_ = 0;
  uint32_t tree_id_ = 0;
  bool signing_ = false;
  bool sign_next_ = false;  // one signed request regardless of signing_ (3.1.1 TREE_CONNECT)
  crypto::SigningAlgorithm sign_alg_ = crypto::SigningAlgorithm::HmacSha256;
  Bytes signing_key_;
  std::optional<crypto::Aead> cipher_;  // what the server chose (3.1.1 context, or AES-128-CCM on 3.0.x)
  bool encrypt_ = false;
  Bytes encrypt_key_, decrypt_key_;     // client->server, server->client
  Bytes preauth_;  // SHA-512 preauth integrity hash (3.1.1)
  Bytes frame_;    // receive buffer
};

// Request encoders (MS-SMB2 2.2.13, 2.2.21, 2.2.39, 2.2.15, 2.2.19).
Request create_request(std::string_view name, bool request_lease, uint32_t disposition, uint32_t desired_access);
// CREATE as Windows 10/11 sends it to copy a file: a v2 lease request for
// RWH (RqLs), a durable-v2 request (DH2Q), and the maximal-access (MxAc) and
// on-disk-id (QFid) queries.
Request create_request_windows(std::string_view name, uint32_t disposition, uint32_t desired_access);
// SET_INFO FileEndOfFileInformation: Explorer sets the size before writing.
Request set_end_of_file_request(const FileId& id, uint64_t end_of_file);
Request write_request(const FileId& id, uint64_t offset, ByteSpan data);
Request read_request(const FileId& id, uint64_t offset, uint32_t length);
// FileBasicInformation with LastWriteTime and attributes, as Explorer sets
// them after copying the data.
Request set_basic_info_request(const FileId& id, uint64_t last_write_filetime, uint32_t attributes);
Request close_request(const FileId& id);
Request flush_request(const FileId& id);
Request echo_request();

// CREATE response: the FileId. False when the body is short.
bool parse_create_response(const Response& r, FileId& id);
// READ response: the data length.
uint32_t parse_read_length(const Response& r);

std::string status_text(uint32_t status);

}  // namespace ringsmb::smbench
