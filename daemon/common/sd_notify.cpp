#include "common/sd_notify.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace ringsmb::sd {
namespace {

std::string g_socket_path;  // sockaddr_un path bytes, possibly starting with '\0'
uint64_t g_watchdog_usec = 0;

}  // namespace

std::string socket_path_from(std::string_view value) {
  if (value.size() < 2 || value.size() >= sizeof(sockaddr_un::sun_path)) return {};
  if (value[0] == '/') return std::string(value);
  if (value[0] == '@') return std::string(1, '\0') + std::string(value.substr(1));
  return {};
}

void init_from_environment() {
  g_socket_path.clear();
  g_watchdog_usec = 0;
  if (const char* s = getenv("NOTIFY_SOCKET")) g_socket_path = socket_path_from(s);
  const char* usec = getenv("WATCHDOG_USEC");
  const char* pid = getenv("WATCHDOG_PID");
  if (usec && (!pid || strtol(pid, nullptr, 10) == long(getpid()))) g_watchdog_usec = strtoull(usec, nullptr, 10);
  unsetenv("NOTIFY_SOCKET");
  unsetenv("WATCHDOG_USEC");
  unsetenv("WATCHDOG_PID");
}

bool enabled() { return !g_socket_path.empty(); }

uint64_t watchdog_usec() { return enabled() ? g_watchdog_usec : 0; }

bool notify(std::string_view state) {
  if (!enabled()) return false;
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, g_socket_path.data(), g_socket_path.size());
  socklen_t len = socklen_t(offsetof(sockaddr_un, sun_path) + g_socket_path.size());
  ssize_t n = sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&addr), len);
  close(fd);
  return n == ssize_t(state.size());
}

}  // namespace ringsmb::sd
