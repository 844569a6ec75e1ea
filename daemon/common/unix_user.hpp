// A Unix identity: what file operations run as (a session's user, or a
// share's "force user").
#pragma once

#include <cstdint>
#include <vector>

namespace ringsmb {

struct UnixUser {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;
};

}  // namespace ringsmb
