// systemd's readiness protocol (sd_notify(3)) for Type=notify services:
// datagrams like "READY=1", "STATUS=...", "WATCHDOG=1" sent to the AF_UNIX
// socket named by $NOTIFY_SOCKET. Written here instead of linking
// libsystemd: the protocol is one sendmsg, and ringsmbd then runs the same
// with or without systemd installed (containers, tests).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ringsmb::sd {

// Reads $NOTIFY_SOCKET, $WATCHDOG_USEC and $WATCHDOG_PID once and removes
// them from the environment, so processes we start (ringsmb-ctld) do not
// notify in our name. Call before any thread starts.
void init_from_environment();

// True when a notification socket was given.
bool enabled();

// Sends STATE ("READY=1", "STATUS=serving", several lines separated by
// '\n'). False when not enabled or when the send failed.
bool notify(std::string_view state);

// The watchdog interval systemd expects pings within (WatchdogSec=), in
// microseconds; 0 when the watchdog is off or meant for another process.
uint64_t watchdog_usec();

// Parses a $NOTIFY_SOCKET value into a sockaddr_un path: "/run/x" as is,
// "@name" as the abstract name "\0name". Empty when unusable. For tests.
std::string socket_path_from(std::string_view value);

}  // namespace ringsmb::sd
