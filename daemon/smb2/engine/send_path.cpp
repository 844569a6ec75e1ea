#include "smb2/engine/send_path.hpp"

#include <stdexcept>

#include "crypto/smb2_keys.hpp"

namespace ringsmb::smb2 {

namespace {

// ~Session freed its keys' contexts on this thread, but the last reply of
// a session that ended in its chain (LOGOFF, a failed re-authentication)
// is sealed afterwards with copies of them, which set the contexts up
// again: once it is sealed they go, so that no key of an ended session
// stays in the thread's table until other keys push it out.
void forget_keys_if_ended(const ConnState& conn, const ResponseSeal& seal) {
  if (!seal.encrypt && !seal.sign) return;
  if (conn.tables && conn.tables->sessions.contains(seal.session_id)) return;
  crypto::forget_key(seal.encryption_key);
  crypto::forget_key(seal.signing_key);
}

}  // namespace

size_t open_message(ConnState& conn, Bytes& out) {
  if (!conn.framing) throw std::logic_error("connection without framing");
  return conn.framing->open(out);
}

void sign_element(const ConnState& conn, ByteSpan signing_key, std::span<uint8_t> element, ByteSpan trailing) {
  crypto::sign_message(conn.signing_algorithm, signing_key, element, trailing);
}

void reserve_transform_header(Bytes& out) { out.resize(out.size() + crypto::kTransformHeaderSize); }

bool close_message(ConnState& conn, Bytes& out, size_t start, const ResponseSeal& seal, size_t file_bytes) {
  size_t room = seal.encrypt ? crypto::kTransformHeaderSize : 0;
  if (out.size() <= start + room && file_bytes == 0) {
    out.resize(start);
    conn.framing->discard(out, start);
    return true;
  }
  std::span<uint8_t> message(out.data() + start, out.size() - start);
  if (seal.encrypt) {
    // Encrypted where it was written, behind the room for the header; a
    // READ's data in a buffer of its own (the message's last segment) with it.
    // Anything else (file data not in memory) cannot be encrypted: dropped.
    bool data_ok = file_bytes == 0 || (!conn.out_files.empty() && conn.out_files.back().at == out.size() &&
                                       conn.out_files.back().bytes().size() == file_bytes);
    std::span<uint8_t> data = data_ok && file_bytes ? conn.out_files.back().bytes() : std::span<uint8_t>();
    if (!data_ok || !conn.cipher || seal.encryption_key.empty() ||
        !crypto::encrypt_in_place(*conn.cipher, seal.encryption_key, seal.session_id, message, data)) {
      std::erase_if(conn.out_files, [&](const FileSegment& f) { return f.at > start; });  // this message's
      out.resize(start);
      conn.framing->discard(out, start);
      return false;
    }
  } else if (seal.sign && !seal.signing_key.empty()) {
    sign_element(conn, seal.signing_key, message);
  }
  conn.framing->close(out, start, file_bytes);
  forget_keys_if_ended(conn, seal);
  return true;
}

bool send_message(ConnState& conn, Bytes& out, ByteSpan message, const ResponseSeal& seal) {
  size_t start = open_message(conn, out);
  if (seal.encrypt) reserve_transform_header(out);
  out.insert(out.end(), message.begin(), message.end());
  return close_message(conn, out, start, seal);
}

}  // namespace ringsmb::smb2
