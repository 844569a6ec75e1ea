// The chain of CREATE contexts (MS-SMB2 2.2.13.2, 2.2.14.2) as bytes:
// reading a request's chain, validated as a whole, and writing a
// response's; and the lease a request asks for, which CREATE and a
// durable reconnect both read. What the other contexts mean is above the
// engine (smb2/commands/create_contexts.hpp and the features).
#pragma once

#include <cstdint>
#include <string_view>

#include "common/bytes.hpp"
#include "state/session.hpp"

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

// Whether the (validated) chain holds a context named `name`.
bool has_create_context(ByteSpan buffer, std::string_view name);

// Appends one response context (NAME, DATA) to the chain in OUT.
void append_create_context(Bytes& out, std::string_view name, ByteSpan data);

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

// Appends a context's header and name; its data follows at the returned
// offset, and end_context() patches DataLength once it is written. Data is
// written in place: no temporary buffer per context.
size_t begin_context(Bytes& out, std::string_view name, size_t& last_start);
void end_context(Bytes& out, size_t context_start, size_t data_start);

}  // namespace ringsmb::smb2
