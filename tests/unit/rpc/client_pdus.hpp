// The client side of DCE/RPC PDUs, which the server never needs: request
// fragments as a client sends them and bind_ack as a client reads it. For
// the rpc unit tests and fuzz_rpc; no test framework here.
#pragma once

#include <algorithm>
#include <optional>

#include "common/bytes.hpp"
#include "rpc/dcerpc.hpp"

namespace rpc_test {

using namespace ringsmb;
using namespace ringsmb::rpc;

// One request fragment, as a client sends it.
inline Bytes build_request(uint32_t call_id, uint16_t context_id, uint16_t opnum, ByteSpan stub,
                           uint8_t flags = kPfcFirstFrag | kPfcLastFrag, uint32_t alloc_hint = 0) {
  Bytes out;
  ByteWriter w(out);
  w.u8(5), w.u8(0), w.u8(uint8_t(PduType::Request)), w.u8(flags);
  w.u32(0x10);  // little-endian data representation
  w.u16(0), w.u16(0);
  w.u32(call_id);
  w.u32(alloc_hint ? alloc_hint : uint32_t(stub.size()));
  w.u16(context_id);
  w.u16(opnum);
  w.bytes(stub);
  w.patch_u16(8, uint16_t(out.size()));
  return out;
}

inline SyntaxId get_syntax(ByteReader& r) {
  SyntaxId s;
  ByteSpan b = r.bytes(16);
  if (r.ok()) std::copy(b.begin(), b.end(), s.uuid.bytes.begin());
  s.major = r.u16();
  s.minor = r.u16();
  return s;
}

// A bind_ack or alter_context_resp, as a client reads it.
inline std::optional<BindAckPdu> parse_bind_ack(ByteSpan pdu) {
  ByteReader r(pdu);
  r.skip(kHeaderSize);
  BindAckPdu a;
  a.max_xmit_frag = r.u16();
  a.max_recv_frag = r.u16();
  a.assoc_group = r.u32();
  uint16_t len = r.u16();
  ByteSpan addr = r.bytes(len);
  if (len > 0 && r.ok()) a.secondary_address.assign(addr.begin(), addr.end() - 1);
  if (r.offset() % 4) r.skip(4 - r.offset() % 4);
  uint8_t n = r.u8();
  r.skip(3);
  for (uint8_t i = 0; i < n && r.ok(); ++i) {
    ContextResult res;
    res.result = r.u16();
    res.reason = r.u16();
    res.transfer = get_syntax(r);
    a.results.push_back(res);
  }
  if (!r.ok()) return std::nullopt;
  return a;
}

}  // namespace rpc_test
