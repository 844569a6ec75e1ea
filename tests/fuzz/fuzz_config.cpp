// libFuzzer target for the config parser: any input must either parse or
// fail with "FILE:LINE: ..." messages, never crash or hang; the checker
// (every error in one pass) agrees with it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "config/config.hpp"
#include "config/host_match.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = ringsmb::config::parse_config_text(text, "fuzz.conf");
  if (r) {
    // Invariants the rest of the server relies on.
    const auto& g = r->config.global;
    if (g.min_protocol > g.max_protocol || g.tcp_ports.empty()) std::abort();
    for (const auto& s : r->config.shares) {
      if (s.path.empty() || s.path.front() != '/' || s.name.empty() || s.name.size() > 80) std::abort();
      if (s.create_mask > 07777 || s.directory_mask > 07777) std::abort();
      // Host lists that parsed must be decidable for any client address.
      for (const char* addr : {"127.0.0.1", "::1", "10.1.2.3", "::ffff:192.168.1.5", "fe80::1"})
        (void)ringsmb::config::host_allowed(s.hosts_allow, s.hosts_deny, addr);
      for (const auto& v : s.veto_files)
        if (v.empty() || v.find('/') != std::string::npos) std::abort();
    }
  } else if (!r.error().starts_with("fuzz.conf:")) {
    std::abort();
  }
  // The checker goes on after errors: each is "FILE:LINE: ..." and the
  // shares it keeps are still well formed.
  auto c = ringsmb::config::check_config_text(text, "fuzz.conf");
  if (c.errors.empty() != r.has_value()) std::abort();
  for (const auto& e : c.errors)
    if (!e.starts_with("fuzz.conf:")) std::abort();
  for (const auto& s : c.config.shares)
    if (s.path.empty() || s.path.front() != '/' || s.name.empty()) std::abort();
  return 0;
}
