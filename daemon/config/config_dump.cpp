#include "config/config_dump.hpp"

#include <cstdio>

namespace ringsmb::config {

namespace {

std::string yes_no(bool b) { return b ? "yes" : "no"; }

std::string num(uint64_t n) { return std::to_string(n); }

std::string octal(uint32_t mode) {
  char buf[8];
  snprintf(buf, sizeof buf, "%04o", mode);
  return buf;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// `interfaces` as it parses back: entries with options quoted, as Samba writes them.
std::string interfaces_text(const GlobalConfig& g) {
  std::vector<std::string> out;
  for (const std::string& entry : g.interfaces) {
    std::string text = entry;
    for (const InterfaceOverride& o : g.interface_overrides) {
      if (o.entry != entry) continue;
      std::vector<std::string> opts;
      if (o.rss) opts.push_back("capability=RSS");
      if (o.rdma) opts.push_back("capability=RDMA");
      if (o.speed_bps) opts.push_back("speed=" + num(o.speed_bps));
      if (o.if_index) opts.push_back("if_index=" + num(o.if_index));
      text = "\"" + entry + (opts.empty() ? "" : ";" + join(opts, ",")) + "\"";
      break;
    }
    out.push_back(std::move(text));
  }
  return join(out, " ");
}

const char* signing_name(SigningPolicy p) {
  switch (p) {
    case SigningPolicy::Auto: return "auto";
    case SigningPolicy::Mandatory: return "mandatory";
    case SigningPolicy::Disabled: return "disabled";
  }
  return "?";
}

const char* kerberos_method_name(KerberosMethod m) {
  switch (m) {
    case KerberosMethod::SecretsOnly: return "secrets only";
    case KerberosMethod::DedicatedKeytab: return "dedicated keytab";
    case KerberosMethod::SystemKeytab: return "system keytab";
    case KerberosMethod::SecretsAndKeytab: return "secrets and keytab";
  }
  return "secrets only";
}

const char* map_to_guest_name(MapToGuest m) {
  switch (m) {
    case MapToGuest::Never: return "never";
    case MapToGuest::BadUser: return "bad user";
    case MapToGuest::BadPassword: return "bad password";
  }
  return "?";
}

std::string metrics_listen(const GlobalConfig& g) {
  if (g.metrics_port == 0) return "no";
  bool v6 = g.metrics_host.find(':') != std::string::npos;
  return (v6 ? "[" + g.metrics_host + "]" : g.metrics_host) + ":" + num(g.metrics_port);
}

std::string veto_text(const std::vector<std::string>& patterns) {
  if (patterns.empty()) return "";
  return "/" + join(patterns, "/") + "/";
}

}  // namespace

const char* encryption_name(EncryptionPolicy p) {
  switch (p) {
    case EncryptionPolicy::Off: return "off";
    case EncryptionPolicy::Desired: return "desired";
    case EncryptionPolicy::Required: return "required";
  }
  return "?";
}

std::string dialect_name(uint16_t d) {
  char buf[16];
  snprintf(buf, sizeof buf, "SMB%x_%02x", unsigned(d >> 8), unsigned(d & 0xff));
  return buf;
}

std::string user_list_text(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& e : list) {
    bool quote = e.find_first_of(" \t,") != std::string::npos;
    // @"Domain Users": the quotes go around the name, after the marker.
    size_t marker = (quote && !e.empty() && (e[0] == '@' || e[0] == '+' || e[0] == '&')) ? 1 : 0;
    std::string item = quote ? e.substr(0, marker) + "\"" + e.substr(marker) + "\"" : e;
    out += (out.empty() ? "" : ", ") + item;
  }
  return out;
}

std::vector<Setting> global_settings(const GlobalConfig& g) {
  std::vector<std::string> ports;
  for (uint16_t p : g.tcp_ports) ports.push_back(num(p));
  return {
      {"workgroup", g.workgroup},
      {"netbios name", g.netbios_name},
      {"security", g.security == SecurityMode::Ads ? "ads" : "user"},
      {"realm", g.realm},
      {"kerberos method", kerberos_method_name(g.kerberos_method)},
      {"dedicated keytab file", g.dedicated_keytab_file},
      {"server string", g.server_string},
      {"tcp port", join(ports, " ")},
      {"interfaces", interfaces_text(g)},
      {"bind interfaces only", yes_no(g.bind_interfaces_only)},
      {"server min protocol", dialect_name(g.min_protocol)},
      {"server max protocol", dialect_name(g.max_protocol)},
      {"server signing", signing_name(g.signing)},
      {"server multi channel support", yes_no(g.multi_channel)},
      {"smb3 encryption", encryption_name(g.smb3_encryption)},
      {"map to guest", map_to_guest_name(g.map_to_guest)},
      {"guest account", g.guest_account},
      {"admin users", user_list_text(g.admin_users)},
      {"users db", g.users_db},
      {"state directory", g.state_directory},
      {"data plane", g.data_plane == DataPlane::Ksmbd ? "ksmbd" : "ringsmbd"},
      {"log level", num(uint32_t(g.log_level))},
      {"metrics listen", metrics_listen(g)},
      {"max connections", num(g.max_connections)},
      {"max connections per address", num(g.max_connections_per_address)},
      {"max open files", num(g.max_open_files)},
      {"max open files per user", num(g.max_open_files_per_user)},
      {"max send queue size", num(g.max_send_queue_bytes)},
      {"max notify watches", num(g.max_notify_watches)},
      {"login timeout", num(g.login_timeout_s)},
      {"deadtime", num(g.deadtime_minutes)},
      {"login failure delay", num(g.login_failure_delay_ms)},
      {"login failure max delay", num(g.login_failure_max_delay_ms)},
      {"login failure window", num(g.login_failure_window_s)},
      {"account lockout threshold", num(g.account_lockout_threshold)},
      {"account lockout duration", num(g.account_lockout_duration_s)},
      {"lease break timeout", num(g.lease_break_timeout_ms)},
      {"smb2 max credits", num(g.smb2_max_credits)},
      {"smb2 max read", num(g.smb2_max_read)},
      {"smb2 max write", num(g.smb2_max_write)},
      {"smb2 max trans", num(g.smb2_max_trans)},
      {"workers", num(g.workers)},
      {"worker busy poll", num(g.worker_busy_poll_us)},
      {"bulk worker nice", num(g.bulk_worker_nice)},
  };
}

std::vector<Setting> share_settings(const ShareConfig& s, const GlobalConfig& global) {
  return {
      {"path", s.path},
      {"comment", s.comment},
      {"read only", yes_no(s.read_only)},
      {"guest ok", yes_no(s.guest_ok)},
      {"browseable", yes_no(s.browseable)},
      {"hosts allow", join(s.hosts_allow, " ")},
      {"hosts deny", join(s.hosts_deny, " ")},
      {"smb3 encryption", encryption_name(s.smb3_encryption.value_or(global.smb3_encryption))},
      {"valid users", user_list_text(s.valid_users)},
      {"invalid users", user_list_text(s.invalid_users)},
      {"read list", user_list_text(s.read_list)},
      {"write list", user_list_text(s.write_list)},
      {"force user", s.force_user},
      {"force group", s.force_group},
      {"create mask", octal(s.create_mask)},
      {"directory mask", octal(s.directory_mask)},
      {"case sensitive", yes_no(s.case_sensitive)},
      {"hide dot files", yes_no(s.hide_dot_files)},
      {"veto files", veto_text(s.veto_files)},
      {"oplocks", yes_no(s.oplocks)},
      {"smb2 leases", yes_no(s.smb2_leases)},
      {"streams", yes_no(s.streams)},
      {"store dos attributes", yes_no(s.store_dos_attributes)},
      {"nt acl support", yes_no(s.nt_acl_support)},
      {"acl flag inherited canonicalization", yes_no(s.acl_flag_inherited_canonicalization)},
      {"client symlinks", yes_no(s.client_symlinks)},
  };
}

std::string render_section(const std::string& name, const std::vector<Setting>& settings) {
  std::string out = "[" + name + "]\n";
  for (const auto& [k, v] : settings) out += "\t" + k + " = " + v + "\n";
  return out;
}

}  // namespace ringsmb::config
