// Quotas over SMB2 (smb2/quota/quota.hpp).
#include "smb2/quota/quota.hpp"

#include <strings.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/unicode.hpp"
#include "rpc/interface.hpp"
#include "smb2/security/access.hpp"
#include "vfs/ntacl.hpp"
#include "vfs/paths.hpp"
#include "vfs/quota.hpp"
#include "wire/create_response.hpp"
#include "wire/smb2_body.hpp"

namespace ringsmb::smb2 {
namespace {

namespace nt = vfs::ntacl;

constexpr std::string_view kQuotaFileName = "$Extend\\$Quota:$Q:$INDEX_ALLOCATION";
constexpr size_t kQueryQuotaInfoSize = 16;      // SMB2_QUERY_QUOTA_INFO before its SidBuffer (2.2.37.1)
constexpr size_t kQuotaEntryFixedSize = 40;     // FILE_QUOTA_INFORMATION before its Sid (MS-FSCC 2.4.36)
constexpr size_t kGetQuotaEntryFixedSize = 8;   // FILE_GET_QUOTA_INFORMATION before its Sid (2.4.41.1)
constexpr uint64_t kNoLimit = ~0ull;            // QuotaThreshold / QuotaLimit: none
constexpr uint64_t kRemoveEntry = ~0ull - 1;    // a SET with -2: the entry goes (Linux: no limits)
// What Windows reports for NTFS's $Quota index (smbtorture smb2.create.quota-fake-file).
constexpr uint32_t kQuotaFileAttributes = 0x36;  // HIDDEN | SYSTEM | DIRECTORY | ARCHIVE
// MS-FSCC 2.5.2 FileSystemControlFlags.
constexpr uint32_t FILE_VC_QUOTA_TRACK = 0x1, FILE_VC_QUOTA_ENFORCE = 0x2;

// MS-SMB2 2.2.37.1.
struct QueryQuotaInfo {
  bool return_single = false;
  bool restart_scan = false;
  ByteSpan sid_list;  // FILE_GET_QUOTA_INFORMATION entries
};

struct QuotaEntry {
  nt::Sid sid;
  vfs::UserQuota quota;
};

nt::Sid machine_sid(const ServerContext& server) {
  rpc::Sid r = rpc::derive_machine_sid(server.config.global.netbios_name);
  return nt::Sid{r.revision, r.authority, r.sub};
}

// "admin users" (as srvsvc judges them), or file operations that run as root.
bool is_quota_admin(const Request& req) {
  const state::Session& s = *req.session;
  if (s.is_guest || s.is_anonymous) return false;
  if (req.tree->identity.uid == 0) return true;
  for (const std::string& name : req.server.config.global.admin_users)
    if (strcasecmp(name.c_str(), s.user.c_str()) == 0) return true;
  return false;
}

NtStatus parse_query(ByteSpan input, QueryQuotaInfo& q) {
  ByteReader r(input);
  q.return_single = r.u8() != 0;
  q.restart_scan = r.u8() != 0;
  r.skip(2);
  const uint32_t sid_list_length = r.u32(), start_sid_length = r.u32(), start_sid_offset = r.u32();
  if (!r.ok()) return NtStatus::InvalidParameter;
  // A scan from a given SID is not offered, as in Samba.
  if (start_sid_length || start_sid_offset) return NtStatus::InvalidParameter;
  if (sid_list_length > input.size() - kQueryQuotaInfoSize) return NtStatus::InvalidParameter;
  q.sid_list = input.subspan(kQueryQuotaInfoSize, sid_list_length);
  return NtStatus::Success;
}

// FILE_GET_QUOTA_INFORMATION entries, each bounded by the list.
NtStatus parse_sid_list(ByteSpan list, std::vector<nt::Sid>& sids) {
  size_t at = 0;
  for (;;) {
    if (list.size() - at < kGetQuotaEntryFixedSize) return NtStatus::InvalidParameter;
    const uint32_t next = load_le32(&list[at]), sid_length = load_le32(&list[at + 4]);
    ByteSpan rest = list.subspan(at + kGetQuotaEntryFixedSize);
    if (sid_length > rest.size()) return NtStatus::InvalidParameter;
    auto sid = nt::parse_sid(rest.first(sid_length));
    if (!sid || sid->size() != sid_length) return NtStatus::InvalidParameter;
    sids.push_back(std::move(*sid));
    if (next == 0) return NtStatus::Success;
    if (next > list.size() - at) return NtStatus::InvalidParameter;
    at += next;
  }
}

// The entries a SID list asks for: a SID that names no Unix user, or a
// user the file system has no quota record for, is left out (as Samba).
NtStatus entries_for_sids(const Request& req, const std::vector<nt::Sid>& sids, std::vector<QuotaEntry>& out) {
  const nt::Sid machine = machine_sid(req.server);
  const bool admin = is_quota_admin(req);
  for (const nt::Sid& sid : sids) {
    auto uid = nt::uid_of(sid, machine);
    if (!uid) continue;
    if (!admin && *uid != req.tree->identity.uid) return NtStatus::AccessDenied;
    auto q = vfs::get_user_quota(req.tree->root.get(), *uid);
    if (q) out.push_back({sid, *q});
  }
  return NtStatus::Success;
}

bool has_limit(const vfs::UserQuota& q) { return q.soft_limit_bytes || q.hard_limit_bytes; }

// The next users of the scan with a limit (Samba lists those alone), from
// the open's position on; an ordinary user's scan holds only themselves.
void scan_entries(const Request& req, state::Open& open, size_t most, std::vector<QuotaEntry>& out) {
  const int fd = req.tree->root.get();
  if (!is_quota_admin(req)) {
    const uint32_t self = req.tree->identity.uid;
    if (open.quota_scan_uid > self) return;
    open.quota_scan_uid = self + 1;
    auto q = vfs::get_user_quota(fd, self);
    if (q && has_limit(*q)) out.push_back({nt::unix_user_sid(self), *q});
    return;
  }
  while (out.size() < most && open.quota_scan_uid != UINT32_MAX) {
    auto next = vfs::next_user_quota(fd, open.quota_scan_uid);
    if (!next) {
      open.quota_scan_uid = UINT32_MAX;
      return;
    }
    open.quota_scan_uid = next->uid == UINT32_MAX ? UINT32_MAX : next->uid + 1;
    if (has_limit(next->quota)) out.push_back({nt::unix_user_sid(next->uid), next->quota});
  }
}

size_t entry_size(const QuotaEntry& e) { return kQuotaEntryFixedSize + e.sid.size(); }
size_t align8(size_t n) { return (n + 7) & ~size_t(7); }

// FILE_QUOTA_INFORMATION entries, 8-byte aligned, as many as fit.
size_t put_entries(const std::vector<QuotaEntry>& entries, uint32_t output_length, Bytes& data) {
  size_t count = 0, previous = 0;
  for (const QuotaEntry& e : entries) {
    const size_t start = count ? align8(data.size()) : 0;
    if (start + entry_size(e) > output_length) break;
    if (count) store_le32(&data[previous], uint32_t(start - previous));  // NextEntryOffset
    data.resize(start);
    ByteWriter w(data);
    w.u32(0);
    w.u32(uint32_t(e.sid.size()));
    w.u64(0);  // ChangeTime: Linux keeps none
    w.u64(e.quota.used_bytes);
    w.u64(e.quota.soft_limit_bytes ? e.quota.soft_limit_bytes : kNoLimit);
    w.u64(e.quota.hard_limit_bytes ? e.quota.hard_limit_bytes : kNoLimit);
    nt::put_sid(w, e.sid);
    previous = start;
    ++count;
  }
  return count;
}

void write_create_response(ByteWriter& w, const state::Open& open) {
  wire::write_plain_create_response(w, open.persistent_id, open.volatile_id, 0, kQuotaFileAttributes);
}

}  // namespace

// Compared in UTF-16LE, unconverted: every CREATE asks, and the name is
// ASCII, so only a name of its length in ASCII units can match.
bool names_quota_file(ByteSpan utf16le_name) {
  ByteSpan n = utf16le_name;
  if (n.size() >= 2 && n[0] == '\\' && n[1] == 0) n = n.subspan(2);
  if (n.size() != 2 * kQuotaFileName.size()) return false;
  for (size_t i = 0; i < kQuotaFileName.size(); ++i) {
    if (n[2 * i + 1] != 0 || unicode::ascii_lower(char(n[2 * i])) != unicode::ascii_lower(kQuotaFileName[i])) return false;
  }
  return true;
}

NtStatus create_quota_file(Request& req, const QuotaFileCreate& c, ByteWriter& w) {
  using namespace wire::create;
  if (c.disposition != FILE_OPEN && c.disposition != FILE_OPEN_IF) return NtStatus::AccessDenied;
  if (c.create_options & FILE_DELETE_ON_CLOSE) return NtStatus::AccessDenied;
  if (req.conn.tables->opens.size() >= req.server.config.global.max_open_files) return NtStatus::TooManyOpenedFiles;
  auto open = std::make_unique<state::Open>();
  open->persistent_id = open->volatile_id = req.server.next_file_id.fetch_add(1);
  open->session_id = req.session->session_id;
  open->tree_id = req.tree->tree_id;
  open->path = std::string(kQuotaFileName);  // no '/': never below a directory of the share
  open->quota_file = true;
  uint32_t access = map_generic(c.desired_access);
  if (access & MAXIMUM_ALLOWED) access = (access & ~MAXIMUM_ALLOWED) | FILE_READ_DATA | FILE_WRITE_DATA | READ_CONTROL;
  open->granted_access = access;
  open->share_access = c.share_access;
  open->create_options = c.create_options;
  write_create_response(w, *open);
  req.compound.file_id = {open->persistent_id, open->volatile_id};
  req.conn.tables->opens.emplace(open->volatile_id, std::move(open));
  return NtStatus::Success;
}

NtStatus query_quota(Request& req, state::Open& open, ByteSpan input, uint32_t output_length, Bytes& data) {
  if (!open.quota_file) return NtStatus::InvalidParameter;  // only the quota index has entries
  if (!(open.granted_access & FILE_READ_DATA)) return NtStatus::AccessDenied;
  QueryQuotaInfo q;
  if (NtStatus st = parse_query(input, q); st != NtStatus::Success) return st;
  std::vector<QuotaEntry> entries;
  if (!q.sid_list.empty()) {
    std::vector<nt::Sid> sids;
    if (NtStatus st = parse_sid_list(q.sid_list, sids); st != NtStatus::Success) return st;
    if (NtStatus st = entries_for_sids(req, sids, entries); st != NtStatus::Success) return st;
    if (q.return_single && entries.size() > 1) entries.resize(1);
  } else {
    if (q.restart_scan) open.quota_scan_uid = 0;
    const size_t most = q.return_single ? 1 : output_length / kQuotaEntryFixedSize + 1;
    const uint32_t resume = open.quota_scan_uid;
    scan_entries(req, open, most, entries);
    const size_t put = put_entries(entries, output_length, data);
    if (put == 0 && !entries.empty()) {
      open.quota_scan_uid = resume;
      return NtStatus::BufferTooSmall;
    }
    // Entries that did not fit come again next time.
    if (put < entries.size()) open.quota_scan_uid = nt::uid_of(entries[put].sid, nt::Sid{}).value_or(resume);
    return put == 0 ? NtStatus::NoMoreEntries : NtStatus::Success;
  }
  if (entries.empty()) return NtStatus::NoMoreEntries;
  if (put_entries(entries, output_length, data) == 0) return NtStatus::BufferTooSmall;
  return NtStatus::Success;
}

NtStatus set_quota(Request& req, state::Open& open, ByteSpan buf) {
  if (!open.quota_file) return NtStatus::InvalidParameter;
  if (!(open.granted_access & FILE_WRITE_DATA) || !is_quota_admin(req)) return NtStatus::AccessDenied;
  const nt::Sid machine = machine_sid(req.server);
  size_t at = 0;
  for (;;) {
    if (buf.size() - at < kQuotaEntryFixedSize) return NtStatus::InvalidParameter;
    ByteReader r(buf.subspan(at));
    const uint32_t next = r.u32(), sid_length = r.u32();
    r.skip(16);  // ChangeTime, QuotaUsed: not set by a client
    uint64_t threshold = r.u64(), limit = r.u64();
    ByteSpan rest = buf.subspan(at + kQuotaEntryFixedSize);
    if (sid_length > rest.size()) return NtStatus::InvalidParameter;
    auto sid = nt::parse_sid(rest.first(sid_length));
    if (!sid || sid->size() != sid_length) return NtStatus::InvalidParameter;
    auto uid = nt::uid_of(*sid, machine);
    if (!uid) return NtStatus::NoSuchUser;
    if (threshold == kNoLimit || threshold == kRemoveEntry) threshold = 0;
    if (limit == kNoLimit || limit == kRemoveEntry) limit = 0;
    if (NtStatus st = vfs::set_user_quota(req.tree->root.get(), *uid, threshold, limit); st != NtStatus::Success)
      return st;
    if (next == 0) return NtStatus::Success;
    if (next > buf.size() - at) return NtStatus::InvalidParameter;
    at += next;
  }
}

void put_fs_control_information(const Request& req, ByteWriter& w) {
  auto state = vfs::user_quota_state(req.tree->root.get());
  w.zeros(24);      // FreeSpaceStartFiltering, FreeSpaceThreshold, FreeSpaceStopFiltering
  w.u64(kNoLimit);  // DefaultQuotaThreshold: Linux has no default per-user limit
  w.u64(kNoLimit);  // DefaultQuotaLimit
  uint32_t flags = 0;
  if (state && state->tracked) flags |= FILE_VC_QUOTA_TRACK;
  if (state && state->enforced) flags |= FILE_VC_QUOTA_ENFORCE;
  w.u32(flags);  // FileSystemControlFlags
  w.u32(0);      // Padding
}

}  // namespace ringsmb::smb2
