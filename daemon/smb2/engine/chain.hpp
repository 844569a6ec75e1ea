// Runs one chain of SMB2 requests (a compound, or a request alone) into
// its responses: per element the credit charge, the preconditions of the
// dispatch table, the handler, the response header, signing and the
// compound rules (MS-SMB2 3.3.5.2). Also what runs requests again or
// flushes the ones that completed: a CREATE chain that waited, the final
// responses that became ready, tasks posted to a connection.
#pragma once

#include <functional>
#include <optional>

#include "common/bytes.hpp"
#include "smb2/engine/conn_state.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/engine/metrics.hpp"
#include "smb2/engine/server_context.hpp"

namespace ringsmb::smb2 {

class ChainProcessor {
 public:
  ChainProcessor(ConnState& c, ServerContext& s, bool encrypted, uint64_t transform_session)
      : conn_(c), server_(s), encrypted_(encrypted), transform_session_(transform_session) {}
  FrameResult run(ByteSpan chain, Bytes& out);
  // `out` of run() is the transport's buffer itself, where a FileSegment's
  // position means something (not a buffer that is encrypted or copied later).
  void writes_transport_buffer() { direct_out_ = true; }
  // Bytes of the responses that FileSegments carry instead of `out`.
  size_t file_bytes() const { return file_bytes_; }
  // Where in `out` the interim response of an element that went async
  // after other elements of the chain starts, and where the element before
  // it does (SIZE_MAX when none did): split_interim() sends it apart.
  size_t interim_at() const { return interim_at_; }
  size_t before_interim_at() const { return before_interim_at_; }
  // The chain is the rest of one that went async at its first element:
  // that element completes async request `async_id` (or is cancelled).
  void resume(uint64_t async_id, const CompoundState& compound, NtStatus create_error, bool cancel) {
    resume_id_ = async_id;
    compound_ = compound;
    create_error_ = create_error;
    cancel_ = cancel;
  }

 private:
  // The steps of one element, in order.
  bool charge_credits(const wire::Header& h, const CommandSpec* spec, ByteSpan body, NtStatus& status);
  NtStatus resolve(Request& req, const CommandSpec& spec);
  NtStatus resolve_session(Request& req, const CommandSpec& spec);
  NtStatus lookup_session(Request& req, const CommandSpec& spec, uint64_t sid);
  NtStatus resolve_tree(Request& req);
  NtStatus run_handler(Request& req, const CommandSpec& spec, ByteWriter& body);
  void finish_body(Bytes& out, size_t start, Request& req, NtStatus status);
  void write_header(Bytes& out, size_t start, const Request& req, NtStatus status, uint64_t resumed);
  uint16_t grant_credits(const wire::Header& h);
  bool holds_interim(WaitingRequest* waiting, const wire::Header& h);
  void hash_preauth(Bytes& out, size_t start, const Request& req, NtStatus status);
  void bookkeep(const Request& req, const CommandSpec* spec, NtStatus status, size_t start);
  // The share and user slots a request is counted under (metrics).
  struct Scopes {
    uint32_t share = kNoScope;
    uint32_t user = kNoScope;
  };
  Scopes scopes_after(const Request& req, NtStatus status, Scopes before) const;
  void count(const Request& req, NtStatus status, uint64_t resumed, Scopes scopes, const Bytes& out, size_t start);

  FrameResult one(ByteSpan pdu, const wire::Header& h, Bytes& out);
  bool signs_response(const wire::Header& h, NtStatus status, const state::Session* signer) const;
  bool may_send_file(const Request& req) const;
  bool may_read_to_memory(const Request& req) const;
  void seal_previous(Bytes& out, bool more_follow);
  bool next_element(ByteSpan rest, wire::Header& h, size_t& len) const;
  void save_chain(ByteSpan rest, const CompoundState& before, NtStatus create_error_before);

  ConnState& conn_;
  ServerContext& server_;
  bool encrypted_;
  uint64_t transform_session_;
  CompoundState compound_;
  size_t prev_start_ = SIZE_MAX;
  ByteSpan prev_data_;  // the previous element's READ data in a buffer of its own (FileSegment::data)
  bool prev_sign_ = false;
  state::Session* prev_signer_ = nullptr;
  std::optional<ForeignSigner> prev_foreign_signer_;  // signs the previous element instead (session_bind.hpp)
  // The previous element is a binding's unfinished SESSION_SETUP response:
  // it goes into that binding's preauth hash as the client sees it, signed.
  uint64_t prev_binding_hash_ = 0;
  NtStatus create_error_ = NtStatus::Success;  // of the chain's last CREATE, until a FileId works again
  uint64_t resume_id_ = 0;  // the first element completes this async request
  bool cancel_ = false;
  bool direct_out_ = false;
  size_t file_bytes_ = 0;
  size_t reply_start_ = 0;  // Request::reply_start
  // The element just run went async and waits with the rest of its chain
  // (a CREATE behind a break): its AsyncId.
  uint64_t went_async_ = 0;
  size_t responses_ = 0;  // elements answered in this message (compound: more than one)
  size_t last_sealed_at_ = SIZE_MAX;  // the element seal_previous() closed last
  size_t interim_at_ = SIZE_MAX;
  size_t before_interim_at_ = SIZE_MAX;
  uint64_t last_ns_ = 0;  // when the chain's previous element was answered (metrics)
};

// Runs again the chain of waiting CREATE `async_id` (its breaks ended), or
// answers it STATUS_CANCELLED (CANCEL, TREE_DISCONNECT, LOGOFF); the
// response joins conn.async.ready.
void rerun_waiting_chain(ConnState& conn, ServerContext& server, uint64_t async_id, bool cancel);

// For a request that usually completes within milliseconds (FLUSH): no
// interim response unless it still waits after DELAY_MS. Call after
// start_waiting(); the processor decides whether the request qualifies
// (alone in its frame), and the timer sends the interim if it is still due.
void defer_interim(Request& req, int64_t delay_ms);

// After a frame or a posted task: runs the CREATE chains that were
// cancelled or woken, then sends every final response that became ready.
void send_ready(ConnState& conn, ServerContext& server, Bytes& out);

// Runs TASK on the worker that owns connection TO, then sends what became
// ready. Dropped when the connection is gone (or nothing posts: tests).
using EngineTask = std::function<void(ConnState&, Bytes& out)>;
void post_to_conn(ServerContext& server, const state::ConnAddress& to, EngineTask task);
// Runs each waiting request again on its connection's thread (a CREATE
// whose breaks ended, a reconnect whose open was kept).
void post_wakeups(ServerContext& server, const std::vector<state::Waiter>& waiters);

}  // namespace ringsmb::smb2
