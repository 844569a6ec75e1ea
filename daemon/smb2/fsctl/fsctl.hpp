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
//   fsctl_symlink.cpp     SET_REPARSE_POINT, DELETE_REPARSE_POINT
//   fsctl_network.cpp     QUERY_NETWORK_INTERFACE_INFO
//   ioctl.cpp             VALIDATE_NEGOTIATE_INFO, CREATE_OR_GET_OBJECT_ID,
//                         DFS referrals, the IPC$ pipe FSCTLs
#pragma once

#include <cstdint>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"
#include "smb2/engine/dispatch.hpp"
#include "wire/smb2_body.hpp"

namespace ringsmb::smb2 {

using enum wire::FsctlCode;  // FSCTL_* (wire/smb2_body.hpp)

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
// fsctl_symlink.cpp
NtStatus fsctl_set_reparse_point(FsctlCall&);
NtStatus fsctl_delete_reparse_point(FsctlCall&);
// fsctl_network.cpp
NtStatus fsctl_query_network_interface_info(FsctlCall&);

}  // namespace ringsmb::smb2
