// FSCTL_QUERY_NETWORK_INTERFACE_INFO (MS-SMB2 3.3.5.15.11): the real
// addresses and link speeds of the interfaces the server is bound to,
// read with getifaddrs and /sys/class/net when asked (rarely: once per
// session of a multichannel-capable client).
#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "smb2/fsctl/fsctl.hpp"
#include "smb2/fsctl/fsctl_network.hpp"

namespace ringsmb::smb2 {
namespace {

constexpr uint32_t RSS_CAPABLE = 0x1;
constexpr uint16_t kWindowsAfInet = 0x0002, kWindowsAfInet6 = 0x0017;  // SOCKADDR_STORAGE Family
constexpr size_t kSockaddrStorageSize = 128;
constexpr uint64_t kUnknownSpeedBps = 1'000'000'000;
constexpr uint64_t kLoopbackSpeedBps = 10'000'000'000;

std::string address_text(const NetInterface& i) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(i.ipv6 ? AF_INET6 : AF_INET, i.address.data(), buf, sizeof buf);
  return buf;
}

// Whether ENTRY of `interfaces` ("eth0", "192.168.1.10/24") names I.
bool names(const std::string& entry, const NetInterface& i, const std::string& addr) {
  std::string host = entry.substr(0, entry.find('/'));
  return host == i.name || host == addr;
}

// Where the server listens: the `interfaces` entries under `bind
// interfaces only`, else every address (loopback reported only when an
// entry names it).
bool is_bound(const config::GlobalConfig& g, const NetInterface& i, bool loopback) {
  std::string addr = address_text(i);
  bool named = std::ranges::any_of(g.interfaces, [&](const std::string& e) { return names(e, i, addr); });
  if (!g.bind_interfaces_only || g.interfaces.empty()) return !loopback || named;
  return named;
}

// The `interfaces` options of the entry that names I, if any: they replace
// what the kernel says.
void apply_override(const config::GlobalConfig& g, NetInterface& i) {
  std::string addr = address_text(i);
  for (const config::InterfaceOverride& o : g.interface_overrides) {
    if (!names(o.entry, i, addr)) continue;
    if (o.speed_bps) i.link_speed_bps = o.speed_bps;
    if (o.if_index) i.if_index = o.if_index;
    // capability=RDMA is not reported: ringsmbd has no SMB Direct transport,
    // and a client told otherwise would try one.
    i.rss_capable = i.rss_capable || o.rss;
    return;
  }
}

uint64_t link_speed_bps(const std::string& name, bool loopback) {
  if (loopback) return kLoopbackSpeedBps;
  long mbps = -1;
  if (FILE* f = fopen(("/sys/class/net/" + name + "/speed").c_str(), "re")) {
    if (fscanf(f, "%ld", &mbps) != 1) mbps = -1;
    fclose(f);
  }
  return mbps > 0 ? uint64_t(mbps) * 1'000'000 : kUnknownSpeedBps;
}

// More than one receive queue: the NIC spreads connections over cores.
bool has_rss(const std::string& name) {
  DIR* d = opendir(("/sys/class/net/" + name + "/queues").c_str());
  if (!d) return false;
  int rx = 0;
  while (struct dirent* e = readdir(d))
    if (strncmp(e->d_name, "rx-", 3) == 0) ++rx;
  closedir(d);
  return rx > 1;
}

}  // namespace

std::vector<NetInterface> bound_interfaces(const config::GlobalConfig& global) {
  std::vector<NetInterface> out;
  struct ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (struct ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || !(a->ifa_flags & IFF_UP)) continue;
    int family = a->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    NetInterface i;
    i.name = a->ifa_name;
    i.if_index = if_nametoindex(a->ifa_name);
    i.ipv6 = family == AF_INET6;
    if (i.ipv6) {
      const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(a->ifa_addr);
      std::memcpy(i.address.data(), &sin6->sin6_addr, 16);
      i.scope_id = sin6->sin6_scope_id;
    } else {
      const auto* sin = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
      std::memcpy(i.address.data(), &sin->sin_addr, 4);
    }
    bool loopback = a->ifa_flags & IFF_LOOPBACK;
    if (!is_bound(global, i, loopback)) continue;
    i.link_speed_bps = link_speed_bps(i.name, loopback);
    i.rss_capable = !loopback && has_rss(i.name);
    apply_override(global, i);
    out.push_back(std::move(i));
  }
  freeifaddrs(list);
  return out;
}

Bytes encode_network_interfaces(const std::vector<NetInterface>& interfaces) {
  Bytes out;
  ByteWriter w(out);
  for (size_t n = 0; n < interfaces.size(); ++n) {
    const NetInterface& i = interfaces[n];
    size_t start = out.size();
    w.u32(n + 1 < interfaces.size() ? uint32_t(kNetworkInterfaceInfoSize) : 0);  // Next
    w.u32(i.if_index);
    w.u32(i.rss_capable ? RSS_CAPABLE : 0);
    w.u32(0);  // Reserved
    w.u64(i.link_speed_bps);
    w.u16(i.ipv6 ? kWindowsAfInet6 : kWindowsAfInet);
    w.u16(0);  // Port
    if (i.ipv6) {
      w.u32(0);  // FlowInfo
      w.bytes(i.address.data(), 16);
      w.u32(i.scope_id);
    } else {
      w.bytes(i.address.data(), 4);
    }
    w.zeros(start + 24 + kSockaddrStorageSize - out.size());
  }
  return out;
}

NtStatus fsctl_query_network_interface_info(FsctlCall& call) {
  Bytes info = encode_network_interfaces(bound_interfaces(call.req.server.config.global));
  if (info.empty()) return NtStatus::NotSupported;
  if (info.size() > call.q.max_output_response) return NtStatus::BufferTooSmall;
  call.out = std::move(info);
  return NtStatus::Success;
}

}  // namespace ringsmb::smb2
