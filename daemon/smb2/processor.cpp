#include "smb2/processor.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "common/log.hpp"
#include "crypto/smb2_keys.hpp"
#include "smb2/dispatch.hpp"
#include "smb2/thread_identity.hpp"
#include "smb2/lease.hpp"
#include "smb2/pipe_io.hpp"
#include "smb2/negotiate.hpp"

namespace ringsmb::smb2 {
namespace {

using wire::Command;
using wire::Header;

// MS-SMB2 2.2.2 ERROR response body.
void write_error_body(ByteWriter& w) {
  w.u16(9);
  w.u8(0);   // ErrorContextCount
  w.u8(0);   // Reserved
  w.u32(0);  // ByteCount
  w.u8(0);   // ErrorData (one byte, as Windows sends)
}

bool keeps_body(NtStatus s) { return nt_success(s) || s == NtStatus::MoreProcessingRequired; }

// MS-SMB2 3.3.5.2.5: charge = 1 + (max(payload) - 1) / 64 KiB.
uint16_t expected_charge(const Request& req) {
  ByteReader r(req.body);
  uint64_t payload = 0;
  switch (req.hdr.command) {
    case Command::Read: r.skip(4); payload = r.u32(); break;
    case Command::Write: r.skip(4); payload = r.u32(); break;
    case Command::Ioctl: {
      r.skip(24);
      r.skip(4);  // InputOffset
      uint32_t in = r.u32();
      r.skip(8);
      uint32_t max_out = (r.skip(4), r.u32());
      payload = std::max(in, max_out);
      break;
    }
    case Command::QueryDirectory: r.skip(28); payload = r.u32(); break;
    case Command::QueryInfo: r.skip(4); payload = r.u32(); break;
    case Command::SetInfo: r.skip(4); payload = r.u32(); break;
    case Command::ChangeNotify: r.skip(4); payload = r.u32(); break;
    default: return 1;
  }
  return payload == 0 ? 1 : uint16_t(1 + (payload - 1) / 65536);
}

// MS-SMB2 3.3.5.16: CANCEL names a request by AsyncId (async) or MessageId.
// A waiting CREATE completes with STATUS_CANCELLED in a message of its own,
// posted to this connection so the CANCEL's frame is done first; a waiting
// pipe READ is answered after the frame (pipe_io.cpp).
bool cancel_pending_create(ConnState& conn, ServerContext& server, const Header& h) {
  for (auto& [id, p] : conn.pending) {
    if (h.is_async() ? id != h.async_id : p.message_id != h.message_id) continue;
    if (p.node) server.files.drop_waiter(p.node, {conn.address, id});
    if (server.poster) {
      uint64_t async_id = id;
      server.poster->post(conn.address, [&server, async_id](ConnState& c, Bytes& out) {
        resume_pending(c, server, async_id, true, out);
      });
    }
    return true;
  }
  return false;
}

void cancel_request(ConnState& conn, ServerContext& server, const Header& h) {
  if (!cancel_pending_create(conn, server, h)) cancel_async(conn, h);
}

class ChainProcessor {
 public:
  ChainProcessor(ConnState& c, ServerContext& s, bool encrypted, uint64_t transform_session)
      : conn_(c), server_(s), encrypted_(encrypted), transform_session_(transform_session) {}
  FrameResult run(ByteSpan chain, Bytes& plain_out);
  // `out` of run() is the transport's buffer itself, where a FileSegment's
  // position means something (not a buffer that is encrypted or copied later).
  void writes_transport_buffer() { direct_out_ = true; }
  // Bytes of the responses that FileSegments carry instead of `out`.
  size_t file_bytes() const { return file_bytes_; }
  // The chain is the rest of one that went async at its first element:
  // that element completes async request `async_id` (or is cancelled).
  void resume(uint64_t async_id, const CompoundState& compound, NtStatus create_error, bool cancel) {
    resume_id_ = async_id;
    compound_ = compound;
    create_error_ = create_error;
    cancel_ = cancel;
  }

 private:
  void save_pending(ByteSpan rest, const CompoundState& before, NtStatus create_error_before);

  FrameResult one(ByteSpan pdu, const Header& h, Bytes& out);
  NtStatus check_and_dispatch(Request& req, const CommandSpec& spec, ByteWriter& body);
  NtStatus resolve_session(Request& req, const CommandSpec& spec);
  NtStatus lookup_session(Request& req, const CommandSpec& spec, uint64_t sid);
  NtStatus resolve_tree(Request& req);
  void finish_element(Bytes& out, size_t start, const Request& req, NtStatus status);
  bool signs_response(const Header& h, NtStatus status, const state::Session* signer) const;
  bool may_send_file(const Request& req) const;
  void seal_previous(Bytes& out, bool more_follow);

  ConnState& conn_;
  ServerContext& server_;
  bool encrypted_;
  uint64_t transform_session_;
  CompoundState compound_;
  size_t prev_start_ = SIZE_MAX;
  bool prev_sign_ = false;
  state::Session* prev_signer_ = nullptr;
  NtStatus create_error_ = NtStatus::Success;  // of the chain's last CREATE, until a FileId works again
  uint64_t resume_id_ = 0;  // the first element completes this async request
  bool cancel_ = false;
  bool direct_out_ = false;
  size_t file_bytes_ = 0;
  // The element just run went async: its async id and the file it waits on.
  uint64_t went_async_ = 0;
  std::shared_ptr<state::FileNode> wait_node_;
};

// Saves the chain from the element that went async to its end; it runs
// again when the wait ends (resume_pending).
void ChainProcessor::save_pending(ByteSpan rest, const CompoundState& before, NtStatus create_error_before) {
  PendingRequest& p = conn_.pending[went_async_];
  p.pdu.assign(rest.begin(), rest.end());
  p.message_id = load_le64(rest.data() + wire::hdr::MessageId);
  p.encrypted = encrypted_;
  p.transform_session = transform_session_;
  p.node = std::move(wait_node_);
  p.compound = before;
  p.create_error = create_error_before;
}

NtStatus ChainProcessor::resolve_session(Request& req, const CommandSpec& spec) {
  uint64_t sid = req.hdr.session_id;
  bool inherits = req.hdr.is_related() && compound_.in_chain;
  // MS-SMB2 3.3.5.2.7.2: a related element after one that had no valid
  // session fails, and so does every related element after it.
  if (inherits && compound_.session_failed && spec.needs_session) return NtStatus::InvalidParameter;
  if (inherits && sid == wire::kRelatedId) sid = compound_.session_id;
  compound_.session_id = sid;
  NtStatus st = lookup_session(req, spec, sid);
  if (spec.needs_session) compound_.session_failed = st != NtStatus::Success;
  return st;
}

NtStatus ChainProcessor::lookup_session(Request& req, const CommandSpec& spec, uint64_t sid) {
  state::Session* s = sid ? conn_.find_session(sid) : nullptr;
  if (encrypted_ && sid != transform_session_ && s) return NtStatus::AccessDenied;
  if (s && s->state == state::Session::State::Valid) {
    req.session = s;
    // MS-SMB2 3.3.5.2.4: verify signatures on signed requests; refuse
    // unsigned ones where signing is required (encryption covers both).
    if (!encrypted_ && req.hdr.command != Command::Cancel) {
      if (req.hdr.is_signed()) {
        if (!crypto::verify_message(conn_.signing_algorithm, s->keys.signing_key, req.pdu))
          return NtStatus::AccessDenied;
        s->seen_signed = true;
      } else if (s->signing_required && req.hdr.command != Command::Echo) {
        return NtStatus::AccessDenied;
      }
    }
    if (s->encrypt_data && !encrypted_ && conn_.is_smb3() && req.hdr.command != Command::SessionSetup)
      return NtStatus::AccessDenied;
    s->seen_encrypted = s->seen_encrypted || encrypted_;
    return NtStatus::Success;
  }
  if (!spec.needs_session) {
    req.session = s;  // SESSION_SETUP continuing an exchange, or none
    return NtStatus::Success;
  }
  return s ? NtStatus::AccessDenied : NtStatus::UserSessionDeleted;
}

NtStatus ChainProcessor::resolve_tree(Request& req) {
  uint32_t tid = req.hdr.tree_id;
  bool inherits = req.hdr.is_related() && compound_.in_chain;
  if (inherits && compound_.tree_failed) return NtStatus::InvalidParameter;  // 3.3.5.2.7.2, as for sessions
  if (inherits && tid == 0xFFFFFFFF) tid = compound_.tree_id;
  compound_.tree_id = tid;
  auto it = req.session->trees.find(tid);
  compound_.tree_failed = it == req.session->trees.end();
  if (it == req.session->trees.end()) return NtStatus::NetworkNameDeleted;
  req.tree = it->second.get();
  if (req.tree->encrypt && !encrypted_ && conn_.is_smb3()) return NtStatus::AccessDenied;
  return NtStatus::Success;
}

NtStatus ChainProcessor::check_and_dispatch(Request& req, const CommandSpec& spec, ByteWriter& body) {
  uint16_t size = req.body.size() >= 2 ? load_le16(req.body.data()) : 0;
  if (size != spec.structure_size && (!spec.alt_structure_size || size != spec.alt_structure_size))
    return NtStatus::InvalidParameter;
  if (req.body.size() < (size & ~1u)) return NtStatus::InvalidParameter;
  if (!conn_.negotiated && req.hdr.command != Command::Negotiate) return NtStatus::InvalidParameter;
  // 3.3.5.2.7.2: the first element of a chain cannot be related to anything;
  // related elements after it inherit the failure.
  if (req.hdr.is_related() && !compound_.in_chain) {
    compound_.session_failed = compound_.tree_failed = true;
    return NtStatus::InvalidParameter;
  }
  NtStatus st = resolve_session(req, spec);
  if (st != NtStatus::Success) return st;
  if (spec.needs_tree) {
    st = resolve_tree(req);
    if (st != NtStatus::Success) return st;
  }
  // 3.3.5.2.7.2 <260>: when a CREATE failed, the related elements after it
  // that would use its FileId fail with its status. Other failures do not
  // cascade: the next element uses the same FileId and succeeds or fails on
  // its own (what Windows and Samba do; smb2.compound.interim2).
  if (req.hdr.is_related() && compound_.in_chain && spec.has_file_id && create_error_ != NtStatus::Success)
    return create_error_;
  if (req.tree) become_user(req.tree->identity);
  req.may_send_file = may_send_file(req);
  return spec.handler(req, body);
}

// Sign when the request was signed or the session requires it. Interim
// responses are not signed (MS-SMB2 3.3.4.2 "SHOULD NOT"; 3.3.4.1.1 signs a
// response to a signed request unless it is an interim one).
bool ChainProcessor::signs_response(const Header& h, NtStatus status, const state::Session* signer) const {
  return !encrypted_ && status != NtStatus::Pending && signer && !signer->keys.signing_key.empty() &&
         (h.is_signed() || signer->signing_required ||
          (h.command == Command::SessionSetup && status == NtStatus::Success && !signer->is_guest &&
           !signer->is_anonymous));
}

// A response may leave file data for the transport to send (FileSegment)
// only when it goes out byte for byte as the handler wrote it: the chain's
// only element, into the transport's own buffer, neither encrypted nor
// signed (a signature or a cipher needs the data in memory).
bool ChainProcessor::may_send_file(const Request& req) const {
  return direct_out_ && conn_.transport_sends_files && !compound_.in_chain && req.hdr.next_command == 0 &&
         !signs_response(req.hdr, NtStatus::Success, req.session);
}

void ChainProcessor::finish_element(Bytes& out, size_t start, const Request& req, NtStatus status) {
  // Preauth integrity (3.1.1): NEGOTIATE response into the connection hash,
  // unfinished SESSION_SETUP responses into the session hash.
  ByteSpan element(out.data() + start, out.size() - start);
  if (conn_.dialect == config::kDialect311) {
    if (req.hdr.command == Command::Negotiate && status == NtStatus::Success) {
      auto h = crypto::sha512(conn_.preauth_hash, element);
      std::memcpy(conn_.preauth_hash.data(), h.data(), 64);
    } else if (req.hdr.command == Command::SessionSetup && status == NtStatus::MoreProcessingRequired) {
      if (state::Session* s = conn_.find_session(req.response_session_id)) {
        auto h = crypto::sha512(s->preauth_hash, element);
        std::memcpy(s->preauth_hash.data(), h.data(), 64);
      }
    }
  }
}

FrameResult ChainProcessor::one(ByteSpan pdu, const Header& h, Bytes& out) {
  const CommandSpec* spec = command_spec(h.command);
  Request req{conn_, server_, h, pdu, pdu.subspan(wire::kHeaderSize), encrypted_, compound_};
  uint64_t resumed = std::exchange(resume_id_, 0);
  req.async_id = resumed;
  // Only a CREATE waits (for oplock/lease break acknowledgments).
  req.can_go_async = h.command == Command::Create;
  NtStatus status;
  uint16_t charge = h.credit_charge;
  if (resumed) {
    status = NtStatus::Success;  // credits were taken when it first arrived
  } else if (!spec) {
    status = NtStatus::InvalidParameter;
  } else if (!conn_.credits.consume(h.message_id, conn_.supports_multi_credit ? std::max<uint16_t>(charge, 1) : 1)) {
    LOG_WARN("%s: message id %llu outside the credit window; dropping", conn_.client_address.c_str(),
             (unsigned long long)h.message_id);
    return FrameResult::Drop;
  } else if (conn_.supports_multi_credit && expected_charge(req) > std::max<uint16_t>(charge, 1)) {
    status = NtStatus::InvalidParameter;
  } else {
    status = NtStatus::Success;
  }

  size_t start = out.size();
  ByteWriter w(out);
  Header rh{};
  w.zeros(wire::kHeaderSize);  // header written after the handler ran
  if (status == NtStatus::Success && resumed && cancel_) status = NtStatus::Cancelled;
  else if (status == NtStatus::Success) status = check_and_dispatch(req, *spec, w);
  // STATUS_PENDING: the handler set conn_.going_async to the AsyncId of
  // the interim response (MS-SMB2 3.3.4.2), for a pipe READ or a CREATE.
  uint64_t interim_id = status == NtStatus::Pending ? std::exchange(conn_.going_async, 0) : 0;
  if (status == NtStatus::Pending && req.wait_node) {  // a CREATE: its chain is saved (run())
    went_async_ = interim_id;
    wait_node_ = std::move(req.wait_node);
    if (resumed) {  // still waiting: nothing to send yet
      out.resize(start);
      return FrameResult::Ok;
    }
  }
  if (!keeps_body(status) || out.size() == start + wire::kHeaderSize) {
    out.resize(start + wire::kHeaderSize);
    write_error_body(w);
  } else if (req.file_data) {  // the data follows the body, straight from the file
    req.file_data->at = out.size();
    file_bytes_ += req.file_data->length;
    conn_.out_files.push_back(std::move(*req.file_data));
  }
  if (!nt_success(status) && status != NtStatus::MoreProcessingRequired)
    LOG_DEBUG("%s: %s mid %llu -> %s", conn_.client_address.c_str(), spec ? spec->name : "?",
              (unsigned long long)h.message_id, nt_status_name(status));
  rh.credit_charge = h.credit_charge;
  rh.status = uint32_t(status);
  rh.command = h.command;
  // MS-SMB2 3.3.4.2: the interim response grants the credits; the final
  // one of an async request grants none.
  rh.credits = resumed ? 0 : conn_.credits.grant(h.credits, server_.config.global.smb2_max_credits);
  rh.flags = wire::SMB2_FLAGS_SERVER_TO_REDIR | (h.flags & wire::SMB2_FLAGS_RELATED_OPERATIONS);
  if (resumed || status == NtStatus::Pending) {  // final or interim response of an async request
    rh.flags |= wire::SMB2_FLAGS_ASYNC_COMMAND;
    rh.async_id = resumed ? resumed : interim_id;
  }
  rh.message_id = h.message_id;
  rh.tree_id = req.tree ? req.tree->tree_id : h.tree_id;
  rh.session_id = req.response_session_id ? req.response_session_id : h.session_id;
  if (h.is_related() && compound_.in_chain) {
    if (h.session_id == wire::kRelatedId) rh.session_id = compound_.session_id;
    if (h.tree_id == 0xFFFFFFFF) rh.tree_id = compound_.tree_id;
  }
  wire::store_header(out.data() + start, rh);
  finish_element(out, start, req, status);

  // The final SESSION_SETUP response is signed with the new key (MS-SMB2 3.3.5.5.3).
  state::Session* signer = req.session;
  if (h.command == Command::SessionSetup && status == NtStatus::Success)
    signer = conn_.find_session(req.response_session_id);
  bool sign = signs_response(h, status, signer);
  prev_start_ = start;
  prev_sign_ = sign;
  prev_signer_ = signer;
  compound_.in_chain = true;
  if (h.command == Command::Create)
    create_error_ = status;
  else if (spec && spec->has_file_id && nt_success(status))
    create_error_ = NtStatus::Success;
  return FrameResult::Ok;
}

// Pads the previous element to 8 bytes and links it when another follows,
// then signs it: each element of a compound response is signed on its own,
// padding included (MS-SMB2 3.3.4.1.3).
void ChainProcessor::seal_previous(Bytes& out, bool more_follow) {
  if (prev_start_ == SIZE_MAX) return;
  if (more_follow) {
    ByteWriter w(out);
    w.align(8, prev_start_);
    store_le32(out.data() + prev_start_ + wire::hdr::NextCommand, uint32_t(out.size() - prev_start_));
  }
  if (prev_sign_)
    crypto::sign_message(conn_.signing_algorithm, prev_signer_->keys.signing_key,
                         std::span<uint8_t>(out.data() + prev_start_, out.size() - prev_start_));
  prev_start_ = SIZE_MAX;
}

FrameResult ChainProcessor::run(ByteSpan chain, Bytes& out) {
  size_t off = 0;
  for (;;) {
    ByteSpan rest = chain.subspan(off);
    Header h;
    if (!wire::parse_header(rest, h)) return FrameResult::Drop;
    size_t len = rest.size();
    if (h.next_command) {
      if (h.next_command < wire::kHeaderSize || h.next_command > rest.size() || h.next_command % 8) {
        LOG_WARN("%s: bad NextCommand %u; dropping", conn_.client_address.c_str(), h.next_command);
        return FrameResult::Drop;
      }
      len = h.next_command;
    }
    // CANCEL gets no response of its own and uses no credit; the request it
    // names answers STATUS_CANCELLED later (cancel_request).
    if (h.command == Command::Cancel) {
      cancel_request(conn_, server_, h);
    } else {
      seal_previous(out, true);
      CompoundState before = compound_;
      NtStatus create_error_before = create_error_;
      if (one(rest.first(len), h, out) == FrameResult::Drop) return FrameResult::Drop;
      if (went_async_) {  // the rest of the chain runs when the wait ends
        save_pending(rest, before, create_error_before);
        break;
      }
    }
    if (!h.next_command) break;
    off += len;
  }
  seal_previous(out, false);
  return FrameResult::Ok;
}

FrameResult process_transform(ConnState& conn, ServerContext& server, ByteSpan frame, Bytes& out) {
  auto th = crypto::parse_transform_header(frame);
  if (!th || !conn.cipher) return FrameResult::Drop;
  state::Session* session = conn.find_session(th->session_id);
  if (!session || session->keys.decryption_key.empty()) return FrameResult::Drop;
  auto plain = crypto::decrypt_message(*conn.cipher, session->keys.decryption_key, frame);
  if (!plain) {
    LOG_WARN("%s: decryption failed; dropping", conn.client_address.c_str());
    return FrameResult::Drop;
  }
  Bytes encryption_key = session->keys.encryption_key;  // the chain may log the session off
  Bytes response;
  ChainProcessor chain(conn, server, true, th->session_id);
  if (chain.run(*plain, response) == FrameResult::Drop) return FrameResult::Drop;
  if (response.empty()) return FrameResult::Ok;
  Bytes sealed = crypto::encrypt_message(*conn.cipher, encryption_key, th->session_id, response);
  out.insert(out.end(), sealed.begin(), sealed.end());
  return FrameResult::Ok;
}

}  // namespace

FrameResult process_frame(ConnState& conn, ServerContext& server, ByteSpan frame, Bytes& out) {
  if (frame.size() < 4) return FrameResult::Drop;
  size_t len_pos = out.size();
  out.resize(len_pos + 4);
  FrameResult result;
  size_t files_before = conn.out_files.size();
  size_t file_bytes = 0;
  switch (load_le32(frame.data())) {
    case wire::kProtocolIdSmb1:
      result = conn.negotiated ? FrameResult::Drop : handle_smb1_negotiate(conn, server, frame, out);
      break;
    case wire::kProtocolIdTransform:
      result = process_transform(conn, server, frame, out);
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
      return FrameResult::Drop;
  }
  conn.credits.commit();
  if (result == FrameResult::Drop) {
    conn.out_files.resize(files_before);  // nothing of this frame is sent
    return result;
  }
  std::erase_if(conn.sessions, [](const auto& kv) { return kv.second->state == state::Session::State::Expired; });
  size_t len = out.size() - len_pos - 4 + file_bytes;
  if (len == 0) {
    out.resize(len_pos);  // nothing to send (CANCEL)
  } else {
    out[len_pos] = 0;
    out[len_pos + 1] = uint8_t(len >> 16);
    out[len_pos + 2] = uint8_t(len >> 8);
    out[len_pos + 3] = uint8_t(len);
  }
  append_late_responses(conn, out);  // async requests this frame completed, after its own response
  return result;
}

void resume_pending(ConnState& conn, ServerContext& server, uint64_t async_id, bool cancel, Bytes& out) {
  auto it = conn.pending.find(async_id);
  if (it == conn.pending.end()) return;
  PendingRequest p = std::move(it->second);
  conn.pending.erase(it);
  Bytes response;
  ChainProcessor chain(conn, server, p.encrypted, p.transform_session);
  chain.resume(async_id, p.compound, p.create_error, cancel);
  FrameResult r = chain.run(p.pdu, response);
  conn.credits.commit();
  if (r == FrameResult::Drop || response.empty()) return;
  Bytes message;
  if (p.encrypted) {
    state::Session* s = conn.find_session(p.transform_session);
    if (!s || !conn.cipher) return;  // logged off meanwhile: nothing can be sent
    message = crypto::encrypt_message(*conn.cipher, s->keys.encryption_key, p.transform_session, response);
  } else {
    message = std::move(response);
  }
  size_t len = message.size();
  out.push_back(0);
  out.push_back(uint8_t(len >> 16));
  out.push_back(uint8_t(len >> 8));
  out.push_back(uint8_t(len));
  out.insert(out.end(), message.begin(), message.end());
  append_late_responses(conn, out);  // pipe READs the resumed chain completed
}

void expire_pending(ConnState& conn, ServerContext& server, int64_t now_ms) {
  std::vector<std::shared_ptr<state::FileNode>> nodes;
  for (auto& [id, p] : conn.pending)
    if (p.node) nodes.push_back(p.node);
  for (auto& n : nodes) post_wakeups(server, server.files.expire_breaks(n, now_ms));
}

void teardown_connection(ConnState& conn, ServerContext& server) {
  for (auto& [id, p] : conn.pending)
    if (p.node) server.files.drop_waiter(p.node, {conn.address, id});
  conn.pending.clear();
  while (!conn.opens.empty()) close_open(conn, server, conn.opens.begin()->first);  // pipes too
  conn.async_requests.clear();  // nobody left to answer
  conn.late_responses.clear();
  for (auto& [id, s] : conn.sessions)
    if (s->state == state::Session::State::Valid && server.control) server.control->logout(s->user);
  conn.sessions.clear();
}

}  // namespace ringsmb::smb2
