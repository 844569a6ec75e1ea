// SMB2 IOCTL (MS-SMB2 2.2.31, 2.2.32, 3.3.5.15): parsing, the table of
// FSCTLs (smb2/fsctl/fsctl.hpp names the file of each family) and the response.
// Answered here:
//
//  - FSCTL_VALIDATE_NEGOTIATE_INFO (3.3.5.15.12): answered from what
//    NEGOTIATE recorded. Where the spec says to terminate the connection
//    (dialect 3.1.1, any mismatch, too small MaxOutputResponse) a handler
//    cannot drop the connection, so it answers STATUS_ACCESS_DENIED, on
//    which the client itself must terminate it (3.2.5.14.12).
//  - FSCTL_DFS_GET_REFERRALS(_EX): no DFS: STATUS_FS_DRIVER_REQUIRED, as a
//    Windows server without the DFS driver answers.
//  - FSCTL_CREATE_OR_GET_OBJECT_ID (MS-FSA 2.1.5.10.1): the object id is
//    derived from (device, inode), so it exists for every file, stays the
//    same for the file's life and is unique on the volume; nothing is stored.
//  - FSCTL_PIPE_TRANSCEIVE, FSCTL_PIPE_WAIT: IPC$ pipes (pipe_io.cpp);
//    a transceive whose reply is longer than MaxOutputResponse returns its
//    first part with STATUS_BUFFER_OVERFLOW.
//  - FSCTL_PIPE_PEEK: not yet (STATUS_NOT_SUPPORTED).
//  - FSCTL_LMR_REQUEST_RESILIENCY (3.3.5.15.9): the open becomes resilient
//    (smb2/durable/durable.hpp).
//  - anything not in the table: STATUS_INVALID_DEVICE_REQUEST.
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "config/config.hpp"
#include "smb2/commands/handlers.hpp"
#include "smb2/security/access.hpp"
#include "smb2/security/access_check.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/durable/durable.hpp"
#include "smb2/fsctl/fsctl.hpp"
#include "smb2/engine/negotiated_sizes.hpp"
#include "smb2/fsctl/object_id.hpp"
#include "smb2/pipes/pipe_io.hpp"
#include "smb2/snapshots/snapshots.hpp"

namespace ringsmb::smb2 {
namespace {

using wire::SMB2_0_IOCTL_IS_FSCTL;
constexpr size_t kResponseFixedSize = 48;
constexpr uint32_t kBufferOffset = wire::kHeaderSize + kResponseFixedSize;  // 112
constexpr size_t kValidateNegotiateResponseSize = 24;
constexpr size_t kObjectIdBufferSize = 64;     // FILE_OBJECTID_BUFFER (MS-FSCC 2.1.3)

NtStatus parse(const Request& req, IoctlRequest& q) {
  ByteReader r(req.body);
  r.skip(4);  // StructureSize, Reserved
  q.ctl_code = r.u32();
  q.id = {r.u64(), r.u64()};
  uint32_t in_off = r.u32(), in_len = r.u32();
  q.max_input_response = r.u32();
  uint32_t out_off = r.u32(), out_len = r.u32();
  q.max_output_response = r.u32();
  q.flags = r.u32();
  r.u32();  // Reserved2
  ByteSpan unused_output;
  if (!r.ok() || !buffer_at(req, in_off, in_len, q.input) || !buffer_at(req, out_off, out_len, unused_output))
    return NtStatus::InvalidParameter;
  uint32_t max_trans = negotiated_sizes(req.conn, req.server).max_trans;
  if (in_len > max_trans || out_len > max_trans || q.max_input_response > max_trans ||
      q.max_output_response > max_trans)
    return NtStatus::InvalidParameter;
  return NtStatus::Success;
}

// The dialect NEGOTIATE would pick from `dialects` (same rules as negotiate.cpp).
uint16_t greatest_common_dialect(const ServerContext& server, const std::vector<uint16_t>& dialects) {
  uint16_t best = 0;
  for (uint16_t d : dialects) {
    bool known = d == config::kDialect202 || d == config::kDialect210 || d == config::kDialect300 ||
                 d == config::kDialect302 || d == config::kDialect311;
    if (known && d >= server.config.global.min_protocol && d <= server.config.global.max_protocol && d > best)
      best = d;
  }
  return best;
}

NtStatus validate_negotiate(FsctlCall& call) {
  Request& req = call.req;
  const IoctlRequest& q = call.q;
  const ConnState& conn = req.conn;
  if (conn.dialect == config::kDialect311) return NtStatus::AccessDenied;  // spec: terminate
  if (q.max_output_response < kValidateNegotiateResponseSize) return NtStatus::AccessDenied;  // spec: terminate
  ByteReader r(q.input);
  uint32_t capabilities = r.u32();
  ByteSpan guid = r.bytes(16);
  uint16_t security_mode = r.u16();
  uint16_t count = r.u16();
  std::vector<uint16_t> dialects;
  for (uint16_t i = 0; i < count && r.ok(); ++i) dialects.push_back(r.u16());
  if (!r.ok()) return NtStatus::AccessDenied;  // spec: terminate
  bool match = capabilities == conn.client_capabilities &&
               std::equal(guid.begin(), guid.end(), conn.client_guid.begin(), conn.client_guid.end()) &&
               security_mode == conn.client_security_mode &&
               // The server implements 3.1.1, so the list must be the NEGOTIATE one.
               dialects == conn.client_dialects && greatest_common_dialect(req.server, dialects) == conn.dialect;
  if (!match) return NtStatus::AccessDenied;
  ByteWriter w(call.out);
  w.u32(conn.server_capabilities);
  w.bytes(req.server.server_guid.data(), req.server.server_guid.size());
  w.u16(conn.server_security_mode);
  w.u16(conn.dialect);
  return NtStatus::Success;
}

// FILE_OBJECTID_BUFFER type 1: ObjectId, BirthVolumeId, BirthObjectId,
// DomainId. The volume id matches FileFsObjectIdInformation's.
NtStatus object_id(FsctlCall& call) {
  if (call.q.max_output_response < kObjectIdBufferSize) return NtStatus::InvalidParameter;
  if (!call.open->node) return NtStatus::InvalidHandle;
  const uint64_t dev = call.open->node->device, ino = call.open->node->inode;
  ByteWriter w(call.out);
  put_file_object_id(w, dev, ino);
  put_volume_object_id(w, dev);     // BirthVolumeId
  put_file_object_id(w, dev, ino);  // BirthObjectId: the file never moved volumes
  w.zeros(16);                      // DomainId: empty (MS-FSA 2.1.5.10.1)
  return NtStatus::Success;
}

// FSCTL_LMR_REQUEST_RESILIENCY (3.3.5.15.9): smb2/durable/durable.hpp; no output.
NtStatus resiliency(FsctlCall& call) { return request_resiliency(call.req, *call.open, call.q.input); }

NtStatus dfs_referrals(FsctlCall&) { return NtStatus::FsDriverRequired; }
NtStatus pipe_wait(FsctlCall& call) { return wait_pipe(call.req, call.q.input); }
NtStatus pipe_transceive(FsctlCall& call) {
  return transceive_pipe(call.req, *call.open, call.q.input, call.q.max_output_response, call.out);
}
NtStatus pipe_peek(FsctlCall&) { return NtStatus::NotSupported; }

struct FsctlSpec {
  uint32_t ctl_code;
  bool needs_open;  // false: FileId is 0xFFFFFFFFFFFFFFFF and ignored
  FsctlHandler handler;
};

constexpr std::array kFsctls{
    FsctlSpec{FSCTL_VALIDATE_NEGOTIATE_INFO, false, validate_negotiate},
    FsctlSpec{FSCTL_QUERY_NETWORK_INTERFACE_INFO, false, fsctl_query_network_interface_info},
    FsctlSpec{FSCTL_DFS_GET_REFERRALS, false, dfs_referrals},
    FsctlSpec{FSCTL_DFS_GET_REFERRALS_EX, false, dfs_referrals},
    FsctlSpec{FSCTL_PIPE_WAIT, false, pipe_wait},
    FsctlSpec{FSCTL_SRV_REQUEST_RESUME_KEY, true, fsctl_request_resume_key},
    FsctlSpec{FSCTL_SRV_COPYCHUNK, true, fsctl_copychunk},
    FsctlSpec{FSCTL_SRV_COPYCHUNK_WRITE, true, fsctl_copychunk},
    FsctlSpec{FSCTL_DUPLICATE_EXTENTS_TO_FILE, true, fsctl_duplicate_extents},
    FsctlSpec{FSCTL_SET_SPARSE, true, fsctl_set_sparse},
    FsctlSpec{FSCTL_SET_ZERO_DATA, true, fsctl_set_zero_data},
    FsctlSpec{FSCTL_QUERY_ALLOCATED_RANGES, true, fsctl_query_allocated_ranges},
    FsctlSpec{FSCTL_FILE_LEVEL_TRIM, true, fsctl_file_level_trim},
    FsctlSpec{FSCTL_GET_COMPRESSION, true, fsctl_get_compression},
    FsctlSpec{FSCTL_SET_COMPRESSION, true, fsctl_set_compression},
    FsctlSpec{FSCTL_GET_REPARSE_POINT, true, fsctl_get_reparse_point},
    FsctlSpec{FSCTL_SET_REPARSE_POINT, true, fsctl_set_reparse_point},
    FsctlSpec{FSCTL_DELETE_REPARSE_POINT, true, fsctl_delete_reparse_point},
    FsctlSpec{FSCTL_CREATE_OR_GET_OBJECT_ID, true, object_id},
    FsctlSpec{FSCTL_PIPE_TRANSCEIVE, true, pipe_transceive},
    FsctlSpec{FSCTL_PIPE_PEEK, true, pipe_peek},
    FsctlSpec{FSCTL_LMR_REQUEST_RESILIENCY, true, resiliency},
    FsctlSpec{FSCTL_SRV_ENUMERATE_SNAPSHOTS, true, fsctl_enumerate_snapshots},
};

const FsctlSpec* find_fsctl(uint32_t ctl_code) {
  for (const FsctlSpec& f : kFsctls)
    if (f.ctl_code == ctl_code) return &f;
  return nullptr;
}

void write_response(ByteWriter& w, uint32_t ctl_code, FileId id, const Bytes& out) {
  w.u16(49);
  w.u16(0);  // Reserved
  w.u32(ctl_code);
  w.u64(id.persistent);
  w.u64(id.volatile_id);
  w.u32(kBufferOffset);  // InputOffset: no input is echoed
  w.u32(0);              // InputCount
  w.u32(kBufferOffset);  // OutputOffset
  w.u32(uint32_t(out.size()));
  w.u32(0);  // Flags
  w.u32(0);  // Reserved2
  w.bytes(out);
}

}  // namespace

// Not an FSCTL (answered STATUS_NOT_SUPPORTED), or one whose FileId is
// 0xFFFFFFFFFFFFFFFF and ignored; an unknown FSCTL needs an open (STATUS_FILE_CLOSED
// before STATUS_INVALID_DEVICE_REQUEST).
bool ioctl_takes_no_open(const Request& req) {
  constexpr size_t kCtlCodeAt = 4, kFlagsAt = 48;
  if (req.body.size() < kFlagsAt + 4) return true;  // the handler refuses it
  if (load_le32(req.body.data() + kFlagsAt) != SMB2_0_IOCTL_IS_FSCTL) return true;
  const FsctlSpec* spec = find_fsctl(load_le32(req.body.data() + kCtlCodeAt));
  return spec && !spec->needs_open;
}

NtStatus handle_ioctl(Request& req, ByteWriter& w) {
  IoctlRequest q;
  NtStatus st = parse(req, q);
  if (st != NtStatus::Success) return st;
  if (q.flags != SMB2_0_IOCTL_IS_FSCTL) return NtStatus::NotSupported;
  const FsctlSpec* spec = find_fsctl(q.ctl_code);
  state::Open* open = nullptr;
  FileId response_id = q.id;
  if (!ioctl_takes_no_open(req)) {
    open = req.open;  // the processor answered STATUS_FILE_CLOSED for none
    response_id = {open->persistent_id, open->volatile_id};  // resolves a related FileId
  }
  if (!spec) return NtStatus::InvalidDeviceRequest;

  Bytes out;
  FsctlCall call{req, q, open, out};
  st = spec->handler(call);
  // BUFFER_OVERFLOW (a pipe's long message) keeps its data, and so does an
  // error whose handler asked for it.
  if (!nt_success(st) && !req.error_keeps_body) return st;
  if (out.size() > q.max_output_response) return NtStatus::BufferTooSmall;
  write_response(w, q.ctl_code, response_id, out);
  return st;
}

}  // namespace ringsmb::smb2
