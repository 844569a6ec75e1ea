// Connection-oriented DCE/RPC PDUs (C706 chapter 12, MS-RPCE 2.2.2): the
// subset a named pipe needs. Only little-endian/ASCII/IEEE data
// representation is accepted; every client since NT sends it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/bytes.hpp"
#include "rpc/ndr.hpp"

namespace ringsmb::rpc {

enum class PduType : uint8_t {
  Request = 0,
  Response = 2,
  Fault = 3,
  Bind = 11,
  BindAck = 12,
  BindNak = 13,
  AlterContext = 14,
  AlterContextResp = 15,
  Auth3 = 16,
  Shutdown = 17,
  CoCancel = 18,
  Orphaned = 19,
};

inline constexpr uint8_t kPfcFirstFrag = 0x01;
inline constexpr uint8_t kPfcLastFrag = 0x02;
inline constexpr uint8_t kPfcDidNotExecute = 0x20;
inline constexpr uint8_t kPfcObjectUuid = 0x80;

inline constexpr size_t kHeaderSize = 16;
inline constexpr size_t kRequestHeaderSize = 24;   // + 16 with PFC_OBJECT_UUID
inline constexpr size_t kResponseHeaderSize = 24;
// C706 12.6.3.1: every implementation must accept fragments this large.
inline constexpr uint16_t kMinFragSize = 1432;
// What we offer; Windows servers answer 4280 as well.
inline constexpr uint16_t kServerMaxFrag = 4280;

// Fault statuses (C706 appendix E, MS-RPCE 2.2.2.11).
inline constexpr uint32_t kFaultOpRangeError = 0x1C010002;   // nca_s_op_rng_error
inline constexpr uint32_t kFaultUnknownInterface = 0x1C010003;
inline constexpr uint32_t kFaultProtoError = 0x1C01000B;     // nca_proto_error
inline constexpr uint32_t kFaultNdr = 0x000006F7;            // nca_s_fault_ndr
inline constexpr uint32_t kFaultAccessDenied = 0x00000005;
inline constexpr uint32_t kFaultContextMismatch = 0x1C00001A;  // nca_s_fault_context_mismatch

// p_cont_def_result_t and p_provider_reason_t (C706 12.6.3.1, MS-RPCE 2.2.2.4).
inline constexpr uint16_t kResultAcceptance = 0;
inline constexpr uint16_t kResultProviderRejection = 2;
inline constexpr uint16_t kResultNegotiateAck = 3;
inline constexpr uint16_t kReasonNotSpecified = 0;
inline constexpr uint16_t kReasonAbstractSyntaxNotSupported = 1;
inline constexpr uint16_t kReasonTransferSyntaxesNotSupported = 2;
inline constexpr uint16_t kReasonLocalLimitExceeded = 3;

// bind_nak reasons (MS-RPCE 2.2.2.5).
inline constexpr uint16_t kNakReasonNotSpecified = 0;
inline constexpr uint16_t kNakLocalLimitExceeded = 2;
inline constexpr uint16_t kNakProtocolVersionNotSupported = 4;
inline constexpr uint16_t kNakAuthTypeNotRecognized = 8;

// Well-known transfer syntaxes.
SyntaxId ndr20_syntax();   // 8a885d04-1ceb-11c9-9fe8-08002b104860 v2.0
SyntaxId ndr64_syntax();   // 71710533-beba-4937-8319-b5dbef9ccc36 v1.0
// True for the bind time feature negotiation pseudo syntax (MS-RPCE
// 3.3.1.5.3: prefix 6cb71c2c-9812-4540, version 1.0); `bits` gets the
// BindTimeFeatureNegotiationBitmask's first octet.
bool is_bind_time_feature(const SyntaxId& s, uint8_t& bits);

struct PduHeader {
  PduType type = PduType::Request;
  uint8_t flags = 0;
  uint16_t frag_length = 0;
  uint16_t auth_length = 0;
  uint32_t call_id = 0;
};

// Parses the 16-byte common header; nullopt for a wrong version, a data
// representation other than little-endian ASCII, or frag_length < 16.
std::optional<PduHeader> parse_header(ByteSpan data);

struct ContextElement {
  uint16_t id = 0;
  SyntaxId abstract;
  std::vector<SyntaxId> transfers;
};

struct BindPdu {  // bind and alter_context
  uint16_t max_xmit_frag = 0;
  uint16_t max_recv_frag = 0;
  uint32_t assoc_group = 0;
  std::vector<ContextElement> contexts;
};
std::optional<BindPdu> parse_bind(ByteSpan pdu);  // the whole PDU, header included

struct ContextResult {
  uint16_t result = kResultAcceptance;
  uint16_t reason = 0;
  SyntaxId transfer;  // zero unless accepted
};

struct BindAckPdu {  // bind_ack and alter_context_resp
  uint16_t max_xmit_frag = kServerMaxFrag;
  uint16_t max_recv_frag = kServerMaxFrag;
  uint32_t assoc_group = 0;
  std::string secondary_address;  // "\\PIPE\\srvsvc"; empty for alter_context_resp
  std::vector<ContextResult> results;
};
Bytes build_bind_ack(PduType type, uint32_t call_id, const BindAckPdu& ack);
Bytes build_bind_nak(uint32_t call_id, uint16_t reason);

struct RequestPdu {
  uint32_t alloc_hint = 0;
  uint16_t context_id = 0;
  uint16_t opnum = 0;
  ByteSpan stub;  // a view into the PDU passed to parse_request
};
std::optional<RequestPdu> parse_request(const PduHeader& h, ByteSpan pdu);

// Appends `stub` as response fragments no longer than max_frag. Every
// fragment but the last carries a multiple of 8 stub bytes so the NDR
// alignment of the reassembled stub is preserved.
void append_response(Bytes& out, uint32_t call_id, uint16_t context_id, ByteSpan stub, uint16_t max_frag);
Bytes build_fault(uint32_t call_id, uint16_t context_id, uint32_t status, bool did_not_execute);

}  // namespace ringsmb::rpc
