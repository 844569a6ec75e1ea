// NETWORK_INTERFACE_INFO (MS-SMB2 2.2.32.5): the interfaces a client may
// reach this server on, for FSCTL_QUERY_NETWORK_INTERFACE_INFO.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/bytes.hpp"
#include "config/config.hpp"

namespace ringsmb::smb2 {

struct NetInterface {
  std::string name;
  uint32_t if_index = 0;
  bool ipv6 = false;
  std::array<uint8_t, 16> address{};  // network byte order; IPv4 uses the first 4
  uint32_t scope_id = 0;              // IPv6 only
  uint64_t link_speed_bps = 0;
  bool rss_capable = false;
};

inline constexpr size_t kNetworkInterfaceInfoSize = 152;

// The addresses of the interfaces that are up and that the server listens
// on: those `interfaces` names (by interface name or address) under `bind
// interfaces only`, else every one but loopback (unless `interfaces` names
// it). Link speed from /sys/class/net/<if>/speed; unknown (virtual
// devices) is reported as 1 Gbit/s, loopback as 10 Gbit/s. RSS_CAPABLE
// when the NIC has more than one receive queue. An `interfaces` entry's
// options (speed=, capability=RSS, if_index=) replace these.
std::vector<NetInterface> bound_interfaces(const config::GlobalConfig& global);

// The NETWORK_INTERFACE_INFO chain, entries 152 bytes apart, the last
// one's Next 0.
Bytes encode_network_interfaces(const std::vector<NetInterface>& interfaces);

}  // namespace ringsmb::smb2
