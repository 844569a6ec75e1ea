// CREATE contexts (MS-SMB2 2.2.13.2, 2.2.14.2): the chain is validated as a
// whole; MxAc and QFid are answered, unknown ones ignored.
#pragma once

#include "smb2/dispatch.hpp"
#include "vfs/file_info.hpp"

namespace ringsmb::smb2 {

struct CreateContext {
  std::string_view name;  // e.g. "MxAc"
  ByteSpan data;
};

// Splits a CreateContexts buffer; false when any offset/length is bad.
bool parse_create_contexts(ByteSpan buffer, std::vector<CreateContext>& out);

// Encodes the response contexts for `open` into `out`.
NtStatus answer_create_contexts(Request& req, ByteSpan buffer, const state::Open& open, const vfs::FileStat& st,
                                Bytes& out);

// The access this session's user has to the file, limited by the tree.
uint32_t maximal_access(const Request& req, const vfs::FileStat& st);

}  // namespace ringsmb::smb2
