// The Symbolic Link Reparse Data Buffer (MS-FSCC 2.1.2.4) of a symlink's
// target, for fsctl_reparse.cpp and its unit tests.
#pragma once

#include <optional>
#include <string_view>

#include "common/bytes.hpp"

namespace ringsmb::smb2 {

// nullopt for an absolute or empty target (not reported, see the .cpp).
std::optional<Bytes> symlink_reparse_buffer(std::string_view target);

}  // namespace ringsmb::smb2
