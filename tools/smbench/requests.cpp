// Request encoders and the few response decoders smbench needs.
#include <cstdio>

#include "auth/ntlm_utf16.hpp"
#include "client.hpp"
#include "common/ntstatus.hpp"
#include "crypto/primitives.hpp"

namespace ringsmb::smbench {
namespace {

using wire::Command;
using wire::kHeaderSize;

constexpr uint8_t kOplockLevelLease = 0xFF;
constexpr uint32_t kShareAll = 0x7;           // READ | WRITE | DELETE
constexpr uint32_t kNonDirectoryFile = 0x40;  // FILE_NON_DIRECTORY_FILE
constexpr uint32_t kLeaseRwh = 0x7;           // READ | HANDLE | WRITE caching
constexpr uint32_t kImpersonation = 2;

uint16_t charge_for(size_t bytes) { return uint16_t(bytes ? (bytes - 1) / 65536 + 1 : 1); }

// SMB2_CREATE_REQUEST_LEASE (MS-SMB2 2.2.13.2.8), a v1 lease asking for RWH.
void lease_context(ByteWriter& w) {
  w.u32(0);   // Next
  w.u16(16);  // NameOffset
  w.u16(4);   // NameLength
  w.u16(0);
  w.u16(24);  // DataOffset
  w.u32(32);  // DataLength
  w.bytes("RqLs", 4);
  w.u32(0);  // pad the name to 8
  std::array<uint8_t, 16> key;
  crypto::random_bytes(key);
  w.bytes(key);
  w.u32(kLeaseRwh);
  w.u32(0);  // LeaseFlags
  w.u64(0);  // LeaseDuration
}

// One create context (MS-SMB2 2.2.13.2): the 4-byte name padded to 8, the
// data 8-aligned after it. Returns where Next goes, for the caller to link.
size_t create_context(ByteWriter& w, const char* name, ByteSpan data) {
  w.align(8, size_t(0) - kHeaderSize);
  size_t start = w.size();
  w.u32(0);  // Next
  w.u16(16);
  w.u16(4);
  w.u16(0);
  w.u16(data.empty() ? 0 : 24);
  w.u32(uint32_t(data.size()));
  w.bytes(name, 4);
  w.u32(0);
  w.bytes(data);
  return start;
}

// SMB2_CREATE_REQUEST_LEASE_V2 (2.2.13.2.10): RWH, no parent key.
Bytes lease_v2_data() {
  Bytes d;
  ByteWriter w(d);
  std::array<uint8_t, 16> key;
  crypto::random_bytes(key);
  w.bytes(key);
  w.u32(kLeaseRwh);
  w.u32(0);    // Flags
  w.u64(0);    // LeaseDuration
  w.zeros(16); // ParentLeaseKey
  w.u16(0);    // Epoch
  w.u16(0);
  return d;
}

// SMB2_CREATE_DURABLE_HANDLE_REQUEST_V2 (2.2.13.2.11): the server's default
// timeout, not persistent, a fresh CreateGuid.
Bytes durable_v2_data() {
  Bytes d;
  ByteWriter w(d);
  w.u32(0);  // Timeout
  w.u32(0);  // Flags
  w.u64(0);
  std::array<uint8_t, 16> guid;
  crypto::random_bytes(guid);
  w.bytes(guid);
  return d;
}

// The fixed part and name of a CREATE; returns where the contexts' offset goes.
size_t create_head(ByteWriter& w, std::string_view name, uint8_t oplock, uint32_t disposition, uint32_t access) {
  Bytes name16 = auth::detail::utf8_to_utf16le(name).value_or(Bytes{});
  w.u16(57);
  w.u8(0);  // SecurityFlags
  w.u8(oplock);
  w.u32(kImpersonation);
  w.u64(0);  // SmbCreateFlags
  w.u64(0);  // Reserved
  w.u32(access);
  w.u32(0x80);  // FILE_ATTRIBUTE_NORMAL
  w.u32(kShareAll);
  w.u32(disposition);
  w.u32(kNonDirectoryFile);
  w.u16(uint16_t(kHeaderSize + 56));
  w.u16(uint16_t(name16.size()));
  size_t ctx_at = w.size();
  w.u64(0);  // CreateContextsOffset, CreateContextsLength
  w.bytes(name16);
  if (name16.empty()) w.u8(0);  // the Buffer is never empty
  return ctx_at;
}

}  // namespace

Request create_request_windows(std::string_view name, uint32_t disposition, uint32_t desired_access) {
  Request req = new_request(Command::Create, 1, 320);
  ByteWriter w(req.body);
  size_t ctx_at = create_head(w, name, kOplockLevelLease, disposition, desired_access);
  Bytes durable = durable_v2_data(), lease = lease_v2_data();
  // In the order Windows sends them.
  struct {
    const char* name;
    ByteSpan data;
  } contexts[] = {{"DH2Q", durable}, {"MxAc", {}}, {"QFid", {}}, {"RqLs", lease}};
  size_t first = 0, prev = SIZE_MAX;
  for (auto& c : contexts) {
    size_t at = create_context(w, c.name, c.data);
    if (prev == SIZE_MAX) first = at;
    else w.patch_u32(prev, uint32_t(at - prev));
    prev = at;
  }
  w.patch_u32(ctx_at, uint32_t(kHeaderSize + first));
  w.patch_u32(ctx_at + 4, uint32_t(w.size() - first));
  return req;
}

Request set_end_of_file_request(const FileId& id, uint64_t end_of_file) {
  Request req = new_request(Command::SetInfo, 1);
  ByteWriter w(req.body);
  w.u16(33);
  w.u8(1);   // SMB2_0_INFO_FILE
  w.u8(20);  // FileEndOfFileInformation
  w.u32(8);
  w.u16(uint16_t(kHeaderSize + 32));
  w.u16(0);
  w.u32(0);  // AdditionalInformation
  w.bytes(id);
  w.u64(end_of_file);
  return req;
}

Request create_request(std::string_view name, bool request_lease, uint32_t disposition, uint32_t desired_access) {
  Request req = new_request(Command::Create, 1);
  ByteWriter w(req.body);
  size_t ctx_at = create_head(w, name, request_lease ? kOplockLevelLease : 0, disposition, desired_access);
  if (request_lease) {
    w.align(8, size_t(0) - kHeaderSize);  // contexts are 8-aligned from the header
    size_t start = w.size();
    lease_context(w);
    w.patch_u32(ctx_at, uint32_t(kHeaderSize + start));
    w.patch_u32(ctx_at + 4, uint32_t(w.size() - start));
  }
  return req;
}

Request write_request(const FileId& id, uint64_t offset, ByteSpan data) {
  Request req = new_request(Command::Write, charge_for(data.size()), 48 + data.size());
  ByteWriter w(req.body);
  w.u16(49);
  w.u16(uint16_t(kHeaderSize + 48));
  w.u32(uint32_t(data.size()));
  w.u64(offset);
  w.bytes(id);
  w.u32(0);  // Channel
  w.u32(0);  // RemainingBytes
  w.u32(0);  // WriteChannelInfoOffset/Length
  w.u32(0);  // Flags
  w.bytes(data);
  return req;
}

Request read_request(const FileId& id, uint64_t offset, uint32_t length) {
  Request req = new_request(Command::Read, charge_for(length));
  ByteWriter w(req.body);
  w.u16(49);
  w.u8(0x50);  // Padding: data right after the response's fixed part
  w.u8(0);
  w.u32(length);
  w.u64(offset);
  w.bytes(id);
  w.u32(0);  // MinimumCount
  w.u32(0);  // Channel
  w.u32(0);  // RemainingBytes
  w.u32(0);  // ReadChannelInfoOffset/Length
  w.u8(0);   // Buffer
  return req;
}

Request set_basic_info_request(const FileId& id, uint64_t last_write_filetime, uint32_t attributes) {
  Request req = new_request(Command::SetInfo, 1);
  ByteWriter w(req.body);
  w.u16(33);
  w.u8(1);  // SMB2_0_INFO_FILE
  w.u8(4);  // FileBasicInformation
  w.u32(40);
  w.u16(uint16_t(kHeaderSize + 32));
  w.u16(0);
  w.u32(0);  // AdditionalInformation
  w.bytes(id);
  w.u64(0);  // CreationTime: unchanged
  w.u64(0);  // LastAccessTime: unchanged
  w.u64(last_write_filetime);
  w.u64(0);  // ChangeTime: unchanged
  w.u32(attributes);
  w.u32(0);
  return req;
}

Request close_request(const FileId& id) {
  Request req = new_request(Command::Close, 1);
  ByteWriter w(req.body);
  w.u16(24);
  w.u16(0);  // Flags: no post-query, as Windows closes after a copy
  w.u32(0);
  w.bytes(id);
  return req;
}

Request flush_request(const FileId& id) {
  Request req = new_request(Command::Flush, 1);
  ByteWriter w(req.body);
  w.u16(24);
  w.u16(0);
  w.u32(0);
  w.bytes(id);
  return req;
}

Request echo_request() {
  Request req = new_request(Command::Echo, 1);
  ByteWriter w(req.body);
  w.u16(4);
  w.u16(0);
  return req;
}

bool parse_create_response(const Response& r, FileId& id) {
  ByteReader rd(r.body);
  rd.seek(kHeaderSize + 64);
  ByteSpan f = rd.bytes(16);
  if (!rd.ok()) return false;
  std::copy(f.begin(), f.end(), id.begin());
  return true;
}

uint32_t parse_read_length(const Response& r) {
  ByteReader rd(r.body);
  rd.seek(kHeaderSize + 4);
  return rd.u32();
}

std::string status_text(uint32_t status) { return nt_status_name(NtStatus(status)); }

}  // namespace ringsmb::smbench
