#include "smb2/engine/dispatch.hpp"

#include <array>

#include "common/assert.hpp"

namespace ringsmb::smb2 {
namespace {

const CommandTable* installed = nullptr;

}  // namespace

void install_command_table(const CommandTable& table) { installed = &table; }

const CommandTable& command_table() {
  RINGSMB_ASSERT(installed);  // install_commands() (smb2/commands/command_table.hpp) runs first
  return *installed;
}

const CommandSpec* command_spec(wire::Command cmd) {
  uint16_t i = uint16_t(cmd);
  const auto& rows = command_table().commands;
  return i < rows.size() ? &rows[i] : nullptr;
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
  auto it = conn.tables->opens.find(id.volatile_id);
  if (it == conn.tables->opens.end()) return nullptr;
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
  if (open && open->quota_file && !spec.serves_quota_file) return NtStatus::InvalidDeviceRequest;
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
