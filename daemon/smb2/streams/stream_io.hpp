// Named streams over SMB2 (MS-FSA 2.1.5; storage: vfs/stream_store.hpp).
// An open of "file:name" is an ordinary state::Open whose fd and path are
// the file's and whose `stream` names the stream; the handlers branch here
// only when `open.stream` is set, so opens of plain names pay nothing.
#pragma once

#include <optional>
#include <string>

#include "smb2/engine/dispatch.hpp"
#include "vfs/file_info.hpp"

namespace ringsmb::smb2 {

// The FileTable key of a stream: its own (device, inode) pair, so share
// modes, leases, byte-range locks and delete-on-close are per stream. The
// device part has bit 63 set, which no real device number has.
uint64_t stream_node_device(uint64_t device, const std::string& key);

// CREATE of a stream, once the file is open as `fd` (stat `base`; made by
// this request when `file_created`): applies the disposition to the
// stream. A new stream and an overwrite need write access to the file
// (check_stream_writable, smb2/security/descriptor_access.hpp) whatever
// access the open asks for. Sets `size`, whether the stream was created,
// whether it must be emptied once the open is granted, and the
// CreateAction.
struct StreamCreate {
  uint64_t size = 0;
  bool created = false;
  bool truncate = false;
  uint32_t action = 0;
  std::string name;  // an existing stream's name as created (FileNameInformation reports it)
};
struct StreamTarget {
  int fd = -1;
  const vfs::FileStat* base = nullptr;
  bool file_created = false;
  const std::string* key = nullptr;
  std::string_view name;
};
NtStatus open_stream(Request& req, uint32_t disposition, const StreamTarget& target, StreamCreate& out);

// READ and WRITE of a stream open (after the handler's common checks).
NtStatus read_stream(Request& req, state::Open& open, uint64_t offset, uint32_t length, uint32_t minimum,
                     ByteWriter& w);
NtStatus write_stream(Request& req, state::Open& open, uint64_t offset, ByteSpan data, bool append, ByteWriter& w);

// A stream open reports the stream's size as EndOfFile / AllocationSize,
// and the file's attributes except DIRECTORY: a stream of a directory is
// data, and clients refuse to write to a handle that says DIRECTORY.
void apply_stream_size(const state::Open& open, vfs::FileStat& st);
uint32_t stream_attributes(uint32_t file_attributes);
// FileStreamInformation of the open's file (any open of it, stream or not).
NtStatus query_stream_information(Request& req, state::Open& open, const vfs::FileStat& st, Bytes& data);
// SET_INFO classes that act on the stream rather than the file: EndOfFile,
// Allocation, Disposition(Ex), Rename(Ex). nullopt: not one of those. A
// rename onto "::$DATA" of more than 1 MiB copies on the blocking pool and
// answers STATUS_PENDING (completed when the copy is done).
std::optional<NtStatus> set_stream_info(Request& req, state::Open& open, vfs::FileInfoClass cls, ByteSpan buf);

// The end of a stream open, after its stream node was released: removes
// the stream when `delete_stream` (its last open closed with delete
// pending), drops the hold on the file. True when that was the file's last
// hold and the file itself is delete pending: the caller then unlinks it.
bool close_stream(ServerContext& server, state::Open& open, int fd, bool delete_stream);

}  // namespace ringsmb::smb2
