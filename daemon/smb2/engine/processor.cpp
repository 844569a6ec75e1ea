#include "smb2/engine/processor.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "common/log.hpp"
#include "crypto/plain_message.hpp"
#include "crypto/smb2_keys.hpp"
#include "smb2/engine/async_write.hpp"
#include "smb2/engine/chain.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/engine/send_path.hpp"

namespace ringsmb::smb2 {
namespace {

using wire::Command;
using wire::Header;

// The decrypted message's buffer, handed over to a WRITE that keeps its
// data past the frame (the bytes stay where they are).
class DecryptedOwner final : public FrameOwner {
 public:
  explicit DecryptedOwner(crypto::PlainMessage& plain) : plain_(plain) {}
  std::shared_ptr<const void> keep(ByteSpan bytes) override {
    auto begin = reinterpret_cast<uintptr_t>(plain_.data.get());
    auto at = reinterpret_cast<uintptr_t>(bytes.data());
    if (!plain_.data || at < begin || at + bytes.size() > begin + plain_.size) return nullptr;
    return std::move(plain_.data).share();
  }
  std::span<uint8_t> writable(ByteSpan) override { return {}; }

 private:
  crypto::PlainMessage& plain_;
};

// CONN's frame owner is OWNER for the lifetime of this object.
class ScopedFrameOwner {
 public:
  ScopedFrameOwner(ConnState& conn, FrameOwner* owner) : conn_(conn), saved_(conn.frame_owner) {
    conn.frame_owner = owner;
  }
  ~ScopedFrameOwner() { conn_.frame_owner = saved_; }
  ScopedFrameOwner(const ScopedFrameOwner&) = delete;
  ScopedFrameOwner& operator=(const ScopedFrameOwner&) = delete;

 private:
  ConnState& conn_;
  FrameOwner* saved_;
};

// Where an encrypted chain's interim response follows other responses
// (ChainProcessor::interim_at); SIZE_MAX: none does.
struct InterimSplit {
  size_t interim_at = SIZE_MAX;
  size_t before_interim_at = SIZE_MAX;
};

// The chain of an encrypted frame, decrypted where the frame lies when its
// owner lets it be written over (the transport's frame buffer, which a
// large WRITE then keeps as a plain frame's: no second buffer, one pass
// over the data), else into a buffer of its own.
struct Decrypted {
  std::span<uint8_t> frame;  // decrypted in place: the whole frame, header included
  std::span<uint8_t> chain;  // the plaintext in it
  std::optional<crypto::PlainMessage> copy;
  ByteSpan message() const { return copy ? copy->span() : ByteSpan(chain); }
};

std::optional<Decrypted> decrypt(ConnState& conn, ByteSpan key, ByteSpan frame) {
  Decrypted d;
  d.frame = conn.frame_owner ? conn.frame_owner->writable(frame) : std::span<uint8_t>();
  if (!d.frame.empty()) {
    auto chain = crypto::decrypt_in_place(*conn.cipher, key, d.frame);
    if (!chain) return std::nullopt;
    d.chain = *chain;
  } else {
    d.copy = crypto::decrypt_message_unzeroed(*conn.cipher, key, frame);
    if (!d.copy) return std::nullopt;
  }
  return d;
}

// An encrypted frame (MS-SMB2 3.3.5.2.1.1): the chain inside is answered
// in one message encrypted for the same session (but see InterimSplit).
FrameResult process_transform(ConnState& conn, ServerContext& server, ByteSpan frame, Bytes& out,
                              ResponseSeal& seal, size_t& file_bytes, InterimSplit& split) {
  auto th = crypto::parse_transform_header(frame);
  if (!th || !conn.cipher) return FrameResult::Drop;
  state::Session* session = conn.find_session(th->session_id);
  if (!session || session->keys.decryption_key.empty()) return FrameResult::Drop;
  // Behind the connection's WRITEs (smb2/engine/async_write.hpp): what
  // cannot be a WRITE that runs beside them waits as it came.
  if (conn.writes_in_flight && !may_run_beside_writes(conn, server, th->original_message_size))
    return FrameResult::Hold;
  auto plain = decrypt(conn, session->keys.decryption_key, frame);
  if (!plain) {
    LOG_WARN("%s: decryption failed; dropping", conn.client_address.c_str());
    return FrameResult::Drop;
  }
  ByteSpan message = plain->message();
  if (conn.writes_in_flight && !runs_beside_writes(conn, server, message)) {
    // The transport keeps the frame to take it again later, as it came.
    if (plain->frame.empty()) return FrameResult::Hold;
    bool back = crypto::reseal_in_place(*conn.cipher, session->keys.decryption_key, plain->frame);
    return back ? FrameResult::Hold : FrameResult::Drop;
  }
  // A large WRITE may keep the message (smb2/engine/async_write.hpp): the
  // frame's owner keeps a frame decrypted in place.
  std::optional<DecryptedOwner> owner;
  std::optional<ScopedFrameOwner> scoped;
  if (plain->copy) {
    owner.emplace(*plain->copy);
    scoped.emplace(conn, &*owner);
  }
  seal.encrypt = true;
  seal.session_id = th->session_id;
  seal.encryption_key = session->keys.encryption_key;  // the chain may log the session off
  reserve_transform_header(out);  // the reply is encrypted where the chain writes it
  ChainProcessor chain(conn, server, true, th->session_id);
  chain.writes_transport_buffer();
  FrameResult result = chain.run(message, out);
  file_bytes = chain.file_bytes();
  split = {chain.interim_at(), chain.before_interim_at()};
  return result;
}

// The interim response of an encrypted chain that went async after other
// elements were answered goes out in a transform of its own, after theirs:
// the Linux client (6.1) stops at a STATUS_PENDING inside a transform and
// drops the other responses it holds (receive_encrypted_standard), so the
// CREATE of its CREATE + SET_INFO + CLOSE rename, answered beside the
// interim of a rename waiting for breaks, was never seen and the rename
// hung. Samba too sends the responses so far and the interim apart. The
// element before the interim becomes the last of its message.
Bytes split_interim(Bytes& out, const InterimSplit& split, size_t file_bytes) {
  Bytes interim;
  if (split.interim_at == SIZE_MAX || file_bytes != 0 || split.interim_at > out.size()) return interim;
  interim.assign(out.begin() + ptrdiff_t(split.interim_at), out.end());
  out.resize(split.interim_at);
  store_le32(out.data() + split.before_interim_at + wire::hdr::NextCommand, 0);
  return interim;
}

// A binding SESSION_SETUP alone in its frame (MS-SMB2 3.3.5.5) for a
// session whose connection is on another worker: this connection is to
// move there and the frame to run there (docs/internals-sessions.md,
// "Multichannel"), where the binding's checks are made as anywhere. Not
// when the transport could not move it (move_declined): then it is
// refused here.
bool binds_elsewhere(ConnState& conn, ServerContext& server, ByteSpan frame) {
  constexpr size_t kFlagsAt = wire::kHeaderSize + 2;  // SESSION_SETUP request Flags
  constexpr uint8_t kBinding = 0x1;
  if (!conn.local_conns || conn.move_declined || !conn.is_smb3() || frame.size() <= kFlagsAt) return false;
  if (wire::Command(load_le16(frame.data() + wire::hdr::Command)) != Command::SessionSetup) return false;
  if (load_le32(frame.data() + wire::hdr::NextCommand) != 0 || !(frame[kFlagsAt] & kBinding)) return false;
  uint64_t sid = load_le64(frame.data() + wire::hdr::SessionId);
  if (!sid || conn.tables->sessions.contains(sid)) return false;
  std::optional<state::SessionHome> home = server.sessions.find(sid);
  if (!home || conn.local_conns->find_conn(home->conn.conn_id)) return false;
  conn.move_to = home->conn;
  return true;
}

// A NEGOTIATE alone in its frame, from a client that offers multichannel
// (SMB2_GLOBAL_CAP_MULTI_CHANNEL) and already has a connection with a
// session on another worker (state::ClientConnections, by ClientGuid):
// this connection moves there before NEGOTIATE runs, as Samba passes a
// client's new connection to the smbd process of its ClientGuid. Its
// bindings then find the session's connection on their own worker,
// whichever of the client's connections already share tables
// (smb2.session.bind2). Once per connection; not when the transport
// could not move it.
bool negotiates_elsewhere(ConnState& conn, ServerContext& server, ByteSpan frame) {
  constexpr size_t kCapabilitiesAt = wire::kHeaderSize + 8;  // NEGOTIATE request Capabilities
  constexpr size_t kClientGuidAt = wire::kHeaderSize + 12;
  constexpr uint32_t kMultiChannel = 0x8;
  if (!conn.local_conns || conn.move_declined || conn.placed_with_client || conn.negotiated) return false;
  if (frame.size() < kClientGuidAt + 16 || !server.config.global.multi_channel) return false;
  if (wire::Command(load_le16(frame.data() + wire::hdr::Command)) != Command::Negotiate) return false;
  if (load_le32(frame.data() + wire::hdr::NextCommand) != 0) return false;
  if (!(load_le32(frame.data() + kCapabilitiesAt) & kMultiChannel)) return false;
  state::Guid guid;
  std::memcpy(guid.data(), frame.data() + kClientGuidAt, guid.size());
  if (guid == state::Guid{}) return false;
  std::optional<state::ConnAddress> home = server.clients.oldest(guid);
  if (!home || conn.local_conns->find_conn(home->conn_id)) return false;
  conn.placed_with_client = true;
  conn.move_to = home;
  return true;
}

}  // namespace

bool may_change_file_data(ByteSpan frame) {
  if (frame.size() < wire::kHeaderSize || load_le32(frame.data()) != wire::kProtocolIdSmb2) return true;
  if (load_le32(frame.data() + wire::hdr::NextCommand) != 0) return true;
  const CommandSpec* spec = command_spec(wire::Command(load_le16(frame.data() + wire::hdr::Command)));
  return spec && spec->changes_file_data;
}

FrameResult process_frame(ConnState& conn, ServerContext& server, ByteSpan frame, Bytes& out) {
  if (frame.size() < 4) return FrameResult::Drop;
  // Behind this connection's large WRITEs (smb2/engine/async_write.hpp); an
  // encrypted frame is looked at once decrypted (process_transform).
  if (conn.writes_in_flight && load_le32(frame.data()) == wire::kProtocolIdSmb2 &&
      !runs_beside_writes(conn, server, frame))
    return FrameResult::Hold;
  if (load_le32(frame.data()) == wire::kProtocolIdSmb2 &&
      (negotiates_elsewhere(conn, server, frame) || binds_elsewhere(conn, server, frame)))
    return FrameResult::Move;
  size_t start = open_message(conn, out);
  FrameResult result;
  size_t files_before = conn.out_files.size();
  size_t file_bytes = 0;
  ResponseSeal seal;  // the elements sign themselves; only an encrypted chain is sealed whole
  InterimSplit split;
  switch (load_le32(frame.data())) {
    case wire::kProtocolIdSmb1:
      result = conn.negotiated ? FrameResult::Drop : command_table().smb1_negotiate(conn, server, frame, out);
      break;
    case wire::kProtocolIdTransform:
      result = process_transform(conn, server, frame, out, seal, file_bytes, split);
      break;
    case wire::kProtocolIdSmb2: {
      ChainProcessor chain(conn, server, false, 0);
      chain.writes_transport_buffer();
      result = chain.run(frame, out);
      file_bytes = chain.file_bytes();
      break;
    }
    default:
      LOG_WARN("%s: not an SMB frame; dropping", conn.client_address.c_str());
      result = FrameResult::Drop;
  }
  conn.credits.commit();
  if (result != FrameResult::Ok) {  // Drop, or Hold (then nothing was done)
    out.resize(start);
    conn.framing->discard(out, start);
    conn.out_files.resize(files_before);  // nothing of this frame is sent
    return result;
  }
  if (std::exchange(conn.sessions_expired, false))  // not per frame: a search of every session
    std::erase_if(conn.tables->sessions, [](const auto& kv) { return kv.second->state == state::Session::State::Expired; });
  Bytes interim = seal.encrypt ? split_interim(out, split, file_bytes) : Bytes();
  close_message(conn, out, start, seal, file_bytes);  // nothing to send for a lone CANCEL
  if (!interim.empty()) send_message(conn, out, interim, seal);
  send_ready(conn, server, out);  // async requests this frame completed, after its own response
  return result;
}

}  // namespace ringsmb::smb2
