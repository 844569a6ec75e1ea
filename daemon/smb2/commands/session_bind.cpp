#include "smb2/commands/session_bind.hpp"

#include "common/log.hpp"
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

// The checks of 3.3.5.5 step 4 that do not depend on a second channel
// existing, in the order Windows makes them, then the refusal of a
// server that is not IsMultiChannelCapable (the negotiate response never
// offers SMB2_GLOBAL_CAP_MULTI_CHANNEL).
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
  return NtStatus::RequestNotAccepted;
}

NtStatus refuse_foreign_session(Request& req) {
  if (std::optional<state::SessionHome> home = req.server.sessions.find(req.hdr.session_id))
    (void)verify_with(req, *home);  // only decides whether the answer is signed
  return NtStatus::UserSessionDeleted;
}

}  // namespace ringsmb::smb2
