#include "smb2/engine/dispatch.hpp"

#include <array>

namespace ringsmb::smb2 {
namespace {

using wire::Command;

// Payload fields (MS-SMB2 2.2.19 READ Length, 2.2.21 WRITE Length, 2.2.31
// IOCTL InputCount and MaxOutputResponse, 2.2.33 OutputBufferLength,
// 2.2.35 OutputBufferLength, 2.2.37 OutputBufferLength, 2.2.39 BufferLength).
constexpr std::array<CommandSpec, wire::kCommandCount> kCommands = {{
    // handler                  size session tree  fileid-at name       async  payload
    {handle_negotiate,          36, false, false,  0, "NEGOTIATE"},
    {handle_session_setup,      25, false, false,  0, "SESSION_SETUP"},
    {handle_logoff,              4, true,  false,  0, "LOGOFF"},
    {handle_tree_connect,        9, true,  false,  0, "TREE_CONNECT"},
    {handle_tree_disconnect,     4, true,  true,   0, "TREE_DISCONNECT"},
    {handle_create,             57, true,  true,   0, "CREATE",          true},   // behind a break
    {handle_close,              24, true,  true,   8, "CLOSE"},
    {handle_flush,              24, true,  true,   8, "FLUSH",           true},   // fsync off the worker
    {handle_read,               49, true,  true,  16, "READ",            true,  {4, 0}},   // an empty pipe
    {handle_write,              49, true,  true,  16, "WRITE",           true,  {4, 0}},   // a large pwrite off the worker
    {handle_lock,               48, true,  true,   8, "LOCK",            true},   // a blocking lock
    {handle_ioctl,              57, true,  true,   8, "IOCTL",           false, {28, 44}},
    {nullptr,                    4, false, false,  0, "CANCEL"},  // handled by the processor
    {handle_echo,                4, false, false,  0, "ECHO"},
    {handle_query_directory,    33, true,  true,   8, "QUERY_DIRECTORY", false, {28, 0}},
    {handle_change_notify,      32, true,  true,   8, "CHANGE_NOTIFY",   true,  {4, 0}},
    {handle_query_info,         41, true,  true,  24, "QUERY_INFO",      false, {4, 0}},
    {handle_set_info,           33, true,  true,  16, "SET_INFO",        true,  {4, 0}},   // a rename behind a break
    {handle_oplock_break,       24, true,  true,   8, "OPLOCK_BREAK",    false, {},      36},  // the oplock form's
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

state::Open* Request::open_file() {
  if (!open_looked_up) {
    open = find_open(body_file_id());
    open_looked_up = true;
  }
  return open;
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
