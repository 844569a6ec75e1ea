// SMB2 on IPC$ named pipes (MS-SMB2 3.3.5.9, 3.3.5.12, 3.3.5.13,
// 3.3.5.15.3, 3.3.5.15.10, 3.3.5.20): the CREATE, READ, WRITE, IOCTL,
// QUERY_INFO and CLOSE handlers branch here for a pipe open; the bytes go
// to the control plane (ipc::ControlPlane::pipe_*), where DCE/RPC runs.
#pragma once

#include <cstdint>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"
#include "smb2/engine/dispatch.hpp"

namespace ringsmb::smb2 {

// The pipe behind OPEN, or null for a file or directory.
const PipeOpen* find_pipe(const ConnState& conn, const state::Open& open);

struct PipeCreate {
  ByteSpan name;  // UTF-16LE, as in the CREATE request
  uint32_t desired_access = 0;
  uint32_t share_access = 0;
  uint32_t create_options = 0;
};
// CREATE on an IPC$ tree: opens the pipe and writes the CREATE response.
NtStatus create_pipe(Request& req, const PipeCreate& c, ByteWriter& w);

// READ: one message, or its first LENGTH bytes with STATUS_BUFFER_OVERFLOW.
NtStatus read_pipe(Request& req, const state::Open& open, uint32_t length, ByteWriter& w);
// WRITE: the bytes go to the pipe whole.
NtStatus write_pipe(Request& req, const state::Open& open, ByteSpan data, ByteWriter& w);
// FSCTL_PIPE_TRANSCEIVE: OUT receives the reply (at most MAX_OUT bytes);
// STATUS_BUFFER_OVERFLOW when the message was longer.
NtStatus transceive_pipe(Request& req, const state::Open& open, ByteSpan in, uint32_t max_out, Bytes& out);
// FSCTL_PIPE_WAIT on the IPC$ tree (no open): succeeds at once for a pipe
// we serve (every pipe has unlimited instances), else OBJECT_NAME_NOT_FOUND.
NtStatus wait_pipe(Request& req, ByteSpan input);
// QUERY_INFO on a pipe: the file information classes clients ask of a pipe.
NtStatus query_pipe_info(const ConnState& conn, const state::Open& open, uint8_t info_type, uint8_t info_class, uint32_t output_length,
                         Bytes& data);
// SET_INFO on a pipe: FilePipeInformation (read mode, completion mode), as
// Windows' RPC runtime sets message read mode after opening a pipe.
NtStatus set_pipe_info(ConnState& conn, const state::Open& open, uint8_t info_type, uint8_t info_class,
                       ByteSpan buf);
// Forgets the open of a pipe and closes the pipe in the control plane;
// false when VOLATILE_ID is not a pipe.
bool close_pipe(ConnState& conn, ServerContext& server, uint64_t volatile_id);

}  // namespace ringsmb::smb2
