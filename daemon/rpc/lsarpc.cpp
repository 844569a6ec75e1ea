// lsarpc (MS-LSAD policy handles and MS-LSAT name/SID translation): what
// Explorer's security tab and `smbcacls` use to show owners and ACL entries.
#include "rpc/dcerpc.hpp"
#include "rpc/interface.hpp"

namespace ringsmb::rpc {

namespace {

constexpr uint16_t kPolicyPrimaryDomainInformation = 3;
constexpr uint16_t kPolicyAccountDomainInformation = 5;
constexpr uint16_t kPolicyDnsDomainInformation = 12;
// MS-LSAT 3.1.4.7 caps a lookup at 20480 SIDs and 1000 names; we take 1000 of each.
constexpr uint32_t kMaxLookup = 1000;
constexpr uint32_t kNoDomain = 0xFFFFFFFF;  // DomainIndex -1

uint32_t status(NtStatus s) { return uint32_t(s); }

// LSAPR_OBJECT_ATTRIBUTES (MS-LSAD 2.2.9): its contents are ignored by
// Windows except the QoS; we only need to get past it.
void skip_object_attributes(NdrReader& r) {
  (void)r.u32();  // Length
  uint32_t root = r.pointer();
  uint32_t name = r.pointer();
  (void)r.u32();  // Attributes
  uint32_t sd = r.pointer();
  uint32_t qos = r.pointer();
  if (root) (void)r.u8();
  if (name || sd) r.fail();  // never sent by any client; not worth decoding
  if (qos) {
    (void)r.u32();  // Length
    (void)r.u16();  // ImpersonationLevel
    (void)r.u8();   // ContextTrackingMode
    (void)r.u8();   // EffectiveOnly
  }
}

CallResult open_policy_reply(CallContext& ctx, uint32_t access) {
  auto h = ctx.handles.open(HandleEntry{HandleKind::LsaPolicy, access, {}, 0});
  CallResult res;
  NdrWriter w(res.stub);
  w.handle(h.value_or(PolicyHandle{}));
  w.u32(status(h ? NtStatus::Success : NtStatus::InsufficientResources));
  return res;
}

// LsarOpenPolicy (6): SystemName is a pointer to ONE wchar_t, not a string.
CallResult open_policy(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  if (r.pointer()) (void)r.u16();
  skip_object_attributes(r);
  uint32_t access = r.u32();
  if (!r.ok()) return fault_result(kFaultNdr);
  return open_policy_reply(ctx, access);
}

CallResult open_policy2(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  (void)r.unique_wstring();
  skip_object_attributes(r);
  uint32_t access = r.u32();
  if (!r.ok()) return fault_result(kFaultNdr);
  return open_policy_reply(ctx, access);
}

CallResult close_handle(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  auto h = r.handle();
  if (!r.ok()) return fault_result(kFaultNdr);
  return close_reply(ctx, h);
}

// LsarQueryInformationPolicy(2): levels 3 and 5 (LSAPR_POLICY_PRIMARY_DOM_INFO
// and LSAPR_POLICY_ACCOUNT_DOM_INFO have the same shape: name, SID).
CallResult query_info_policy(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  auto h = r.handle();
  uint16_t level = r.u16();
  if (!r.ok()) return fault_result(kFaultNdr);
  CallResult res;
  NdrWriter w(res.stub);
  if (!ctx.handles.find(h, HandleKind::LsaPolicy)) {
    w.pointer(false);
    w.u32(status(NtStatus::InvalidHandle));
    return res;
  }
  if (level != kPolicyPrimaryDomainInformation && level != kPolicyAccountDomainInformation) {
    w.pointer(false);
    w.u32(status(level == kPolicyDnsDomainInformation ? NtStatus::NotSupported : NtStatus::InvalidParameter));
    return res;
  }
  w.pointer(true);
  w.u16(level);  // union discriminant (POLICY_INFORMATION_CLASS, an enum: 16 bits)
  bool account = level == kPolicyAccountDomainInformation;
  // A standalone server: primary domain is the workgroup with no SID.
  w.unicode_string_large(account ? ctx.id.netbios : ctx.id.workgroup);
  if (w.pointer(account)) w.defer([&w, &ctx] { w.sid(ctx.id.machine_sid); });
  w.flush();
  w.u32(status(NtStatus::Success));
  return res;
}

// ---- lookups ----

struct DomainList {
  std::vector<std::pair<std::string, Sid>> entries;
  uint32_t index_of(const Translation& t) {
    for (size_t i = 0; i < entries.size(); ++i) {
      if (entries[i].second == t.domain_sid) return uint32_t(i);
    }
    entries.emplace_back(t.domain, t.domain_sid);
    return uint32_t(entries.size() - 1);
  }
};

// [out] PLSAPR_REFERENCED_DOMAIN_LIST* ReferencedDomains.
void write_domains(NdrWriter& w, const DomainList& d) {
  w.pointer(true);
  w.u32(uint32_t(d.entries.size()));
  if (w.pointer(!d.entries.empty())) {
    w.defer([&w, &d] {
      w.u32(uint32_t(d.entries.size()));
      for (const auto& [name, sid] : d.entries) {
        w.unicode_string_large(name);
        w.pointer(true);
        w.defer([&w, &sid] { w.sid(sid); });
      }
    });
  }
  w.u32(32);  // MaxEntries, as Windows sends it
  w.flush();
}

uint32_t mapped_status(size_t mapped, size_t total) {
  if (mapped == total) return status(NtStatus::Success);
  return status(mapped == 0 ? NtStatus::NoneMapped : NtStatus::SomeNotMapped);
}

enum class SidsVariant { V1, V2, V3 };  // LookupSids, LookupSids2, LookupSids3

std::vector<Sid> read_sid_enum(NdrReader& r) {
  std::vector<Sid> sids;
  uint32_t entries = r.count(kMaxLookup);
  if (r.pointer() == 0) return sids;
  if (r.count(kMaxLookup) != entries) r.fail();
  std::vector<uint32_t> present;
  for (uint32_t i = 0; i < entries && r.ok(); ++i) present.push_back(r.pointer());
  for (uint32_t p : present) {
    if (!r.ok()) break;
    sids.push_back(p ? r.sid() : Sid{});  // a NULL entry can never map
  }
  return sids;
}

CallResult lookup_sids(ByteSpan stub, CallContext& ctx, SidsVariant v) {
  NdrReader r(stub);
  PolicyHandle h;
  if (v != SidsVariant::V3) h = r.handle();
  auto sids = read_sid_enum(r);
  (void)r.u32();                       // TranslatedNames.Entries
  if (r.pointer() != 0) r.fail();      // clients send no names in
  (void)r.u16();                       // LookupLevel
  (void)r.u32();                       // MappedCount
  if (v != SidsVariant::V1) (void)r.u32(), (void)r.u32();  // LookupOptions, ClientRevision
  if (!r.ok()) return fault_result(kFaultNdr);
  if (v != SidsVariant::V3 && !ctx.handles.find(h, HandleKind::LsaPolicy)) {
    CallResult res;
    NdrWriter w(res.stub);
    w.pointer(false);
    w.u32(0);
    w.pointer(false);
    w.u32(0);
    w.u32(status(NtStatus::InvalidHandle));
    return res;
  }
  DomainList domains;
  std::vector<std::pair<Translation, uint32_t>> names;  // translation, domain index
  size_t mapped = 0;
  auto translated = translate_sids(ctx.id, sids);
  for (size_t i = 0; i < sids.size(); ++i) {
    const Sid& sid = sids[i];
    const auto& t = translated[i];
    if (t) {
      ++mapped;
      names.emplace_back(*t, domains.index_of(*t));
    } else {
      // Unmapped: Windows shows the SID string itself, type unknown.
      names.emplace_back(Translation{SidType::Unknown, sid.to_string(), "", {}, sid}, kNoDomain);
    }
  }
  CallResult res;
  NdrWriter w(res.stub);
  write_domains(w, domains);
  w.u32(uint32_t(names.size()));
  if (w.pointer(!names.empty())) {
    w.defer([&w, &names, v] {
      w.u32(uint32_t(names.size()));
      for (const auto& [t, idx] : names) {
        w.u16(uint16_t(t.type));
        w.unicode_string(t.name);
        w.u32(idx);
        if (v != SidsVariant::V1) w.u32(0);  // Flags
      }
    });
  }
  w.flush();
  w.u32(uint32_t(mapped));
  w.u32(mapped_status(mapped, names.size()));
  return res;
}

enum class NamesVariant { V1, V3 };  // LookupNames, LookupNames3

std::vector<std::string> read_names(NdrReader& r) {
  std::vector<std::string> names;
  uint32_t count = r.count(kMaxLookup);
  if (r.count(kMaxLookup) != count) r.fail();
  std::vector<UnicodeStringHeader> headers;
  for (uint32_t i = 0; i < count && r.ok(); ++i) headers.push_back(r.unicode_string_header());
  for (const auto& hd : headers) {
    if (!r.ok()) break;
    names.push_back(r.unicode_string_body(hd));
  }
  return names;
}

struct NameResult {
  std::optional<Translation> t;
  uint32_t domain_index = kNoDomain;
};

void write_translated_sids(NdrWriter& w, const std::vector<NameResult>& out, NamesVariant v) {
  w.u32(uint32_t(out.size()));
  if (!w.pointer(!out.empty())) return;
  w.defer([&w, &out, v] {
    w.u32(uint32_t(out.size()));
    for (const auto& n : out) {
      w.u16(uint16_t(n.t ? n.t->type : SidType::Unknown));
      if (v == NamesVariant::V1) {
        // LSA_TRANSLATED_SID: the RID within the referenced domain.
        bool child = n.t && n.t->sid.sub.size() == n.t->domain_sid.sub.size() + 1;
        w.u32(child ? n.t->sid.sub.back() : kNoDomain);
      } else if (w.pointer(n.t.has_value())) {
        w.defer([&w, &n] { w.sid(n.t->sid); });
      }
      w.u32(n.domain_index);
      if (v == NamesVariant::V3) w.u32(0);  // Flags
    }
  });
}

CallResult lookup_names(ByteSpan stub, CallContext& ctx, NamesVariant v) {
  NdrReader r(stub);
  auto h = r.handle();
  auto names = read_names(r);
  (void)r.u32();                   // TranslatedSids.Entries
  if (r.pointer() != 0) r.fail();  // clients send no SIDs in
  (void)r.u16();                   // LookupLevel
  (void)r.u32();                   // MappedCount
  if (v == NamesVariant::V3) (void)r.u32(), (void)r.u32();
  if (!r.ok()) return fault_result(kFaultNdr);
  bool handle_ok = ctx.handles.find(h, HandleKind::LsaPolicy) != nullptr;
  DomainList domains;
  std::vector<NameResult> out;
  size_t mapped = 0;
  std::vector<std::optional<Translation>> translated(names.size());
  if (handle_ok) translated = translate_names(ctx.id, names);
  for (auto& t : translated) {
    NameResult nr;
    nr.t = std::move(t);
    if (nr.t) {
      ++mapped;
      nr.domain_index = domains.index_of(*nr.t);
    }
    out.push_back(std::move(nr));
  }
  CallResult res;
  NdrWriter w(res.stub);
  write_domains(w, domains);
  write_translated_sids(w, out, v);
  w.flush();
  w.u32(uint32_t(mapped));
  w.u32(handle_ok ? mapped_status(mapped, out.size()) : status(NtStatus::InvalidHandle));
  return res;
}

// Skips an [in] PRPC_UNICODE_STRING referent (GetUserName's in-values are
// placeholders the client wants overwritten).
void skip_unicode_string_ptr(NdrReader& r) {
  if (r.pointer() != 0) (void)r.unicode_string();
}

CallResult get_user_name(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  (void)r.unique_wstring();
  skip_unicode_string_ptr(r);  // UserName
  bool want_domain = r.pointer() != 0;
  if (want_domain) skip_unicode_string_ptr(r);
  if (!r.ok()) return fault_result(kFaultNdr);
  bool anonymous = ctx.rpc.user.empty();
  std::string user = anonymous ? "ANONYMOUS LOGON" : ctx.rpc.user;
  std::string domain = anonymous ? "NT AUTHORITY" : ctx.id.netbios;
  CallResult res;
  NdrWriter w(res.stub);
  w.pointer(true);
  w.unicode_string(user);
  w.flush();
  if (w.pointer(want_domain)) {
    w.pointer(true);
    w.unicode_string(domain);
    w.flush();
  }
  w.u32(status(NtStatus::Success));
  return res;
}

CallResult lsarpc_call(uint16_t opnum, ByteSpan stub, CallContext& ctx) {
  switch (opnum) {
    case 0: return close_handle(stub, ctx);                        // LsarClose
    case 6: return open_policy(stub, ctx);                         // LsarOpenPolicy
    case 7: return query_info_policy(stub, ctx);                   // LsarQueryInformationPolicy
    case 14: return lookup_names(stub, ctx, NamesVariant::V1);     // LsarLookupNames
    case 15: return lookup_sids(stub, ctx, SidsVariant::V1);       // LsarLookupSids
    case 44: return open_policy2(stub, ctx);                       // LsarOpenPolicy2
    case 45: return get_user_name(stub, ctx);                      // LsarGetUserName
    case 46: return query_info_policy(stub, ctx);                  // LsarQueryInformationPolicy2
    case 57: return lookup_sids(stub, ctx, SidsVariant::V2);       // LsarLookupSids2
    case 68: return lookup_names(stub, ctx, NamesVariant::V3);     // LsarLookupNames3
    case 76: return lookup_sids(stub, ctx, SidsVariant::V3);       // LsarLookupSids3
    default: return fault_result(kFaultOpRangeError);
  }
}

}  // namespace

const RpcInterface& lsarpc_interface() {
  static const RpcInterface iface{"lsarpc", {Uuid::parse("12345778-1234-abcd-ef00-0123456789ab"), 0, 0},
                                  lsarpc_call};
  return iface;
}

}  // namespace ringsmb::rpc
