#include "smb2/commands/session_bind.hpp"

#include "common/log.hpp"
#include "state/session.hpp"
#include "crypto/smb2_keys.hpp"

namespace ringsmb::smb2 {
namespace {

// 3.3.5.2.4: a signed request for binding is verified with the session's
// Session.SigningKey (3.x) or Session.SessionKey (2.x), looked up in the
// GlobalSessionTable, in that session's algorithm (not the connection's:
// a 3.x session named on a 2.1 connection is signed with AES-CMAC). When
// it checks out, the response is signed the same way (3.3.4.1.1: a
// SESSION_SETUP response other than SUCCESS uses Session.SigningKey).
// A signature that does not check out gets nothing signed back, so the
// refusal is no signing oracle.
NtStatus verify_with(Request& req, const state::SessionHome& home) {
  if (!req.hdr.is_signed() || req.encrypted) return NtStatus::Success;
  if (home.signing_key.empty() || !crypto::verify_message(home.signing_algorithm, home.signing_key, req.pdu)) {
    LOG_INFO("%s: SESSION_SETUP for session 0x%llx of another connection: bad signature",
             req.conn.client_address.c_str(), (unsigned long long)req.hdr.session_id);
    return NtStatus::AccessDenied;
  }
  req.foreign_signer = ForeignSigner{home.signing_algorithm, home.signing_key};
  return NtStatus::Success;
}

// A binding across signing algorithms. MS-SMB2 3.3.5.5 names no status
// for it; Windows (and Samba, whose smbtorture bind_negative_smb3sign*
// tests check it) answers REQUEST_OUT_OF_SEQUENCE when the session signs
// with AES-GMAC and NOT_SUPPORTED when the new connection does, before
// any other check.
NtStatus check_signing_algorithms(const Request& req, const state::SessionHome& home) {
  using crypto::SigningAlgorithm;
  if (home.signing_algorithm == req.conn.signing_algorithm) return NtStatus::Success;
  if (home.signing_algorithm >= SigningAlgorithm::AesGmac) return NtStatus::RequestOutOfSequence;
  if (req.conn.signing_algorithm >= SigningAlgorithm::AesGmac) return NtStatus::NotSupported;
  return NtStatus::Success;
}

}  // namespace

// The checks of 3.3.5.5 step 4, in the order Windows makes them, then the
// refusal of a server that is not IsMultiChannelCapable (the connection
// was not offered SMB2_GLOBAL_CAP_MULTI_CHANNEL).
NtStatus refuse_binding(Request& req) {
  std::optional<state::SessionHome> home = req.server.sessions.find(req.hdr.session_id);
  if (!home) return NtStatus::UserSessionDeleted;
  if (NtStatus st = verify_with(req, *home); st != NtStatus::Success) return st;
  if (NtStatus st = check_signing_algorithms(req, *home); st != NtStatus::Success) return st;
  // Binding is an SMB 3.x feature: a 2.x connection cannot bind at all.
  if (!req.conn.is_smb3()) return NtStatus::RequestNotAccepted;
  if (!req.hdr.is_signed()) return NtStatus::InvalidParameter;
  if (home->dialect != req.conn.dialect) return NtStatus::InvalidParameter;
  if (home->cipher != req.conn.cipher) return NtStatus::InvalidParameter;
  if (home->guest_or_anonymous) return NtStatus::NotSupported;
  if (!(req.conn.server_capabilities & kMultiChannelCapability)) return NtStatus::RequestNotAccepted;
  return NtStatus::Success;
}

state::Session* session_to_bind(Request& req, ConnState*& home_conn) {
  home_conn = nullptr;
  std::optional<state::SessionHome> home = req.server.sessions.find(req.hdr.session_id);
  if (!home || !req.conn.local_conns) return nullptr;
  home_conn = req.conn.local_conns->find_conn(home->conn.conn_id);
  if (!home_conn) return nullptr;
  auto it = home_conn->tables->sessions.find(req.hdr.session_id);
  if (it == home_conn->tables->sessions.end() || it->second->state != state::Session::State::Valid) return nullptr;
  return it->second.get();
}

namespace {

// CONN shares HOME's tables from now on: its own sessions and opens join
// them (ids are unique across the server, so nothing collides), and so do
// the connections that already shared CONN's.
void share_tables(ConnState& conn, ConnState& home) {
  if (conn.tables == home.tables) return;
  std::shared_ptr<SessionTables> from = conn.tables;
  std::shared_ptr<SessionTables> into = home.tables;
  if (into->members.empty()) into->members.push_back(&home);
  for (auto& kv : from->sessions) into->sessions.insert(std::move(kv));
  for (auto& kv : from->opens) into->opens.insert(std::move(kv));
  for (auto& kv : from->pipes) into->pipes.insert(std::move(kv));
  std::vector<ConnState*> joining = from->members.empty() ? std::vector<ConnState*>{&conn} : from->members;
  for (ConnState* m : joining) {
    m->tables = into;
    into->members.push_back(m);
  }
}

}  // namespace

void add_channel(ConnState& conn, ConnState& home_conn, state::Session& s, Bytes signing_key) {
  share_tables(conn, home_conn);
  s.channels.push_back({conn.address.conn_id, std::move(signing_key)});
  LOG_INFO("%s: bound to session 0x%llx of '%s' (channel %zu)", conn.client_address.c_str(),
           (unsigned long long)s.session_id, s.user.c_str(), s.channels.size());
}

NtStatus refuse_foreign_session(Request& req) {
  if (std::optional<state::SessionHome> home = req.server.sessions.find(req.hdr.session_id))
    (void)verify_with(req, *home);  // only decides whether the answer is signed
  return NtStatus::UserSessionDeleted;
}

}  // namespace ringsmb::smb2
