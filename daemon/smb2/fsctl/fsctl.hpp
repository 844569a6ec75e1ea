// The FSCTLs of SMB2 IOCTL (MS-SMB2 2.2.31, 2.2.32, 3.3.5.15; MS-FSCC 2.3):
// ioctl.cpp parses the request, finds the FSCTL in its table and writes the
// response; one file per family holds the handlers:
//
//   fsctl_copychunk.cpp   SRV_REQUEST_RESUME_KEY, SRV_COPYCHUNK(_WRITE),
//                         DUPLICATE_EXTENTS_TO_FILE
//   fsctl_sparse.cpp      SET_SPARSE, SET_ZERO_DATA, QUERY_ALLOCATED_RANGES,
//                         FILE_LEVEL_TRIM
//   fsctl_compression.cpp GET_COMPRESSION, SET_COMPRESSION
//   fsctl_reparse.cpp     GET_REPARSE_POINT
//   fsctl_network.cpp     QUERY_NETWORK_INTERFACE_INFO
//   ioctl.cpp             VALIDATE_NEGOTIATE_INFO, CREATE_OR_GET_OBJECT_ID,
//                         DFS referrals, the IPC$ pipe FSCTLs
#pragma once

#include <cstdint>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"
#include "smb2/engine/dispatch.hpp"

namespace ringsmb::smb2 {

enum : uint32_t {
  FSCTL_DFS_GET_REFERRALS = 0x00060194,
  FSCTL_DFS_GET_REFERRALS_EX = 0x000601B0,
  FSCTL_GET_REPARSE_POINT = 0x000900A8,
  FSCTL_CREATE_OR_GET_OBJECT_ID = 0x000900C0,
  FSCTL_SET_SPARSE = 0x000900C4,
  FSCTL_GET_COMPRESSION = 0x0009003C,
  FSCTL_SET_COMPRESSION = 0x0009C040,
  FSCTL_SET_ZERO_DATA = 0x000980C8,
  FSCTL_QUERY_ALLOCATED_RANGES = 0x000940CF,
  FSCTL_FILE_LEVEL_TRIM = 0x00098208,
  FSCTL_DUPLICATE_EXTENTS_TO_FILE = 0x00098344,
  FSCTL_PIPE_PEEK = 0x0011400C,
  FSCTL_PIPE_WAIT = 0x00110018,
  FSCTL_PIPE_TRANSCEIVE = 0x0011C017,
  FSCTL_SRV_COPYCHUNK = 0x001440F2,
  FSCTL_SRV_REQUEST_RESUME_KEY = 0x00140078,
  FSCTL_SRV_COPYCHUNK_WRITE = 0x001480F2,
  FSCTL_LMR_REQUEST_RESILIENCY = 0x001401D4,
  FSCTL_QUERY_NETWORK_INTERFACE_INFO = 0x001401FC,
  FSCTL_VALIDATE_NEGOTIATE_INFO = 0x00140204,
};

struct IoctlRequest {
  uint32_t ctl_code = 0;
  FileId id;
  ByteSpan input;
  uint32_t max_input_response = 0;
  uint32_t max_output_response = 0;
  uint32_t flags = 0;
};

// One FSCTL call: the handler appends its output to `out`. An error status
// discards `out` unless the handler sets req.error_keeps_body (copychunk's
// STATUS_INVALID_PARAMETER carries the server's limits).
struct FsctlCall {
  Request& req;
  const IoctlRequest& q;
  state::Open* open;  // null for the FSCTLs that take no open
  Bytes& out;
};
using FsctlHandler = NtStatus (*)(FsctlCall&);

// fsctl_copychunk.cpp
NtStatus fsctl_request_resume_key(FsctlCall&);
NtStatus fsctl_copychunk(FsctlCall&);
NtStatus fsctl_duplicate_extents(FsctlCall&);
// fsctl_sparse.cpp
NtStatus fsctl_set_sparse(FsctlCall&);
NtStatus fsctl_set_zero_data(FsctlCall&);
NtStatus fsctl_query_allocated_ranges(FsctlCall&);
NtStatus fsctl_file_level_trim(FsctlCall&);
// fsctl_compression.cpp
NtStatus fsctl_get_compression(FsctlCall&);
NtStatus fsctl_set_compression(FsctlCall&);
// fsctl_reparse.cpp
NtStatus fsctl_get_reparse_point(FsctlCall&);
// fsctl_network.cpp
NtStatus fsctl_query_network_interface_info(FsctlCall&);

}  // namespace ringsmb::smb2
