#include "smb2/send_path.hpp"

#include <stdexcept>

#include "crypto/smb2_keys.hpp"

namespace ringsmb::smb2 {

size_t open_message(ConnState& conn, Bytes& out) {
  if (!conn.framing) throw std::logic_error("connection without framing");
  return conn.framing->open(out);
}

void sign_element(const ConnState& conn, ByteSpan signing_key, std::span<uint8_t> element) {
  crypto::sign_message(conn.signing_algorithm, signing_key, element);
}

bool close_message(ConnState& conn, Bytes& out, size_t start, const ResponseSeal& seal, size_t file_bytes) {
  if (out.size() == start && file_bytes == 0) {
    conn.framing->discard(out, start);
    return true;
  }
  std::span<uint8_t> message(out.data() + start, out.size() - start);
  if (seal.encrypt) {
    if (!conn.cipher || seal.encryption_key.empty()) {
      out.resize(start);
      conn.framing->discard(out, start);
      return false;
    }
    Bytes sealed = crypto::encrypt_message(*conn.cipher, seal.encryption_key, seal.session_id, message);
    out.resize(start);
    out.insert(out.end(), sealed.begin(), sealed.end());
  } else if (seal.sign && !seal.signing_key.empty()) {
    sign_element(conn, seal.signing_key, message);
  }
  conn.framing->close(out, start, file_bytes);
  return true;
}

bool send_message(ConnState& conn, Bytes& out, ByteSpan message, const ResponseSeal& seal) {
  size_t start = open_message(conn, out);
  out.insert(out.end(), message.begin(), message.end());
  return close_message(conn, out, start, seal);
}

}  // namespace ringsmb::smb2
