// Previous Versions: finding the snapshot a CREATE names, what may not be
// done in one, and FSCTL_SRV_ENUMERATE_SNAPSHOTS (smb2/snapshots/snapshots.hpp).
#include "smb2/snapshots/snapshots.hpp"

#include "smb2/engine/create_context_chain.hpp"
#include "vfs/paths.hpp"
#include "vfs/snapshots.hpp"
#include "wire/smb2_body.hpp"

namespace ringsmb::smb2 {
namespace {

constexpr uint64_t kFiletimeUnixEpoch = 116444736000000000ull;  // 1970-01-01 in FILETIME
constexpr uint64_t kFiletimePerSecond = 10000000;
constexpr size_t kSnapshotArrayFixedSize = 12;   // NumberOfSnapShots, ...Returned, SnapShotArraySize
constexpr size_t kSnapshotArrayMinimum = 16;     // MS-SMB2 3.3.5.15.1
constexpr size_t kTokenBytes = 2 * 25;           // "@GMT-YYYY.MM.DD-HH.MM.SS" and its NUL, UTF-16

std::optional<vfs::SnapshotSource> source_of(const state::Tree& tree) {
  if (!tree.share.shadow_copy) return std::nullopt;
  const config::ShadowCopyConfig& c = *tree.share.shadow_copy;
  vfs::SnapshotSource s;
  s.share_path = tree.share.path;
  s.snapdir = c.snapdir;
  s.format = c.format;
  s.localtime = c.localtime;
  s.sort_descending = c.sort_descending;
  s.mountpoint = c.mountpoint;
  s.basedir = c.basedir;
  s.snapsharepath = c.snapsharepath;
  return s;
}

// SMB2_CREATE_TIMEWARP_TOKEN (MS-SMB2 2.2.13.2.7): an 8-byte FILETIME.
NtStatus read_timewarp(ByteSpan contexts, std::optional<int64_t>& unix_time) {
  NtStatus st = NtStatus::Success;
  bool ok = for_each_create_context(contexts, [&](const CreateContext& c) {
    if (c.name != "TWrp") return;
    if (c.data.size() < 8) {
      st = NtStatus::InvalidParameter;
      return;
    }
    ByteReader r(c.data);
    uint64_t filetime = r.u64();
    if (filetime < kFiletimeUnixEpoch) {
      st = NtStatus::ObjectNameNotFound;
      return;
    }
    unix_time = int64_t((filetime - kFiletimeUnixEpoch) / kFiletimePerSecond);
  });
  return ok ? st : NtStatus::InvalidParameter;
}

}  // namespace

NtStatus find_snapshot(Request& req, ByteSpan contexts, std::string& path, SnapshotTarget& out) {
  auto source = source_of(*req.tree);
  if (!contexts.empty() && has_create_context(contexts, "TWrp")) {
    if (!source) return NtStatus::ObjectNameNotFound;
    if (NtStatus st = read_timewarp(contexts, out.unix_time); st != NtStatus::Success) return st;
  }
  // The token in the path is the same snapshot (clients send both).
  if (source && path.find("@GMT-") != std::string::npos)
    if (auto t = vfs::take_gmt_token(path); t && !out.unix_time) out.unix_time = t;
  if (!out.unix_time) return NtStatus::Success;
  auto root = vfs::open_snapshot_root(*source, *out.unix_time);
  if (!root) return root.error();
  out.root = std::make_shared<state::UniqueFd>(*root);
  return NtStatus::Success;
}

NtStatus check_snapshot_create(uint32_t disposition, uint32_t create_options) {
  using namespace wire::create;
  if (disposition != FILE_OPEN && disposition != FILE_OPEN_IF) return NtStatus::MediaWriteProtected;
  if (create_options & FILE_DELETE_ON_CLOSE) return NtStatus::MediaWriteProtected;
  return NtStatus::Success;
}


// MS-SMB2 3.3.5.15.1: every snapshot of the share that holds it, as a
// SRV_SNAPSHOT_ARRAY (2.2.32.2) of NUL-terminated @GMT tokens and a final
// NUL. When they do not fit, the count and the size needed, none returned.
NtStatus fsctl_enumerate_snapshots(FsctlCall& call) {
  auto source = source_of(*call.req.tree);
  if (!source) return NtStatus::InvalidDeviceRequest;
  if (call.q.max_output_response < kSnapshotArrayMinimum) return NtStatus::InvalidParameter;
  auto snapshots = vfs::list_snapshots(*source);
  const size_t array_size = snapshots.size() * kTokenBytes + 2;
  const bool fits = kSnapshotArrayFixedSize + array_size <= call.q.max_output_response && !snapshots.empty();
  ByteWriter w(call.out);
  w.u32(uint32_t(snapshots.size()));
  w.u32(fits ? uint32_t(snapshots.size()) : 0);
  w.u32(uint32_t(array_size));
  if (!fits) {
    w.zeros(kSnapshotArrayMinimum - kSnapshotArrayFixedSize);
    return NtStatus::Success;
  }
  for (const auto& s : snapshots) {
    w.bytes(vfs::utf8_to_utf16le(vfs::gmt_token(s.unix_time)));
    w.u16(0);
  }
  w.u16(0);
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
