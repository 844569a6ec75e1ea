// The text form of a Windows SID (MS-DTYP 2.4.2.1), "S-1-5-21-1-2-3-1104":
// how SIDs travel between the daemons (daemon/ipc/ctl_abi.hpp, ATTR_SIDS)
// and how a configuration names one (`valid users = S-1-5-21-...`). The
// layers keep their own SID structs; this is the one parser they share.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ringsmb {

struct SidParts {
  uint64_t authority = 0;      // 48 bits
  std::vector<uint32_t> sub;   // 1 to 15 sub-authorities
};

inline constexpr size_t kMaxSidSubAuthorities = 15;

// Revision 1 only, case-insensitive "S", decimal numbers without signs or
// empty parts, authority below 2^48, 1 to 15 sub-authorities below 2^32.
std::optional<SidParts> parse_sid_text(std::string_view text);
std::string sid_text(uint64_t authority, std::span<const uint32_t> sub);

}  // namespace ringsmb
