// STARTING_UP from ringsmb.conf, and the list of configured options the
// kernel's server cannot honour (reported at start-up, never dropped
// silently).
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>

#include <cstring>

#include "kmod-shim/ksmbd_abi.hpp"
#include "kmod-shim/ksmbd_shim.hpp"
#include "kmod-shim/ksmbd_structs.hpp"
#include "rpc/interface.hpp"

namespace ringsmb::kmod {

namespace {

// ksmbd's defaults where ringsmbd's differ, as ksmbd.mountd (ksmbd-tools)
// sends them when ksmbd.conf does not set the key. For the transfer sizes
// and credits the shim sends 0, which leaves the module's own (4 MiB read
// and write, 1 MiB trans, 8192 credits, what ksmbd-tools documents).
constexpr uint32_t kKsmbdMaxConnections = 256;
constexpr uint32_t kKsmbdMaxOpenFiles = 10000;
constexpr uint32_t kFileSupportsSparseFiles = 0x40;  // share:fake_fscaps = 64

const char* protocol_name(uint16_t dialect) {
  switch (dialect) {
    case config::kDialect202: return "SMB2_02";
    case config::kDialect210: return "SMB2_10";
    case config::kDialect300: return "SMB3_00";
    case config::kDialect302: return "SMB3_02";
    default: return "SMB3_11";
  }
}

int32_t signing_option(config::SigningPolicy p) {
  switch (p) {
    case config::SigningPolicy::Mandatory: return abi::kOptMandatory;
    case config::SigningPolicy::Disabled: return abi::kOptDisabled;
    default: return abi::kOptAuto;
  }
}

// The interface whose address is ADDRESS ("10.0.0.1", "fe80::1", with or
// without a "/prefix"), or ADDRESS itself when it names an interface.
std::optional<std::string> interface_for(std::string address) {
  if (auto slash = address.find('/'); slash != std::string::npos) address.resize(slash);
  if (if_nametoindex(address.c_str()) != 0) return address;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  std::optional<std::string> found;
  for (ifaddrs* a = list; a && !found; a = a->ifa_next) {
    if (!a->ifa_addr) continue;
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ifa_addr->sa_family == AF_INET)
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
    else if (a->ifa_addr->sa_family == AF_INET6)
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr, text, sizeof text);
    if (address == text) found = a->ifa_name;
  }
  freeifaddrs(list);
  return found;
}

// "bind interfaces only": ksmbd binds by interface name, each NUL-ended.
Bytes interface_list(const config::GlobalConfig& g, std::vector<std::string>& warnings) {
  Bytes list;
  if (!g.bind_interfaces_only) return list;
  for (const auto& entry : g.interfaces) {
    auto name = interface_for(entry);
    if (!name) {
      warnings.push_back("interfaces: '" + entry + "' is no interface name or address of this host; skipped");
      continue;
    }
    list.insert(list.end(), name->begin(), name->end());
    list.push_back(0);
  }
  if (list.empty())
    warnings.push_back("bind interfaces only: no interface found; ksmbd listens on every interface");
  return list;
}

void global_warnings(const config::GlobalConfig& g, std::vector<std::string>& w) {
  if (g.tcp_ports.size() > 1) w.push_back("tcp port: ksmbd listens on one port; using " + std::to_string(g.tcp_ports[0]));
  if (g.smb3_encryption == config::EncryptionPolicy::Desired)
    w.push_back("smb3 encryption = desired: ksmbd encrypts only sessions whose client asks for it");
  if (g.map_to_guest == config::MapToGuest::BadPassword)
    w.push_back("map to guest = bad password: not possible, the kernel checks passwords; treated as never");
  if (g.account_lockout_threshold > 0)
    w.push_back("account lockout threshold: not applied, the kernel checks passwords");
}

// ksmbd has one leases switch for the whole server, off by default: on
// when a share that names "smb2 leases" (or [global], for every share)
// turns them on.
bool ksmbd_leases(const config::Config& cfg) {
  for (const auto& s : cfg.shares)
    if (s.keys_set.contains("smb2leases") && s.smb2_leases) return true;
  return false;
}

void share_warnings(const config::Config& cfg, std::vector<std::string>& w) {
  bool leases = ksmbd_leases(cfg);
  for (const auto& s : cfg.shares) {
    std::string where = "[" + s.name + "] ";
    if (s.case_sensitive) w.push_back(where + "case sensitive: ksmbd is always case-insensitive");
    if (s.smb3_encryption) w.push_back(where + "smb3 encryption: ksmbd has only the [global] setting");
    if (!s.force_group.empty() && s.force_group[0] == '+')
      w.push_back(where + "force group = +group: ksmbd forces the group for everyone");
    if (leases && !s.smb2_leases)
      w.push_back(where + "smb2 leases = no: ksmbd has one setting for every share; leases stay on");
  }
}

// The sizes, limits and flags ksmbd tunes itself: the admin's value where
// ringsmb.conf sets the key, otherwise ksmbd's default, not ringsmbd's.
// ringsmbd's defaults suit ringsmbd: ksmbd allocates and zeroes a response
// buffer of max trans for every IOCTL, QUERY_DIRECTORY and compound, so
// ringsmbd's 8 MiB made it 4-9x slower per file.
void put_tuning(const config::Config& cfg, abi::StartupRequest& req) {
  const auto& g = cfg.global;
  auto set_or = [&](const char* key, uint32_t value, uint32_t ksmbd_default) {
    return g.keys_set.contains(key) ? value : ksmbd_default;
  };
  req.smb2_max_write = set_or("smb2maxwrite", g.smb2_max_write, 0);  // 0: the module keeps its own
  req.smb2_max_read = set_or("smb2maxread", g.smb2_max_read, 0);
  req.smb2_max_trans = set_or("smb2maxtrans", g.smb2_max_trans, 0);
  req.smb2_max_credits = set_or("smb2maxcredits", g.smb2_max_credits, 0);
  req.max_connections = set_or("maxconnections", g.max_connections, kKsmbdMaxConnections);
  // The module takes this as its open-file limit as given (0 would refuse
  // every open: EMFILE); the parser allows no 0.
  req.file_max = set_or("maxopenfiles", g.max_open_files, kKsmbdMaxOpenFiles);
  req.share_fake_fscaps = kFileSupportsSparseFiles;
  if (ksmbd_leases(cfg)) req.flags |= abi::kGlobalLeases;
}

}  // namespace

Bytes make_startup_request(const config::Config& cfg, std::vector<std::string>& warnings) {
  const auto& g = cfg.global;
  auto req = zeroed<abi::StartupRequest>();
  if (g.smb3_encryption == config::EncryptionPolicy::Required) req.flags |= abi::kGlobalEncryption;
  req.signing = signing_option(g.signing);
  put_string(req.min_protocol, protocol_name(g.min_protocol));
  put_string(req.max_protocol, protocol_name(g.max_protocol));
  put_string(req.netbios_name, g.netbios_name);
  put_string(req.workgroup, g.workgroup);
  put_string(req.server_string, g.server_string);
  req.tcp_port = g.tcp_ports.empty() ? 445 : g.tcp_ports[0];
  req.deadtime_minutes = g.deadtime_minutes;
  put_tuning(cfg, req);
  // The machine SID the RPC pipes report, so both agree on the domain.
  rpc::Sid sid = rpc::derive_machine_sid(g.netbios_name);
  for (size_t i = 0; i < 3 && i + 1 < sid.sub.size(); ++i) req.domain_sub_auth[i] = sid.sub[i + 1];
  Bytes ifcs = interface_list(g, warnings);
  req.ifc_list_size = uint32_t(ifcs.size());
  global_warnings(g, warnings);
  share_warnings(cfg, warnings);
  return struct_bytes(req, ifcs);
}

}  // namespace ringsmb::kmod
