// The key tables: normalized key name -> handler. Adding a key means adding a
// row here (and a line in docs/configuration.md).

#include <arpa/inet.h>

#include "config/config_internal.hpp"

namespace ringsmb::config::detail {

namespace {

using GlobalHandler = std::expected<void, Err> (*)(GlobalConfig&, GlobalState&, std::string_view);
using ShareHandler = std::expected<void, Err> (*)(ShareConfig&, std::string_view);

struct GlobalKey {
  std::string_view name;  // normalized
  GlobalHandler apply;
};
struct ShareKey {
  std::string_view name;  // normalized
  ShareHandler apply;
};

// Assigns the parsed value or forwards the parser's message.
template <typename T, typename U>
std::expected<void, Err> store(T& dst, std::expected<U, Err> v) {
  if (!v) return std::unexpected(std::move(v.error()));
  dst = std::move(*v);
  return {};
}

std::expected<std::string, Err> non_empty(std::string_view v, std::string_view what) {
  v = trim(v);
  if (v.empty()) return std::unexpected(cat(what, " must not be empty"));
  return std::string(v);
}

std::expected<void, Err> set_ports(GlobalConfig& g, GlobalState&, std::string_view v) {
  return store(g.tcp_ports, parse_port_list(v));
}

std::expected<void, Err> set_min_protocol(GlobalConfig& g, GlobalState& st, std::string_view v) {
  st.min_protocol_line = st.current_line;
  return store(g.min_protocol, parse_dialect(v, false));
}

std::expected<void, Err> set_max_protocol(GlobalConfig& g, GlobalState& st, std::string_view v) {
  st.max_protocol_line = st.current_line;
  return store(g.max_protocol, parse_dialect(v, true));
}

std::expected<void, Err> set_encryption(GlobalConfig& g, GlobalState&, std::string_view v) {
  return store(g.smb3_encryption, parse_encryption(v));
}

// "metrics listen = [HOST:]PORT" ([V6]:PORT for IPv6), or "no": HOST is a
// numeric address, 127.0.0.1 when left out.
std::expected<void, Err> set_metrics_listen(GlobalConfig& g, GlobalState&, std::string_view v) {
  v = trim(v);
  auto off = parse_bool_value(v);
  if (off && !*off) {
    g.metrics_port = 0;
    return {};
  }
  std::string host = "127.0.0.1";
  std::string_view port = v;
  if (size_t colon = v.rfind(':'); colon != std::string_view::npos) {
    std::string_view h = v.substr(0, colon);
    if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
    host = std::string(h);
    port = v.substr(colon + 1);
  }
  unsigned char buf[16];
  if (inet_pton(AF_INET, host.c_str(), buf) != 1 && inet_pton(AF_INET6, host.c_str(), buf) != 1)
    return std::unexpected(cat("metrics listen: '", host, "' is not a numeric IPv4 or IPv6 address"));
  auto p = parse_ranged(port, 1, 65535);
  if (!p) return std::unexpected(cat("metrics listen: ", p.error()));
  g.metrics_host = host;
  g.metrics_port = uint16_t(*p);
  return {};
}

// A byte count in LO..HI (K, M, G suffixes), for the 64-bit sizes.
std::expected<uint64_t, Err> parse_bytes(std::string_view v, uint64_t lo, uint64_t hi) {
  auto n = parse_size(v);
  if (!n) return std::unexpected(n.error());
  if (*n < lo || *n > hi) return std::unexpected(cat(trim(v), " is out of range (", lo, "..", hi, ")"));
  return *n;
}

std::expected<void, Err> set_log_level(GlobalConfig& g, GlobalState& st, std::string_view v) {
  // Samba allows "3 auth:5 passdb:2"; only the leading level means anything
  // here, and the per-class parts are reported rather than rejected so an
  // existing smb.conf still loads.
  auto toks = split_list(v, false);
  if (!toks) return std::unexpected(toks.error());
  if (toks->empty()) return std::unexpected("log level must not be empty");
  if (toks->size() > 1) st.notes.push_back("per-class log levels are ignored");
  return store(g.log_level, parse_ranged((*toks)[0], 0, 10));
}

std::expected<void, Err> set_interfaces(GlobalConfig& g, GlobalState&, std::string_view v) {
  auto list = parse_interfaces(v);
  if (!list) return std::unexpected(list.error());
  g.interfaces = std::move(list->entries);
  g.interface_overrides = std::move(list->overrides);
  return {};
}

constexpr GlobalKey kGlobalKeys[] = {
    {"tcpport", set_ports},
    {"smbports", set_ports},
    {"interfaces", set_interfaces},
    {"metricslisten", set_metrics_listen},
    {"bindinterfacesonly",
     [](GlobalConfig& g, GlobalState&, std::string_view v) { return store(g.bind_interfaces_only, parse_bool_value(v)); }},
    {"usersdb",
     [](GlobalConfig& g, GlobalState&, std::string_view v) { return store(g.users_db, non_empty(v, "users db")); }},
    {"statedirectory",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.state_directory, non_empty(v, "state directory"));
     }},
    {"serverminprotocol", set_min_protocol},
    {"minprotocol", set_min_protocol},
    {"servermaxprotocol", set_max_protocol},
    {"maxprotocol", set_max_protocol},
    {"protocol", set_max_protocol},
    {"serversigning",
     [](GlobalConfig& g, GlobalState&, std::string_view v) { return store(g.signing, parse_signing(v)); }},
    {"smb3encryption", set_encryption},
    {"serversmbencrypt", set_encryption},
    {"servermultichannelsupport",
     [](GlobalConfig& g, GlobalState&, std::string_view v) { return store(g.multi_channel, parse_bool_value(v)); }},
    {"maptoguest",
     [](GlobalConfig& g, GlobalState&, std::string_view v) { return store(g.map_to_guest, parse_map_to_guest(v)); }},
    {"dataplane",
     [](GlobalConfig& g, GlobalState&, std::string_view v) { return store(g.data_plane, parse_data_plane(v)); }},
    {"guestaccount",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.guest_account, non_empty(v, "guest account"));
     }},
    {"adminusers",
     [](GlobalConfig& g, GlobalState&, std::string_view v) { return store(g.admin_users, split_list(v, true)); }},
    {"workgroup",
     [](GlobalConfig& g, GlobalState&, std::string_view v) { return store(g.workgroup, parse_netbios(v, "workgroup")); }},
    {"realm",
     [](GlobalConfig& g, GlobalState&, std::string_view v) -> std::expected<void, Err> {
       g.realm = std::string(trim(v));
       for (char& c : g.realm) c = char(toupper(static_cast<unsigned char>(c)));
       return {};
     }},
    {"security",
     [](GlobalConfig& g, GlobalState&, std::string_view v) { return store(g.security, parse_security(v)); }},
    {"kerberosmethod",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.kerberos_method, parse_kerberos_method(v));
     }},
    {"dedicatedkeytabfile",
     [](GlobalConfig& g, GlobalState&, std::string_view v) -> std::expected<void, Err> {
       g.dedicated_keytab_file = std::string(trim(v));
       return {};
     }},
    {"netbiosname",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.netbios_name, parse_netbios(v, "netbios name"));
     }},
    {"serverstring",
     [](GlobalConfig& g, GlobalState&, std::string_view v) -> std::expected<void, Err> {
       g.server_string = std::string(trim(v));
       return {};
     }},
    {"maxconnections",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.max_connections, parse_ranged(v, 0, 1000000));
     }},
    {"maxconnectionsperaddress",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.max_connections_per_address, parse_ranged(v, 0, 1000000));
     }},
    {"maxopenfiles",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.max_open_files, parse_ranged(v, 1, 16u * 1024 * 1024));
     }},
    {"maxopenfilesperuser",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.max_open_files_per_user, parse_ranged(v, 1, 16u * 1024 * 1024));
     }},
    // At least one largest READ reply (8 MiB) must fit.
    {"maxsendqueuesize",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.max_send_queue_bytes, parse_ranged(v, 9 * 1024 * 1024, 1024u * 1024 * 1024));
     }},
    // At least what one extended attribute value holds: such a stream never
    // needs a sidecar.
    {"maxstreamsize",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.max_stream_bytes, parse_bytes(v, 64 * 1024, 1ull << 40));
     }},
    {"maxstreamspaceperuser",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.max_stream_space_per_user, parse_bytes(v, 0, 1ull << 40));
     }},
    {"maxnotifywatches",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.max_notify_watches, parse_ranged(v, 0, 1000000));
     }},
    {"logintimeout",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.login_timeout_s, parse_ranged(v, 1, 3600));
     }},
    {"smb2maxcredits",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.smb2_max_credits, parse_ranged(v, 1, 65535));
     }},
    // MS-SMB2 requires at least 64 KiB for the multi-credit sizes; 8 MiB is
    // what current Windows servers offer and bounds per-request buffers.
    {"smb2maxread",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.smb2_max_read, parse_ranged(v, 64 * 1024, 8 * 1024 * 1024));
     }},
    {"smb2maxwrite",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.smb2_max_write, parse_ranged(v, 64 * 1024, 8 * 1024 * 1024));
     }},
    {"smb2maxtrans",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.smb2_max_trans, parse_ranged(v, 64 * 1024, 8 * 1024 * 1024));
     }},
    {"deadtime",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.deadtime_minutes, parse_ranged(v, 0, 525600));
     }},
    {"loginfailuredelay",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.login_failure_delay_ms, parse_ranged(v, 0, 60000));
     }},
    {"loginfailuremaxdelay",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.login_failure_max_delay_ms, parse_ranged(v, 0, 300000));
     }},
    {"loginfailurewindow",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.login_failure_window_s, parse_ranged(v, 1, 86400));
     }},
    {"accountlockoutthreshold",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.account_lockout_threshold, parse_ranged(v, 0, 999));
     }},
    {"accountlockoutduration",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.account_lockout_duration_s, parse_ranged(v, 1, 86400));
     }},
    {"leasebreaktimeout",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.lease_break_timeout_ms, parse_ranged(v, 100, 300000));
     }},
    {"loglevel", set_log_level},
    {"debuglevel", set_log_level},
    {"workers",
     [](GlobalConfig& g, GlobalState&, std::string_view v) { return store(g.workers, parse_ranged(v, 0, 1024)); }},
    {"workerbusypoll",
     [](GlobalConfig& g, GlobalState&, std::string_view v) {
       return store(g.worker_busy_poll_us, parse_ranged(v, 0, 1000));
     }},
    {"bulkworkernice",
     [](GlobalConfig& g, GlobalState&, std::string_view v) { return store(g.bulk_worker_nice, parse_ranged(v, 0, 19)); }},
};

std::expected<std::string, Err> parse_share_path(std::string_view raw) {
  std::string_view v = trim(raw);
  if (v.empty()) return std::unexpected("path must not be empty");
  if (v.front() != '/') return std::unexpected(cat("path '", v, "' must be absolute"));
  // "/srv/x/" and "/srv/x" name the same directory; keep one spelling so
  // later path joins never produce "//".
  while (v.size() > 1 && v.back() == '/') v.remove_suffix(1);
  return std::string(v);
}

std::expected<bool, Err> parse_case_sensitive(std::string_view v) {
  // Samba's default "auto" means case-insensitive for SMB2 clients.
  std::string l = to_lower(trim(v));
  if (l == "auto" || l == "default") return false;
  return parse_bool_value(v);
}

std::expected<void, Err> set_writeable(ShareConfig& s, std::string_view v) {
  auto b = parse_bool_value(v);
  if (!b) return std::unexpected(b.error());
  s.read_only = !*b;
  return {};
}

// Samba's symlink settings, taken where ringsmb does what they say: names
// resolve beneath the share root, so a symlink never leads out of it
// ("wide links = no"), and one inside it is followed ("follow symlinks = yes").
std::expected<void, Err> refuse_wide_links(ShareConfig&, std::string_view v) {
  auto b = parse_bool_value(v);
  if (!b) return std::unexpected(b.error());
  if (*b) return std::unexpected(Err("wide links = yes is not supported: a symlink never leads out of a share"));
  return {};
}

std::expected<void, Err> refuse_no_follow_symlinks(ShareConfig&, std::string_view v) {
  auto b = parse_bool_value(v);
  if (!b) return std::unexpected(b.error());
  if (!*b) return std::unexpected(Err("follow symlinks = no is not supported: symlinks inside a share are followed"));
  return {};
}

std::expected<void, Err> set_guest_ok(ShareConfig& s, std::string_view v) { return store(s.guest_ok, parse_bool_value(v)); }
std::expected<void, Err> set_browseable(ShareConfig& s, std::string_view v) {
  return store(s.browseable, parse_bool_value(v));
}
std::expected<void, Err> set_share_encryption(ShareConfig& s, std::string_view v) {
  return store(s.smb3_encryption, parse_encryption(v));
}

std::expected<void, Err> set_user_list(std::vector<std::string>& dst, std::string_view v) {
  return store(dst, split_list(v, true));
}
std::expected<void, Err> set_hosts_allow(ShareConfig& s, std::string_view v) {
  return store(s.hosts_allow, parse_host_list(v));
}
std::expected<void, Err> set_hosts_deny(ShareConfig& s, std::string_view v) {
  return store(s.hosts_deny, parse_host_list(v));
}
std::expected<void, Err> set_create_mask(ShareConfig& s, std::string_view v) {
  return store(s.create_mask, parse_mode_mask(v));
}
std::expected<void, Err> set_directory_mask(ShareConfig& s, std::string_view v) {
  return store(s.directory_mask, parse_mode_mask(v));
}
std::expected<void, Err> set_force_group(ShareConfig& s, std::string_view v) {
  return store(s.force_group, parse_unix_name(v, "force group", true));
}

std::expected<void, Err> set_fruit_metadata(ShareConfig& s, std::string_view v) {
  std::string m = to_lower(trim(v));
  if (m == "stream") s.fruit.metadata = FruitOptions::Metadata::Stream;
  else if (m == "netatalk") s.fruit.metadata = FruitOptions::Metadata::Netatalk;
  else return std::unexpected(cat("fruit:metadata: '", trim(v), "' (use stream or netatalk)"));
  return {};
}

std::expected<void, Err> set_fruit_resource(ShareConfig& s, std::string_view v) {
  std::string m = to_lower(trim(v));
  if (m == "file") s.fruit.resource = FruitOptions::Resource::File;
  else if (m == "stream") s.fruit.resource = FruitOptions::Resource::Stream;
  else if (m == "xattr") s.fruit.resource = FruitOptions::Resource::Xattr;
  else return std::unexpected(cat("fruit:resource: '", trim(v), "' (use file, stream or xattr)"));
  return {};
}

// fruit:locking and fruit:encoding: Samba's netatalk interop, with
// Samba's values.
std::expected<void, Err> accept_fruit_value(std::string_view key, std::string_view v,
                                            std::initializer_list<std::string_view> ok) {
  std::string m = to_lower(trim(v));
  for (auto o : ok)
    if (m == o) return {};
  return std::unexpected(cat(key, ": '", trim(v), "' is not supported"));
}

#define FRUIT_BOOL(key, field) \
  {key, [](ShareConfig& s, std::string_view v) { return store(s.fruit.field, parse_bool_value(v)); }}

// Samba's synonyms are listed next to the key they stand for.
constexpr ShareKey kShareKeys[] = {
    {"path", [](ShareConfig& s, std::string_view v) { return store(s.path, parse_share_path(v)); }},
    {"comment",
     [](ShareConfig& s, std::string_view v) -> std::expected<void, Err> {
       s.comment = std::string(trim(v));
       return {};
     }},
    {"readonly", [](ShareConfig& s, std::string_view v) { return store(s.read_only, parse_bool_value(v)); }},
    {"writeable", set_writeable},
    {"writable", set_writeable},
    {"writeok", set_writeable},
    {"guestok", set_guest_ok},
    {"public", set_guest_ok},
    {"browseable", set_browseable},
    {"browsable", set_browseable},
    {"validusers", [](ShareConfig& s, std::string_view v) { return store(s.valid_users, split_list(v, true)); }},
    {"smb3encryption", set_share_encryption},
    {"serversmbencrypt", set_share_encryption},
    {"casesensitive", [](ShareConfig& s, std::string_view v) { return store(s.case_sensitive, parse_case_sensitive(v)); }},
    {"readlist", [](ShareConfig& s, std::string_view v) { return set_user_list(s.read_list, v); }},
    {"writelist", [](ShareConfig& s, std::string_view v) { return set_user_list(s.write_list, v); }},
    {"invalidusers", [](ShareConfig& s, std::string_view v) { return set_user_list(s.invalid_users, v); }},
    {"hostsallow", set_hosts_allow},
    {"allowhosts", set_hosts_allow},
    {"hostsdeny", set_hosts_deny},
    {"denyhosts", set_hosts_deny},
    {"createmask", set_create_mask},
    {"createmode", set_create_mask},
    {"directorymask", set_directory_mask},
    {"directorymode", set_directory_mask},
    {"forceuser",
     [](ShareConfig& s, std::string_view v) { return store(s.force_user, parse_unix_name(v, "force user", false)); }},
    {"forcegroup", set_force_group},
    {"group", set_force_group},
    {"hidedotfiles", [](ShareConfig& s, std::string_view v) { return store(s.hide_dot_files, parse_bool_value(v)); }},
    {"vetofiles", [](ShareConfig& s, std::string_view v) { return store(s.veto_files, parse_veto_list(v)); }},
    {"oplocks", [](ShareConfig& s, std::string_view v) { return store(s.oplocks, parse_bool_value(v)); }},
    {"smb2leases", [](ShareConfig& s, std::string_view v) { return store(s.smb2_leases, parse_bool_value(v)); }},
    {"streams", [](ShareConfig& s, std::string_view v) { return store(s.streams, parse_bool_value(v)); }},
    {"storedosattributes",
     [](ShareConfig& s, std::string_view v) { return store(s.store_dos_attributes, parse_bool_value(v)); }},
    {"ntaclsupport", [](ShareConfig& s, std::string_view v) { return store(s.nt_acl_support, parse_bool_value(v)); }},
    {"clientsymlinks", [](ShareConfig& s, std::string_view v) { return store(s.client_symlinks, parse_bool_value(v)); }},
    {"widelinks", refuse_wide_links},
    {"followsymlinks", refuse_no_follow_symlinks},
    {"aclflaginheritedcanonicalization",
     [](ShareConfig& s, std::string_view v) {
       return store(s.acl_flag_inherited_canonicalization, parse_bool_value(v));
     }},
    FRUIT_BOOL("fruit:aapl", aapl),
    FRUIT_BOOL("fruit:copyfile", copyfile),
    FRUIT_BOOL("fruit:nfs_aces", nfs_aces),
    FRUIT_BOOL("fruit:timemachine", time_machine),
    FRUIT_BOOL("fruit:posix_rename", posix_rename),
    FRUIT_BOOL("fruit:veto_appledouble", veto_appledouble),
    FRUIT_BOOL("fruit:wipe_intentionally_left_blank_rfork", wipe_intentionally_left_blank_rfork),
    FRUIT_BOOL("fruit:delete_empty_adfiles", delete_empty_adfiles),
    FRUIT_BOOL("fruit:zero_file_id", zero_file_id),
    {"fruit:timemachinemaxsize",
     [](ShareConfig& s, std::string_view v) {
       return store(s.fruit.time_machine_max_size, parse_bytes(v, 0, 1ull << 60));
     }},
    {"fruit:model",
     [](ShareConfig& s, std::string_view v) { return store(s.fruit.model, non_empty(v, "fruit:model")); }},
    {"fruit:metadata", set_fruit_metadata},
    {"fruit:resource", set_fruit_resource},
    {"fruit:ressource", set_fruit_resource},  // Samba's old spelling
    {"fruit:locking",
     [](ShareConfig& s, std::string_view v) {
       auto ok = accept_fruit_value("fruit:locking", v, {"none", "netatalk"});
       if (ok) s.fruit.netatalk_locking = to_lower(trim(v)) == "netatalk";
       return ok;
     }},
    {"fruit:encoding",
     [](ShareConfig&, std::string_view v) { return accept_fruit_value("fruit:encoding", v, {"native", "private"}); }},
};
#undef FRUIT_BOOL

}  // namespace

std::expected<bool, Err> apply_global_key(GlobalConfig& g, GlobalState& st, const std::string& key,
                                          std::string_view value) {
  for (const auto& k : kGlobalKeys) {
    if (k.name != key) continue;
    auto r = k.apply(g, st, value);
    if (!r) return std::unexpected(std::move(r.error()));
    return true;
  }
  return false;
}

bool is_global_key(const std::string& key) {
  for (const auto& k : kGlobalKeys)
    if (k.name == key) return true;
  return false;
}

std::expected<bool, Err> apply_share_key(ShareConfig& s, const std::string& key, std::string_view value) {
  for (const auto& k : kShareKeys) {
    if (k.name != key) continue;
    auto r = k.apply(s, value);
    if (!r) return std::unexpected(std::move(r.error()));
    return true;
  }
  auto recycle = apply_recycle_key(s, key, value);  // and "vfs objects"
  if (!recycle || *recycle) return recycle;
  return apply_shadow_key(s, key, value);
}

}  // namespace ringsmb::config::detail
