// What the RPC interfaces (srvsvc.cpp, wkssvc.cpp, lsarpc.cpp, samr.cpp)
// share: the call context, the per-pipe handle table and the identity
// mapping. Internal to daemon/rpc.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/bytes.hpp"
#include "common/ntstatus.hpp"
#include "rpc/directory_names.hpp"
#include "rpc/domain_names.hpp"
#include "rpc/ndr.hpp"
#include "rpc/pipe.hpp"

namespace ringsmb::rpc {

// SID_NAME_USE (MS-LSAT 2.2.13).
enum class SidType : uint16_t {
  User = 1,
  Group = 2,
  Domain = 3,
  Alias = 4,
  WellKnownGroup = 5,
  Unknown = 8,
};

// The machine's names and SIDs plus the account source. One per pipe.
struct Identity {
  std::string netbios;    // upper case
  std::string workgroup;  // upper case
  Sid machine_sid;        // S-1-5-21-a-b-c, see derive_machine_sid
  const AccountSource* accounts = nullptr;
  const DomainNames* domain_names = nullptr;  // AD accounts met at logons; null: none
  std::shared_ptr<DirectoryNames> directory;  // the joined domain's directory; null: none
};
Identity make_identity(const config::Config& config, const AccountSource* accounts);

// S-1-5-21-a-b-c where a, b, c are the first three little-endian words of
// HMAC-SHA256(key "ringsmb machine sid", upper-case NetBIOS name): stable
// across restarts and hosts with the same name, distinct across names.
Sid derive_machine_sid(std::string_view netbios);

inline constexpr uint32_t kRidBase = 1000;        // user RID = 1000 + uid
inline constexpr uint32_t kRidNoneGroup = 513;    // "None", every user's primary group
Sid unix_users_sid();   // S-1-22-1 (Samba's Unix-user domain)
Sid unix_groups_sid();  // S-1-22-2
Sid builtin_sid();      // S-1-5-32

// One side of a translation: the account, its domain and the domain SID
// (the domain list entry of LSA lookups).
struct Translation {
  SidType type = SidType::Unknown;
  std::string name;    // account name ("" for a domain)
  std::string domain;  // "RINGSMB", "Unix User", "BUILTIN", "NT AUTHORITY", an AD domain, ""
  Sid domain_sid;
  Sid sid;
};
std::optional<Translation> lookup_sid(const Identity& id, const Sid& sid);
// "name", "DOMAIN\name" or a domain name alone.
std::optional<Translation> lookup_name(const Identity& id, std::string_view name);
// Many at once (LSA's lookups): what lookup_sid / lookup_name do not know
// is asked of the domain's directory in one go, waiting a bounded time.
std::vector<std::optional<Translation>> translate_sids(const Identity& id, const std::vector<Sid>& sids);
std::vector<std::optional<Translation>> translate_names(const Identity& id, const std::vector<std::string>& names);
// The RID of an SMB/Unix user in the machine domain; nullopt if uid is too large.
std::optional<uint32_t> user_rid(uint32_t uid);
bool iequals(std::string_view a, std::string_view b);

enum class HandleKind : uint8_t { LsaPolicy, SamServer, SamDomain, SamUser };

struct HandleEntry {
  HandleKind kind = HandleKind::LsaPolicy;
  uint32_t access = 0;
  Sid domain;        // SamDomain / SamUser
  uint32_t rid = 0;  // SamUser
};

// Context handles of one pipe. Bounded so a client cannot grow it forever;
// a full table makes the open fail with STATUS_INSUFFICIENT_RESOURCES.
class HandleTable {
 public:
  static constexpr size_t kMaxHandles = 256;
  std::optional<PolicyHandle> open(HandleEntry entry);
  // nullptr unless `h` is open and of kind `kind`.
  const HandleEntry* find(const PolicyHandle& h, HandleKind kind) const;
  bool close(const PolicyHandle& h);
  size_t size() const { return table_.size(); }
  // Whether a find() or close() since the last call met a handle this
  // table never issued (or already closed). The pipe then answers the call
  // with a context-mismatch fault, as the RPC runtime checks context
  // handles before the server routine runs (MS-RPCE 3.3.3.2.1).
  bool take_unknown() {
    bool u = unknown_;
    unknown_ = false;
    return u;
  }

 private:
  std::map<std::array<uint8_t, 20>, HandleEntry> table_;
  mutable bool unknown_ = false;
  uint64_t counter_ = 0;
};

struct CallContext {
  const RpcContext& rpc;
  const Identity& id;
  HandleTable& handles;
};

// A call's outcome: a stub to send, or a fault status (nonzero).
struct CallResult {
  uint32_t fault = 0;
  Bytes stub;
};

struct RpcInterface {
  const char* name;
  SyntaxId syntax;
  CallResult (*call)(uint16_t opnum, ByteSpan stub, CallContext& ctx);
};

const RpcInterface& srvsvc_interface();
const RpcInterface& wkssvc_interface();
const RpcInterface& lsarpc_interface();
const RpcInterface& samr_interface();

// Helpers for the interface files.
CallResult fault_result(uint32_t status);
// The handle-only reply shared by LsarClose and SamrCloseHandle: a zeroed
// handle and the status.
CallResult close_reply(CallContext& ctx, const PolicyHandle& h);

}  // namespace ringsmb::rpc
