// srvsvc (MS-SRVS): share enumeration and server information, what
// Explorer's "\\server" view and `net view` / `smbclient -L` ask for.
#include <algorithm>

#include "rpc/dcerpc.hpp"
#include "rpc/interface.hpp"

namespace ringsmb::rpc {

namespace {

// Win32 error codes (MS-ERREF 2.2) that srvsvc returns as WERROR.
constexpr uint32_t kWerrOk = 0;
constexpr uint32_t kWerrAccessDenied = 5;
constexpr uint32_t kWerrInvalidLevel = 124;
constexpr uint32_t kWerrNetNameNotFound = 2310;
constexpr uint32_t kWerrDeviceNotShared = 2311;  // NERR_DeviceNotShared

constexpr uint32_t kStypeDisktree = 0x00000000;
constexpr uint32_t kStypeIpcHidden = 0x80000003;  // STYPE_IPC | STYPE_SPECIAL

constexpr uint32_t kPlatformIdNt = 500;
// SV_TYPE_WORKSTATION | SV_TYPE_SERVER | SV_TYPE_NT | SV_TYPE_SERVER_NT
constexpr uint32_t kServerType = 0x00009003;
constexpr uint32_t kVersionMajor = 6;
constexpr uint32_t kVersionMinor = 1;

struct Share {
  std::string name;
  uint32_t type = kStypeDisktree;
  std::string remark;
  std::string path;  // as Windows shows it: "C:\srv\data"
};

std::string windows_path(const std::string& unix_path) {
  std::string p = "C:" + unix_path;
  std::replace(p.begin(), p.end(), '/', '\\');
  return p;
}

Share from_config(const config::ShareConfig& s) {
  return Share{s.name, kStypeDisktree, s.comment, windows_path(s.path)};
}

Share ipc_share() { return Share{"IPC$", kStypeIpcHidden, "Remote IPC", ""}; }

// The browseable shares, then the caller's own home (a [homes] share:
// browseable as Samba makes it, whatever [homes] says, which only decides
// whether "homes" itself is listed), then IPC$ (Windows also lists it last
// among the special shares). Sticky shares (NetrShareEnumSticky) are the
// ones kept in the configuration: all but IPC$ and the home.
std::vector<Share> enum_shares(const RpcContext& rpc, bool sticky_only = false) {
  const config::Config& cfg = *rpc.config;
  std::vector<Share> out;
  for (const auto& s : cfg.shares) {
    if (s.browseable && !iequals(s.name, "IPC$")) out.push_back(from_config(s));
  }
  if (cfg.homes && cfg.homes->browseable) out.push_back(Share{"homes", kStypeDisktree, cfg.homes->comment, ""});
  if (sticky_only) return out;
  if (!rpc.home_share.empty()) out.push_back(Share{rpc.home_share, kStypeDisktree, "Home directory of " + rpc.home_share, ""});
  out.push_back(ipc_share());
  return out;
}

std::optional<Share> find_share(const RpcContext& rpc, std::string_view name) {
  if (iequals(name, "IPC$")) return ipc_share();
  if (const auto* s = rpc.config->find_share(name)) return from_config(*s);
  if (!rpc.home_share.empty() && iequals(name, rpc.home_share))
    return Share{rpc.home_share, kStypeDisktree, "Home directory of " + rpc.home_share, ""};
  return std::nullopt;
}

// Is the caller named by "admin users"? Never a guest or anonymous caller.
bool is_admin(const CallContext& ctx) {
  if (ctx.rpc.user.empty() || ctx.rpc.is_guest) return false;
  for (const auto& name : ctx.rpc.config->global.admin_users)
    if (iequals(name, ctx.rpc.user)) return true;
  return false;
}

// Levels 2 and 502 show local paths (and 502 the security descriptor):
// only to administrators, as Windows keeps them to Administrators and
// Server Operators (MS-SRVS 3.1.4.8 and 3.1.4.10 access checks). Anonymous
// and guest callers may not enumerate at level 501 either, as on Windows.
bool level_denied(uint32_t level, const CallContext& ctx, bool enumeration) {
  if (level == 2 || level == 502) return !is_admin(ctx);
  return enumeration && level == 501 && (ctx.rpc.user.empty() || ctx.rpc.is_guest);
}

bool share_level_ok(uint32_t level, bool enumeration) {
  switch (level) {
    case 0: case 1: case 2: case 501: case 502: return true;
    case 1005: return !enumeration;  // not an arm of SHARE_ENUM_UNION
    default: return false;
  }
}

// The fixed part of one SHARE_INFO_<level>; strings are deferred.
void write_share_fixed(NdrWriter& w, uint32_t level, const Share& s) {
  if (level == 1005) {
    w.u32(0);  // shi1005_flags: manual caching, nothing special
    return;
  }
  w.unique_wstring(s.name);
  if (level == 0) return;
  w.u32(s.type);
  w.unique_wstring(s.remark);
  if (level == 501) {
    w.u32(0);  // shi501_flags
    return;
  }
  if (level == 1) return;
  w.u32(0);            // permissions (share-level security is obsolete)
  w.u32(0xFFFFFFFF);   // max_uses: unlimited
  w.u32(0);            // current_uses
  w.unique_wstring(s.path);
  w.pointer(false);    // passwd
  if (level == 502) {
    w.u32(0);          // reserved (the SD length)
    w.pointer(false);  // security_descriptor
  }
}

struct EnumRequest {
  uint32_t level = 0;
  bool resume_present = false;
};

EnumRequest parse_enum(NdrReader& r) {
  EnumRequest req;
  (void)r.unique_wstring();  // ServerName: always us
  req.level = r.u32();
  if (r.u32() != req.level) r.fail();  // the union's discriminant repeats Level
  if (r.pointer() != 0) {
    (void)r.u32();                    // EntriesRead
    if (r.pointer() != 0) r.fail();   // clients never send entries in
  }
  (void)r.u32();  // PreferedMaximumLength: everything fits anyway
  req.resume_present = r.pointer() != 0;
  if (req.resume_present) (void)r.u32();
  return req;
}

CallResult share_enum(ByteSpan stub, CallContext& ctx, bool sticky_only) {
  NdrReader r(stub);
  auto req = parse_enum(r);
  if (!r.ok()) return fault_result(kFaultNdr);
  auto shares = enum_shares(ctx.rpc, sticky_only);
  // MS-SRVS 3.1.4.21: NetrShareEnumSticky has no level 501.
  bool level_ok = share_level_ok(req.level, true) && !(sticky_only && req.level == 501);
  if (level_ok && level_denied(req.level, ctx, true)) {
    CallResult denied;
    NdrWriter w(denied.stub);
    w.u32(req.level);
    w.u32(req.level);
    w.pointer(false);
    w.u32(0);  // TotalEntries
    if (w.pointer(req.resume_present)) w.u32(0);
    w.u32(kWerrAccessDenied);
    return denied;
  }
  CallResult res;
  NdrWriter w(res.stub);
  w.u32(req.level);
  w.u32(req.level);
  if (level_ok && w.pointer(true)) {
    w.defer([&w, &shares, level = req.level] {
      w.u32(uint32_t(shares.size()));
      w.pointer(true);
      w.defer([&w, &shares, level] {
        w.u32(uint32_t(shares.size()));
        for (const auto& s : shares) write_share_fixed(w, level, s);
      });
    });
  } else if (!level_ok) {
    w.pointer(false);
  }
  w.flush();
  w.u32(level_ok ? uint32_t(shares.size()) : 0);  // TotalEntries
  if (w.pointer(req.resume_present)) w.u32(0);    // ResumeHandle: all returned
  w.u32(level_ok ? kWerrOk : kWerrInvalidLevel);
  return res;
}

CallResult share_get_info(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  (void)r.unique_wstring();
  std::string net_name = r.wstring();
  uint32_t level = r.u32();
  if (!r.ok()) return fault_result(kFaultNdr);
  auto share = find_share(ctx.rpc, net_name);
  bool level_ok = share_level_ok(level, false);
  bool denied = level_ok && level_denied(level, ctx, false);
  CallResult res;
  NdrWriter w(res.stub);
  w.u32(level);
  if (share && level_ok && !denied && w.pointer(true)) {
    w.defer([&w, &share, level] { write_share_fixed(w, level, *share); });
  } else if (!share || !level_ok || denied) {
    w.pointer(false);
  }
  w.flush();
  w.u32(!level_ok ? kWerrInvalidLevel : denied ? kWerrAccessDenied : share ? kWerrOk : kWerrNetNameNotFound);
  return res;
}

// NetrShareCheck (MS-SRVS 3.1.4.13): is this local path (as the share
// paths are shown, "C:\srv\data") shared, and as what.
CallResult share_check(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  (void)r.unique_wstring();
  std::string device = r.wstring();
  if (!r.ok()) return fault_result(kFaultNdr);
  std::optional<uint32_t> type;
  for (const auto& s : enum_shares(ctx.rpc)) {
    if (!type && iequals(s.path, device)) type = s.type;  // IPC$ has the empty path
  }
  for (const auto& s : ctx.rpc.config->shares) {  // hidden shares too
    if (!type && iequals(windows_path(s.path), device)) type = kStypeDisktree;
  }
  CallResult res;
  NdrWriter w(res.stub);
  w.u32(type.value_or(0));
  w.u32(type ? kWerrOk : kWerrDeviceNotShared);
  return res;
}

void write_server_info(NdrWriter& w, uint32_t level, CallContext& ctx) {
  const auto& g = ctx.rpc.config->global;
  w.u32(kPlatformIdNt);
  w.unique_wstring(ctx.id.netbios);
  if (level == 100) return;
  w.u32(kVersionMajor);
  w.u32(kVersionMinor);
  w.u32(kServerType);
  w.unique_wstring(g.server_string);
  if (level == 101) return;
  w.u32(0xFFFFFFFF);  // sv102_users: no limit
  w.u32(0xFFFFFFFF);  // sv102_disc: never auto-disconnect
  w.u32(0);           // sv102_hidden: visible in browse lists
  w.u32(240);         // sv102_announce, seconds (the documented default)
  w.u32(3000);        // sv102_anndelta, milliseconds
  w.u32(0);           // sv102_licenses
  w.unique_wstring("C:\\");  // sv102_userpath
}

CallResult server_get_info(ByteSpan stub, CallContext& ctx) {
  NdrReader r(stub);
  (void)r.unique_wstring();
  uint32_t level = r.u32();
  if (!r.ok()) return fault_result(kFaultNdr);
  bool level_ok = level == 100 || level == 101 || level == 102;
  CallResult res;
  NdrWriter w(res.stub);
  w.u32(level);
  if (level_ok) {
    w.pointer(true);
    w.defer([&w, level, &ctx] { write_server_info(w, level, ctx); });
  } else {
    w.pointer(false);
  }
  w.flush();
  w.u32(level_ok ? kWerrOk : kWerrInvalidLevel);
  return res;
}

CallResult srvsvc_call(uint16_t opnum, ByteSpan stub, CallContext& ctx) {
  switch (opnum) {
    case 15: return share_enum(stub, ctx, false);  // NetrShareEnum
    case 16: return share_get_info(stub, ctx);     // NetrShareGetInfo
    case 20: return share_check(stub, ctx);        // NetrShareCheck
    case 36: return share_enum(stub, ctx, true);   // NetrShareEnumSticky
    case 21: return server_get_info(stub, ctx);  // NetrServerGetInfo
    default: return fault_result(kFaultOpRangeError);
  }
}

}  // namespace

const RpcInterface& srvsvc_interface() {
  static const RpcInterface iface{"srvsvc", {Uuid::parse("4b324fc8-1670-01d3-1278-5a47bf6ee188"), 3, 0},
                                  srvsvc_call};
  return iface;
}

}  // namespace ringsmb::rpc
