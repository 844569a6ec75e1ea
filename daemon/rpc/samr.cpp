// samr (MS-SAMR): the read-only subset Windows uses to resolve and show
// local accounts (connect, find the domain, look names up, read a user).
// Nothing here can change an account.
#include <algorithm>

#include "rpc/dcerpc.hpp"
#include "rpc/interface.hpp"

namespace ringsmb::rpc {

namespace {

constexpr uint16_t kUserAllInformation = 21;
constexpr uint32_t kMaxNames = 1000;  // MS-SAMR 3.1.5.11.2: range(0,1000)
constexpr uint32_t kUserNormalAccount = 0x00000010;
constexpr uint32_t kUserDontExpirePassword = 0x00000200;
// USER_ALL_USERNAME .. USER_ALL_CODEPAGE (MS-SAMR 2.2.1.8): every
// non-secret field of SAMPR_USER_ALL_INFORMATION is filled in.
constexpr uint32_t kWhichFieldsReadable = 0x00FFFFFF;
constexpr uint64_t kNever = 0x7FFFFFFFFFFFFFFF;

uint32_t status(NtStatus s) { return uint32_t(s); }

CallResult handle_reply(std::optional<PolicyHandle> h, NtStatus st) {
  CallResult res;
  NdrWriter w(res.stub);
  w.handle(h.value_or(PolicyHandle{}));
  w.u32(status(h ? st : NtStatus::InsufficientResources));
  return res;
}

CallResult failed_handle_reply(NtStatus st) {
  CallResult res;
  NdrWriter w(res.stub);
  w.handle(PolicyHandle{});
  w.u32(status(st));
  return res;
}

// Anonymous and guest sessions cannot enumerate accounts, as Windows with
// RestrictAnonymousSAM (the default since 2003).
bool may_connect(const CallContext& ctx) { return !ctx.rpc.user.empty() && !ctx.rpc.is_guest; }

CallResult connect2(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  (void)r.unique_wstring();
  uint32_t access = r.u32();
  if (!r.ok()) return fault_result(kFaultNdr);
  if (!may_connect(ctx)) return failed_handle_reply(NtStatus::AccessDenied);
  return handle_reply(ctx.handles.open({HandleKind::SamServer, access, {}, 0}), NtStatus::Success);
}

CallResult connect5(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  (void)r.unique_wstring();
  uint32_t access = r.u32();
  uint32_t version = r.u32();
  if (r.u32() != version || version != 1) r.fail();  // only SAMPR_REVISION_INFO_V1 exists
  (void)r.u32(), (void)r.u32();  // Revision, SupportedFeatures
  if (!r.ok()) return fault_result(kFaultNdr);
  std::optional<PolicyHandle> h;
  NtStatus st = NtStatus::AccessDenied;
  if (may_connect(ctx)) {
    h = ctx.handles.open({HandleKind::SamServer, access, {}, 0});
    st = h ? NtStatus::Success : NtStatus::InsufficientResources;
  }
  CallResult res;
  NdrWriter w(res.stub);
  w.u32(1);  // OutVersion
  w.u32(1);  // union discriminant
  w.u32(3);  // Revision: the only defined value
  w.u32(0);  // SupportedFeatures: none of the RODC/AES extras
  w.handle(h.value_or(PolicyHandle{}));
  w.u32(status(st));
  return res;
}

CallResult close_handle(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  auto h = r.handle();
  if (!r.ok()) return fault_result(kFaultNdr);
  return close_reply(ctx, h);
}

// The two domains a standalone server has: its own and BUILTIN.
std::vector<std::pair<std::string, Sid>> domains(const Identity& id) {
  return {{id.netbios, id.machine_sid}, {"Builtin", builtin_sid()}};
}

CallResult lookup_domain(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  auto h = r.handle();
  std::string name = r.unicode_string();
  if (!r.ok()) return fault_result(kFaultNdr);
  CallResult res;
  NdrWriter w(res.stub);
  NtStatus st = NtStatus::NoSuchDomain;
  std::optional<Sid> sid;
  if (!ctx.handles.find(h, HandleKind::SamServer)) st = NtStatus::InvalidHandle;
  for (const auto& [dn, ds] : domains(ctx.id)) {
    if (st == NtStatus::NoSuchDomain && iequals(dn, name)) sid = ds, st = NtStatus::Success;
  }
  if (w.pointer(sid.has_value())) w.sid(*sid);
  w.u32(status(st));
  return res;
}

// What SamrEnumerateDomainsInSamServer and SamrEnumerateUsersInDomain
// answer after their EnumerationContext: the SAMPR_ENUMERATION_BUFFER of
// (RelativeId, Name) entries (null with a bad handle), CountReturned and the
// status.
void write_enumeration(NdrWriter& w, bool handle_ok, const std::vector<std::pair<uint32_t, std::string>>& entries) {
  if (w.pointer(handle_ok)) {
    w.u32(uint32_t(entries.size()));
    if (w.pointer(!entries.empty())) {
      w.defer([&w, &entries] {
        w.u32(uint32_t(entries.size()));
        for (const auto& [rid, name] : entries) {
          w.u32(rid);
          w.unicode_string(name);
        }
      });
    }
    w.flush();
  }
  w.u32(uint32_t(entries.size()));  // CountReturned
  w.u32(status(handle_ok ? NtStatus::Success : NtStatus::InvalidHandle));
}

CallResult enum_domains(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  auto h = r.handle();
  uint32_t resume = r.u32();
  (void)r.u32();  // PreferedMaximumLength
  if (!r.ok()) return fault_result(kFaultNdr);
  bool handle_ok = ctx.handles.find(h, HandleKind::SamServer) != nullptr;
  std::vector<std::pair<uint32_t, std::string>> names;
  // Both entries always fit; a resumed enumeration has nothing left.
  if (resume == 0 && handle_ok)
    for (const auto& d : domains(ctx.id)) names.emplace_back(0, d.first);  // RelativeId: meaningless for domains
  CallResult res;
  NdrWriter w(res.stub);
  w.u32(uint32_t(names.size()));  // EnumerationContext
  write_enumeration(w, handle_ok, names);
  return res;
}

CallResult open_domain(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  auto h = r.handle();
  uint32_t access = r.u32();
  Sid sid = r.sid();
  if (!r.ok()) return fault_result(kFaultNdr);
  if (!ctx.handles.find(h, HandleKind::SamServer)) return failed_handle_reply(NtStatus::InvalidHandle);
  if (sid != ctx.id.machine_sid && sid != builtin_sid()) return failed_handle_reply(NtStatus::NoSuchDomain);
  return handle_reply(ctx.handles.open({HandleKind::SamDomain, access, sid, 0}), NtStatus::Success);
}

// A name inside one of our two domains: its RID and SID_NAME_USE.
std::optional<std::pair<uint32_t, SidType>> lookup_in(const CallContext& ctx, const Sid& domain,
                                                      std::string_view name) {
  std::string qualified = (domain == builtin_sid() ? std::string("BUILTIN") : ctx.id.netbios) + "\\";
  auto t = lookup_name(ctx.id, qualified.append(name));
  if (!t || t->domain_sid != domain || t->sid.sub.size() != domain.sub.size() + 1) return std::nullopt;
  return std::make_pair(t->sid.sub.back(), t->type);
}

void write_ulong_array(NdrWriter& w, const std::vector<uint32_t>& v) {
  w.u32(uint32_t(v.size()));
  if (w.pointer(!v.empty())) {
    w.u32(uint32_t(v.size()));
    for (uint32_t x : v) w.u32(x);
  }
}

CallResult lookup_names(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  auto h = r.handle();
  uint32_t count = r.count(kMaxNames);
  (void)r.count(kMaxNames);  // max_count: the IDL fixes it at 1000
  if (r.u32() != 0 || r.count(kMaxNames) != count) r.fail();  // offset, actual_count
  std::vector<UnicodeStringHeader> headers;
  for (uint32_t i = 0; i < count && r.ok(); ++i) headers.push_back(r.unicode_string_header());
  std::vector<std::string> names;
  for (const auto& hd : headers) names.push_back(r.unicode_string_body(hd));
  if (!r.ok()) return fault_result(kFaultNdr);
  const HandleEntry* dom = ctx.handles.find(h, HandleKind::SamDomain);
  std::vector<uint32_t> rids, uses;
  size_t mapped = 0;
  for (const auto& n : names) {
    auto hit = dom ? lookup_in(ctx, dom->domain, n) : std::nullopt;
    mapped += hit.has_value();
    rids.push_back(hit ? hit->first : 0);
    uses.push_back(uint32_t(hit ? hit->second : SidType::Unknown));
  }
  CallResult res;
  NdrWriter w(res.stub);
  write_ulong_array(w, rids);
  write_ulong_array(w, uses);
  NtStatus st = NtStatus::Success;
  if (!dom) st = NtStatus::InvalidHandle;
  else if (mapped == 0 && !names.empty()) st = NtStatus::NoneMapped;
  else if (mapped < names.size()) st = NtStatus::SomeNotMapped;
  w.u32(status(st));
  return res;
}

// The machine domain's users as SAMR shows them: one per RID (SMB users
// mapped to the same Unix user share it), under the name lookups give it.
std::vector<std::pair<uint32_t, std::string>> domain_users(const CallContext& ctx) {
  std::vector<std::pair<uint32_t, std::string>> out;
  for (const auto& a : ctx.id.accounts->smb_users()) {
    auto rid = user_rid(a.uid);
    if (!rid) continue;
    auto t = lookup_sid(ctx.id, ctx.id.machine_sid.with_rid(*rid));
    if (!t || t->type != SidType::User) continue;
    bool seen = false;
    for (const auto& u : out) seen = seen || u.first == *rid;
    if (!seen) out.emplace_back(*rid, t->name);
  }
  return out;
}

// SamrEnumerateUsersInDomain (MS-SAMR 3.1.5.2.5). Every entry is sent at
// once whatever PreferedMaximumLength says (a server may return more, and
// the list is short); EnumerationContext is the index to resume from.
CallResult enum_users(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  auto h = r.handle();
  uint32_t resume = r.u32();
  uint32_t account_control = r.u32();
  (void)r.u32();  // PreferedMaximumLength
  if (!r.ok()) return fault_result(kFaultNdr);
  const HandleEntry* dom = ctx.handles.find(h, HandleKind::SamDomain);
  std::vector<std::pair<uint32_t, std::string>> users;
  // Only normal accounts exist; BUILTIN has no users.
  bool wanted = account_control == 0 || (account_control & kUserNormalAccount);
  if (dom && dom->domain == ctx.id.machine_sid && wanted) users = domain_users(ctx);
  users.erase(users.begin(), users.begin() + std::min<size_t>(resume, users.size()));
  CallResult res;
  NdrWriter w(res.stub);
  w.u32(resume + uint32_t(users.size()));  // EnumerationContext
  write_enumeration(w, dom != nullptr, users);
  return res;
}

CallResult open_user(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  auto h = r.handle();
  uint32_t access = r.u32();
  uint32_t rid = r.u32();
  if (!r.ok()) return fault_result(kFaultNdr);
  const HandleEntry* dom = ctx.handles.find(h, HandleKind::SamDomain);
  if (!dom) return failed_handle_reply(NtStatus::InvalidHandle);
  auto t = lookup_sid(ctx.id, dom->domain.with_rid(rid));
  if (!t || t->type != SidType::User) return failed_handle_reply(NtStatus::NoSuchUser);
  return handle_reply(ctx.handles.open({HandleKind::SamUser, access, dom->domain, rid}), NtStatus::Success);
}

void old_large_integer(NdrWriter& w, uint64_t v) {
  w.u32(uint32_t(v));  // LowPart
  w.u32(uint32_t(v >> 32));  // HighPart
}

// An RPC_UNICODE_STRING or RPC_SHORT_BLOB with a NULL buffer.
void null_counted_buffer(NdrWriter& w) {
  w.align(4);
  w.u16(0);
  w.u16(0);
  w.pointer(false);
}

// SAMPR_USER_ALL_INFORMATION (MS-SAMR 2.2.6.6), field by field.
void write_user_all(NdrWriter& w, const std::string& name, uint32_t rid) {
  for (uint64_t t : {uint64_t(0), uint64_t(0), uint64_t(0), kNever, uint64_t(0), kNever}) {
    old_large_integer(w, t);  // LastLogon .. PasswordMustChange
  }
  w.unicode_string(name);
  for (int i = 0; i < 9; ++i) w.unicode_string("");  // FullName .. Parameters
  null_counted_buffer(w);  // LmOwfPassword: never disclosed
  null_counted_buffer(w);  // NtOwfPassword
  null_counted_buffer(w);  // PrivateData
  w.u32(0);                // SecurityDescriptor.Length
  w.pointer(false);
  w.u32(rid);
  w.u32(kRidNoneGroup);
  w.u32(kUserNormalAccount | kUserDontExpirePassword);
  w.u32(kWhichFieldsReadable);
  w.u16(168);  // LogonHours.UnitsPerWeek: one bit per hour
  w.pointer(true);
  w.defer([&w] {
    w.u32(1260);  // the IDL's fixed size_is
    w.u32(0);
    w.u32(21);
    for (int i = 0; i < 21; ++i) w.u8(0xFF);  // may log on at any hour
  });
  w.u16(0), w.u16(0), w.u16(0), w.u16(0);  // BadPasswordCount, LogonCount, CountryCode, CodePage
  w.u8(0), w.u8(0), w.u8(0), w.u8(0);      // Lm/NtPasswordPresent, PasswordExpired, PrivateDataSensitive
}

CallResult query_user(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  auto h = r.handle();
  uint16_t level = r.u16();
  if (!r.ok()) return fault_result(kFaultNdr);
  const HandleEntry* user = ctx.handles.find(h, HandleKind::SamUser);
  std::optional<Translation> t;
  if (user) t = lookup_sid(ctx.id, user->domain.with_rid(user->rid));
  CallResult res;
  NdrWriter w(res.stub);
  NtStatus st = !user ? NtStatus::InvalidHandle
                : !t  ? NtStatus::NoSuchUser
                : level != kUserAllInformation ? NtStatus::InvalidInfoClass
                                               : NtStatus::Success;
  if (w.pointer(st == NtStatus::Success)) {
    w.u16(level);
    write_user_all(w, t->name, user->rid);
    w.flush();
  }
  w.u32(status(st));
  return res;
}

CallResult samr_call(uint16_t opnum, ByteSpan stub, CallContext& ctx) {
  switch (opnum) {
    case 1: return close_handle(stub, ctx);    // SamrCloseHandle
    case 5: return lookup_domain(stub, ctx);   // SamrLookupDomainInSamServer
    case 6: return enum_domains(stub, ctx);    // SamrEnumerateDomainsInSamServer
    case 7: return open_domain(stub, ctx);     // SamrOpenDomain
    case 13: return enum_users(stub, ctx);     // SamrEnumerateUsersInDomain
    case 17: return lookup_names(stub, ctx);   // SamrLookupNamesInDomain
    case 34: return open_user(stub, ctx);      // SamrOpenUser
    case 36: return query_user(stub, ctx);     // SamrQueryInformationUser
    case 57: return connect2(stub, ctx);       // SamrConnect2
    case 64: return connect5(stub, ctx);       // SamrConnect5
    default: return fault_result(kFaultOpRangeError);
  }
}

}  // namespace

const RpcInterface& samr_interface() {
  static const RpcInterface iface{"samr", {Uuid::parse("12345778-1234-abcd-ef00-0123456789ac"), 1, 0},
                                  samr_call};
  return iface;
}

}  // namespace ringsmb::rpc
