#include "rpc/dcerpc.hpp"

#include <algorithm>

namespace ringsmb::rpc {

namespace {

// packed_drep: integers little-endian, characters ASCII, floats IEEE.
constexpr uint8_t kDrepLittleEndian = 0x10;

void write_header(ByteWriter& w, PduType type, uint8_t flags, uint32_t call_id) {
  w.u8(5);  // rpc_vers
  w.u8(0);  // rpc_vers_minor
  w.u8(uint8_t(type));
  w.u8(flags);
  w.u8(kDrepLittleEndian);
  w.zeros(3);
  w.u16(0);  // frag_length, patched by finish()
  w.u16(0);  // auth_length: never any auth over SMB
  w.u32(call_id);
}

// Patches frag_length of the PDU that starts at `start`.
void finish(ByteWriter& w, size_t start) { w.patch_u16(start + 8, uint16_t(w.size() - start)); }

SyntaxId read_syntax(ByteReader& r) {
  SyntaxId s;
  ByteSpan b = r.bytes(16);
  if (r.ok()) std::copy(b.begin(), b.end(), s.uuid.bytes.begin());
  s.major = r.u16();
  s.minor = r.u16();
  return s;
}

void write_syntax(ByteWriter& w, const SyntaxId& s) {
  w.bytes(s.uuid.bytes.data(), s.uuid.bytes.size());
  w.u16(s.major);
  w.u16(s.minor);
}

}  // namespace

SyntaxId ndr20_syntax() { return {Uuid::parse("8a885d04-1ceb-11c9-9fe8-08002b104860"), 2, 0}; }
SyntaxId ndr64_syntax() { return {Uuid::parse("71710533-beba-4937-8319-b5dbef9ccc36"), 1, 0}; }

bool is_bind_time_feature(const SyntaxId& s, uint8_t& bits) {
  // The prefix covers time_low, time_mid and time_hi; the remaining eight
  // octets are the bitmask itself.
  static const Uuid prefix = Uuid::parse("6cb71c2c-9812-4540-0000-000000000000");
  if (!std::equal(prefix.bytes.begin(), prefix.bytes.begin() + 8, s.uuid.bytes.begin())) return false;
  if (s.major != 1 || s.minor != 0) return false;
  bits = s.uuid.bytes[8];
  return true;
}

std::optional<PduHeader> parse_header(ByteSpan data) {
  ByteReader r(data);
  uint8_t vers = r.u8(), minor = r.u8();
  PduHeader h;
  h.type = PduType(r.u8());
  h.flags = r.u8();
  uint8_t drep0 = r.u8();
  r.skip(3);
  h.frag_length = r.u16();
  h.auth_length = r.u16();
  h.call_id = r.u32();
  if (!r.ok() || vers != 5 || minor != 0) return std::nullopt;
  if (drep0 != kDrepLittleEndian || h.frag_length < kHeaderSize) return std::nullopt;
  return h;
}

std::optional<BindPdu> parse_bind(ByteSpan pdu) {
  ByteReader r(pdu);
  r.skip(kHeaderSize);
  BindPdu b;
  b.max_xmit_frag = r.u16();
  b.max_recv_frag = r.u16();
  b.assoc_group = r.u32();
  uint8_t n = r.u8();
  r.skip(3);
  for (uint8_t i = 0; i < n && r.ok(); ++i) {
    ContextElement c;
    c.id = r.u16();
    uint8_t nt = r.u8();
    r.skip(1);
    c.abstract = read_syntax(r);
    // Each syntax is 20 bytes; checking first keeps a lying count from
    // reserving anything.
    if (!r.has(size_t(nt) * 20)) return std::nullopt;
    for (uint8_t t = 0; t < nt; ++t) c.transfers.push_back(read_syntax(r));
    b.contexts.push_back(std::move(c));
  }
  if (!r.ok() || n == 0) return std::nullopt;
  return b;
}

Bytes build_bind_ack(PduType type, uint32_t call_id, const BindAckPdu& ack) {
  Bytes out;
  ByteWriter w(out);
  write_header(w, type, kPfcFirstFrag | kPfcLastFrag, call_id);
  w.u16(ack.max_xmit_frag);
  w.u16(ack.max_recv_frag);
  w.u32(ack.assoc_group);
  // port_any_t: length counts the NUL; an empty address is length 0.
  if (ack.secondary_address.empty()) {
    w.u16(0);
  } else {
    w.u16(uint16_t(ack.secondary_address.size() + 1));
    w.bytes(as_bytes(ack.secondary_address));
    w.u8(0);
  }
  w.align(4);
  w.u8(uint8_t(ack.results.size()));
  w.zeros(3);
  for (const auto& res : ack.results) {
    w.u16(res.result);
    w.u16(res.reason);
    write_syntax(w, res.transfer);
  }
  finish(w, 0);
  return out;
}

Bytes build_bind_nak(uint32_t call_id, uint16_t reason) {
  Bytes out;
  ByteWriter w(out);
  write_header(w, PduType::BindNak, kPfcFirstFrag | kPfcLastFrag, call_id);
  w.u16(reason);
  w.u8(1);  // n_protocols: we speak 5.0 only
  w.u8(5);
  w.u8(0);
  w.align(4);
  finish(w, 0);
  return out;
}

std::optional<RequestPdu> parse_request(const PduHeader& h, ByteSpan pdu) {
  ByteReader r(pdu);
  r.skip(kHeaderSize);
  RequestPdu req;
  req.alloc_hint = r.u32();
  req.context_id = r.u16();
  req.opnum = r.u16();
  if (h.flags & kPfcObjectUuid) r.skip(16);  // the object UUID selects nothing here
  if (!r.ok() || pdu.size() < h.frag_length) return std::nullopt;
  size_t end = h.frag_length;
  if (r.offset() > end) return std::nullopt;
  req.stub = pdu.subspan(r.offset(), end - r.offset());
  return req;
}

void append_response(Bytes& out, uint32_t call_id, uint16_t context_id, ByteSpan stub, uint16_t max_frag) {
  size_t per_frag = (std::max<size_t>(max_frag, kMinFragSize) - kResponseHeaderSize) & ~size_t(7);
  size_t done = 0;
  do {
    size_t n = std::min(per_frag, stub.size() - done);
    uint8_t flags = (done == 0 ? kPfcFirstFrag : 0) | (done + n == stub.size() ? kPfcLastFrag : 0);
    size_t start = out.size();
    ByteWriter w(out);
    write_header(w, PduType::Response, flags, call_id);
    w.u32(uint32_t(stub.size() - done));  // alloc_hint: what is still to come
    w.u16(context_id);
    w.u8(0);  // cancel_count
    w.u8(0);
    w.bytes(stub.subspan(done, n));
    finish(w, start);
    done += n;
  } while (done < stub.size());
}

Bytes build_fault(uint32_t call_id, uint16_t context_id, uint32_t status, bool did_not_execute) {
  Bytes out;
  ByteWriter w(out);
  uint8_t flags = kPfcFirstFrag | kPfcLastFrag | (did_not_execute ? kPfcDidNotExecute : 0);
  write_header(w, PduType::Fault, flags, call_id);
  w.u32(0);  // alloc_hint
  w.u16(context_id);
  w.u8(0);  // cancel_count
  w.u8(0);
  w.u32(status);
  w.u32(0);  // reserved
  finish(w, 0);
  return out;
}

}  // namespace ringsmb::rpc
