// "hosts allow" / "hosts deny": which client addresses may use a share, with
// Samba's meaning. An entry is
//   ALL                      every address
//   192.168.1.7, ::1         one address (IPv4 or IPv6)
//   192.168.1.  127.         an IPv4 prefix (text ending in '.')
//   10.0.0.0/8               a network: address/prefix length (IPv4 or IPv6)
//   10.0.0.0/255.0.0.0       a network: address/netmask (IPv4)
//   192.168.*.1              '*' and '?' matched against the address text
//   host.example, @netgroup  host names and NIS netgroups: accepted, never
//                            match (Samba with its default "hostname lookups = no")
// and "A B EXCEPT C D" matches what A or B match unless C or D match.
// The decision itself is made by the control plane at tree connect.
#pragma once

#include <expected>
#include <span>
#include <string>
#include <string_view>

namespace ringsmb::config {

// Checks a whole list as the parser reads it (tokens already split); the
// message names the offending entry.
std::expected<void, std::string> check_host_list(std::span<const std::string> entries);

// True when `client_address` (numeric, as getpeername gives it; an
// IPv4-mapped IPv6 address counts as the IPv4 one) matches the list.
bool host_list_matches(std::span<const std::string> entries, std::string_view client_address);

// Samba's combination: no lists -> allowed; only allow -> must match it;
// only deny -> must not match it; both -> allow wins, then deny, then
// allowed. The loopback addresses are allowed unless the deny list names
// them and the allow list does not.
bool host_allowed(std::span<const std::string> allow, std::span<const std::string> deny,
                  std::string_view client_address);

}  // namespace ringsmb::config
