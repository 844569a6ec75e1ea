// SPNEGO (RFC 4178, MS-SPNG) DER encoding and decoding.
//
// The structures have a fixed, shallow shape, so decoding walks them with
// one ByteReader per level instead of a generic (recursive) BER parser.
// Every TLV must fit exactly inside its parent; anything left over is an
// error, as are indefinite lengths and tags SPNEGO does not define.
#include "auth/spnego.hpp"

#include <algorithm>
#include <initializer_list>

namespace ringsmb::auth {

const Bytes kOidNtlmssp = {0x2B, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0A};
const Bytes kOidKrb5 = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x12, 0x01, 0x02, 0x02};
const Bytes kOidMsKrb5 = {0x2A, 0x86, 0x48, 0x82, 0xF7, 0x12, 0x01, 0x02, 0x02};

bool is_krb5_oid(ByteSpan oid) { return std::ranges::equal(oid, kOidKrb5) || std::ranges::equal(oid, kOidMsKrb5); }

namespace {

// OID 1.3.6.1.5.5.2, the SPNEGO mechanism in the GSS-API wrapper.
const Bytes kOidSpnego = {0x2B, 0x06, 0x01, 0x05, 0x05, 0x02};
constexpr std::string_view kHintName = "not_defined_in_RFC4178@please_ignore";

enum : uint8_t {
  kTagEnumerated = 0x0A,
  kTagOctetString = 0x04,
  kTagOid = 0x06,
  kTagGeneralString = 0x1B,
  kTagSequence = 0x30,
  kTagApplication0 = 0x60,
  kTagContext0 = 0xA0,  // [n] constructed is kTagContext0 + n
};

struct Tlv {
  uint8_t tag = 0;
  ByteSpan value;
};

// Reads one TLV. Lengths of up to 4 length octets are accepted (more would
// exceed any SMB2 buffer anyway); the value must fit in what remains.
std::optional<Tlv> read_tlv(ByteReader& r) {
  Tlv t;
  t.tag = r.u8();
  uint8_t first = r.u8();
  if (!r.ok() || (t.tag & 0x1F) == 0x1F) return std::nullopt;  // no high-tag-number form in SPNEGO
  size_t len = first;
  if (first & 0x80) {
    size_t n = first & 0x7F;
    if (n == 0 || n > 4) return std::nullopt;  // indefinite or absurd length
    len = 0;
    for (size_t i = 0; i < n; ++i) len = (len << 8) | r.u8();
  }
  if (!r.ok() || !r.has(len)) return std::nullopt;
  t.value = r.bytes(len);
  return t;
}

// The value of the single TLV, tagged `tag`, that makes up all of `data`.
std::optional<ByteSpan> sole_tlv(ByteSpan data, uint8_t tag) {
  ByteReader r(data);
  auto t = read_tlv(r);
  if (!t || t->tag != tag || r.remaining() != 0) return std::nullopt;
  return t->value;
}

// Walks the [n]-tagged fields of a SEQUENCE; tags must be context-specific
// constructed, no higher than max_field, and strictly increasing (DER order,
// and it bounds the loop). fn(field_number, value) returns false to reject.
template <typename Fn>
bool for_each_field(ByteSpan seq, int max_field, Fn fn) {
  ByteReader r(seq);
  int last = -1;
  while (r.remaining() > 0) {
    auto t = read_tlv(r);
    if (!t) return false;
    int n = int(t->tag) - kTagContext0;
    if (n < 0 || n > max_field || n <= last) return false;
    last = n;
    if (!fn(n, t->value)) return false;
  }
  return r.ok();
}

bool parse_mech_types(ByteSpan value, std::vector<Bytes>& out) {
  auto seq = sole_tlv(value, kTagSequence);
  if (!seq) return false;
  ByteReader r(*seq);
  while (r.remaining() > 0) {
    auto t = read_tlv(r);
    if (!t || t->tag != kTagOid || t->value.empty()) return false;
    out.emplace_back(t->value.begin(), t->value.end());
  }
  return r.ok();
}

bool assign_octets(ByteSpan value, uint8_t tag, Bytes& out) {
  auto v = sole_tlv(value, tag);
  if (!v) return false;
  out.assign(v->begin(), v->end());
  return true;
}

// Unwraps [APPLICATION 0] { OID spnego, innerToken } to innerToken.
std::optional<ByteSpan> unwrap_gssapi(ByteSpan blob) {
  auto app = sole_tlv(blob, kTagApplication0);
  if (!app) return std::nullopt;
  ByteReader r(*app);
  auto oid = read_tlv(r);
  if (!oid || oid->tag != kTagOid || !std::ranges::equal(oid->value, kOidSpnego)) return std::nullopt;
  return app->subspan(r.offset());
}

void put_tlv(Bytes& out, uint8_t tag, ByteSpan value) {
  out.push_back(tag);
  size_t n = value.size();
  if (n < 0x80) {
    out.push_back(uint8_t(n));
  } else {
    int octets = n > 0xFFFFFF ? 4 : n > 0xFFFF ? 3 : n > 0xFF ? 2 : 1;
    out.push_back(uint8_t(0x80 | octets));
    for (int i = octets - 1; i >= 0; --i) out.push_back(uint8_t(n >> (8 * i)));
  }
  out.insert(out.end(), value.begin(), value.end());
}

Bytes tlv(uint8_t tag, ByteSpan value) {
  Bytes out;
  out.reserve(value.size() + 6);
  put_tlv(out, tag, value);
  return out;
}

Bytes concat(std::initializer_list<ByteSpan> parts) {
  Bytes out;
  for (ByteSpan p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace

Bytes build_negotiate_hint(bool with_kerberos) {
  Bytes oids = with_kerberos ? concat({tlv(kTagOid, kOidMsKrb5), tlv(kTagOid, kOidKrb5)}) : Bytes{};
  oids = concat({oids, tlv(kTagOid, kOidNtlmssp)});
  Bytes mech_types = tlv(kTagContext0 + 0, tlv(kTagSequence, oids));
  // negHints (MS-SPNG NegTokenInit2 [3]) { hintName [0] GeneralString }.
  Bytes hints = tlv(kTagContext0 + 3, tlv(kTagSequence, tlv(kTagContext0 + 0, tlv(kTagGeneralString, as_bytes(kHintName)))));
  Bytes init = tlv(kTagContext0 + 0, tlv(kTagSequence, concat({mech_types, hints})));
  return tlv(kTagApplication0, concat({tlv(kTagOid, kOidSpnego), init}));
}

std::optional<NegTokenInit> parse_neg_token_init(ByteSpan blob) {
  std::optional<ByteSpan> inner = !blob.empty() && blob[0] == kTagApplication0 ? unwrap_gssapi(blob) : blob;
  if (!inner) return std::nullopt;
  auto choice = sole_tlv(*inner, kTagContext0 + 0);
  if (!choice) return std::nullopt;
  auto seq = sole_tlv(*choice, kTagSequence);
  if (!seq) return std::nullopt;

  NegTokenInit out;
  bool have_mech_types = false;
  // [0] mechTypes, [1] reqFlags, [2] mechToken, [3] mechListMIC (RFC 4178)
  // or negHints (MS-SPNG NegTokenInit2), [4] mechListMIC (NegTokenInit2).
  bool ok = for_each_field(*seq, 4, [&](int n, ByteSpan v) {
    if (n == 0) return have_mech_types = parse_mech_types(v, out.mech_types);
    if (n == 2) return assign_octets(v, kTagOctetString, out.mech_token);
    return true;  // reqFlags, hints and MICs are not used by the server
  });
  if (!ok || !have_mech_types) return std::nullopt;
  return out;
}

std::optional<NegTokenResp> parse_neg_token_resp(ByteSpan blob) {
  auto choice = sole_tlv(blob, kTagContext0 + 1);
  if (!choice) return std::nullopt;
  auto seq = sole_tlv(*choice, kTagSequence);
  if (!seq) return std::nullopt;

  NegTokenResp out;
  bool ok = for_each_field(*seq, 3, [&](int n, ByteSpan v) {
    switch (n) {
      case 0: {
        auto e = sole_tlv(v, kTagEnumerated);
        if (!e || e->empty() || e->size() > 4) return false;
        uint32_t state = 0;
        for (uint8_t b : *e) state = (state << 8) | b;
        out.neg_state = state;
        return true;
      }
      case 1: return assign_octets(v, kTagOid, out.supported_mech);
      case 2: return assign_octets(v, kTagOctetString, out.response_token);
      default: return assign_octets(v, kTagOctetString, out.mech_list_mic);
    }
  });
  if (!ok) return std::nullopt;
  return out;
}

Bytes build_neg_token_resp(NegState state, ByteSpan supported_mech, ByteSpan response_token,
                           ByteSpan mech_list_mic) {
  Bytes fields;
  const uint8_t st = uint8_t(state);
  put_tlv(fields, kTagContext0 + 0, tlv(kTagEnumerated, {&st, 1}));
  if (!supported_mech.empty()) put_tlv(fields, kTagContext0 + 1, tlv(kTagOid, supported_mech));
  if (!response_token.empty()) put_tlv(fields, kTagContext0 + 2, tlv(kTagOctetString, response_token));
  if (!mech_list_mic.empty()) put_tlv(fields, kTagContext0 + 3, tlv(kTagOctetString, mech_list_mic));
  return tlv(kTagContext0 + 1, tlv(kTagSequence, fields));
}

bool is_raw_ntlmssp(ByteSpan blob) {
  static constexpr uint8_t kSig[8] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0};
  return blob.size() >= 8 && std::equal(kSig, kSig + 8, blob.begin());
}

}  // namespace ringsmb::auth
