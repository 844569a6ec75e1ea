#include "smb2/engine/dispatch.hpp"

#include <array>

namespace ringsmb::smb2 {
namespace {

using wire::Command;

constexpr SessionNeed kValid = SessionNeed::Valid;

// Payload fields (MS-SMB2 2.2.19 READ Length, 2.2.21 WRITE Length, 2.2.31
// IOCTL InputCount and MaxOutputResponse, 2.2.33 OutputBufferLength,
// 2.2.35 OutputBufferLength, 2.2.37 OutputBufferLength, 2.2.39 BufferLength).
// FileId offsets: MS-SMB2 2.2.15 ff., the field "FileId" of each request.
constexpr std::array<CommandSpec, wire::kCommandCount> kCommands = {{
    {.handler = handle_negotiate, .name = "NEGOTIATE", .structure_size = 36},
    {.handler = handle_session_setup, .name = "SESSION_SETUP", .structure_size = 25},
    {.handler = handle_logoff, .name = "LOGOFF", .structure_size = 4, .session = kValid},
    {.handler = handle_tree_connect, .name = "TREE_CONNECT", .structure_size = 9, .session = kValid},
    {.handler = handle_tree_disconnect, .name = "TREE_DISCONNECT", .structure_size = 4, .session = kValid,
     .needs_tree = true},
    {.handler = handle_create, .name = "CREATE", .structure_size = 57, .session = kValid, .needs_tree = true,
     .changes_file_data = true, .may_go_async = true},  // behind a break
    {.handler = handle_close, .name = "CLOSE", .structure_size = 24, .session = kValid, .needs_tree = true,
     .file_id_at = 8},
    {.handler = handle_flush, .name = "FLUSH", .structure_size = 24, .session = kValid, .needs_tree = true,
     .file_id_at = 8, .may_go_async = true},  // fsync off the worker
    {.handler = handle_read, .name = "READ", .structure_size = 49, .session = kValid, .needs_tree = true,
     .file_id_at = 16, .may_go_async = true, .payload_at = {4, 0}},  // an empty pipe
    {.handler = handle_write, .name = "WRITE", .structure_size = 49, .session = kValid, .needs_tree = true,
     .file_id_at = 16, .modifies = true, .changes_file_data = true, .may_go_async = true,
     .payload_at = {4, 0}},  // a large pwrite off the worker
    {.handler = handle_lock, .name = "LOCK", .structure_size = 48, .session = kValid, .needs_tree = true,
     .file_id_at = 8, .may_go_async = true},  // a blocking lock
    {.handler = handle_ioctl, .name = "IOCTL", .structure_size = 57, .session = kValid, .needs_tree = true,
     .file_id_at = 8, .open_optional = ioctl_takes_no_open, .modifies = true, .changes_file_data = true,
     .payload_at = {28, 44}},
    {.handler = nullptr, .name = "CANCEL", .structure_size = 4},  // handled by the processor
    {.handler = handle_echo, .name = "ECHO", .structure_size = 4},
    {.handler = handle_query_directory, .name = "QUERY_DIRECTORY", .structure_size = 33, .session = kValid,
     .needs_tree = true, .file_id_at = 8, .payload_at = {28, 0}},
    {.handler = handle_change_notify, .name = "CHANGE_NOTIFY", .structure_size = 32, .session = kValid,
     .needs_tree = true, .file_id_at = 8, .may_go_async = true, .payload_at = {4, 0}},
    {.handler = handle_query_info, .name = "QUERY_INFO", .structure_size = 41, .session = kValid,
     .needs_tree = true, .file_id_at = 24, .payload_at = {4, 0}},
    {.handler = handle_set_info, .name = "SET_INFO", .structure_size = 33, .session = kValid, .needs_tree = true,
     .file_id_at = 16, .modifies = true, .changes_file_data = true, .may_go_async = true,
     .payload_at = {4, 0}},  // a rename behind a break
    {.handler = handle_oplock_break, .name = "OPLOCK_BREAK", .structure_size = 24, .alt_structure_size = 36,
     .session = kValid, .needs_tree = true, .file_id_at = 8},  // the oplock form's
}};

}  // namespace

const CommandSpec* command_spec(Command cmd) {
  uint16_t i = uint16_t(cmd);
  return i < kCommands.size() ? &kCommands[i] : nullptr;
}

state::Open* Request::find_open(FileId id) {
  if (id.persistent == kRelatedFileId && id.volatile_id == kRelatedFileId) {
    if (!hdr.is_related()) {
      compound.file_id = id;  // an unrelated element naming no open: so do the related ones after it
      return nullptr;
    }
    id = compound.file_id;
  }
  // The next related element uses the FileId this one used, found or not
  // (MS-SMB2 3.3.5.2.7.2): a related CLOSE after a failed unrelated one fails too.
  compound.file_id = id;
  auto it = conn.opens.find(id.volatile_id);
  if (it == conn.opens.end()) return nullptr;
  state::Open* open = it->second.get();
  if (open->persistent_id != id.persistent) return nullptr;
  if (session && open->session_id != session->session_id) return nullptr;
  if (tree && open->tree_id != tree->tree_id) return nullptr;
  return open;
}

FileId Request::body_file_id() const {
  const CommandSpec* spec = command_spec(hdr.command);
  size_t at = spec ? spec->file_id_at : 0;  // never 0 where there is one
  if (!at || body.size() < at + 16) return {};
  return {load_le64(body.data() + at), load_le64(body.data() + at + 8)};
}

NtStatus check_structure_size(const CommandSpec& spec, ByteSpan body) {
  uint16_t size = body.size() >= 2 ? load_le16(body.data()) : 0;
  if (size != spec.structure_size && (!spec.alt_structure_size || size != spec.alt_structure_size))
    return NtStatus::InvalidParameter;
  if (body.size() < (size & ~1u)) return NtStatus::InvalidParameter;
  return NtStatus::Success;
}

NtStatus Request::resolve_open(const CommandSpec& spec) {
  if (!spec.carries_file_id(body)) return NtStatus::Success;
  open = find_open(body_file_id());
  if (open || (spec.open_optional && spec.open_optional(*this))) return NtStatus::Success;
  return NtStatus::FileClosed;
}

bool buffer_at(const Request& req, uint32_t offset, uint32_t length, ByteSpan& out) {
  out = {};
  if (length == 0) return true;
  if (offset < wire::kHeaderSize) return false;
  if (uint64_t(offset) + length > req.pdu.size()) return false;
  out = req.pdu.subspan(offset, length);
  return true;
}

}  // namespace ringsmb::smb2
