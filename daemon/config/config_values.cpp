// Value parsers for ringsmb.conf. Each returns a message without location; the
// section walker in config.cpp prefixes "FILE:LINE: ".
#include <algorithm>
#include <cctype>

#include "config/config_internal.hpp"
#include "config/host_match.hpp"

namespace ringsmb::config::detail {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

// Enumerated values compare like keys ("Bad User" == "baduser") so that the
// same spelling freedom applies to both sides of the '='.
std::string enum_form(std::string_view v) {
  std::string out;
  for (char c : v)
    if (!is_space(c) && c != '_' && c != '-') out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

}  // namespace

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::expected<std::vector<std::string>, Err> split_list(std::string_view v, bool quotes) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < v.size()) {
    if (is_space(v[i]) || v[i] == ',') {
      ++i;
      continue;
    }
    // A token runs to the next separator outside quotes, so @"Domain Users"
    // is one token "@Domain Users".
    std::string tok;
    while (i < v.size() && !is_space(v[i]) && v[i] != ',') {
      if (quotes && v[i] == '"') {
        size_t end = v.find('"', i + 1);
        if (end == std::string_view::npos) return std::unexpected("unterminated quote in list");
        tok.append(v.substr(i + 1, end - i - 1));
        i = end + 1;
      } else {
        tok.push_back(v[i++]);
      }
    }
    if (!trim(tok).empty()) out.push_back(std::move(tok));
  }
  return out;
}

std::expected<uint64_t, Err> parse_size(std::string_view raw) {
  std::string_view v = trim(raw);
  if (v.empty()) return std::unexpected("empty value where a number is expected");
  uint64_t n = 0;
  size_t i = 0;
  for (; i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])); ++i) {
    n = n * 10 + static_cast<uint64_t>(v[i] - '0');
    // Anything past 2^40 is nonsense for every key we have; stopping early
    // also keeps the multiplication below from overflowing.
    if (n > (uint64_t{1} << 40)) return std::unexpected(cat("'", v, "' is too large"));
  }
  if (i == 0) return std::unexpected(cat("'", v, "' is not a number"));
  std::string suffix = to_lower(trim(v.substr(i)));
  uint64_t mult = 1;
  if (suffix.empty()) mult = 1;
  else if (suffix == "k" || suffix == "kb" || suffix == "kib") mult = 1024;
  else if (suffix == "m" || suffix == "mb" || suffix == "mib") mult = 1024 * 1024;
  else if (suffix == "g" || suffix == "gb" || suffix == "gib") mult = 1024 * 1024 * 1024;
  else if (suffix == "t" || suffix == "tb" || suffix == "tib") mult = uint64_t{1} << 40;  // fruit:time machine max size = 4T
  else return std::unexpected(cat("'", v, "' is not a number"));
  if (n > UINT64_MAX / mult) return std::unexpected(cat("'", v, "' is too large"));
  return n * mult;
}

std::expected<uint32_t, Err> parse_ranged(std::string_view v, uint64_t lo, uint64_t hi) {
  auto n = parse_size(v);
  if (!n) return std::unexpected(n.error());
  if (*n < lo || *n > hi)
    return std::unexpected(cat(trim(v), " is out of range (", lo, "..", hi, ")"));
  return static_cast<uint32_t>(*n);
}

std::expected<bool, Err> parse_bool_value(std::string_view v) {
  bool b = false;
  if (!parse_bool(v, b)) return std::unexpected(cat("'", trim(v), "' is not a boolean (use yes or no)"));
  return b;
}

std::expected<uint16_t, Err> parse_dialect(std::string_view raw, bool as_max) {
  std::string v = to_lower(trim(raw));
  if (v == "smb2_02") return kDialect202;
  if (v == "smb2_10") return kDialect210;
  if (v == "smb3_00") return kDialect300;
  if (v == "smb3_02") return kDialect302;
  if (v == "smb3_11") return kDialect311;
  if (v == "smb2") return as_max ? kDialect210 : kDialect202;
  if (v == "smb3") return as_max ? kDialect311 : kDialect300;
  if (v == "nt1" || v == "lanman1" || v == "lanman2" || v == "core" || v == "coreplus")
    return std::unexpected("SMB1 is not supported");
  return std::unexpected(cat("unknown protocol '", trim(raw), "' (use SMB2_02, SMB2_10, SMB3_00, SMB3_02, SMB3_11, SMB2 or SMB3)"));
}

std::expected<std::vector<uint16_t>, Err> parse_port_list(std::string_view v) {
  auto toks = split_list(v, false);
  if (!toks) return std::unexpected(toks.error());
  if (toks->empty()) return std::unexpected("empty port list");
  std::vector<uint16_t> ports;
  for (const auto& t : *toks) {
    auto p = parse_size(t);
    if (!p || t.find_first_not_of("0123456789") != std::string::npos)
      return std::unexpected(cat("'", t, "' is not a port number"));
    if (*p == 0 || *p > 65535) return std::unexpected(cat(t, " is out of range (1..65535)"));
    auto port = static_cast<uint16_t>(*p);
    // A repeated port would make the listener fail to bind twice; drop it.
    if (std::find(ports.begin(), ports.end(), port) == ports.end()) ports.push_back(port);
  }
  return ports;
}

std::expected<SigningPolicy, Err> parse_signing(std::string_view raw) {
  std::string v = enum_form(raw);
  // "yes"/"on" historically meant "offer signing", which is what auto does.
  if (v == "auto" || v == "default" || v == "ifrequired" || v == "enabled" || v == "yes" || v == "on" ||
      v == "true" || v == "1")
    return SigningPolicy::Auto;
  if (v == "mandatory" || v == "required" || v == "forced") return SigningPolicy::Mandatory;
  if (v == "disabled" || v == "off" || v == "no" || v == "false" || v == "0") return SigningPolicy::Disabled;
  return std::unexpected(cat("bad signing policy '", trim(raw), "' (use auto, mandatory or disabled)"));
}

std::expected<EncryptionPolicy, Err> parse_encryption(std::string_view raw) {
  std::string v = enum_form(raw);
  if (v == "off" || v == "no" || v == "disabled" || v == "ifrequired" || v == "false" || v == "0" ||
      v == "default")
    return EncryptionPolicy::Off;
  if (v == "desired" || v == "yes" || v == "auto" || v == "on" || v == "true" || v == "1" || v == "enabled")
    return EncryptionPolicy::Desired;
  if (v == "required" || v == "mandatory" || v == "forced") return EncryptionPolicy::Required;
  return std::unexpected(
      cat("bad encryption policy '", trim(raw), "' (use off, desired or required)"));
}

std::expected<MapToGuest, Err> parse_map_to_guest(std::string_view raw) {
  std::string v = enum_form(raw);
  if (v == "never") return MapToGuest::Never;
  if (v == "baduser") return MapToGuest::BadUser;
  if (v == "badpassword") return MapToGuest::BadPassword;
  return std::unexpected(
      cat("bad map to guest '", trim(raw), "' (use never, bad user or bad password)"));
}

std::expected<DataPlane, Err> parse_data_plane(std::string_view raw) {
  std::string v = enum_form(raw);
  if (v == "ringsmbd") return DataPlane::Ringsmbd;
  if (v == "ksmbd") return DataPlane::Ksmbd;
  return std::unexpected(cat("bad data plane '", trim(raw), "' (use ringsmbd or ksmbd)"));
}

std::expected<KerberosMethod, Err> parse_kerberos_method(std::string_view raw) {
  std::string v = enum_form(raw);
  if (v == "default" || v == "secretsonly") return KerberosMethod::SecretsOnly;
  if (v == "dedicatedkeytab") return KerberosMethod::DedicatedKeytab;
  if (v == "systemkeytab") return KerberosMethod::SystemKeytab;
  if (v == "secretsandkeytab") return KerberosMethod::SecretsAndKeytab;
  return std::unexpected(cat("bad kerberos method '", trim(raw),
                             "' (use dedicated keytab, system keytab, secrets and keytab or secrets only)"));
}

std::expected<SecurityMode, Err> parse_security(std::string_view raw) {
  std::string v = enum_form(raw);
  if (v == "user" || v == "auto") return SecurityMode::User;
  if (v == "ads") return SecurityMode::Ads;
  return std::unexpected(cat("security '", trim(raw), "' is not supported (use user or ads)"));
}

std::expected<std::string, Err> parse_netbios(std::string_view raw, std::string_view what) {
  std::string_view v = trim(raw);
  // NetBIOS names are 15 bytes plus a type byte on the wire.
  if (v.empty() || v.size() > 15) return std::unexpected(cat(what, " must be 1..15 characters"));
  for (char c : v)
    if (static_cast<unsigned char>(c) < 0x20 || std::string_view("\\/:*?\"<>|").find(c) != std::string_view::npos)
      return std::unexpected(cat(what, " '", v, "' contains an invalid character"));
  std::string out(v);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::expected<void, Err> check_share_name(std::string_view name) {
  if (name.empty()) return std::unexpected("empty share name");
  if (name.size() > 80) return std::unexpected(cat("share name '", name, "' is longer than 80 characters"));
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      return std::unexpected("share name contains a control character");
    if (std::string_view("\\/:*?\"<>|").find(c) != std::string_view::npos)
      return std::unexpected(cat("share name '", name, "' contains '", c, "'"));
  }
  return {};
}

std::expected<uint32_t, Err> parse_mode_mask(std::string_view raw) {
  std::string_view v = trim(raw);
  if (v.empty() || v.size() > 5 || v.find_first_not_of("01234567") != std::string_view::npos)
    return std::unexpected(cat("'", v, "' is not an octal mode such as 0644"));
  uint32_t m = 0;
  for (char c : v) m = m * 8 + uint32_t(c - '0');
  if (m > 07777) return std::unexpected(cat("mode ", v, " is out of range (0..07777)"));
  return m;
}

std::expected<std::vector<std::string>, Err> parse_veto_list(std::string_view v) {
  // The list travels to ringsmbd as one netlink string (ctl_abi.hpp caps it).
  if (v.size() > 8000) return std::unexpected("veto files is longer than 8000 characters");
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= v.size()) {
    size_t slash = v.find('/', pos);
    std::string_view piece = v.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos);
    // Blanks belong to the pattern ("/My File/"); the parser already trimmed
    // the value as a whole, and a piece of only blanks is nothing.
    if (!trim(piece).empty()) {
      if (piece.find('\\') != std::string_view::npos)
        return std::unexpected(cat("veto pattern '", piece, "' may not contain '\\'"));
      out.emplace_back(piece);
    }
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return out;
}

std::expected<std::vector<std::string>, Err> parse_host_list(std::string_view v) {
  auto toks = split_list(v, false);
  if (!toks) return std::unexpected(toks.error());
  if (auto ok = check_host_list(*toks); !ok) return std::unexpected(ok.error());
  return toks;
}

std::expected<std::string, Err> parse_unix_name(std::string_view raw, std::string_view what, bool allow_plus) {
  std::string_view v = trim(raw);
  std::string_view name = (allow_plus && v.starts_with('+')) ? v.substr(1) : v;
  if (name.empty()) return std::string(v);  // empty: not forced
  if (name.front() == '+' || name.front() == '-' || name.front() == '@')  // NIS compat entries, options
    return std::unexpected(cat(what, " '", v, "' is not a valid Unix name"));
  for (char c : name)
    if (static_cast<unsigned char>(c) <= 0x20 || c == ':' || c == '/' || c == ',')
      return std::unexpected(cat(what, " '", v, "' is not a valid Unix name"));
  return std::string(v);
}

}  // namespace ringsmb::config::detail

namespace ringsmb::config {

std::optional<std::string> kerberos_keytab(const GlobalConfig& g) {
  if (g.realm.empty()) return std::nullopt;
  switch (g.kerberos_method) {
    case KerberosMethod::SecretsOnly:
      if (g.security == SecurityMode::Ads) return std::string();
      return std::nullopt;
    case KerberosMethod::SystemKeytab:
    case KerberosMethod::SecretsAndKeytab: return std::string();
    case KerberosMethod::DedicatedKeytab:
      if (g.dedicated_keytab_file.empty()) return std::nullopt;
      // A bare path is a FILE: keytab, as Samba takes it.
      if (g.dedicated_keytab_file.starts_with("/")) return "FILE:" + g.dedicated_keytab_file;
      return g.dedicated_keytab_file;
  }
  return std::nullopt;
}

}  // namespace ringsmb::config
