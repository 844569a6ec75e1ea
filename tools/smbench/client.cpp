#include "client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "auth/spnego.hpp"
#include "auth/ntlm_utf16.hpp"
#include "crypto/primitives.hpp"
#include "ntlm_client.hpp"

namespace ringsmb::smbench {
namespace {

using wire::Command;

constexpr uint32_t kStatusMoreProcessing = 0xC0000016;
constexpr uint16_t kSigningEnabled = 0x1, kSigningRequired = 0x2;
constexpr uint16_t kSessionFlagGuest = 0x1, kSessionFlagEncryptData = 0x4;
constexpr uint8_t kSessionFlagBinding = 0x1;  // SESSION_SETUP request Flags
constexpr uint32_t kCapMultiChannel = 0x8;
constexpr uint32_t kShareFlagEncrypt = 0x8;
// Asked for on every request: enough to keep 64 requests of 16 credits in
// flight once the window has grown, as Windows' credit requests do.
constexpr uint16_t kCreditRequest = 256;

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

void check(const Response& r, uint32_t want, const char* what) {
  if (r.status() != want) fail(std::string(what) + " failed: " + status_text(r.status()));
}

Bytes utf16(std::string_view s) { return auth::detail::utf8_to_utf16le(s).value_or(Bytes{}); }

ByteSpan security_buffer(const Response& r, size_t offset_at) {
  ByteReader rd(r.body);
  rd.seek(offset_at);
  uint16_t off = rd.u16(), len = rd.u16();
  if (!rd.ok() || off > r.body.size() || len > r.body.size() - off) fail("bad security buffer");
  return ByteSpan(r.body).subspan(off, len);
}

void preauth_update(Bytes& hash, ByteSpan message) {
  auto h = crypto::sha512(hash, message);
  hash.assign(h.begin(), h.end());
}

// Negotiate context types and algorithm ids (MS-SMB2 2.2.3.1).
constexpr uint16_t kPreauthContext = 1, kEncryptionContext = 2, kSigningContext = 8;
constexpr uint16_t kCipherAes128Ccm = 1, kCipherAes128Gcm = 2;
constexpr uint32_t kCapEncryption = 0x40;

// One negotiate context, 8-aligned from the header's start.
void negotiate_context(ByteWriter& w, uint16_t type, ByteSpan data) {
  w.align(8, size_t(0) - wire::kHeaderSize);
  w.u16(type);
  w.u16(uint16_t(data.size()));
  w.u32(0);
  w.bytes(data);
}

// 3.1.1 contexts as Windows 11 sends the ones that matter here: SHA-512
// preauth, the AES-128 ciphers (GCM first) and the signing algorithms
// (AES-GMAC first, MS-SMB2 2.2.3.1.7). Returns the count.
uint16_t write_negotiate_contexts(ByteWriter& w) {
  Bytes preauth;
  ByteWriter p(preauth);
  p.u16(1);   // HashAlgorithmCount
  p.u16(32);  // SaltLength
  p.u16(1);   // SHA-512
  std::array<uint8_t, 32> salt;
  crypto::random_bytes(salt);
  p.bytes(salt);
  negotiate_context(w, kPreauthContext, preauth);
  Bytes ciphers;
  ByteWriter c(ciphers);
  c.u16(2);
  c.u16(kCipherAes128Gcm);
  c.u16(kCipherAes128Ccm);
  negotiate_context(w, kEncryptionContext, ciphers);
  Bytes signing;
  ByteWriter g(signing);
  g.u16(2);
  g.u16(uint16_t(crypto::SigningAlgorithm::AesGmac));
  g.u16(uint16_t(crypto::SigningAlgorithm::AesCmac));
  negotiate_context(w, kSigningContext, signing);
  return 3;
}

Request negotiate_request(const ClientOptions& opt) {
  const std::vector<uint16_t>& dialects = opt.dialects;
  Request req = new_request(Command::Negotiate, 0, 256);
  ByteWriter w(req.body);
  bool smb311 = std::find(dialects.begin(), dialects.end(), 0x0311) != dialects.end();
  w.u16(36);
  w.u16(uint16_t(dialects.size()));
  w.u16(kSigningEnabled);
  w.u16(0);
  w.u32(0x2 | 0x4 | kCapEncryption | (opt.multichannel ? kCapMultiChannel : 0));  // LEASING | LARGE_MTU | ...
  std::array<uint8_t, 16> guid = opt.client_guid;
  if (guid == std::array<uint8_t, 16>{}) crypto::random_bytes(guid);
  w.bytes(guid);
  size_t ctx_offset_at = w.size();
  w.u64(0);  // NegotiateContextOffset/Count (3.1.1) or ClientStartTime
  for (uint16_t d : dialects) w.u16(d);
  if (smb311) {
    w.align(8, size_t(0) - wire::kHeaderSize);  // aligned from the header's start
    w.patch_u32(ctx_offset_at, uint32_t(wire::kHeaderSize + w.size()));
    w.patch_u16(ctx_offset_at + 4, write_negotiate_contexts(w));
  }
  return req;
}

std::optional<crypto::Aead> aead_of(uint16_t cipher) {
  if (cipher == kCipherAes128Gcm) return crypto::Aead::Aes128Gcm;
  if (cipher == kCipherAes128Ccm) return crypto::Aead::Aes128Ccm;
  return std::nullopt;
}

}  // namespace

Connection::~Connection() {
  if (fd_ >= 0) ::close(fd_);
}

void Connection::open(const ClientOptions& opt) {
  connect_tcp(opt);
  negotiate(opt);
  session_setup(opt);
  tree_connect(opt);
}

void Connection::bind(const Connection& primary, const ClientOptions& opt) {
  connect_tcp(opt);
  negotiate(opt);
  if (dialect_ != primary.dialect_ || dialect_ < 0x0300) fail("binding a channel needs the session's SMB 3.x dialect");
  session_setup(opt, &primary);
}

// After the binding: the channel signs with its own key (MS-SMB2 3.2.5.3.1:
// derived from this authentication's session key and, in 3.1.1, this
// connection's preauth hash) and encrypts with the session's keys.
void Connection::take_channel_keys(const Connection& primary, Bytes channel_signing_key) {
  signing_key_ = std::move(channel_signing_key);
  encrypt_key_ = primary.encrypt_key_;
  decrypt_key_ = primary.decrypt_key_;
  encrypt_ = primary.encrypt_;
  signing_ = true;
  tree_id_ = primary.tree_id_;
}

void Connection::connect_tcp(const ClientOptions& opt) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) fail(std::string("socket: ") + strerror(errno));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(opt.port);
  if (inet_pton(AF_INET, opt.host.c_str(), &sa.sin_addr) != 1) fail("bad --host (an IPv4 address)");
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
    fail(std::string("connect: ") + strerror(errno));
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void Connection::negotiate(const ClientOptions& opt) {
  preauth_.assign(64, 0);
  Bytes sent;
  Response r = setup_call(negotiate_request(opt), &sent);
  check(r, 0, "NEGOTIATE");
  ByteReader rd(r.body);
  rd.seek(wire::kHeaderSize + 2);
  server_security_mode_ = rd.u16();
  dialect_ = rd.u16();
  rd.seek(wire::kHeaderSize + 32);
  max_read_ = rd.u32();
  max_write_ = rd.u32();
  if (!rd.ok()) fail("short NEGOTIATE response");
  sign_alg_ = dialect_ >= 0x0300 ? crypto::SigningAlgorithm::AesCmac : crypto::SigningAlgorithm::HmacSha256;
  if (dialect_ == 0x0311) {
    preauth_update(preauth_, sent);
    preauth_update(preauth_, r.body);
    read_negotiate_contexts(r);
  } else if (dialect_ >= 0x0300) {
    uint32_t caps = ByteReader(ByteSpan(r.body).subspan(wire::kHeaderSize + 24)).u32();
    if (caps & kCapEncryption) cipher_ = crypto::Aead::Aes128Ccm;  // the only 3.0.x cipher
  }
}

// The server's choices: the signing algorithm (AES-CMAC when it sends no
// signing context, MS-SMB2 3.2.5.2) and the cipher.
void Connection::read_negotiate_contexts(const Response& r) {
  ByteReader rd(r.body);
  rd.seek(wire::kHeaderSize + 6);
  uint16_t count = rd.u16();
  rd.seek(wire::kHeaderSize + 60);
  uint32_t offset = rd.u32();
  rd.seek(offset);
  for (uint16_t i = 0; i < count && rd.ok(); ++i) {
    rd.seek((rd.offset() + 7) & ~size_t(7));
    uint16_t type = rd.u16(), len = rd.u16();
    rd.u32();
    ByteReader data(rd.bytes(len));
    if (type == kSigningContext && data.u16() == 1) sign_alg_ = crypto::SigningAlgorithm(data.u16());
    if (type == kEncryptionContext && data.u16() == 1) cipher_ = aead_of(data.u16());
  }
  if (!rd.ok()) fail("bad negotiate contexts in the NEGOTIATE response");
}

// BIND_TO: a binding to that connection's session, whose key signs both
// requests (3.2.4.2.3).
void Connection::session_setup(const ClientOptions& opt, const Connection* bind_to) {
  uint8_t flags = bind_to ? kSessionFlagBinding : 0;
  auto setup_request = [flags](ByteSpan token) {
    Request req = new_request(Command::SessionSetup, 1);
    ByteWriter w(req.body);
    w.u16(25);
    w.u8(flags);
    w.u8(kSigningEnabled);
    w.u32(0);  // Capabilities
    w.u32(0);  // Channel
    w.u16(uint16_t(wire::kHeaderSize + 24));
    w.u16(uint16_t(token.size()));
    w.u64(0);  // PreviousSessionId
    w.bytes(token);
    return req;
  };
  if (bind_to) {
    session_id_ = bind_to->session_id_;
    signing_key_ = bind_to->signing_key_;
  }
  Bytes sent;
  sign_next_ = bind_to != nullptr;
  Response r1 = setup_call(setup_request(spnego_init_token(ntlm_negotiate_message())), &sent);
  check(r1, kStatusMoreProcessing, "SESSION_SETUP (negotiate)");
  session_id_ = r1.hdr.session_id;
  ByteSpan blob = security_buffer(r1, wire::kHeaderSize + 4);
  Bytes challenge_msg;
  if (auth::is_raw_ntlmssp(blob)) {
    challenge_msg.assign(blob.begin(), blob.end());
  } else if (auto resp = auth::parse_neg_token_resp(blob)) {
    challenge_msg = resp->response_token;
  }
  auto ch = parse_ntlm_challenge(challenge_msg);
  if (!ch) fail("server sent no NTLMSSP CHALLENGE");
  if (dialect_ == 0x0311) {
    preauth_update(preauth_, sent);
    preauth_update(preauth_, r1.body);
  }

  NtlmCredentials cred{opt.user, opt.password, opt.domain.empty() ? ch->target_name : opt.domain};
  std::array<uint8_t, 8> client_challenge;
  std::array<uint8_t, 16> random_key;
  crypto::random_bytes(client_challenge);
  crypto::random_bytes(random_key);
  auto auth = ntlm_authenticate_message(*ch, cred, client_challenge, random_key, filetime_now());
  Request req2 = setup_request(spnego_resp_token(auth.message));
  sign_next_ = bind_to != nullptr;
  Response r2 = setup_call(std::move(req2), &sent);
  check(r2, 0, bind_to ? "SESSION_SETUP (binding)" : "SESSION_SETUP (authenticate)");
  if (dialect_ == 0x0311) preauth_update(preauth_, sent);  // the final response is not hashed
  if (bind_to)
    return take_channel_keys(*bind_to, crypto::derive_session_keys(dialect_, auth.session_key, preauth_, cipher_).signing_key);
  ByteReader rd(r2.body);
  rd.seek(wire::kHeaderSize + 2);
  uint16_t session_flags = rd.u16();
  if (session_flags & kSessionFlagGuest) fail("the server logged smbench in as guest");
  auto keys = crypto::derive_session_keys(dialect_, auth.session_key, preauth_, cipher_);
  signing_key_ = keys.signing_key;
  // The server's keys seen from this side: it decrypts what we encrypt.
  encrypt_key_ = keys.decryption_key;
  decrypt_key_ = keys.encryption_key;
  signing_ = opt.force_signing || (server_security_mode_ & kSigningRequired);
  if (opt.encrypt || (session_flags & kSessionFlagEncryptData)) start_encrypting();
}

// From here on every request goes in a TRANSFORM_HEADER (MS-SMB2 3.2.4.1.8).
void Connection::start_encrypting() {
  if (!cipher_ || encrypt_key_.empty()) fail("encryption asked for, but the server negotiated no cipher");
  encrypt_ = true;
}

void Connection::tree_connect(const ClientOptions& opt) {
  Bytes path = utf16("\\\\" + opt.host + "\\" + opt.share);
  Request req = new_request(Command::TreeConnect, 1);
  ByteWriter w(req.body);
  w.u16(9);
  w.u16(0);
  w.u16(uint16_t(wire::kHeaderSize + 8));
  w.u16(uint16_t(path.size()));
  w.bytes(path);
  // MS-SMB2 3.2.4.1.1: a 3.1.1 client signs TREE_CONNECT even when signing
  // is not otherwise required.
  sign_next_ = dialect_ == 0x0311 && !encrypt_;
  Response r = call(std::move(req));
  check(r, 0, ("TREE_CONNECT \\\\" + opt.host + "\\" + opt.share).c_str());
  tree_id_ = r.hdr.tree_id;
  ByteReader rd(r.body);
  rd.seek(wire::kHeaderSize + 4);
  if ((rd.u32() & kShareFlagEncrypt) && !encrypt_) start_encrypting();
}

Response Connection::setup_call(Request req, Bytes* sent_message) {
  std::array<Request, 1> one{std::move(req)};
  send(one);
  // send() leaves the last frame's message bytes in frame_ for this purpose.
  *sent_message = frame_;
  auto rs = receive();
  if (rs.size() != 1) fail("unexpected compound response during setup");
  return std::move(rs[0]);
}

Response Connection::call(Request req) {
  uint64_t id = send(std::move(req));
  for (;;) {
    for (auto& r : receive()) {
      if (r.hdr.message_id == id && r.status() != uint32_t(NtStatus::Pending)) return std::move(r);
    }
  }
}

uint64_t Connection::send(Request req) {
  std::array<Request, 1> one{std::move(req)};
  return send(one)[0];
}

std::vector<uint64_t> Connection::send(std::span<Request> reqs) {
  Bytes frame(4, 0);
  ByteWriter w(frame);
  std::vector<uint64_t> ids;
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t i = 0; i < reqs.size(); ++i) {
    Request& rq = reqs[i];
    size_t start = frame.size();
    wire::Header h;
    h.command = rq.command;
    h.credit_charge = dialect_ >= 0x0210 ? rq.credit_charge : 0;
    h.credits = std::max<uint16_t>(kCreditRequest, rq.credit_charge);
    h.flags = i > 0 ? uint32_t(wire::SMB2_FLAGS_RELATED_OPERATIONS) : 0u;
    h.message_id = next_message_id_;
    h.tree_id = tree_id_;
    h.session_id = session_id_;
    wire::write_header(w, h);
    w.bytes(rq.body);
    if (i + 1 < reqs.size()) {
      w.align(8, start);
      w.patch_u32(start + wire::hdr::NextCommand, uint32_t(frame.size() - start));
    }
    spans.emplace_back(start, frame.size() - start);
    ids.push_back(next_message_id_);
    next_message_id_ += std::max<uint16_t>(1, rq.credit_charge);
    credits_ -= std::min<uint32_t>(credits_, std::max<uint16_t>(1, rq.credit_charge));
  }
  if (encrypt_) {
    // Encrypted messages are not signed (MS-SMB2 3.2.4.1.1); the chain
    // travels whole in one transform.
    Bytes sealed = crypto::encrypt_message(*cipher_, encrypt_key_, session_id_, ByteSpan(frame).subspan(4));
    if (sealed.empty()) fail("encryption failed");
    frame.resize(4);
    frame.insert(frame.end(), sealed.begin(), sealed.end());
  } else if (signing_ || sign_next_) {
    for (auto [start, len] : spans)
      crypto::sign_message(sign_alg_, signing_key_, std::span<uint8_t>(frame).subspan(start, len));
  }
  sign_next_ = false;
  uint32_t len = uint32_t(frame.size() - 4);
  frame[1] = uint8_t(len >> 16);
  frame[2] = uint8_t(len >> 8);
  frame[3] = uint8_t(len);
  write_all(frame);
  // Kept for the preauth hash while setting up; a copy of every large
  // WRITE afterwards would only cost the client time.
  if (tree_id_ == 0) frame_.assign(frame.begin() + 4, frame.end());
  return ids;
}

std::vector<Response> Connection::receive() {
  uint8_t nb[4];
  read_exact(nb, 4);
  size_t len = (size_t(nb[1]) << 16) | (size_t(nb[2]) << 8) | nb[3];
  frame_.resize(len);
  read_exact(frame_.data(), len);
  if (len >= 4 && load_le32(frame_.data()) == crypto::kTransformProtocolId) {
    if (!cipher_) fail("an encrypted response on a connection without a cipher");
    auto plain = crypto::decrypt_message(*cipher_, decrypt_key_, frame_);
    if (!plain) fail("a response did not decrypt");
    frame_ = std::move(*plain);
    len = frame_.size();
  }
  std::vector<Response> out;
  size_t off = 0;
  while (off < len) {
    Response r;
    ByteSpan rest = ByteSpan(frame_).subspan(off);
    if (!wire::parse_header(rest, r.hdr)) fail("bad SMB2 response header");
    size_t elem = r.hdr.next_command ? r.hdr.next_command : rest.size();
    if (elem < wire::kHeaderSize || elem > rest.size()) fail("bad NextCommand in response");
    r.body.assign(rest.begin(), rest.begin() + elem);
    credits_ += r.hdr.credits;
    out.push_back(std::move(r));
    off += elem;
    if (!out.back().hdr.next_command) break;
  }
  return out;
}

void Connection::write_all(const Bytes& frame) {
  size_t done = 0;
  while (done < frame.size()) {
    ssize_t n = ::send(fd_, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(std::string("send: ") + strerror(errno));
    done += size_t(n);
  }
}

void Connection::read_exact(uint8_t* p, size_t n) {
  while (n) {
    ssize_t got = ::recv(fd_, p, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got == 0) fail("the server closed the connection");
    if (got < 0) fail(std::string("recv: ") + strerror(errno));
    p += got;
    n -= size_t(got);
  }
}

}  // namespace ringsmb::smbench
