#include "smb2/engine/chain.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "common/log.hpp"
#include "crypto/smb2_keys.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/channel_sequence.hpp"
#include "smb2/engine/clock.hpp"
#include "smb2/engine/response_header.hpp"
#include "smb2/engine/send_path.hpp"
#include "smb2/engine/thread_identity.hpp"

namespace ringsmb::smb2 {
namespace {

using wire::Command;
using wire::Header;

bool keeps_body(NtStatus s) { return nt_success(s) || s == NtStatus::MoreProcessingRequired; }

// MS-SMB2 3.3.5.2.5: charge = 1 + (max(payload) - 1) / 64 KiB, the payload
// being the largest of the body fields the dispatch table names.
uint16_t expected_charge(const CommandSpec& spec, ByteSpan body) {
  uint64_t payload = 0;
  for (uint8_t at : spec.payload_at)
    if (at && body.size() >= size_t(at) + 4) payload = std::max<uint64_t>(payload, load_le32(body.data() + at));
  return payload == 0 ? 1 : uint16_t(1 + (payload - 1) / 65536);
}

}  // namespace

// The worker's counters (smb2/engine/metrics.hpp). Each request is counted once,
// at its first response: one that goes async counts its interim
// STATUS_PENDING and the time to it, not the wait. The elements of a chain
// share one clock reading between them. The file data of a READ or WRITE
// response is counted whenever it goes out (an async pipe read's too):
// DataLength and Count both sit 4 bytes into those response bodies.
void ChainProcessor::count(const Request& req, NtStatus status, uint64_t resumed, Scopes scopes, const Bytes& out,
                           size_t start) {
  if (!conn_.metrics) return;
  const Header& h = req.hdr;
  uint64_t now = monotonic_ns();
  if (!resumed)
    conn_.metrics->record(uint16_t(h.command), uint32_t(status), now - last_ns_, scopes.share, scopes.user);
  last_ns_ = now;
  constexpr size_t kDataCountAt = wire::kHeaderSize + 4;
  if ((h.command == Command::Read || h.command == Command::Write) && status == NtStatus::Success &&
      out.size() >= start + kDataCountAt + 4)
    conn_.metrics->record_data(h.command == Command::Read, load_le32(out.data() + start + kDataCountAt),
                               scopes.share, scopes.user);
}

// The share slot is taken before the handler, which may end the tree
// (TREE_DISCONNECT); a session lives to the end of the frame. A
// TREE_CONNECT is counted on the share it connected, a SESSION_SETUP on
// the user it logged in (or re-authenticated) as.
ChainProcessor::Scopes ChainProcessor::scopes_after(const Request& req, NtStatus status, Scopes before) const {
  if (!conn_.metrics) return before;
  if (before.share == kNoScope && req.tree) before.share = req.tree->metrics_slot;
  const state::Session* s = req.session;
  if (req.hdr.command == Command::SessionSetup)
    s = nt_success(status) ? conn_.find_session(req.response_session_id) : nullptr;
  if (s) before.user = s->metrics_slot;  // kNoScope until a login completes; a LOGOFF keeps it
  return before;
}

// Saves the chain from the element that went async to its end in its
// waiting request; it runs again when the wait ends (rerun_waiting_chain).
void ChainProcessor::save_chain(ByteSpan rest, const CompoundState& before, NtStatus create_error_before) {
  WaitingRequest* w = find_waiting(conn_, went_async_);
  if (!w) return;
  w->pdu.assign(rest.begin(), rest.end());
  w->encrypted = encrypted_;
  w->transform_session = transform_session_;
  w->compound = before;
  w->create_error = create_error_before;
}

// MS-SMB2 3.3.5.2.3 and 3.3.5.2.5: the MessageId must lie in the credit
// window (else the connection is dropped: false) and the CreditCharge must
// cover the payload (else STATUS_INVALID_PARAMETER in STATUS).
bool ChainProcessor::charge_credits(const Header& h, const CommandSpec* spec, ByteSpan body, NtStatus& status) {
  status = NtStatus::Success;
  if (!spec) {
    status = NtStatus::InvalidParameter;
    return true;
  }
  uint16_t charge = conn_.supports_multi_credit ? std::max<uint16_t>(h.credit_charge, 1) : 1;
  if (!conn_.credits.consume(h.message_id, charge)) {
    LOG_WARN("%s: message id %llu outside the credit window; dropping", conn_.client_address.c_str(),
             (unsigned long long)h.message_id);
    return false;
  }
  if (conn_.supports_multi_credit && expected_charge(*spec, body) > charge) status = NtStatus::InvalidParameter;
  return true;
}
NtStatus ChainProcessor::resolve_session(Request& req, const CommandSpec& spec) {
  uint64_t sid = req.hdr.session_id;
  bool inherits = req.hdr.is_related() && compound_.in_chain;
  // MS-SMB2 3.3.5.2.7.2: a related element after one that had no valid
  // session fails, and so does every related element after it.
  if (inherits && compound_.session_failed && spec.needs_session()) return NtStatus::InvalidParameter;
  if (inherits && sid == wire::kRelatedId) sid = compound_.session_id;
  compound_.session_id = sid;
  NtStatus st = lookup_session(req, spec, sid);
  if (spec.needs_session()) compound_.session_failed = st != NtStatus::Success;
  return st;
}

// A signed request naming a session of which this connection is no
// channel (a binding not made, or refused): its USER_SESSION_DELETED goes
// back signed with the session's key when the request checked out with it
// (clients that sign take the status only from a signed response; 3.3.4.1.1).
// So does one naming a session that a failed re-authentication ended, with
// this channel's key (SessionTables::ended).
static void sign_as_session(Request& req, const ConnState& conn, ServerContext& server, uint64_t sid) {
  if (const Bytes* key = conn.tables->ended_session_key(sid, conn.address.conn_id)) {
    req.foreign_signer = ForeignSigner{conn.signing_algorithm, *key};
    return;
  }
  std::optional<state::SessionHome> home = server.sessions.find(sid);
  if (!home || home->signing_key.empty() || !crypto::verify_message(home->signing_algorithm, home->signing_key, req.pdu))
    return;
  req.foreign_signer = ForeignSigner{home->signing_algorithm, std::move(home->signing_key)};
}

NtStatus ChainProcessor::lookup_session(Request& req, const CommandSpec& spec, uint64_t sid) {
  state::Session* s = sid ? conn_.find_session(sid) : nullptr;
  if (encrypted_ && sid != transform_session_ && s) return NtStatus::AccessDenied;
  if (s && s->state == state::Session::State::Valid) {
    req.session = s;
    // MS-SMB2 3.3.5.2.4: verify signatures on signed requests; refuse
    // unsigned ones where signing is required (encryption covers both).
    // A request run again (req.async_id) was verified when it came, maybe
    // on another channel with another key (hand_over_waiting).
    if (!encrypted_ && req.hdr.command != Command::Cancel && !req.async_id) {
      if (req.hdr.is_signed()) {
        if (!crypto::verify_message(conn_.signing_algorithm, s->signing_key_for(conn_.address.conn_id), req.pdu))
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
  if (!spec.needs_session()) {
    req.session = s;  // SESSION_SETUP continuing an exchange, or none
    return NtStatus::Success;
  }
  if (!s && sid && req.hdr.is_signed() && !encrypted_) sign_as_session(req, conn_, server_, sid);
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
         !encrypted_ && !signs_response(req.hdr, NtStatus::Success, req.session);
}

// A signed or encrypted response alone may carry a READ's data in a
// buffer of its own (FileSegment::data): the element is signed, or the
// message encrypted, over the output buffer and that buffer (CCM cannot
// take the plaintext in two pieces).
bool ChainProcessor::may_read_to_memory(const Request& req) const {
  if (!direct_out_ || !conn_.transport_sends_files || compound_.in_chain || req.hdr.next_command != 0) return false;
  if (encrypted_) return conn_.cipher && crypto::encrypts_in_pieces(*conn_.cipher);
  return signs_response(req.hdr, NtStatus::Success, req.session);
}

// Session, tree, open and the compound rules, before the handler runs.
NtStatus ChainProcessor::resolve(Request& req, const CommandSpec& spec) {
  if (NtStatus st = check_structure_size(spec, req.body); st != NtStatus::Success) return st;
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
  if (req.hdr.is_related() && compound_.in_chain && spec.file_id_at && create_error_ != NtStatus::Success)
    return create_error_;
  return req.resolve_open(spec);
}


NtStatus ChainProcessor::run_handler(Request& req, const CommandSpec& spec, ByteWriter& body) {
  // Requests on a tree run as its user; the others (SESSION_SETUP, whose
  // in-process control plane re-reads the root-only users database, TREE_CONNECT,
  // ...) as the server, not as whichever user the thread served last.
  if (req.tree) become_user(req.tree->identity);
  else become_root();
  req.may_send_file = may_send_file(req);
  req.may_read_to_memory = may_read_to_memory(req);
  return spec.handler(req, body);
}

// The body stays as the handler wrote it, or becomes the ERROR response;
// file data a READ left in the file is positioned after it.
void ChainProcessor::finish_body(Bytes& out, size_t start, Request& req, NtStatus status) {
  if ((!keeps_body(status) && !req.error_keeps_body) || out.size() == start + wire::kHeaderSize) {
    out.resize(start + wire::kHeaderSize);
    ByteWriter w(out);
    write_error_body(w);
  } else if (req.file_data) {
    req.file_data->at = out.size();
    file_bytes_ += req.file_data->length;
    prev_data_ = req.file_data->bytes();
    conn_.out_files.push_back(std::move(*req.file_data));
  }
}

// The credits the response to H grants.
// While the transport throttles a client that leaves its replies unread
// (docs/security.md), a response replaces what its request charged, no more.
uint16_t ChainProcessor::grant_credits(const Header& h) {
  uint16_t wanted = conn_.credits_throttled ? std::min<uint16_t>(h.credits, std::max<uint16_t>(h.credit_charge, 1)) : h.credits;
  return conn_.credits.grant(wanted, server_.config.global.smb2_max_credits);
}

void ChainProcessor::write_header(Bytes& out, size_t start, const Request& req, NtStatus status, uint64_t resumed) {
  const Header& h = req.hdr;
  ResponseFields r{.command = h.command, .status = status, .message_id = h.message_id};
  r.credit_charge = h.credit_charge;
  // MS-SMB2 3.3.4.2: the interim response grants the credits; the final
  // one of an async request grants none.
  r.credits = resumed ? 0 : grant_credits(h);
  r.related = h.is_related();
  if (resumed || status == NtStatus::Pending)  // final or interim response of an async request
    r.async_id = resumed ? resumed : req.async_id;
  r.tree_id = req.tree ? req.tree->tree_id : h.tree_id;
  r.session_id = req.response_session_id ? req.response_session_id : h.session_id;
  if (h.is_related() && compound_.in_chain) {
    if (h.session_id == wire::kRelatedId) r.session_id = compound_.session_id;
    if (h.tree_id == 0xFFFFFFFF) r.tree_id = compound_.tree_id;
  }
  wire::store_header(out.data() + start, response_header(r));
}

// Preauth integrity (3.1.1): NEGOTIATE response into the connection hash,
// unfinished SESSION_SETUP responses into the session hash.
void ChainProcessor::hash_preauth(Bytes& out, size_t start, const Request& req, NtStatus status) {
  if (conn_.dialect != config::kDialect311) return;
  ByteSpan element(out.data() + start, out.size() - start);
  if (req.hdr.command == Command::Negotiate && status == NtStatus::Success) {
    auto h = crypto::sha512(conn_.preauth_hash, element);
    std::memcpy(conn_.preauth_hash.data(), h.data(), 64);
  } else if (req.hdr.command == Command::SessionSetup && status == NtStatus::MoreProcessingRequired) {
    // A binding's exchange has a hash of its own (MS-SMB2 3.3.5.5:
    // Connection.PreauthSessionTable), which takes the response once signed.
    if (conn_.bindings.contains(req.response_session_id)) {
      prev_binding_hash_ = req.response_session_id;
      return;
    }
    if (state::Session* s = conn_.find_session(req.response_session_id)) {
      auto h = crypto::sha512(s->preauth_hash, element);
      std::memcpy(s->preauth_hash.data(), h.data(), 64);
    }
  }
}

// What the next element needs of this one: who signs it (sealed when the
// next one starts), and the compound state.
void ChainProcessor::bookkeep(const Request& req, const CommandSpec* spec, NtStatus status, size_t start) {
  // The final SESSION_SETUP response is signed with the new key (MS-SMB2 3.3.5.5.3).
  state::Session* signer = req.session;
  if (req.hdr.command == Command::SessionSetup && status == NtStatus::Success)
    signer = conn_.find_session(req.response_session_id);
  prev_start_ = start;
  ++responses_;
  prev_sign_ = signs_response(req.hdr, status, signer);
  prev_signer_ = signer;
  prev_foreign_signer_ = std::move(req.foreign_signer);
  compound_.in_chain = true;
  if (req.hdr.command == Command::Create)
    create_error_ = status;
  else if (spec && spec->file_id_at && nt_success(status))
    create_error_ = NtStatus::Success;
}

FrameResult ChainProcessor::one(ByteSpan pdu, const Header& h, Bytes& out) {
  const CommandSpec* spec = command_spec(h.command);
  Request req{conn_, server_, h, pdu, pdu.subspan(wire::kHeaderSize), encrypted_, compound_};
  req.reply_start = reply_start_;
  uint64_t resumed = std::exchange(resume_id_, 0);
  req.async_id = resumed;
  NtStatus status = NtStatus::Success;  // a resumed request's credits were taken when it arrived
  if (!resumed && !charge_credits(h, spec, req.body, status)) return FrameResult::Drop;
  size_t start = out.size();
  ByteWriter w(out);
  w.zeros(wire::kHeaderSize);  // written after the handler ran
  if (resumed && cancel_) status = NtStatus::Cancelled;
  if (status == NtStatus::Success) status = resolve(req, *spec);
  log_client_about(req.session ? std::string_view(req.session->user) : std::string_view(),
                   req.tree ? std::string_view(req.tree->share.name) : std::string_view());
  if (status == NtStatus::Success) status = enter_channel_sequence(req);
  Scopes scopes;
  if (req.tree) scopes.share = req.tree->metrics_slot;
  if (status == NtStatus::Success) status = run_handler(req, *spec, w);
  leave_channel_sequence(conn_, req.channel);  // a request that waits moved its count to its waiting request
  if (status == NtStatus::Pending) {
    WaitingRequest* waiting = find_waiting(conn_, req.async_id);
    if (waiting && waiting->kind == WaitKind::RunAgain) went_async_ = req.async_id;  // run() saves the chain
    if (resumed || holds_interim(waiting, h)) {  // nothing to send yet
      out.resize(start);
      if (!resumed) count(req, status, resumed, scopes_after(req, status, scopes), out, start);
      return FrameResult::Ok;
    }
  }
  if (status == NtStatus::Pending && responses_ > 0 && last_sealed_at_ != SIZE_MAX) {
    interim_at_ = start;  // an interim after other responses of the chain
    before_interim_at_ = last_sealed_at_;
  }
  finish_body(out, start, req, status);
  if (!nt_success(status) && status != NtStatus::MoreProcessingRequired)
    LOG_DEBUG("%s: %s mid %llu -> %s", conn_.client_address.c_str(), spec ? spec->name : "?",
              (unsigned long long)h.message_id, nt_status_name(status));
  write_header(out, start, req, status, resumed);
  hash_preauth(out, start, req, status);
  bookkeep(req, spec, status, start);
  count(req, status, resumed, scopes_after(req, status, scopes), out, start);
  return FrameResult::Ok;
}

// A handler asked to hold back the interim response (defer_interim()):
// granted for a request alone in its frame, which then sends nothing now;
// in a compound the interim goes out with the other responses as usual.
bool ChainProcessor::holds_interim(WaitingRequest* waiting, const Header& h) {
  if (!waiting || !waiting->interim_deferred) return false;
  if (compound_.in_chain || h.next_command != 0) {
    waiting->interim_deferred = false;
    return false;
  }
  waiting->deferred_credits = grant_credits(h);
  return true;
}

// Pads the previous element to 8 bytes and links it when another follows,
// then signs it: each element of a compound response is signed on its own,
// padding included (MS-SMB2 3.3.4.1.3). The last element of a compound
// response is padded too ("SHOULD", as Windows does: a 3-byte READ at the
// end of a chain has a 24-byte body, smb2.compound.compound-padding); a
// response alone is not. A compounded element is never sent from the file
// (may_send_file), so the padding always follows data in memory.
void ChainProcessor::seal_previous(Bytes& out, bool more_follow) {
  if (prev_start_ == SIZE_MAX) return;
  if (more_follow || responses_ > 1) {
    ByteWriter w(out);
    w.align(8, prev_start_);
  }
  if (more_follow)
    store_le32(out.data() + prev_start_ + wire::hdr::NextCommand, uint32_t(out.size() - prev_start_));
  std::span<uint8_t> element(out.data() + prev_start_, out.size() - prev_start_);
  last_sealed_at_ = prev_start_;
  if (prev_sign_)
    sign_element(conn_, prev_signer_->signing_key_for(conn_.address.conn_id), element, prev_data_);
  else if (prev_foreign_signer_)
    crypto::sign_message(prev_foreign_signer_->algorithm, prev_foreign_signer_->key, element, prev_data_);
  if (prev_binding_hash_) {
    if (auto binding = conn_.bindings.find(std::exchange(prev_binding_hash_, 0)); binding != conn_.bindings.end()) {
      auto h = crypto::sha512(binding->second->preauth_hash, element);
      std::memcpy(binding->second->preauth_hash.data(), h.data(), 64);
    }
  }
  prev_start_ = SIZE_MAX;
  prev_data_ = {};
}

// The header of the element at the start of REST and its length; false
// (drop the connection) for a malformed one.
bool ChainProcessor::next_element(ByteSpan rest, Header& h, size_t& len) const {
  if (!wire::parse_header(rest, h)) return false;
  len = rest.size();
  if (!h.next_command) return true;
  if (h.next_command < wire::kHeaderSize || h.next_command > rest.size() || h.next_command % 8) {
    LOG_WARN("%s: bad NextCommand %u; dropping", conn_.client_address.c_str(), h.next_command);
    return false;
  }
  len = h.next_command;
  return true;
}

FrameResult ChainProcessor::run(ByteSpan chain, Bytes& out) {
  size_t off = 0;
  reply_start_ = out.size();
  if (conn_.metrics) last_ns_ = monotonic_ns();
  for (;;) {
    ByteSpan rest = chain.subspan(off);
    Header h;
    size_t len;
    if (!next_element(rest, h, len)) return FrameResult::Drop;
    // CANCEL gets no response of its own and uses no credit; the request it
    // names answers STATUS_CANCELLED after this frame (async_engine).
    if (h.command == Command::Cancel) {
      cancel_request(conn_, server_, h);
    } else {
      seal_previous(out, true);
      CompoundState before = compound_;
      NtStatus create_error_before = create_error_;
      if (one(rest.first(len), h, out) == FrameResult::Drop) return FrameResult::Drop;
      if (went_async_) {  // the rest of the chain runs when the wait ends
        save_chain(rest, before, create_error_before);
        break;
      }
    }
    if (!h.next_command) break;
    off += len;
  }
  seal_previous(out, false);
  return FrameResult::Ok;
}

void rerun_waiting_chain(ConnState& conn, ServerContext& server, uint64_t async_id, bool cancel) {
  std::optional<WaitingRequest> w = take_waiting(conn, async_id);
  if (!w) return;
  ReadyMessage ready;
  ChainProcessor chain(conn, server, w->encrypted, w->transform_session);
  chain.resume(async_id, w->compound, w->create_error, cancel);
  FrameResult r = chain.run(w->pdu, ready.message);
  conn.credits.commit();
  // Handed over from a channel that ended: done, or waiting again, it
  // answers nobody (AsyncTable::detached).
  bool detached = conn.async.detached.contains(async_id);
  if (detached && !find_waiting(conn, async_id)) conn.async.detached.erase(async_id);
  if (detached || r == FrameResult::Drop || ready.message.empty()) return;
  if (w->encrypted) {
    state::Session* s = conn.find_session(w->transform_session);
    if (!s) return;  // logged off meanwhile: nothing can be sent
    ready.seal.encrypt = true;
    ready.seal.session_id = w->transform_session;
    ready.seal.encryption_key = s->keys.encryption_key;
  }
  conn.async.ready.push_back(std::move(ready));
}

void defer_interim(Request& req, int64_t delay_ms) {
  WaitingRequest* w = find_waiting(req.conn, req.async_id);
  if (!w || !req.server.poster) return;
  w->interim_deferred = true;
  w->interim_wanted = std::make_shared<std::atomic<bool>>(true);
  auto task = [id = req.async_id, &server = req.server](ConnState& conn, Bytes& out) {
    send_deferred_interim(conn, id);
    send_ready(conn, server, out);
  };
  req.server.poster->post_at(req.conn.address, monotonic_ms() + delay_ms, std::move(task), w->interim_wanted);
}

void send_ready(ConnState& conn, ServerContext& server, Bytes& out) {
  while (!conn.async.reruns.empty()) {
    auto reruns = std::move(conn.async.reruns);
    conn.async.reruns.clear();
    for (auto [id, cancelled] : reruns) rerun_waiting_chain(conn, server, id, cancelled);
  }
  for (ReadyMessage& m : conn.async.ready) send_message(conn, out, m.message, m.seal);
  conn.async.ready.clear();
}

void post_to_conn(ServerContext& server, const state::ConnAddress& to, EngineTask task) {
  if (!server.poster) return;
  server.poster->post(to, [&server, task = std::move(task)](ConnState& conn, Bytes& out) {
    task(conn, out);
    send_ready(conn, server, out);
  });
}

void post_wakeups(ServerContext& server, const std::vector<state::Waiter>& waiters) {
  for (const auto& w : waiters) {
    uint64_t id = w.async_id;
    post_to_conn(server, w.conn, [&server, id](ConnState& conn, Bytes&) { rerun_waiting_chain(conn, server, id, false); });
  }
}

}  // namespace ringsmb::smb2
