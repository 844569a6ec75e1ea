#include "smb2/commands/create_contexts.hpp"

#include <algorithm>
#include <cstring>

#include "smb2/engine/create_context_chain.hpp"
#include "smb2/fruit/aapl.hpp"
#include "smb2/security/access.hpp"
#include "smb2/security/descriptor_access.hpp"
#include "smb2/security/security_info.hpp"
#include "wire/smb2_body.hpp"

namespace ringsmb::smb2 {
namespace {

// MS-SMB2 2.2.13.2.8 / 2.2.13.2.10 LeaseFlags.
constexpr uint32_t kLeaseFlagBreakInProgress = 0x2, kLeaseFlagParentKeySet = 0x4;

}  // namespace

NtStatus find_lease_request(const Request& req, ByteSpan buffer, LeaseRequest& out) {
  if (buffer.empty()) return NtStatus::Success;
  bool bad_lease = false;
  bool ok = for_each_create_context(buffer, [&](const CreateContext& c) {
    if (c.name != wire::create_context::kRequestLease || bad_lease) return;
    bool v2 = c.data.size() >= 52 && req.conn.is_smb3();
    if (c.data.size() < 32) {
      bad_lease = true;
      return;
    }
    ByteReader r(c.data);
    std::memcpy(out.key.data(), r.bytes(16).data(), 16);
    out.state = r.u32();
    uint32_t flags = r.u32();
    r.u64();  // LeaseDuration
    if (v2) {
      std::memcpy(out.parent_key.data(), r.bytes(16).data(), 16);
      out.epoch = r.u16();
      out.has_parent = flags & kLeaseFlagParentKeySet;
    }
    out.version = v2 ? 2 : 1;
    out.present = true;
  });
  return ok && !bad_lease ? NtStatus::Success : NtStatus::InvalidParameter;
}

NtStatus find_allocation_size(ByteSpan buffer, uint64_t& size) {
  size = 0;
  bool bad = false;
  bool ok = for_each_create_context(buffer, [&](const CreateContext& c) {
    if (c.name != wire::create_context::kAllocationSize) return;
    if (c.data.size() < 8) bad = true;
    else size = load_le64(c.data.data());
  });
  return ok && !bad ? NtStatus::Success : NtStatus::InvalidParameter;
}

NtStatus find_create_eas(const state::Tree& tree, ByteSpan buffer, std::vector<vfs::Ea>& out) {
  NtStatus st = NtStatus::Success;
  bool found = false;
  for_each_create_context(buffer, [&](const CreateContext& c) {
    if (c.name != wire::create_context::kEaBuffer || found) return;
    found = true;
    st = tree.eas ? vfs::parse_full_ea_list(c.data, out) : NtStatus::EasNotSupported;
  });
  if (st != NtStatus::Success) return st;
  // An entry with no value sets nothing on a new file.
  std::erase_if(out, [](const vfs::Ea& ea) { return ea.value.empty(); });
  return NtStatus::Success;
}

NtStatus answer_create_contexts(Request& req, ByteSpan buffer, const state::Open& open, const vfs::FileStat& st,
                                const LeaseAnswer* lease, Bytes& out) {
  size_t last = SIZE_MAX;
  ByteSpan aapl_query;
  bool ok = for_each_create_context(buffer, [&](const CreateContext& c) {
    ByteWriter w(out);
    if (c.name == "AAPL") aapl_query = c.data;  // answered last (smb2/fruit/aapl.hpp)
    if (c.name == wire::create_context::kMaximalAccess) {
      size_t data = begin_context(out, wire::create_context::kMaximalAccess, last);
      w.u32(uint32_t(NtStatus::Success));
      w.u32(req.tree->maximal_access & descriptor_maximal_access(req, open.fd.get(), st));
      end_context(out, last, data);
    } else if (c.name == wire::create_context::kQueryOnDiskId) {
      size_t data = begin_context(out, wire::create_context::kQueryOnDiskId, last);
      w.u64(fruit::reported_file_id(req, st.file_id));
      w.u64(st.device);
      w.zeros(16);  // Reserved (DiskFileId, VolumeId, Reserved: MS-SMB2 2.2.14.2.9)
      end_context(out, last, data);
    }
  });
  if (!ok) return NtStatus::InvalidParameter;
  if (lease) {
    size_t data = begin_context(out, wire::create_context::kRequestLease, last);
    ByteWriter w(out);
    const LeaseRequest& q = lease->request;
    w.bytes(q.key.data(), 16);
    w.u32(lease->state);
    uint32_t flags = lease->breaking ? kLeaseFlagBreakInProgress : 0;
    if (q.version == 2 && q.has_parent) flags |= kLeaseFlagParentKeySet;
    w.u32(flags);
    w.u64(0);  // LeaseDuration
    if (q.version == 2) {
      w.bytes(q.parent_key.data(), 16);
      w.u16(lease->epoch);
      w.u16(0);
    }
    end_context(out, last, data);
  }
  if (aapl_query.data()) fruit::answer_aapl(req, aapl_query, out);
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
