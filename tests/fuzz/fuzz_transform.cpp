// libFuzzer target: the SMB3 encryption path (daemon/crypto/transform.cpp
// through smb2::process_frame), on a connection whose session (id 1) has
// keys for the cipher the input picks. Three ways in, chosen by the first
// byte (bits 0-1: cipher, bits 2-3: mode):
//   0: the rest is a frame as it comes off the wire (header parsing, size
//      checks and tag verification of arbitrary bytes);
//   1: the rest is a plaintext SMB2 chain, encrypted with the session's
//      client-to-server key, so decryption succeeds and the decrypted chain
//      runs through the processor; the response must decrypt again with
//      the client's key (else the harness aborts);
//   2: as 1, then the transform header's bytes 20..51 (nonce,
//      OriginalMessageSize, Flags, SessionId) are overwritten by the
//      input's last 32 bytes, which the AAD and the size checks must catch.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "crypto/smb2_keys.hpp"
#include "control/local_control_plane.hpp"
#include "ipc/control_plane.hpp"
#include "fuzz_connection.hpp"
#include "smb2/fixture.hpp"
#include "smb2/leases/lease.hpp"
#include "smb2/commands/command_table.hpp"
#include "smb2/commands/teardown.hpp"
#include "smb2/engine/processor.hpp"

namespace {

using namespace ringsmb;
using namespace ringsmb::smb2;

struct World {
  test::Smb2Fixture fx;
  std::unique_ptr<ipc::ControlPlane> control;

  World() {
    // The fixture's tree is writable whatever the share says: inputs that
    // decrypt to WRITEs and SET_INFOs write there.
    fuzz::confine_share(fx.dir(), "fuzz_transform");
    config::ShareConfig share;
    share.name = "share";
    share.path = fx.dir().string();
    share.read_only = true;  // this target is about the transform, not the file system
    fx.server.config.shares.push_back(share);
    control = control::make_local_control_plane(fx.server.config);
    fx.server.control = control.get();
    fx.write_file("a.txt", "hello, fuzzer");
  }
};

Bytes key(size_t n, uint8_t seed) {
  Bytes k(n);
  for (size_t i = 0; i < n; ++i) k[i] = uint8_t(seed + i * 7);
  return k;
}

using fuzz::renumber;

// Every sealed response the server wrote must open with the client's key.
void check_responses(crypto::Aead alg, ByteSpan server_out_key, const Bytes& out) {
  size_t off = 0;
  while (out.size() - off >= 4) {
    size_t len = (size_t(out[off + 1]) << 16) | (size_t(out[off + 2]) << 8) | out[off + 3];
    if (len > out.size() - off - 4) abort();
    ByteSpan frame(out.data() + off + 4, len);
    if (crypto::parse_transform_header(frame) && !crypto::decrypt_message(alg, server_out_key, frame)) abort();
    off += 4 + len;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  install_commands();
  static World* world = new World();
  if (size < 1 || size > 256 * 1024) return 0;
  auto alg = crypto::Aead(1 + (data[0] & 3));
  int mode = (data[0] >> 2) & 3;
  ByteSpan rest(data + 1, size - 1);

  ConnState conn;
  state::Session* session = fuzz::open_connection(conn, world->fx.dir());
  conn.cipher = alg;
  session->keys.encryption_key = key(crypto::aead_key_size(alg), 0x11);  // ServerOut
  session->keys.decryption_key = key(crypto::aead_key_size(alg), 0x77);  // ServerIn
  session->keys.signing_key = key(16, 0x33);
  session->encrypt_data = true;

  Bytes frame;
  if (mode == 0) {
    frame.assign(rest.begin(), rest.end());
  } else {
    Bytes chain(rest.begin(), rest.end());
    uint64_t next_mid = 1;
    renumber(chain, next_mid);
    frame = crypto::encrypt_message(alg, session->keys.decryption_key, 1, chain);
    if (mode >= 2 && rest.size() >= 32 && frame.size() >= crypto::kTransformHeaderSize)
      memcpy(frame.data() + 20, rest.data() + rest.size() - 32, 32);
  }
  Bytes out;
  Bytes server_out = session->keys.encryption_key;  // the chain may log the session off
  if (process_frame(conn, world->fx.server, frame, out) == FrameResult::Ok) check_responses(alg, server_out, out);
  teardown_connection(conn, world->fx.server);
  return 0;
}
