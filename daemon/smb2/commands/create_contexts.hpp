// CREATE contexts (MS-SMB2 2.2.13.2, 2.2.14.2): the chain is validated as a
// whole; MxAc and QFid are answered, unknown ones ignored.
#pragma once

#include "smb2/engine/create_context_chain.hpp"
#include "smb2/engine/dispatch.hpp"
#include "smb2/leases/lease.hpp"
#include "vfs/ea_store.hpp"
#include "vfs/file_info.hpp"

namespace ringsmb::smb2 {

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

}  // namespace ringsmb::smb2
