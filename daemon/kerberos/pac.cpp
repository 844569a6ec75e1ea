// MS-PAC decoding (see pac.hpp).
#include "kerberos/pac.hpp"

#include <algorithm>

#include "common/sid_text.hpp"
#include "common/unicode.hpp"

namespace ringsmb::kerberos {

namespace {

constexpr size_t kMaxSubAuthorities = kMaxSidSubAuthorities;
constexpr size_t kPacHeaderSize = 8;        // cBuffers, Version
constexpr size_t kPacInfoBufferSize = 16;   // ulType, cbBufferSize, Offset
constexpr size_t kTypeSerializationHeaders = 16;  // MS-RPCE 2.2.6.1 common + 2.2.6.2 private header
constexpr size_t kFileTimeSize = 8;
constexpr size_t kUserSessionKeySize = 16;

// An RPC_UNICODE_STRING's fixed part: its data follows later (deferred).
struct NdrString {
  uint16_t length_bytes = 0;
  uint32_t pointer = 0;
};

// Little-endian NDR (MS-RPCE 2.2.5) over one octet stream: alignment is
// relative to the stream's start. Failures are sticky, with the first
// reason kept for the log.
class NdrReader {
 public:
  explicit NdrReader(ByteSpan stream) : r_(stream) {}

  bool ok() const { return r_.ok() && error_.empty(); }
  const std::string& error() const { return error_; }
  void fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
  }
  size_t remaining() const { return r_.remaining(); }

  void align4() {
    size_t pad = (4 - r_.offset() % 4) % 4;
    if (pad) take(pad);
  }
  uint16_t u16() { return checked(r_.u16()); }
  uint32_t u32() {
    align4();
    return checked(r_.u32());
  }
  void skip(size_t n) { take(n); }
  ByteSpan bytes(size_t n) {
    ByteSpan b = r_.bytes(n);
    if (!r_.ok()) fail("truncated at offset " + std::to_string(r_.offset()));
    return b;
  }

  NdrString string_header() {
    NdrString s;
    s.length_bytes = u16();
    u16();  // MaximumLength: the conformant array's max count says it again
    s.pointer = u32();
    return s;
  }

  // A conformant array's max count that must equal `expected` and whose
  // elements of `element_size` bytes must all be present.
  bool array_count(uint32_t expected, size_t element_size, const char* what) {
    uint32_t count = u32();
    if (!ok()) return false;
    if (count != expected) {
      fail(std::string(what) + ": count " + std::to_string(expected) + " but the array holds " +
           std::to_string(count));
      return false;
    }
    if (uint64_t(count) * element_size > remaining()) {
      fail(std::string(what) + ": " + std::to_string(count) + " entries do not fit in the buffer");
      return false;
    }
    return true;
  }

 private:
  template <typename T>
  T checked(T v) {
    if (!r_.ok()) fail("truncated at offset " + std::to_string(r_.offset()));
    return v;
  }
  void take(size_t n) {
    r_.skip(n);
    if (!r_.ok()) fail("truncated at offset " + std::to_string(r_.offset()));
  }

  ByteReader r_;
  std::string error_;
};

// The deferred data of an RPC_UNICODE_STRING: a conformant varying array
// of WCHAR (max count, offset, actual count).
std::string read_string_data(NdrReader& r, const NdrString& h, const char* what) {
  if (h.pointer == 0) return {};
  uint32_t max_count = r.u32();
  uint32_t offset = r.u32();
  uint32_t actual = r.u32();
  if (!r.ok()) return {};
  if (offset != 0 || actual > max_count || size_t(actual) * 2 != h.length_bytes) {
    r.fail(std::string(what) + ": string header does not match its length");
    return {};
  }
  ByteSpan units = r.bytes(size_t(actual) * 2);
  std::string out;
  if (r.ok() && !unicode::utf16le_to_utf8(units, out)) r.fail(std::string(what) + ": not valid UTF-16");
  return out;
}

// An RPC_SID (MS-DTYP 2.4.2.3): its conformance (the sub-authority count)
// first, then the SID.
PacSid read_sid(NdrReader& r, const char* what) {
  PacSid sid;
  uint32_t conformance = r.u32();
  ByteSpan fixed = r.bytes(8);
  if (!r.ok()) return sid;
  uint8_t revision = fixed[0], count = fixed[1];
  if (revision != 1 || count > kMaxSubAuthorities || count != conformance) {
    r.fail(std::string(what) + ": not a SID (revision " + std::to_string(revision) + ", " +
           std::to_string(count) + " sub-authorities)");
    return sid;
  }
  for (int i = 2; i < 8; ++i) sid.authority = (sid.authority << 8) | fixed[i];
  if (size_t(count) * 4 > r.remaining()) {
    r.fail(std::string(what) + ": truncated SID");
    return sid;
  }
  for (uint8_t i = 0; i < count; ++i) sid.sub.push_back(r.u32());
  return sid;
}

// GROUP_MEMBERSHIP arrays (MS-PAC 2.2.2): RelativeId, Attributes.
std::vector<uint32_t> read_group_rids(NdrReader& r, uint32_t pointer, uint32_t count, const char* what) {
  std::vector<uint32_t> rids;
  if (pointer == 0) {
    if (count != 0) r.fail(std::string(what) + ": count " + std::to_string(count) + " without an array");
    return rids;
  }
  if (!r.array_count(count, 8, what)) return rids;
  rids.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    rids.push_back(r.u32());
    r.u32();  // Attributes (SE_GROUP_*): every group listed is enabled for access checks
  }
  return rids;
}

// KERB_SID_AND_ATTRIBUTES array (MS-PAC 2.2.1): pointers, then each SID.
std::vector<PacSid> read_extra_sids(NdrReader& r, uint32_t pointer, uint32_t count) {
  std::vector<PacSid> sids;
  if (pointer == 0) {
    if (count != 0) r.fail("ExtraSids: count " + std::to_string(count) + " without an array");
    return sids;
  }
  if (!r.array_count(count, 8, "ExtraSids")) return sids;
  std::vector<uint32_t> pointers(count);
  for (uint32_t i = 0; i < count; ++i) {
    pointers[i] = r.u32();
    r.u32();  // Attributes
  }
  for (uint32_t p : pointers) {
    if (!r.ok()) break;
    if (p == 0) {
      r.fail("ExtraSids: a NULL SID");
      break;
    }
    sids.push_back(read_sid(r, "ExtraSids"));
  }
  return sids;
}

// The fixed part of KERB_VALIDATION_INFO, as far as this server needs it.
struct ValidationFixed {
  NdrString strings_before_groups[6];  // EffectiveName .. HomeDirectoryDrive
  uint32_t user_rid = 0, primary_group_rid = 0;
  uint32_t group_count = 0, groups_ptr = 0;
  NdrString logon_server, logon_domain_name;
  uint32_t domain_sid_ptr = 0;
  uint32_t sid_count = 0, extra_sids_ptr = 0;
  uint32_t resource_domain_ptr = 0, resource_group_count = 0, resource_groups_ptr = 0;
};

ValidationFixed read_fixed_part(NdrReader& r) {
  ValidationFixed f;
  r.skip(6 * kFileTimeSize);  // LogonTime .. PasswordMustChange
  for (NdrString& s : f.strings_before_groups) s = r.string_header();
  r.u16();  // LogonCount
  r.u16();  // BadPasswordCount
  f.user_rid = r.u32();
  f.primary_group_rid = r.u32();
  f.group_count = r.u32();
  f.groups_ptr = r.u32();
  r.u32();  // UserFlags
  r.skip(kUserSessionKeySize);
  f.logon_server = r.string_header();
  f.logon_domain_name = r.string_header();
  f.domain_sid_ptr = r.u32();
  r.skip(2 * 4);  // Reserved1
  r.u32();        // UserAccountControl
  r.u32();        // SubAuthStatus
  r.skip(2 * kFileTimeSize);  // LastSuccessfulILogon, LastFailedILogon
  r.u32();                    // FailedILogonCount
  r.u32();                    // Reserved3
  f.sid_count = r.u32();
  f.extra_sids_ptr = r.u32();
  f.resource_domain_ptr = r.u32();
  f.resource_group_count = r.u32();
  f.resource_groups_ptr = r.u32();
  return f;
}

// The pointers' data, in the order their pointers appear.
LogonInfo read_deferred(NdrReader& r, const ValidationFixed& f) {
  static const char* const kStringNames[6] = {"EffectiveName", "FullName",      "LogonScript",
                                              "ProfilePath",   "HomeDirectory", "HomeDirectoryDrive"};
  LogonInfo info;
  for (int i = 0; i < 6; ++i) {
    std::string s = read_string_data(r, f.strings_before_groups[i], kStringNames[i]);
    if (i == 0) info.account_name = std::move(s);
  }
  info.user_rid = f.user_rid;
  info.primary_group_rid = f.primary_group_rid;
  info.group_rids = read_group_rids(r, f.groups_ptr, f.group_count, "GroupIds");
  read_string_data(r, f.logon_server, "LogonServer");
  info.domain_name = read_string_data(r, f.logon_domain_name, "LogonDomainName");
  if (f.domain_sid_ptr == 0) r.fail("no LogonDomainId");
  else info.domain_sid = read_sid(r, "LogonDomainId");
  info.extra_sids = read_extra_sids(r, f.extra_sids_ptr, f.sid_count);
  if (f.resource_domain_ptr != 0) info.resource_domain_sid = read_sid(r, "ResourceGroupDomainSid");
  info.resource_group_rids =
      read_group_rids(r, f.resource_groups_ptr, f.resource_group_count, "ResourceGroupIds");
  if (!info.resource_group_rids.empty() && !info.resource_domain_sid)
    r.fail("ResourceGroupIds without a ResourceGroupDomainSid");
  return info;
}

// MS-RPCE 2.2.6.1/2.2.6.2: version 1, little-endian, 8-byte common header;
// the private header's object length bounds the stream.
std::expected<ByteSpan, std::string> type_serialized_stream(ByteSpan buffer) {
  if (buffer.size() < kTypeSerializationHeaders) return std::unexpected("shorter than its NDR headers");
  if (buffer[0] != 1 || buffer[1] != 0x10 || load_le16(&buffer[2]) != 8)
    return std::unexpected("not little-endian NDR type serialization version 1");
  uint32_t object_length = load_le32(&buffer[8]);
  if (object_length > buffer.size() - kTypeSerializationHeaders)
    return std::unexpected("object length " + std::to_string(object_length) + " exceeds the buffer");
  return buffer.subspan(kTypeSerializationHeaders, object_length);
}

}  // namespace

std::string PacSid::to_string() const { return sid_text(authority, sub); }

PacSid PacSid::with_rid(uint32_t rid) const {
  PacSid s = *this;
  s.sub.push_back(rid);
  return s;
}

std::vector<PacSid> LogonInfo::group_sids() const {
  std::vector<PacSid> out;
  auto add = [&out](PacSid s) {
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
  };
  add(domain_sid.with_rid(primary_group_rid));
  for (uint32_t rid : group_rids) add(domain_sid.with_rid(rid));
  for (const PacSid& s : extra_sids) add(s);
  if (resource_domain_sid)
    for (uint32_t rid : resource_group_rids) add(resource_domain_sid->with_rid(rid));
  return out;
}

std::expected<LogonInfo, std::string> parse_logon_info(ByteSpan buffer) {
  auto stream = type_serialized_stream(buffer);
  if (!stream) return std::unexpected("LOGON_INFO: " + stream.error());
  NdrReader r(*stream);
  if (r.u32() == 0 && r.ok()) return std::unexpected("LOGON_INFO: a NULL KERB_VALIDATION_INFO");
  ValidationFixed fixed = read_fixed_part(r);
  LogonInfo info = read_deferred(r, fixed);
  if (!r.ok()) return std::unexpected("LOGON_INFO: " + r.error());
  if (info.domain_sid.sub.size() >= kMaxSubAuthorities)
    return std::unexpected("LOGON_INFO: the domain SID has no room for the user's RID");
  if (info.account_name.empty()) return std::unexpected("LOGON_INFO: no account name");
  return info;
}

std::expected<Pac, std::string> parse_pac(ByteSpan pac) {
  if (pac.size() < kPacHeaderSize) return std::unexpected("PAC shorter than its header");
  uint32_t count = load_le32(&pac[0]);
  uint32_t version = load_le32(&pac[4]);
  if (version != 0) return std::unexpected("PAC version " + std::to_string(version) + ", not 0");
  if (count == 0 || uint64_t(count) * kPacInfoBufferSize > pac.size() - kPacHeaderSize)
    return std::unexpected("PAC of " + std::to_string(count) + " buffers does not fit in " +
                           std::to_string(pac.size()) + " bytes");
  Pac out;
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* entry = &pac[kPacHeaderSize + i * kPacInfoBufferSize];
    uint32_t type = load_le32(entry);
    uint32_t size = load_le32(entry + 4);
    uint64_t offset = load_le64(entry + 8);
    if (offset % 8 != 0 || offset > pac.size() || size > pac.size() - offset)
      return std::unexpected("PAC buffer " + std::to_string(i) + " (type " + std::to_string(type) +
                             ") lies outside the PAC");
    if (type != kPacLogonInfo) continue;
    if (out.logon_info) return std::unexpected("PAC with two LOGON_INFO buffers");
    auto info = parse_logon_info(pac.subspan(size_t(offset), size));
    if (!info) return std::unexpected(info.error());
    out.logon_info = std::move(*info);
  }
  return out;
}

}  // namespace ringsmb::kerberos
