// The Privilege Attribute Certificate a Windows domain controller puts in
// every ticket (MS-PAC): who the user is in the domain (its SID, its
// NetBIOS domain and account name) and the groups it belongs to (their
// SIDs). Decoded here from bytes MIT krb5 hands over after checking the
// PAC's server signature with the service key (gss_acceptor.cpp); this
// file never sees a key and trusts nothing in the bytes: every count,
// offset and pointer is checked against what is there.
//
// Layout (MS-PAC 2.3-2.5): a PACTYPE header and table of PAC_INFO_BUFFERs
// (type, size, offset), each buffer 8-byte aligned; the LOGON_INFO buffer
// (type 1) is a KERB_VALIDATION_INFO in NDR type serialization version 1
// (MS-RPCE 2.2.6): a common and a private header, a top-level pointer, the
// structure's fixed part, then its pointers' data in the order the
// pointers appear (strings, group RIDs, domain SID, extra SIDs, resource
// group domain SID, resource group RIDs).
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.hpp"

namespace ringsmb::kerberos {

// MS-DTYP 2.4.2: revision 1, a 48-bit authority, at most 15 sub-authorities.
struct PacSid {
  uint64_t authority = 0;
  std::vector<uint32_t> sub;
  bool operator==(const PacSid&) const = default;
  std::string to_string() const;  // "S-1-5-21-1-2-3-1104"
  PacSid with_rid(uint32_t rid) const;
};

// The parts of KERB_VALIDATION_INFO (MS-PAC 2.5) that say who the user is.
struct LogonInfo {
  std::string account_name;  // EffectiveName: the sAMAccountName, "alice"
  std::string domain_name;   // LogonDomainName: the NetBIOS domain, "EXAMPLE"
  PacSid domain_sid;         // LogonDomainId
  uint32_t user_rid = 0;     // UserId
  uint32_t primary_group_rid = 0;
  std::vector<uint32_t> group_rids;  // GroupIds, of domain_sid
  std::vector<PacSid> extra_sids;    // ExtraSids (other domains, well-known SIDs)
  std::optional<PacSid> resource_domain_sid;  // ResourceGroupDomainSid
  std::vector<uint32_t> resource_group_rids;  // ResourceGroupIds, of resource_domain_sid

  PacSid user_sid() const { return domain_sid.with_rid(user_rid); }
  // Every group SID the user holds: the primary group, the domain groups,
  // the extra SIDs, the resource groups; each once, in that order.
  std::vector<PacSid> group_sids() const;
};

// MS-PAC 2.4 ulType values this server reads or names in errors.
inline constexpr uint32_t kPacLogonInfo = 1;
inline constexpr uint32_t kPacServerChecksum = 6;
inline constexpr uint32_t kPacPrivsvrChecksum = 7;

// A whole PAC (AD-WIN2K-PAC authorization data). logon_info is nullopt for
// a PAC without a LOGON_INFO buffer, as MIT's KDC issues (krb5 1.20+: only
// client info and signatures); the principal then maps as without a PAC.
struct Pac {
  std::optional<LogonInfo> logon_info;
};

// Why bytes are not a PAC, in words for the log ("LOGON_INFO: group count
// 5 but the array holds 4").
std::expected<Pac, std::string> parse_pac(ByteSpan pac);
// One LOGON_INFO buffer's bytes (the type-serialized KERB_VALIDATION_INFO).
std::expected<LogonInfo, std::string> parse_logon_info(ByteSpan buffer);

}  // namespace ringsmb::kerberos
