// Catch2's runner, after installing what ringsmbd installs at startup:
// the SMB2 dispatch table (smb2/commands/command_table.hpp).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "smb2/commands/command_table.hpp"

int main(int argc, char* argv[]) {
  ringsmb::smb2::install_commands();
  return Catch::Session().run(argc, argv);
}
