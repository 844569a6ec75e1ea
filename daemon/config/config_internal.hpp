// Internals shared by the config parser's translation units. Not part of the
// public API: value parsers return a bare message and the caller adds the
// "FILE:LINE: " prefix, so each parser stays independent of where it is used.
#pragma once

#include "common/str_cat.hpp"
#include <concepts>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace ringsmb::config::detail {

using Err = std::string;


std::string_view trim(std::string_view s);
std::string to_lower(std::string_view s);
bool iequals(std::string_view a, std::string_view b);

// Splits on commas and whitespace. With `quotes`, "double quoted" tokens may
// hold spaces or commas (Samba's valid users syntax); an unterminated quote is
// an error.
std::expected<std::vector<std::string>, Err> split_list(std::string_view v, bool quotes);

// Unsigned decimal with an optional k/m/g suffix (binary multiples), e.g. "64k".
std::expected<uint64_t, Err> parse_size(std::string_view v);
std::expected<uint32_t, Err> parse_ranged(std::string_view v, uint64_t lo, uint64_t hi);

std::expected<bool, Err> parse_bool_value(std::string_view v);
// Samba's `interfaces` list: entries, each optionally followed by
// ";key=value,key=value" (speed in bit/s with an optional decimal
// K/M/G/T, capability=RSS|RDMA, if_index, options=dynamic|nodynamic).
// Quoted as Samba wants it or not: a bare "speed=..." word after an entry
// with options belongs to it.
struct InterfaceList {
  std::vector<std::string> entries;
  std::vector<InterfaceOverride> overrides;
};
std::expected<InterfaceList, Err> parse_interfaces(std::string_view v);
// `as_max` picks how the family names resolve: SMB2 is 2.02 as a minimum and
// 2.10 as a maximum, SMB3 is 3.00 / 3.11.
std::expected<uint16_t, Err> parse_dialect(std::string_view v, bool as_max);
std::expected<std::vector<uint16_t>, Err> parse_port_list(std::string_view v);
std::expected<SigningPolicy, Err> parse_signing(std::string_view v);
std::expected<EncryptionPolicy, Err> parse_encryption(std::string_view v);
std::expected<MapToGuest, Err> parse_map_to_guest(std::string_view v);
std::expected<DataPlane, Err> parse_data_plane(std::string_view v);
std::expected<KerberosMethod, Err> parse_kerberos_method(std::string_view v);
std::expected<SecurityMode, Err> parse_security(std::string_view v);
std::expected<std::string, Err> parse_netbios(std::string_view v, std::string_view what);
std::expected<void, Err> check_share_name(std::string_view name);
// Octal permission bits, "0744" or "744", at most 07777.
std::expected<uint32_t, Err> parse_mode_mask(std::string_view v);
// Samba's "/pattern/pattern/": '/'-separated, empty pieces dropped.
std::expected<std::vector<std::string>, Err> parse_veto_list(std::string_view v);
// A hosts allow / deny list, each entry checked (host_match.hpp).
std::expected<std::vector<std::string>, Err> parse_host_list(std::string_view v);
// A Unix user or group name for force user / force group.
std::expected<std::string, Err> parse_unix_name(std::string_view v, std::string_view what, bool allow_plus);

// Per-parse state the key handlers need beyond the config itself.
struct GlobalState {
  int current_line = 0;       // line of the key being applied
  int min_protocol_line = 0;  // 0: not set in the file
  int max_protocol_line = 0;
  std::vector<std::string> notes;  // soft warnings, without location
};

// Both return true when the key was recognised, false when it is unknown.
std::expected<bool, Err> apply_global_key(GlobalConfig& g, GlobalState& st, const std::string& key,
                                          std::string_view value);
bool is_global_key(const std::string& key);
std::expected<bool, Err> apply_share_key(ShareConfig& s, const std::string& key, std::string_view value);
// "vfs objects" and the "recycle:" keys (recycle_keys.cpp); false: not one of them.
std::expected<bool, Err> apply_recycle_key(ShareConfig& s, const std::string& key, std::string_view value);
bool is_known_vfs_object(std::string_view name);
// The shadow:* keys (config_shadow.cpp); false: not one of them.
std::expected<bool, Err> apply_shadow_key(ShareConfig& s, const std::string& key, std::string_view value);

}  // namespace ringsmb::config::detail
