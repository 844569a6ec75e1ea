// --server-pid: the CPU a server on this machine spent during a run, so that
// smbench can report server CPU per file by itself (bench/run measures it
// the same way from outside).
#pragma once

#include <sys/types.h>

namespace ringsmb::smbench {

// user+sys seconds of `root` and every live process below it, including
// children they have already reaped (cutime/cstime): smbd forks a process
// per connection that exits with it. 0 when root is 0 or gone.
double tree_cpu_seconds(pid_t root);

}  // namespace ringsmb::smbench
