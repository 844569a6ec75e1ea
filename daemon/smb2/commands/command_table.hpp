// The dispatch table's rows: each command's handler and preconditions.
#pragma once

namespace ringsmb::smb2 {

// Installs the table (smb2/engine/dispatch.hpp, install_command_table());
// ringsmbd, the unit tests and the fuzz targets call it before the first
// request.
void install_commands();

}  // namespace ringsmb::smb2
