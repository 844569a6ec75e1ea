#include "smb2/commands/create_contexts.hpp"

#include <algorithm>
#include <cstring>

#include "smb2/fruit/aapl.hpp"
#include "smb2/security/access.hpp"
#include "smb2/security/security_info.hpp"
#include "wire/smb2_body.hpp"

namespace ringsmb::smb2 {
namespace {

constexpr uint16_t kMinContextNameBytes = 4;

// MS-SMB2 2.2.13.2.8 / 2.2.13.2.10 LeaseFlags.
constexpr uint32_t kLeaseFlagBreakInProgress = 0x2, kLeaseFlagParentKeySet = 0x4;

// Appends a context's header and name; its data follows at the returned
// offset, and end_context() patches DataLength once it is written. Data is
// written in place: no temporary buffer per context.
size_t begin_context(Bytes& out, std::string_view name, size_t& last_start) {
  ByteWriter w(out);
  if (last_start != SIZE_MAX) {
    w.align(8);
    store_le32(out.data() + last_start, uint32_t(out.size() - last_start));
  }
  last_start = out.size();
  w.u32(0);  // Next, patched when another follows
  w.u16(16);
  w.u16(uint16_t(name.size()));
  w.u16(0);
  w.u16(24);
  w.u32(0);  // DataLength, patched by end_context
  w.bytes(name.data(), name.size());
  w.align(8, last_start);
  return out.size();
}

void end_context(Bytes& out, size_t context_start, size_t data_start) {
  constexpr size_t kDataLengthAt = 12;  // Next, NameOffset, NameLength, Reserved, DataOffset come first
  store_le32(out.data() + context_start + kDataLengthAt, uint32_t(out.size() - data_start));
}

}  // namespace

bool next_create_context(ByteSpan buffer, size_t& off, CreateContext& out) {
  if (off >= buffer.size()) return false;
  ByteReader r(buffer.subspan(off));
  uint32_t next = r.u32();
  uint16_t name_off = r.u16(), name_len = r.u16();
  r.u16();
  uint16_t data_off = r.u16();
  uint32_t data_len = r.u32();
  if (!r.ok()) return false;
  size_t limit = next ? next : buffer.size() - off;
  // Names are at least 4 bytes (every defined one is); Windows and Samba
  // refuse shorter ones (smb2.create.blob).
  if ((next && (next % 8 || next > buffer.size() - off)) || name_len < kMinContextNameBytes || name_off < 16 ||
      size_t(name_off) + name_len > limit || (data_len && (data_off < 16 || size_t(data_off) + data_len > limit)))
    return false;
  const uint8_t* base = buffer.data() + off;
  out = {std::string_view(reinterpret_cast<const char*>(base + name_off), name_len),
         ByteSpan(base + data_off, data_len)};
  off = next ? off + next : buffer.size();
  return true;
}

void append_create_context(Bytes& out, std::string_view name, ByteSpan data) {
  size_t last = SIZE_MAX;  // the chain's last context: its Next is patched
  for (size_t at = 0; at + 4 <= out.size();) {
    last = at;
    uint32_t next = load_le32(out.data() + at);
    if (!next) break;
    at += next;
  }
  size_t start = begin_context(out, name, last);
  out.insert(out.end(), data.begin(), data.end());
  end_context(out, last, start);
}

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

bool has_create_context(ByteSpan buffer, std::string_view name) {
  bool found = false;
  for_each_create_context(buffer, [&](const CreateContext& c) { found = found || c.name == name; });
  return found;
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
