// CREATE contexts (MS-SMB2 2.2.13.2, 2.2.14.2): the chain is validated as a
// whole; MxAc and QFid are answered, unknown ones ignored.
#pragma once

#include "smb2/engine/dispatch.hpp"
#include "vfs/ea_store.hpp"
#include "vfs/file_info.hpp"

namespace ringsmb::smb2 {

struct CreateContext {
  std::string_view name;  // e.g. "MxAc"
  ByteSpan data;
};

// Reads the context at `off` and moves `off` to the next one (or to the
// end); false at the end or when an offset/length is bad.
bool next_create_context(ByteSpan buffer, size_t& off, CreateContext& out);
// Calls on_context for each context in order, without allocating; false
// when any offset/length is bad (the whole chain is checked).
template <typename OnContext>
bool for_each_create_context(ByteSpan buffer, OnContext&& on_context) {
  size_t off = 0;
  CreateContext c;
  while (off < buffer.size()) {
    if (!next_create_context(buffer, off, c)) return false;
    on_context(c);
  }
  return true;
}

// SMB2_CREATE_REQUEST_LEASE (v1) / _V2 (MS-SMB2 2.2.13.2.8, 2.2.13.2.10).
struct LeaseRequest {
  bool present = false;
  uint8_t version = 1;
  state::Guid key{};
  uint32_t state = 0;
  state::Guid parent_key{};
  bool has_parent = false;
  uint16_t epoch = 0;
};
// Finds an RqLs context in the buffer; InvalidParameter when the chain or
// the context is malformed. v2 is honoured on SMB 3.x only.
NtStatus find_lease_request(const Request& req, ByteSpan buffer, LeaseRequest& out);

// SMB2_CREATE_ALLOCATION_SIZE ("AlSi", MS-SMB2 2.2.13.2.6; the spec's
// "AISi" is a typo): the size to reserve for a file being created or
// overwritten; 0 when there is none. InvalidParameter when its data is
// shorter than the 8-byte AllocationSize or the chain is malformed.
NtStatus find_allocation_size(ByteSpan buffer, uint64_t& size);

// SMB2_CREATE_EA_BUFFER ("ExtA", MS-SMB2 2.2.13.2.1): the EAs a file being
// created or overwritten gets (vfs/ea_store.hpp); none when there is no such
// context. EasNotSupported where EAs cannot be stored (TREE's `eas`); the
// list's own errors (EaListInconsistent, InvalidEaName).
NtStatus find_create_eas(const state::Tree& tree, ByteSpan buffer, std::vector<vfs::Ea>& out);

// Whether the (validated) chain holds a context named `name`.
bool has_create_context(ByteSpan buffer, std::string_view name);

// What to answer in the RqLs response context (2.2.14.2.10 / 2.2.14.2.11).
struct LeaseAnswer {
  LeaseRequest request;
  uint32_t state = 0;
  bool breaking = false;
  uint16_t epoch = 0;
};

// Encodes the response contexts for `open` into `out`; `lease` when a
// lease request was answered.
NtStatus answer_create_contexts(Request& req, ByteSpan buffer, const state::Open& open, const vfs::FileStat& st,
                                const LeaseAnswer* lease, Bytes& out);

// Appends one response context (NAME, DATA) to the chain in OUT.
void append_create_context(Bytes& out, std::string_view name, ByteSpan data);

}  // namespace ringsmb::smb2
