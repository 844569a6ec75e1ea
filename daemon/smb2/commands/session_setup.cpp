// SMB2 SESSION_SETUP and LOGOFF (MS-SMB2 2.2.5-2.2.8, 3.3.5.5, 3.3.5.6):
// SPNEGO-wrapped (or raw) NTLMSSP, NTLMv2 checked by the control plane,
// keys derived here, 3.1.1 preauth integrity, re-authentication.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "auth/ntlm_gss.hpp"
#include "auth/ntlmssp.hpp"
#include "auth/spnego.hpp"
#include "common/log.hpp"
#include "crypto/primitives.hpp"
#include "smb2/commands/handlers.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/durable/durable.hpp"
#include "smb2/leases/lease.hpp"
#include "smb2/commands/session_bind.hpp"
#include "smb2/engine/metrics.hpp"
#include "smb2/engine/refusal_log.hpp"
#include "vfs/file_info.hpp"

namespace ringsmb::smb2 {
namespace {

enum : uint16_t { SMB2_SESSION_FLAG_IS_GUEST = 0x1, SMB2_SESSION_FLAG_IS_NULL = 0x2, SMB2_SESSION_FLAG_ENCRYPT_DATA = 0x4 };
enum : uint8_t { SMB2_SESSION_FLAG_BINDING = 0x1 };
constexpr uint32_t kNtlmNegotiate = 1, kNtlmAuthenticate = 3;

void der_length(Bytes& out, size_t n) {
  if (n < 0x80) {
    out.push_back(uint8_t(n));
  } else if (n < 0x100) {
    out.push_back(0x81);
    out.push_back(uint8_t(n));
  } else {
    out.push_back(0x82);
    out.push_back(uint8_t(n >> 8));
    out.push_back(uint8_t(n));
  }
}

// DER MechTypeList (SEQUENCE OF OID): what the SPNEGO mechListMIC covers.
Bytes encode_mech_type_list(const std::vector<Bytes>& oids) {
  Bytes inner;
  for (const auto& oid : oids) {
    inner.push_back(0x06);
    der_length(inner, oid.size());
    inner.insert(inner.end(), oid.begin(), oid.end());
  }
  Bytes out{0x30};
  der_length(out, inner.size());
  out.insert(out.end(), inner.begin(), inner.end());
  return out;
}

uint32_t ntlm_message_type(ByteSpan msg) { return msg.size() >= 12 ? load_le32(msg.data() + 8) : 0; }

void update_preauth(std::array<uint8_t, 64>& hash, ByteSpan message) {
  auto h = crypto::sha512(hash, message);
  std::memcpy(hash.data(), h.data(), 64);
}

void write_response(ByteWriter& w, uint16_t session_flags, ByteSpan blob) {
  w.u16(9);
  w.u16(session_flags);
  w.u16(uint16_t(wire::kHeaderSize + 8));
  w.u16(uint16_t(blob.size()));
  w.bytes(blob);
}

// What the client's security blob asks of us, SPNEGO unwrapped: a token of
// one mechanism, or (RFC 4178 4.2.2) a switch to a mechanism other than
// the one its optimistic token was made for.
enum class Mech { Ntlm, Krb5 };
struct ClientToken {
  Mech mech = Mech::Ntlm;
  Bytes token;
  Bytes client_mic;
  Bytes supported_mech;  // the OID our SPNEGO answer names (empty: none)
  bool switch_mech = false;  // answer accept-incomplete naming supported_mech, no token
};

bool kerberos_enabled(const Request& req) { return config::kerberos_keytab(req.server.config.global).has_value(); }

bool offered(const std::vector<Bytes>& mechs, ByteSpan oid) {
  return std::ranges::any_of(mechs, [&](const Bytes& m) { return std::ranges::equal(m, oid); });
}

// The mechanism we take from a NegTokenInit: the client's first choice when
// we do it (its mechToken is for that one), else the first of ours it
// lists (its token is then for a mechanism we do not do).
std::optional<ClientToken> choose_mech(const Request& req, const auth::NegTokenInit& init) {
  ClientToken t;
  const Bytes& first = init.mech_types[0];
  bool krb5 = kerberos_enabled(req);
  if (krb5 && auth::is_krb5_oid(first)) {
    t = {Mech::Krb5, init.mech_token, {}, first, init.mech_token.empty()};
    return t;
  }
  if (first == auth::kOidNtlmssp || (offered(init.mech_types, auth::kOidNtlmssp) && auth::is_raw_ntlmssp(init.mech_token))) {
    // (An NTLMSSP token behind another first choice is taken as NTLM, as before.)
    t = {Mech::Ntlm, init.mech_token, {}, auth::kOidNtlmssp, init.mech_token.empty()};
    return t;
  }
  for (const Bytes& m : init.mech_types) {
    if (krb5 && auth::is_krb5_oid(m)) return ClientToken{Mech::Krb5, {}, {}, m, true};
    if (m == auth::kOidNtlmssp) return ClientToken{Mech::Ntlm, {}, {}, m, true};
  }
  return std::nullopt;
}

// A NegTokenResp continues the exchange; its token says which mechanism
// (NTLMSSP's signature, or RFC 2743 framing around a Kerberos AP-REQ).
ClientToken continue_mech(const Request& req, const auth::NegTokenResp& resp) {
  ClientToken t{Mech::Ntlm, resp.response_token, resp.mech_list_mic, {}, false};
  if (!auth::is_raw_ntlmssp(t.token) && !t.token.empty() && t.token[0] == 0x60 && kerberos_enabled(req))
    t.mech = Mech::Krb5;
  return t;
}

std::optional<ClientToken> read_client_token(const Request& req, state::Session& s, ByteSpan blob) {
  if (auth::is_raw_ntlmssp(blob)) {
    s.spnego = false;
    return ClientToken{Mech::Ntlm, Bytes(blob.begin(), blob.end()), {}, {}, false};
  }
  s.spnego = true;
  if (auto init = auth::parse_neg_token_init(blob)) {
    if (init->mech_types.empty()) return std::nullopt;
    s.mech_types_der = encode_mech_type_list(init->mech_types);
    auto t = choose_mech(req, *init);
    if (!t && !kerberos_enabled(req) && std::ranges::any_of(init->mech_types, auth::is_krb5_oid))
      LOG_INFO("%s: session setup offers only Kerberos, which is not configured (realm, kerberos method)",
               req.conn.client_address.c_str());
    return t;
  }
  if (auto resp = auth::parse_neg_token_resp(blob)) return continue_mech(req, *resp);
  return std::nullopt;
}

NtStatus send_challenge(Request& req, state::Session& s, ByteSpan negotiate_msg, ByteWriter& w) {
  auto neg = auth::parse_ntlm_negotiate(negotiate_msg);
  if (!neg) return NtStatus::InvalidParameter;
  s.ntlm_negotiate.assign(negotiate_msg.begin(), negotiate_msg.end());
  crypto::random_bytes(s.server_challenge);
  auth::ChallengeParams p;
  p.server_challenge = s.server_challenge;
  p.netbios_domain = req.server.control->workgroup();
  p.netbios_computer = req.server.control->netbios_name();
  p.dns_domain = "";
  p.dns_computer = p.netbios_computer;
  auto now = std::chrono::system_clock::now().time_since_epoch();
  p.timestamp_filetime = vfs::unix_to_filetime(std::chrono::duration_cast<std::chrono::seconds>(now).count(), 0);
  s.ntlm_challenge = auth::build_ntlm_challenge(neg->flags, p);
  Bytes blob = s.spnego ? auth::build_neg_token_resp(auth::NegState::AcceptIncomplete, auth::kOidNtlmssp,
                                                     s.ntlm_challenge)
                        : s.ntlm_challenge;
  write_response(w, 0, blob);
  return NtStatus::MoreProcessingRequired;
}

bool server_requires_encryption(const Request& req) {
  return req.server.config.global.smb3_encryption == config::EncryptionPolicy::Required;
}

// MS-SMB2 3.3.5.5 steps 1-2: a server that rejects unencrypted access
// refuses the SESSION_SETUP of a connection that cannot encrypt (a 2.x
// dialect, or 3.x without a common cipher), not a later request.
NtStatus check_encryption_possible(const Request& req) {
  if (!server_requires_encryption(req) || req.conn.cipher) return NtStatus::Success;
  LOG_INFO("%s: session setup refused: encryption is required and dialect 0x%04x has no cipher",
           req.conn.client_address.c_str(), req.conn.dialect);
  return NtStatus::AccessDenied;
}

bool wants_encryption(const Request& req) {
  return req.conn.cipher && req.server.config.global.smb3_encryption != config::EncryptionPolicy::Off;
}

void install_identity(Request& req, state::Session& s, const ipc::LoginReply& login) {
  s.user = login.user;
  s.is_guest = login.is_guest;
  s.is_anonymous = login.is_anonymous;
  s.unix_user = login.unix_user;
  s.sids = login.sids;
  s.user_open_count = req.server.budget.user_open_count(login.user);
  if (login.is_guest || login.is_anonymous) return;
  s.keys = crypto::derive_session_keys(req.conn.dialect, login.session_key, s.preauth_hash, req.conn.cipher);
  s.signing_required = req.conn.signing_required;
  s.encrypt_data = wants_encryption(req);
}

bool identity_changes(const state::Session& s, const ipc::LoginReply& login) {
  return s.user != login.user || s.is_guest != login.is_guest || s.is_anonymous != login.is_anonymous ||
         s.sids != login.sids;
}

// Re-authentication as another user, a guest or anonymously (3.3.5.5.2,
// 3.3.5.5.3: nothing requires the same user; Windows and Samba accept it):
// the session takes the new identity for what it does from now on and keeps
// its keys ("the existing Session.SessionKey will be retained"), its tree
// connects and its opens (smb2.session.reauth2-5). Tree connects keep the
// identity they were made with, as opens keep the access they were granted.
void change_identity(Request& req, state::Session& s, const ipc::LoginReply& login) {
  LOG_INFO("%s: session 0x%llx re-authenticated as '%s'%s (was '%s')", req.conn.client_address.c_str(),
           (unsigned long long)s.session_id, login.user.c_str(),
           login.is_guest ? " (guest)" : login.is_anonymous ? " (anonymous)" : "", s.user.c_str());
  if (req.server.control) req.server.control->logout(s.user);  // one login counted per session
  log_client_about(login.user, {});
  s.user = login.user;
  s.is_guest = login.is_guest;
  s.is_anonymous = login.is_anonymous;
  s.unix_user = login.unix_user;
  s.sids = login.sids;
  s.user_open_count = req.server.budget.user_open_count(login.user);
  std::optional<state::SessionHome> home = req.server.sessions.find(s.session_id);
  if (home) {
    home->user = s.user;  // a later reconnect (PreviousSessionId) compares users
    req.server.sessions.add(s.session_id, std::move(*home));
  }
  if (req.conn.client_registered)  // its lease breaks follow the new user
    req.server.clients.rename(req.conn.client_guid, req.conn.address, s.session_id, s.user);
}

// A valid session makes its connection one of its client's for lease
// breaks, for its user (state/client_connections.hpp); SMB 2.0.2 has no
// leases.
void register_client(Request& req, const state::Session& s) {
  if (req.conn.dialect < 0x0210 || req.conn.dialect == 0x02FF) return;
  req.server.clients.add(req.conn.client_guid, req.conn.address, s.session_id, s.user);
  req.conn.client_registered = true;
}

// A refused login whose response is NTLMv1 (a 24-byte NT response, or an
// LM response alone): only NTLMv2 is verified, and the admin is told why
// (the plain authentication failure the throttle logs does not say).
void explain_refused_login(ConnState& conn, ByteSpan auth_msg) {
  auto parsed = auth::parse_ntlm_authenticate(auth_msg);
  if (!parsed || parsed->user.empty()) return;
  constexpr size_t kNtlmv1ResponseSize = 24;
  bool v1 = parsed->nt_response.size() == kNtlmv1ResponseSize ||
            (parsed->nt_response.empty() && parsed->lm_response.size() == kNtlmv1ResponseSize);
  if (v1) log_ntlmv1_refused(conn, parsed->user, monotonic_ms());
}

// The worker's counters of refused logins (smb2/engine/metrics.hpp).
void count_login_failure(ConnState& conn, NtStatus status) {
  if (!conn.metrics) return;
  if (status == NtStatus::AccountLockedOut)
    ++conn.metrics->logins_locked_out;
  else
    ++conn.metrics->login_failures;
}

// The throttle: the transport holds this reply (and the connection's later
// requests) without blocking the worker.
void hold_reply(Request& req, uint32_t delay_ms) {
  if (!delay_ms) return;
  int64_t until = monotonic_ms() + delay_ms;
  req.conn.hold_replies_until_ms = std::max(req.conn.hold_replies_until_ms, until);
}

// A login the control plane granted: the session takes its identity (or,
// re-authenticating, possibly a new one) and becomes valid; BLOB is the
// final security buffer for the client.
// A binding's authentication succeeded (MS-SMB2 3.3.5.5.3): the same user
// as the session's gets a channel whose Channel.SigningKey comes from this
// authentication's key (3.1.1: and the binding's own preauth hash, in
// EXCHANGE); the final response is signed with it.
NtStatus complete_binding(Request& req, const state::Session& exchange, const ipc::LoginReply& login, ByteSpan blob,
                          ByteWriter& w) {
  state::Session& s = *req.bind_target;
  if (req.server.control) req.server.control->logout(login.user);  // the session's login counts, not the channel's
  if (login.user != s.user || login.is_guest || login.is_anonymous) {
    LOG_INFO("%s: binding to session 0x%llx of '%s' refused: authenticated as '%s'", req.conn.client_address.c_str(),
             (unsigned long long)s.session_id, s.user.c_str(), login.user.c_str());
    return NtStatus::AccessDenied;
  }
  if (s.channels.size() >= state::kMaxChannelsPerSession) return NtStatus::InsufficientResources;
  crypto::SessionKeys keys =
      crypto::derive_session_keys(req.conn.dialect, login.session_key, exchange.preauth_hash, req.conn.cipher);
  add_channel(req.conn, *req.bind_home, s, std::move(keys.signing_key));
  register_client(req, s);
  req.conn.logged_in = true;
  write_response(w, 0, blob);
  return NtStatus::Success;
}

NtStatus complete_login(Request& req, state::Session& s, const ipc::LoginReply& login, ByteSpan blob, ByteWriter& w) {
  if (req.bind_target) return complete_binding(req, s, login, blob, w);
  bool reauth = s.state == state::Session::State::Valid;
  // A guest or anonymous session has no key to encrypt with: where the
  // server requires encryption it cannot be served at all.
  if ((login.is_guest || login.is_anonymous) && server_requires_encryption(req)) {
    LOG_INFO("%s: %s session refused: encryption is required", req.conn.client_address.c_str(),
             login.is_guest ? "guest" : "anonymous");
    return NtStatus::AccessDenied;
  }
  if (!reauth)
    install_identity(req, s, login);
  else if (identity_changes(s, login))
    change_identity(req, s, login);
  if (req.conn.metrics) s.metrics_slot = req.conn.metrics->users.slot(s.user);  // a worker-local lookup
  if (s.state == state::Session::State::InProgress) --req.conn.sessions_in_progress;
  s.state = state::Session::State::Valid;
  if (!reauth) s.channels = {{req.conn.address.conn_id, s.keys.signing_key}};
  req.conn.logged_in = true;
  s.ntlm_negotiate.clear();
  s.ntlm_challenge.clear();

  uint16_t flags_out = 0;
  if (s.is_guest) flags_out |= SMB2_SESSION_FLAG_IS_GUEST;
  if (s.is_anonymous) flags_out |= SMB2_SESSION_FLAG_IS_NULL;
  if (s.encrypt_data) flags_out |= SMB2_SESSION_FLAG_ENCRYPT_DATA;
  write_response(w, flags_out, blob);
  log_client_about(s.user, {});
  LOG_INFO("%s: session 0x%llx for '%s'%s", req.conn.client_address.c_str(), (unsigned long long)s.session_id,
           s.user.c_str(), s.is_guest ? " (guest)" : s.is_anonymous ? " (anonymous)" : "");
  return NtStatus::Success;
}

NtStatus finish_login(Request& req, state::Session& s, ByteSpan auth_msg, ByteSpan client_mic, ByteWriter& w) {
  ipc::LoginRequest lr;
  lr.client_address = req.conn.client_address;
  lr.server_challenge = s.server_challenge;
  lr.negotiate_msg = s.ntlm_negotiate;
  lr.challenge_msg = s.ntlm_challenge;
  lr.authenticate_msg = auth_msg;
  ipc::LoginReply login = req.server.control->login(lr);
  hold_reply(req, login.delay_ms);
  if (login.status != NtStatus::Success) {
    count_login_failure(req.conn, login.status);
    if (login.status == NtStatus::LogonFailure) explain_refused_login(req.conn, auth_msg);
    bool as_is = login.status == NtStatus::InvalidParameter || login.status == NtStatus::AccountLockedOut ||
                 login.status == NtStatus::AccountDisabled;
    return as_is ? login.status : NtStatus::LogonFailure;
  }
  auto parsed = auth::parse_ntlm_authenticate(auth_msg);
  uint32_t flags = parsed ? parsed->flags : 0;
  Bytes server_mic;
  if (s.spnego && !client_mic.empty() && !login.is_guest && !login.is_anonymous) {
    auto expect = auth::ntlm_sign(login.session_key, flags, auth::NtlmDirection::ClientToServer, 0, s.mech_types_der);
    if (client_mic.size() != 16 || !crypto::equal_ct(client_mic, expect)) {
      count_login_failure(req.conn, NtStatus::LogonFailure);
      return NtStatus::LogonFailure;
    }
    auto mine = auth::ntlm_sign(login.session_key, flags, auth::NtlmDirection::ServerToClient, 0, s.mech_types_der);
    server_mic.assign(mine.begin(), mine.end());
  }
  Bytes blob;
  if (s.spnego) blob = auth::build_neg_token_resp(auth::NegState::AcceptCompleted, {}, {}, server_mic);
  return complete_login(req, s, login, blob, w);
}

// Kerberos: the control plane checks the AP-REQ with its keytab and hands
// back the identity, the session key and the AP-REP, which goes to the
// client in the accept-completed answer (mutual authentication). One leg,
// so no mechListMIC: the client's first choice was taken (RFC 4178 5).
NtStatus kerberos_login(Request& req, state::Session& s, const ClientToken& t, ByteWriter& w) {
  ipc::KerberosLoginReply reply = req.server.control->kerberos_login({req.conn.client_address, t.token});
  hold_reply(req, reply.login.delay_ms);
  if (reply.login.status != NtStatus::Success) {
    count_login_failure(req.conn, reply.login.status);
    return NtStatus::LogonFailure;
  }
  Bytes blob = auth::build_neg_token_resp(auth::NegState::AcceptCompleted, t.supported_mech, reply.response_token);
  return complete_login(req, s, reply.login, blob, w);
}

// One leg of the exchange with the client's token.
NtStatus run_mech(Request& req, state::Session& s, const ClientToken& t, ByteWriter& w) {
  if (t.switch_mech) {
    // RFC 4178 4.2.2: name the mechanism we take; the client's next token is for it.
    write_response(w, 0, auth::build_neg_token_resp(auth::NegState::AcceptIncomplete, t.supported_mech, {}));
    return NtStatus::MoreProcessingRequired;
  }
  if (t.mech == Mech::Krb5) return kerberos_login(req, s, t, w);
  switch (ntlm_message_type(t.token)) {
    case kNtlmNegotiate: return send_challenge(req, s, t.token, w);
    case kNtlmAuthenticate:
      return s.ntlm_challenge.empty() ? NtStatus::InvalidParameter : finish_login(req, s, t.token, t.client_mic, w);
    default: return NtStatus::InvalidParameter;
  }
}

state::Session* find_or_create_session(Request& req) {
  ConnState& conn = req.conn;
  if (req.hdr.session_id == 0) {
    auto s = std::make_unique<state::Session>();
    s->session_id = req.server.next_session_id.fetch_add(1);
    s->preauth_hash = conn.preauth_hash;
    s->channels = {{conn.address.conn_id, {}}};  // reachable from here only; the key comes with the login
    state::Session* raw = s.get();
    conn.tables->sessions.emplace(s->session_id, std::move(s));
    ++conn.sessions_in_progress;
    return raw;
  }
  state::Session* s = conn.find_session(req.hdr.session_id);
  if (s && s->state == state::Session::State::Valid && s->ntlm_challenge.empty())
    s->preauth_hash = conn.preauth_hash;  // re-authentication starts a new exchange
  return s;
}

// One leg of a binding's exchange (3.3.5.5 step 4 and 3.3.5.5.3), in an
// exchange of its own (Connection.PreauthSessionTable) kept on this
// connection until it ends. The legs before the last are signed with the
// session's key (refuse_binding's ForeignSigner).
NtStatus setup_binding(Request& req, ByteSpan blob, ByteWriter& w) {
  uint64_t sid = req.hdr.session_id;
  if (req.conn.find_session(sid)) return NtStatus::RequestNotAccepted;  // a channel of it already
  if (NtStatus st = refuse_binding(req); st != NtStatus::Success) return st;
  req.bind_target = session_to_bind(req, req.bind_home);
  if (!req.bind_target) {
    LOG_INFO("%s: binding to session 0x%llx refused: its connection is on another worker and this one could not move",
             req.conn.client_address.c_str(), (unsigned long long)sid);
    return NtStatus::RequestNotAccepted;
  }
  if (req.bind_target->channels.size() >= state::kMaxChannelsPerSession) return NtStatus::InsufficientResources;
  std::unique_ptr<state::Session>& exchange = req.conn.bindings[sid];
  if (!exchange) {
    if (req.conn.bindings.size() > kMaxSessionsInProgress) {
      req.conn.bindings.erase(sid);
      return NtStatus::InsufficientResources;
    }
    exchange = std::make_unique<state::Session>();
    exchange->session_id = sid;
    exchange->preauth_hash = req.conn.preauth_hash;
  }
  req.response_session_id = sid;
  if (req.conn.dialect == config::kDialect311) update_preauth(exchange->preauth_hash, req.pdu);
  NtStatus st = NtStatus::InvalidParameter;
  if (auto token = read_client_token(req, *exchange, blob)) st = run_mech(req, *exchange, *token, w);
  if (st != NtStatus::MoreProcessingRequired) req.conn.bindings.erase(sid);
  return st;
}

// Session S is ended by a failed re-authentication: its channels' keys
// are kept for the responses to requests that still name it
// (SessionTables::ended).
void remember_ended(SessionTables& t, const state::Session& s) {
  if (s.keys.signing_key.empty()) return;  // nothing signs for it
  SessionTables::EndedSession e{s.session_id, s.channels};
  for (state::Channel& c : e.channels)
    if (c.signing_key.empty()) c.signing_key = s.keys.signing_key;
  if (t.ended.size() == SessionTables::kKeptEnded) t.ended.erase(t.ended.begin());
  t.ended.push_back(std::move(e));
}

}  // namespace

void end_session(Request& req, state::Session& s) {
  keep_durable_opens(req.conn, req.server, s.session_id);  // 3.3.5.6: durable opens outlive the session
  std::vector<uint64_t> to_close;
  for (auto& [vid, open] : req.conn.tables->opens)
    if (open->session_id == s.session_id) to_close.push_back(vid);
  std::sort(to_close.begin(), to_close.end());  // oldest first, as TREE_DISCONNECT
  for (uint64_t vid : to_close) close_open(req.conn, req.server, vid);
  withdraw_session(req.conn, req.server, s.session_id);
  req.server.sessions.remove(s.session_id);
  // Every channel's connection loses it (3.3.5.6: LOGOFF on any channel ends the session).
  for (ConnState* member : req.conn.tables->members)
    if (member != &req.conn && member->client_registered && s.channel(member->address.conn_id))
      req.server.clients.remove_session(member->client_guid, member->address, s.session_id);
  if (req.conn.client_registered)
    req.server.clients.remove_session(req.conn.client_guid, req.conn.address, s.session_id);
  if (req.server.control) req.server.control->logout(s.user);
  // Keep the session object alive until the response is signed: it is
  // erased after this chain element by marking it expired. (LOGOFF may end
  // a session whose setup is still in progress, MS-SMB2 3.3.5.2.9.)
  if (s.state == state::Session::State::InProgress) --req.conn.sessions_in_progress;
  s.state = state::Session::State::Expired;
  req.conn.sessions_expired = true;
  s.trees.clear();
}

NtStatus handle_session_setup(Request& req, ByteWriter& w) {
  ByteReader r(req.body);
  r.skip(2);
  uint8_t flags = r.u8();
  r.u8();   // SecurityMode
  r.u32();  // Capabilities
  r.u32();  // Channel
  uint16_t blob_off = r.u16();
  uint16_t blob_len = r.u16();
  uint64_t previous_session_id = r.u64();
  ByteSpan blob;
  if (!r.ok() || !buffer_at(req, blob_off, blob_len, blob) || blob.empty()) return NtStatus::InvalidParameter;
  // A binding attempt (3.3.5.5 step 4; a zero SessionId is a new session,
  // step 3): refused, with the status its case calls for. A session of this
  // very connection has its channel already.
  if ((flags & SMB2_SESSION_FLAG_BINDING) && req.hdr.session_id != 0) return setup_binding(req, blob, w);
  if (NtStatus st = check_encryption_possible(req); st != NtStatus::Success) return st;
  // MS-SMB2 names no status for a server out of room for sessions.
  if (req.hdr.session_id == 0 && req.conn.sessions_in_progress >= kMaxSessionsInProgress)
    return NtStatus::InsufficientResources;

  state::Session* s = find_or_create_session(req);
  if (!s) return refuse_foreign_session(req);
  req.response_session_id = s->session_id;
  if (req.conn.dialect == config::kDialect311) update_preauth(s->preauth_hash, req.pdu);

  NtStatus st = NtStatus::InvalidParameter;
  bool was_valid = s->state == state::Session::State::Valid;
  if (auto token = read_client_token(req, *s, blob)) st = run_mech(req, *s, *token, w);
  if (st == NtStatus::Success && !was_valid) {
    // Where the session lives, for a later reconnect that supersedes it;
    // and this one may supersede an earlier one (3.3.5.5.3).
    req.server.sessions.add(s->session_id, {req.conn.address, s->user, req.conn.dialect, req.conn.signing_algorithm,
                                            s->keys.signing_key, s->is_guest || s->is_anonymous, req.conn.cipher});
    register_client(req, *s);
    if (previous_session_id && previous_session_id != s->session_id && !s->is_guest && !s->is_anonymous)
      end_previous_session(req, previous_session_id, s->user);
  }
  if (!nt_success(st) && st != NtStatus::MoreProcessingRequired) {
    // A failed exchange removes a session that never became valid (3.3.5.5.3).
    // The session object is freed after the chain (the processor still
    // holds a pointer to it for this response).
    if (s->state == state::Session::State::InProgress) {
      --req.conn.sessions_in_progress;
      s->state = state::Session::State::Expired;
      req.conn.sessions_expired = true;
    } else if (s->state == state::Session::State::Valid) {
      // A failed re-authentication ends the session (MS-SMB2 3.3.5.5.3;
      // smb2.session.reauth6): the client has dropped its keys, so a later
      // response signed for it would be one it cannot check (it reports
      // NT_STATUS_INVALID_NETWORK_RESPONSE); its requests now get
      // USER_SESSION_DELETED, signed (SessionTables::ended).
      remember_ended(*req.conn.tables, *s);
      end_session(req, *s);
    }
    req.session = nullptr;
  }
  return st;
}

NtStatus handle_logoff(Request& req, ByteWriter& w) {
  state::Session* s = req.session;
  end_session(req, *s);
  req.response_session_id = s->session_id;
  w.u16(4);
  w.u16(0);
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
