// SMB2 NEGOTIATE (MS-SMB2 2.2.3, 2.2.4, 3.3.5.4) and the SMB1 upgrade.
#include <chrono>
#include <cstring>
#include <string_view>

#include "common/log.hpp"
#include "crypto/primitives.hpp"
#include "smb2/commands/handlers.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/commands/negotiate.hpp"
#include "smb2/engine/negotiated_sizes.hpp"
#include "smb2/engine/response_header.hpp"
#include "vfs/file_info.hpp"

namespace ringsmb::smb2 {
namespace {

enum : uint16_t { SMB2_NEGOTIATE_SIGNING_ENABLED = 0x1, SMB2_NEGOTIATE_SIGNING_REQUIRED = 0x2 };
enum : uint32_t {
  SMB2_GLOBAL_CAP_DFS = 0x1,
  SMB2_GLOBAL_CAP_LEASING = 0x2,
  SMB2_GLOBAL_CAP_LARGE_MTU = 0x4,
  SMB2_GLOBAL_CAP_MULTI_CHANNEL = 0x8,
  SMB2_GLOBAL_CAP_DIRECTORY_LEASING = 0x20,
  SMB2_GLOBAL_CAP_ENCRYPTION = 0x40,
};
enum : uint16_t {
  SMB2_PREAUTH_INTEGRITY_CAPABILITIES = 1,
  SMB2_ENCRYPTION_CAPABILITIES = 2,
  SMB2_SIGNING_CAPABILITIES = 8,
};
constexpr uint16_t kSha512 = 1;
constexpr size_t kNegotiateResponseFixed = 64;  // StructureSize 65 less the variable byte

uint64_t now_filetime() {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::system_clock::now().time_since_epoch()).count();
  return vfs::unix_to_filetime(ns / 1000000000, uint32_t(ns % 1000000000));
}

uint16_t pick_dialect(const ServerContext& server, ByteReader& r, uint16_t count, std::vector<uint16_t>& all) {
  uint16_t best = 0;
  for (uint16_t i = 0; i < count; ++i) {
    uint16_t d = r.u16();
    all.push_back(d);
    bool known = d == 0x0202 || d == 0x0210 || d == 0x0300 || d == 0x0302 || d == 0x0311;
    if (known && d >= server.config.global.min_protocol && d <= server.config.global.max_protocol && d > best)
      best = d;
  }
  return best;
}

// Server preference among what the client offers: GCM before CCM, 128 before 256.
std::optional<crypto::Aead> pick_cipher(ByteReader& r, uint16_t count) {
  bool offered[5] = {};
  for (uint16_t i = 0; i < count; ++i) {
    uint16_t c = r.u16();
    if (c >= 1 && c <= 4) offered[c] = true;
  }
  for (int c : {2, 4, 1, 3})
    if (offered[c]) return crypto::Aead(c);
  return std::nullopt;
}

std::optional<crypto::SigningAlgorithm> pick_signing(ByteReader& r, uint16_t count) {
  bool offered[3] = {};
  for (uint16_t i = 0; i < count; ++i) {
    uint16_t a = r.u16();
    if (a <= 2) offered[a] = true;
  }
  for (int a : {2, 1, 0})
    if (offered[a]) return crypto::SigningAlgorithm(a);
  return std::nullopt;
}

void write_context(ByteWriter& w, uint16_t type, const Bytes& data, size_t base) {
  w.align(8, base);
  w.u16(type);
  w.u16(uint16_t(data.size()));
  w.u32(0);
  w.bytes(data);
}

// Parses the client's 3.1.1 negotiate contexts and encodes ours.
NtStatus negotiate_contexts(Request& req, uint32_t offset, uint16_t count, Bytes& out, uint16_t& out_count) {
  if (count == 0) return NtStatus::InvalidParameter;
  bool have_preauth = false, offered_signing = false;
  std::optional<crypto::Aead> cipher;
  bool offered_cipher = false;
  std::optional<crypto::SigningAlgorithm> signing;
  ByteReader r(req.pdu);
  r.seek(offset);
  for (uint16_t i = 0; i < count && r.ok(); ++i) {
    r.seek((r.offset() + 7) & ~size_t(7));
    uint16_t type = r.u16();
    uint16_t len = r.u16();
    r.skip(4);
    ByteReader data(r.bytes(len));
    if (!r.ok()) return NtStatus::InvalidParameter;
    if (type == SMB2_PREAUTH_INTEGRITY_CAPABILITIES) {
      uint16_t n = data.u16();
      data.u16();  // SaltLength
      for (uint16_t k = 0; k < n; ++k)
        if (data.u16() == kSha512) have_preauth = true;
      if (!data.ok()) return NtStatus::InvalidParameter;
    } else if (type == SMB2_ENCRYPTION_CAPABILITIES) {
      offered_cipher = true;
      cipher = pick_cipher(data, data.u16());
    } else if (type == SMB2_SIGNING_CAPABILITIES) {
      offered_signing = true;
      signing = pick_signing(data, data.u16());
    }
  }
  if (!r.ok() || !have_preauth) return NtStatus::InvalidParameter;

  ByteWriter w(out);
  Bytes preauth;
  ByteWriter pw(preauth);
  pw.u16(1);
  pw.u16(32);
  pw.u16(kSha512);
  preauth.resize(preauth.size() + 32);
  crypto::random_bytes(std::span<uint8_t>(preauth.data() + 6, 32));
  write_context(w, SMB2_PREAUTH_INTEGRITY_CAPABILITIES, preauth, 0);
  out_count = 1;
  if (offered_cipher) {
    Bytes enc;
    ByteWriter ew(enc);
    ew.u16(1);
    ew.u16(cipher ? uint16_t(*cipher) : 0);
    write_context(w, SMB2_ENCRYPTION_CAPABILITIES, enc, 0);
    ++out_count;
    req.conn.cipher = cipher;
  }
  if (offered_signing) {
    Bytes sig;
    ByteWriter sw(sig);
    sw.u16(1);
    sw.u16(uint16_t(signing.value_or(crypto::SigningAlgorithm::AesCmac)));
    write_context(w, SMB2_SIGNING_CAPABILITIES, sig, 0);
    ++out_count;
  }
  req.conn.signing_algorithm = signing.value_or(crypto::SigningAlgorithm::AesCmac);
  return NtStatus::Success;
}

void settle_connection(ConnState& conn, ServerContext& server, uint16_t dialect) {
  conn.dialect = dialect;
  conn.server_security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED;
  if (server.config.global.signing == config::SigningPolicy::Mandatory)
    conn.server_security_mode |= SMB2_NEGOTIATE_SIGNING_REQUIRED;
  conn.signing_required = (conn.server_security_mode | conn.client_security_mode) & SMB2_NEGOTIATE_SIGNING_REQUIRED;
  conn.server_capabilities = 0;
  if (dialect >= 0x0210 && dialect != 0x02FF) {
    conn.server_capabilities |= SMB2_GLOBAL_CAP_LARGE_MTU | SMB2_GLOBAL_CAP_LEASING;
    conn.supports_multi_credit = true;
  }
  // RH leases on directories, asked for with RqLs v2 (MS-SMB2 3.3.5.9.11;
  // smb2/leases/directory_lease.hpp), only for a client that offers them itself
  // (Windows and the Linux client do). MS-SMB2 3.3.5.4 would allow the bit
  // unasked, but a client that does not expect it may take its directory
  // lease path regardless (impacket 0.10's CREATE then fails); Samba sends
  // it only when asked too. Of the other bits, 3.3.5.4 ties ENCRYPTION,
  // MULTI_CHANNEL, PERSISTENT_HANDLES and NOTIFICATIONS to the request;
  // DFS, LEASING and LARGE_MTU depend on the server alone.
  if (dialect >= 0x0300 && dialect != 0x02FF && (conn.client_capabilities & SMB2_GLOBAL_CAP_DIRECTORY_LEASING))
    conn.server_capabilities |= SMB2_GLOBAL_CAP_DIRECTORY_LEASING;
  // Session binding (smb2/commands/session_bind.hpp), where the setting allows it.
  if (dialect >= 0x0300 && dialect != 0x02FF && server.config.global.multi_channel &&
      (conn.client_capabilities & SMB2_GLOBAL_CAP_MULTI_CHANNEL))
    conn.server_capabilities |= SMB2_GLOBAL_CAP_MULTI_CHANNEL;
  if (dialect == 0x0300 || dialect == 0x0302) {
    conn.signing_algorithm = crypto::SigningAlgorithm::AesCmac;
    if (conn.client_capabilities & SMB2_GLOBAL_CAP_ENCRYPTION) {
      conn.server_capabilities |= SMB2_GLOBAL_CAP_ENCRYPTION;
      conn.cipher = crypto::Aead::Aes128Ccm;
    }
  } else if (dialect < 0x0300) {
    conn.signing_algorithm = crypto::SigningAlgorithm::HmacSha256;
  }
}

}  // namespace

void write_negotiate_body(ConnState& conn, ServerContext& server, uint16_t dialect, ByteSpan contexts,
                          uint16_t context_count, ByteWriter& w) {
  size_t base = w.size();  // body start = header start + 64
  w.u16(65);
  w.u16(conn.server_security_mode);
  w.u16(dialect);
  w.u16(context_count);
  w.bytes(server.server_guid.data(), 16);
  w.u32(conn.server_capabilities);
  const NegotiatedSizes sizes = negotiated_sizes(dialect, server);
  w.u32(sizes.max_trans);
  w.u32(sizes.max_read);
  w.u32(sizes.max_write);
  w.u64(now_filetime());
  w.u64(0);  // ServerStartTime: 0 as MS-SMB2 says
  const Bytes& blob = server.negotiate_hint;
  w.u16(uint16_t(wire::kHeaderSize + kNegotiateResponseFixed));
  w.u16(uint16_t(blob.size()));
  size_t ctx_offset_pos = w.size();
  w.u32(0);
  w.bytes(blob);
  if (context_count) {
    w.align(8, base - wire::kHeaderSize);
    w.patch_u32(ctx_offset_pos, uint32_t(w.size() - (base - wire::kHeaderSize)));
    w.bytes(contexts);
  }
}

NtStatus handle_negotiate(Request& req, ByteWriter& w) {
  ConnState& conn = req.conn;
  if (conn.negotiated) return NtStatus::InvalidParameter;  // MS-SMB2 3.3.5.4: a second NEGOTIATE
  ByteReader r(req.body);
  r.skip(2);
  uint16_t dialect_count = r.u16();
  conn.client_security_mode = r.u16();
  r.skip(2);
  conn.client_capabilities = r.u32();
  ByteSpan guid = r.bytes(16);
  uint32_t ctx_offset = r.u32();
  uint16_t ctx_count = r.u16();
  r.skip(2);
  if (!r.ok() || dialect_count == 0) return NtStatus::InvalidParameter;
  std::memcpy(conn.client_guid.data(), guid.data(), 16);
  conn.client_dialects.clear();
  uint16_t dialect = pick_dialect(req.server, r, dialect_count, conn.client_dialects);
  if (!r.ok()) return NtStatus::InvalidParameter;
  if (dialect == 0) return NtStatus::NotSupported;

  settle_connection(conn, req.server, dialect);
  Bytes contexts;
  uint16_t out_count = 0;
  if (dialect == 0x0311) {
    NtStatus st = negotiate_contexts(req, ctx_offset, ctx_count, contexts, out_count);
    if (st != NtStatus::Success) return st;
    conn.preauth_hash.fill(0);
    auto h = crypto::sha512(conn.preauth_hash, req.pdu);
    std::memcpy(conn.preauth_hash.data(), h.data(), 64);
  }
  write_negotiate_body(conn, req.server, dialect, contexts, out_count, w);
  conn.negotiated = true;
  // The ClientGuid counts for lease breaks only once a session on this
  // connection is valid (state/client_connections.hpp): it is no secret.
  LOG_DEBUG("%s: negotiated dialect 0x%04x", conn.client_address.c_str(), dialect);
  return NtStatus::Success;
}

// SMB1 NEGOTIATE: find "SMB 2.???" (answer 0x02FF, the client then sends an
// SMB2 NEGOTIATE) or "SMB 2.002" (answer 2.0.2 directly).
FrameResult handle_smb1_negotiate(ConnState& conn, ServerContext& server, ByteSpan frame, Bytes& out) {
  constexpr size_t kSmb1HeaderSize = 32;
  if (frame.size() < kSmb1HeaderSize + 3 || frame[4] != 0x72) return FrameResult::Drop;
  ByteReader r(frame.subspan(kSmb1HeaderSize));
  r.u8();  // WordCount
  uint16_t byte_count = r.u16();
  ByteSpan dialects = r.bytes(byte_count);
  if (!r.ok()) return FrameResult::Drop;
  bool wildcard = false, smb2002 = false;
  std::string_view all(reinterpret_cast<const char*>(dialects.data()), dialects.size());
  for (size_t pos = 0; pos < all.size();) {
    size_t end = all.find('\0', pos);
    if (end == std::string_view::npos) break;
    std::string_view name = all.substr(pos + 1, end - pos - 1);  // skip BufferFormat 0x02
    if (name == "SMB 2.???") wildcard = true;
    if (name == "SMB 2.002") smb2002 = true;
    pos = end + 1;
  }
  uint16_t dialect;
  if (wildcard && server.config.global.max_protocol > 0x0202) dialect = 0x02FF;
  else if (smb2002 && server.config.global.min_protocol <= 0x0202) dialect = 0x0202;
  else return FrameResult::Drop;

  settle_connection(conn, server, dialect);
  conn.credits.consume(0, 1);  // the SMB1 request took message id 0
  ByteWriter w(out);
  uint16_t credits = conn.credits.grant(1, server.config.global.smb2_max_credits);
  conn.credits.commit();
  wire::write_header(w, response_header({.command = wire::Command::Negotiate, .credits = credits}));
  write_negotiate_body(conn, server, dialect, {}, 0, w);
  conn.negotiated = dialect != 0x02FF;
  return FrameResult::Ok;
}

}  // namespace ringsmb::smb2
