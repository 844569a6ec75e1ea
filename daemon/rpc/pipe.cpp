// One named-pipe endpoint: PDU framing across writes, presentation context
// negotiation, request reassembly, dispatch and response fragmentation.
#include "rpc/pipe.hpp"

#include <deque>

#include "auth/ntlm_utf16.hpp"
#include "rpc/dcerpc.hpp"
#include "rpc/interface.hpp"

namespace ringsmb::rpc {

namespace {

// A reassembled request stub larger than this is refused: the biggest
// legitimate request here (1000 names to look up) is well below it.
constexpr size_t kMaxRequestStub = 1 << 20;
// Responses queued but not read; a client that never reads is cut off.
constexpr size_t kMaxPendingOutput = 8 << 20;
// Presentation contexts one pipe may have bound at once.
constexpr size_t kMaxContexts = 32;

struct PipeKind {
  const char* name;
  const char* endpoint;  // the bind_ack secondary address Windows sends
  bool lsa_group;        // lsarpc and samr share lsass's endpoint
};

constexpr PipeKind kPipes[] = {
    {"srvsvc", "\\PIPE\\srvsvc", false},
    {"wkssvc", "\\PIPE\\wkssvc", false},
    {"lsarpc", "\\PIPE\\lsass", true},
    {"samr", "\\PIPE\\lsass", true},
};

std::string_view strip_pipe_prefix(std::string_view n) {
  if (n.size() >= 6 && iequals(n.substr(0, 6), "\\PIPE\\")) n.remove_prefix(6);
  else if (!n.empty() && n[0] == '\\') n.remove_prefix(1);
  return n;
}

struct PendingCall {
  uint32_t call_id = 0;
  uint16_t context_id = 0;
  uint16_t opnum = 0;
  Bytes stub;
};

}  // namespace

struct PipeState {
  std::string name;
  std::string endpoint;
  std::vector<const RpcInterface*> interfaces;  // what may be bound here
  RpcContext rpc;
  std::shared_ptr<const AccountSource> accounts;
  Identity id;
  HandleTable handles;

  bool bound = false;
  uint16_t max_xmit = kMinFragSize;
  uint32_t assoc_group = 0;
  std::map<uint16_t, const RpcInterface*> contexts;
  std::optional<PendingCall> pending;

  Bytes in;  // bytes of an incomplete PDU
  std::deque<Bytes> out;  // one message per PDU, as a message-mode pipe
  size_t out_pos = 0;     // read offset into out.front()
  size_t out_bytes = 0;

  bool on_pdu(const PduHeader& h, ByteSpan pdu);
  bool on_bind(const PduHeader& h, ByteSpan pdu);
  ContextResult negotiate(const ContextElement& c);
  bool on_request(const PduHeader& h, ByteSpan pdu);
  void dispatch(PendingCall& call);
  void send(Bytes pdu);
  void send_fault(uint32_t call_id, uint16_t ctx, uint32_t status, bool not_executed) {
    send(build_fault(call_id, ctx, status, not_executed));
  }
};

void PipeState::send(Bytes pdu) {
  out_bytes += pdu.size();
  out.push_back(std::move(pdu));
}

bool PipeState::on_pdu(const PduHeader& h, ByteSpan pdu) {
  switch (h.type) {
    case PduType::Bind:
    case PduType::AlterContext:
      return on_bind(h, pdu);
    case PduType::Request:
      if (h.auth_length != 0) {
        // No DCE/RPC security over SMB: the session already authenticated.
        send_fault(h.call_id, 0, kFaultAccessDenied, true);
        return true;
      }
      return on_request(h, pdu);
    case PduType::Orphaned:
    case PduType::CoCancel:
      // The client gave up on the call: drop what was reassembled so far.
      if (pending && pending->call_id == h.call_id) pending.reset();
      return true;
    case PduType::Auth3:
    case PduType::Shutdown:
      return true;
    default:
      return false;  // server-to-client PDU types from a client
  }
}

ContextResult PipeState::negotiate(const ContextElement& c) {
  ContextResult res{kResultProviderRejection, kReasonAbstractSyntaxNotSupported, {}};
  uint8_t bits = 0;
  if (c.transfers.size() == 1 && is_bind_time_feature(c.transfers[0], bits)) {
    // MS-RPCE 3.3.1.5.3: acknowledge with the subset of the client's bits we
    // support. Both defined ones are harmless here: there is no security
    // context to multiplex, and orphaned PDUs never close the pipe.
    return ContextResult{kResultNegotiateAck, uint16_t(bits & 0x03), {}};
  }
  const RpcInterface* iface = nullptr;
  for (const auto* i : interfaces) {
    if (i->syntax == c.abstract) iface = i;
  }
  if (!iface) return res;
  for (const auto& t : c.transfers) {
    if (t != ndr20_syntax()) continue;
    if (contexts.size() >= kMaxContexts && !contexts.count(c.id)) {
      res.reason = kReasonLocalLimitExceeded;
      return res;
    }
    contexts[c.id] = iface;
    return ContextResult{kResultAcceptance, 0, ndr20_syntax()};
  }
  // NDR64 (or anything else) alone: we only speak NDR 2.0.
  res.reason = kReasonTransferSyntaxesNotSupported;
  return res;
}

bool PipeState::on_bind(const PduHeader& h, ByteSpan pdu) {
  bool is_bind = h.type == PduType::Bind;
  if (h.auth_length != 0) {
    send(build_bind_nak(h.call_id, kNakAuthTypeNotRecognized));
    return true;
  }
  auto bind = parse_bind(pdu);
  if (!bind || (is_bind && bound) || (!is_bind && !bound)) {
    // A second bind, an alter_context before any bind, or an undecodable body.
    send(build_bind_nak(h.call_id, kNakProtocolVersionNotSupported));
    return true;
  }
  if (is_bind) {
    max_xmit = std::clamp<uint16_t>(bind->max_recv_frag, kMinFragSize, kServerMaxFrag);
    assoc_group = bind->assoc_group ? bind->assoc_group : 0x53F0 + uint32_t(name.size());
    bound = true;
  }
  BindAckPdu ack;
  ack.max_xmit_frag = max_xmit;
  ack.max_recv_frag = kServerMaxFrag;
  ack.assoc_group = assoc_group;
  if (is_bind) ack.secondary_address = endpoint;
  for (const auto& c : bind->contexts) ack.results.push_back(negotiate(c));
  send(build_bind_ack(is_bind ? PduType::BindAck : PduType::AlterContextResp, h.call_id, ack));
  return true;
}

bool PipeState::on_request(const PduHeader& h, ByteSpan pdu) {
  auto req = parse_request(h, pdu);
  if (!req || !bound) {
    send_fault(h.call_id, 0, kFaultProtoError, true);
    return true;
  }
  if (h.flags & kPfcFirstFrag) {
    pending = PendingCall{h.call_id, req->context_id, req->opnum, {}};
  } else if (!pending || pending->call_id != h.call_id) {
    // A middle fragment of a call we never saw the start of.
    pending.reset();
    send_fault(h.call_id, req->context_id, kFaultProtoError, true);
    return true;
  }
  // The client's alloc_hint is only a hint: nothing is reserved from it.
  if (pending->stub.size() + req->stub.size() > kMaxRequestStub) {
    send_fault(h.call_id, pending->context_id, kFaultProtoError, true);
    pending.reset();
    return true;
  }
  pending->stub.insert(pending->stub.end(), req->stub.begin(), req->stub.end());
  if (h.flags & kPfcLastFrag) {
    PendingCall call = std::move(*pending);
    pending.reset();
    dispatch(call);
  }
  return true;
}

void PipeState::dispatch(PendingCall& call) {
  auto it = contexts.find(call.context_id);
  if (it == contexts.end()) {
    send_fault(call.call_id, call.context_id, kFaultUnknownInterface, true);
    return;
  }
  CallContext ctx{rpc, id, handles};
  handles.take_unknown();
  CallResult res = it->second->call(call.opnum, call.stub, ctx);
  if (handles.take_unknown() && !res.fault) {
    // The runtime would have refused the call before the routine ran.
    send_fault(call.call_id, call.context_id, kFaultContextMismatch, true);
    return;
  }
  if (res.fault) {
    // Neither an unknown opnum nor an undecodable stub ran anything.
    bool not_executed = res.fault == kFaultOpRangeError || res.fault == kFaultNdr;
    send_fault(call.call_id, call.context_id, res.fault, not_executed);
    return;
  }
  Bytes frags;
  append_response(frags, call.call_id, call.context_id, res.stub, max_xmit);
  // Each fragment is its own pipe message.
  ByteReader r(frags);
  while (r.remaining() >= kHeaderSize) {
    size_t start = r.offset();
    r.skip(8);
    uint16_t len = r.u16();
    r.seek(start);
    ByteSpan f = r.bytes(len);
    send(Bytes(f.begin(), f.end()));
  }
}

static const PipeKind* find_kind(std::string_view pipe_name) {
  std::string_view n = strip_pipe_prefix(pipe_name);
  for (const auto& k : kPipes) {
    if (iequals(n, k.name)) return &k;
  }
  return nullptr;
}

bool pipe_served(std::string_view pipe_name) { return find_kind(pipe_name) != nullptr; }

std::unique_ptr<RpcPipe> RpcPipe::open(std::string_view pipe_name, const RpcContext& ctx) {
  const PipeKind* kind = find_kind(pipe_name);
  if (!kind || ctx.config == nullptr) return nullptr;
  auto st = std::make_unique<PipeState>();
  st->name = kind->name;
  st->endpoint = kind->endpoint;
  if (kind->lsa_group) st->interfaces = {&lsarpc_interface(), &samr_interface()};
  else if (st->name == "srvsvc") st->interfaces = {&srvsvc_interface()};
  else st->interfaces = {&wkssvc_interface()};
  st->rpc = ctx;
  st->accounts = ctx.accounts ? ctx.accounts : make_system_accounts(*ctx.config);
  st->id = make_identity(*ctx.config, st->accounts.get());
  return std::unique_ptr<RpcPipe>(new RpcPipe(std::move(st)));
}

RpcPipe::RpcPipe(std::unique_ptr<PipeState> state) : state_(std::move(state)) {}
RpcPipe::~RpcPipe() = default;

bool RpcPipe::write(ByteSpan data) {
  auto& st = *state_;
  st.in.insert(st.in.end(), data.begin(), data.end());
  size_t pos = 0;
  bool ok = true;
  while (ok && st.in.size() - pos >= kHeaderSize) {
    ByteSpan rest(st.in.data() + pos, st.in.size() - pos);
    auto h = parse_header(rest);
    // A bad header means the byte stream is out of step: nothing after it
    // can be trusted, so the pipe is broken rather than answered.
    if (!h) {
      ok = false;
      break;
    }
    if (rest.size() < h->frag_length) break;  // wait for the rest
    ok = st.on_pdu(*h, rest.first(h->frag_length));
    pos += h->frag_length;
  }
  st.in.erase(st.in.begin(), st.in.begin() + std::min(pos, st.in.size()));
  if (!ok) st.in.clear();
  return ok && st.out_bytes <= kMaxPendingOutput;
}

Bytes RpcPipe::read(size_t max, bool& more) {
  auto& st = *state_;
  more = false;
  if (st.out.empty()) return {};
  const Bytes& msg = st.out.front();
  size_t n = std::min(max, msg.size() - st.out_pos);
  Bytes res(msg.begin() + st.out_pos, msg.begin() + st.out_pos + n);
  st.out_pos += n;
  st.out_bytes -= n;
  if (st.out_pos == msg.size()) {
    st.out.pop_front();
    st.out_pos = 0;
  } else {
    more = true;
  }
  return res;
}

bool RpcPipe::transceive(ByteSpan in, size_t max_out, Bytes& out, bool& more) {
  bool ok = write(in);
  out = read(max_out, more);
  return ok;
}

size_t RpcPipe::pending_bytes() const { return state_->out_bytes; }
const std::string& RpcPipe::name() const { return state_->name; }

}  // namespace ringsmb::rpc
