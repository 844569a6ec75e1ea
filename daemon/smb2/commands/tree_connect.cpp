// SMB2 TREE_CONNECT and TREE_DISCONNECT (MS-SMB2 2.2.9-2.2.12, 3.3.5.7, 3.3.5.8).
#include <fcntl.h>

#include <algorithm>

#include "common/log.hpp"
#include "smb2/commands/handlers.hpp"
#include "smb2/engine/async_engine.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/leases/lease.hpp"
#include "smb2/engine/metrics.hpp"
#include "smb2/engine/refusal_log.hpp"
#include "smb2/engine/thread_identity.hpp"
#include "vfs/file_info.hpp"
#include "vfs/paths.hpp"
#include "vfs/stream_store.hpp"

namespace ringsmb::smb2 {
namespace {

enum : uint8_t { SMB2_SHARE_TYPE_DISK = 1, SMB2_SHARE_TYPE_PIPE = 2 };
constexpr uint32_t SMB2_SHAREFLAG_NO_CACHING = 0x30, SMB2_SHAREFLAG_ENCRYPT_DATA = 0x8000;
constexpr uint32_t kFileAllAccess = 0x001F01FF;
constexpr uint32_t kReadOnlyAccess = 0x001200A9;  // FILE_GENERIC_READ | FILE_GENERIC_EXECUTE

// "\\server\share" -> "share".
std::string share_name_from_unc(const std::string& unc) {
  size_t start = unc.find_first_not_of('\\');
  if (start == std::string::npos) return {};
  size_t slash = unc.find('\\', start);
  if (slash == std::string::npos) return {};
  return unc.substr(slash + 1);
}

void write_response(ByteWriter& w, const state::Tree& t) {
  w.u16(16);
  w.u8(t.share.is_ipc ? SMB2_SHARE_TYPE_PIPE : SMB2_SHARE_TYPE_DISK);
  w.u8(0);
  w.u32((t.share.is_ipc ? SMB2_SHAREFLAG_NO_CACHING : 0) | (t.encrypt ? SMB2_SHAREFLAG_ENCRYPT_DATA : 0));
  w.u32(0);  // Capabilities
  w.u32(t.maximal_access);
}

// What keeps SESSION on CONN from encrypting, for the log: "client dialect
// 2.1" and the like.
std::string why_no_encryption(const ConnState& conn, const state::Session& session) {
  if (session.is_anonymous) return "anonymous session (no key to encrypt with)";
  if (session.is_guest) return "guest session (no key to encrypt with)";
  if (!conn.is_smb3()) {
    const uint16_t d = conn.dialect;
    return d == 0x0202 ? "client dialect 2.0.2" : d == 0x0210 ? "client dialect 2.1" : "client dialect 2.x";
  }
  return "the client did not offer encryption (SMB2_GLOBAL_CAP_ENCRYPTION or a cipher it shares)";
}

// MS-SMB2 3.3.5.7: decide whether the tree's traffic is encrypted. Only a
// session with keys on a connection with a cipher can be: a guest or
// anonymous session has no session key (and MS-SMB2 3.2.4.1.8 has its
// client never encrypt). "desired" then leaves the tree in the clear;
// "required" refuses the tree connect (RejectUnencryptedAccess).
NtStatus decide_encryption(Request& req, state::Tree& t) {
  auto policy = t.share.encryption;
  if (policy == config::EncryptionPolicy::Off || t.share.is_ipc) return NtStatus::Success;
  const state::Session& s = *req.session;
  const bool can_encrypt = req.conn.cipher && !s.is_guest && !s.is_anonymous && !s.keys.encryption_key.empty();
  if (can_encrypt) {
    t.encrypt = true;
    return NtStatus::Success;
  }
  if (policy != config::EncryptionPolicy::Required) return NtStatus::Success;
  log_share_encryption_refused(req.conn, s.user, t.share.name, why_no_encryption(req.conn, s), monotonic_ms());
  return NtStatus::AccessDenied;
}

// force user replaces the whole identity (uid, primary group, groups, as
// Samba does); force group then replaces the primary group only.
// The session's domain SIDs; a forced user has its own identity, not theirs.
std::vector<vfs::ntacl::Sid> tree_windows_sids(const state::Session& s, const ipc::ShareInfo& share) {
  std::vector<vfs::ntacl::Sid> out;
  if (share.force_user) return out;
  for (const std::string& text : s.sids)
    if (auto sid = vfs::ntacl::sid_from_text(text)) out.push_back(std::move(*sid));
  return out;
}

ipc::UnixUser tree_identity(const state::Session& s, const ipc::ShareInfo& share) {
  ipc::UnixUser id = share.force_user ? *share.force_user : s.unix_user;
  if (share.force_gid) id.gid = *share.force_gid;
  return id;
}

}  // namespace

NtStatus handle_tree_connect(Request& req, ByteWriter& w) {
  ByteReader r(req.body);
  r.skip(4);
  uint16_t path_off = r.u16();
  uint16_t path_len = r.u16();
  ByteSpan path;
  std::string unc;
  if (!r.ok() || !buffer_at(req, path_off, path_len, path) || !vfs::utf16le_to_utf8(path, unc))
    return NtStatus::InvalidParameter;
  std::string name = share_name_from_unc(unc);
  if (name.empty()) return NtStatus::BadNetworkName;

  state::Session& s = *req.session;
  ipc::TreeConnectRequest tcr{name, s.user, s.is_guest || s.is_anonymous, req.conn.client_address, s.sids};
  ipc::TreeConnectReply reply = req.server.control->tree_connect(tcr);
  if (reply.status != NtStatus::Success) return reply.status;

  auto t = std::make_unique<state::Tree>();
  t->share = reply.share;
  t->writable = reply.writable;
  t->identity = tree_identity(s, t->share);
  t->windows_sids = tree_windows_sids(s, t->share);
  t->maximal_access = t->share.is_ipc ? kFileAllAccess : (t->writable ? kFileAllAccess : kReadOnlyAccess);
  NtStatus st = decide_encryption(req, *t);
  if (st != NtStatus::Success) return st;
  if (!t->share.is_ipc) {
    become_root();
    int fd = open(t->share.path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      LOG_ERROR("share [%s]: cannot open path %s: %m", t->share.name.c_str(), t->share.path.c_str());
      return NtStatus::BadNetworkName;
    }
    t->root.reset(fd);
    // Named streams need trusted.* xattrs (CAP_SYS_ADMIN, a filesystem that
    // has them); without, `:` names stay refused and FILE_NAMED_STREAMS is
    // not advertised, so Windows drops streams itself.
    // EAs live in the same namespace (vfs/ea_store.hpp), whatever "streams" says.
    t->eas = vfs::streams_supported(fd);
    t->streams = t->share.streams && t->eas;
    t->memory_fs_device = vfs::memory_filesystem_device(fd);
    if (t->share.streams && !t->streams)
      LOG_DEBUG("share [%s]: named streams off: no trusted.* xattrs here (CAP_SYS_ADMIN?)", t->share.name.c_str());
  }
  if (req.conn.metrics) t->metrics_slot = req.conn.metrics->shares.slot(t->share.name);
  t->tree_id = s.next_tree_id++;
  req.tree = t.get();
  write_response(w, *t);
  s.trees.emplace(t->tree_id, std::move(t));
  return NtStatus::Success;
}

void disconnect_tree(ConnState& conn, ServerContext& server, state::Session& session, uint32_t tree_id) {
  auto tree = session.trees.find(tree_id);
  if (tree == session.trees.end()) return;
  std::vector<uint64_t> to_close;
  for (auto& [vid, open] : conn.tables->opens)
    if (open->session_id == session.session_id && open->tree_id == tree_id) to_close.push_back(vid);
  // Oldest first: a lock another handle of the tree waits for is released
  // (and granted) before the waiting handle closes (smb2.lock.cancel-tdis).
  std::sort(to_close.begin(), to_close.end());
  for (uint64_t vid : to_close) close_open(conn, server, vid);
  withdraw_tree(conn, server, session.session_id, tree_id);
  if (server.control) server.control->tree_disconnect(tree->second->share.name, session.user);
  session.trees.erase(tree);
}

NtStatus handle_tree_disconnect(Request& req, ByteWriter& w) {
  uint32_t tid = req.tree->tree_id;
  req.tree = nullptr;
  disconnect_tree(req.conn, req.server, *req.session, tid);
  w.u16(4);
  w.u16(0);
  return NtStatus::Success;
}

NtStatus handle_echo(Request&, ByteWriter& w) {
  w.u16(4);
  w.u16(0);
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
