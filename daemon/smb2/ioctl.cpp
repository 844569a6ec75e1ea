// SMB2 IOCTL (MS-SMB2 2.2.31, 2.2.32, 3.3.5.15): the FSCTLs a file server
// is asked for by Windows, macOS and Linux clients.
//
//  - FSCTL_VALIDATE_NEGOTIATE_INFO (3.3.5.15.12): answered from what
//    NEGOTIATE recorded. Where the spec says to terminate the connection
//    (dialect 3.1.1, any mismatch, too small MaxOutputResponse) a handler
//    cannot drop the connection, so it answers STATUS_ACCESS_DENIED, on
//    which the client itself must terminate it (3.2.5.14.12).
//  - FSCTL_SRV_REQUEST_RESUME_KEY: a 24-byte key naming the open.
//  - FSCTL_SET_SPARSE: accepted, nothing to do (every Linux file may be sparse).
//  - FSCTL_GET_REPARSE_POINT: no file is a reparse point.
//  - FSCTL_DFS_GET_REFERRALS(_EX): no DFS: STATUS_FS_DRIVER_REQUIRED, as a
//    Windows server without the DFS driver answers.
//  - FSCTL_CREATE_OR_GET_OBJECT_ID (MS-FSA 2.1.5.10.1): the object id is
//    derived from (device, inode), so it exists for every file, stays the
//    same for the file's life and is unique on the volume; nothing is stored.
//  - FSCTL_PIPE_TRANSCEIVE, FSCTL_PIPE_WAIT: IPC$ pipes (pipe_io.cpp);
//    a transceive whose reply is longer than MaxOutputResponse returns its
//    first part with STATUS_BUFFER_OVERFLOW.
//  - FSCTL_QUERY_NETWORK_INTERFACE_INFO, FSCTL_PIPE_PEEK: not yet.
//  - anything else: STATUS_INVALID_DEVICE_REQUEST.
#include <algorithm>
#include <cstring>
#include <vector>

#include "config/config.hpp"
#include "smb2/access.hpp"
#include "smb2/access_check.hpp"
#include "smb2/dispatch.hpp"
#include "smb2/object_id.hpp"
#include "smb2/pipe_io.hpp"

namespace ringsmb::smb2 {
namespace {

enum : uint32_t {
  FSCTL_DFS_GET_REFERRALS = 0x00060194,
  FSCTL_DFS_GET_REFERRALS_EX = 0x000601B0,
  FSCTL_GET_REPARSE_POINT = 0x000900A8,
  FSCTL_CREATE_OR_GET_OBJECT_ID = 0x000900C0,
  FSCTL_SET_SPARSE = 0x000900C4,
  FSCTL_PIPE_PEEK = 0x0011400C,
  FSCTL_PIPE_WAIT = 0x00110018,
  FSCTL_PIPE_TRANSCEIVE = 0x0011C017,
  FSCTL_SRV_REQUEST_RESUME_KEY = 0x00140078,
  FSCTL_QUERY_NETWORK_INTERFACE_INFO = 0x001401FC,
  FSCTL_VALIDATE_NEGOTIATE_INFO = 0x00140204,
};
constexpr uint32_t SMB2_0_IOCTL_IS_FSCTL = 0x1;
constexpr size_t kResponseFixedSize = 48;
constexpr uint32_t kBufferOffset = wire::kHeaderSize + kResponseFixedSize;  // 112
constexpr size_t kValidateNegotiateResponseSize = 24;
constexpr size_t kResumeKeyResponseSize = 28;  // ResumeKey[24], ContextLength
constexpr size_t kObjectIdBufferSize = 64;     // FILE_OBJECTID_BUFFER (MS-FSCC 2.1.3)

struct IoctlRequest {
  uint32_t ctl_code = 0;
  FileId id;
  ByteSpan input;
  uint32_t max_input_response = 0;
  uint32_t max_output_response = 0;
  uint32_t flags = 0;
};

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
  uint32_t max_trans = req.server.max_trans;
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

NtStatus validate_negotiate(Request& req, const IoctlRequest& q, Bytes& out) {
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
  ByteWriter w(out);
  w.u32(conn.server_capabilities);
  w.bytes(req.server.server_guid.data(), req.server.server_guid.size());
  w.u16(conn.server_security_mode);
  w.u16(conn.dialect);
  return NtStatus::Success;
}

NtStatus resume_key(const IoctlRequest& q, const state::Open& open, Bytes& out) {
  if (q.max_output_response < kResumeKeyResponseSize) return NtStatus::BufferTooSmall;
  ByteWriter w(out);
  w.u64(open.persistent_id);
  w.u64(open.volatile_id);
  w.u64(open.session_id);
  w.u32(0);  // ContextLength
  return NtStatus::Success;
}

// FILE_OBJECTID_BUFFER type 1: ObjectId, BirthVolumeId, BirthObjectId,
// DomainId. The volume id matches FileFsObjectIdInformation's.
NtStatus object_id(const IoctlRequest& q, const state::Open& open, Bytes& out) {
  if (q.max_output_response < kObjectIdBufferSize) return NtStatus::InvalidParameter;
  if (!open.node) return NtStatus::InvalidHandle;
  const uint64_t dev = open.node->device, ino = open.node->inode;
  ByteWriter w(out);
  put_file_object_id(w, dev, ino);
  put_volume_object_id(w, dev);     // BirthVolumeId
  put_file_object_id(w, dev, ino);  // BirthObjectId: the file never moved volumes
  w.zeros(16);                      // DomainId: empty (MS-FSA 2.1.5.10.1)
  return NtStatus::Success;
}

NtStatus set_sparse(const Request& req, const IoctlRequest& q, const state::Open& open) {
  if (open.is_directory) return NtStatus::InvalidParameter;
  if (NtStatus s = check_change(*req.tree, open, Change::Sparse); s != NtStatus::Success) return s;
  (void)q;  // the optional SetSparse byte changes nothing here
  return NtStatus::Success;
}

}  // namespace

NtStatus handle_ioctl(Request& req, ByteWriter& w) {
  IoctlRequest q;
  NtStatus st = parse(req, q);
  if (st != NtStatus::Success) return st;
  if (q.flags != SMB2_0_IOCTL_IS_FSCTL) return NtStatus::NotSupported;

  Bytes out;
  FileId response_id = q.id;
  switch (q.ctl_code) {
    // FSCTLs that take no open (FileId is 0xFFFFFFFFFFFFFFFF and ignored).
    case FSCTL_VALIDATE_NEGOTIATE_INFO: st = validate_negotiate(req, q, out); break;
    case FSCTL_QUERY_NETWORK_INTERFACE_INFO: return NtStatus::NotSupported;  // no multichannel yet
    case FSCTL_DFS_GET_REFERRALS:
    case FSCTL_DFS_GET_REFERRALS_EX: return NtStatus::FsDriverRequired;
    case FSCTL_PIPE_WAIT: st = wait_pipe(req, q.input); break;
    default: {
      state::Open* open = req.open_file();
      if (!open) return NtStatus::FileClosed;
      response_id = {open->persistent_id, open->volatile_id};  // resolves a related FileId
      switch (q.ctl_code) {
        case FSCTL_SRV_REQUEST_RESUME_KEY: st = resume_key(q, *open, out); break;
        case FSCTL_SET_SPARSE: st = set_sparse(req, q, *open); break;
        case FSCTL_GET_REPARSE_POINT: return NtStatus::NotAReparsePoint;
        case FSCTL_CREATE_OR_GET_OBJECT_ID: st = object_id(q, *open, out); break;
        case FSCTL_PIPE_TRANSCEIVE: st = transceive_pipe(req, *open, q.input, q.max_output_response, out); break;
        case FSCTL_PIPE_PEEK: return NtStatus::NotSupported;
        default: return NtStatus::InvalidDeviceRequest;
      }
    }
  }
  if (!nt_success(st)) return st;  // BUFFER_OVERFLOW (a pipe's long message) keeps its data
  if (out.size() > q.max_output_response) return NtStatus::BufferTooSmall;

  w.u16(49);
  w.u16(0);  // Reserved
  w.u32(q.ctl_code);
  w.u64(response_id.persistent);
  w.u64(response_id.volatile_id);
  w.u32(kBufferOffset);  // InputOffset: no input is echoed
  w.u32(0);              // InputCount
  w.u32(kBufferOffset);  // OutputOffset
  w.u32(uint32_t(out.size()));
  w.u32(0);  // Flags
  w.u32(0);  // Reserved2
  w.bytes(out);
  return st;
}

}  // namespace ringsmb::smb2
