#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "common/sd_notify.hpp"

using namespace ringsmb;

TEST_CASE("NOTIFY_SOCKET values: paths and abstract names", "[sd_notify]") {
  CHECK(sd::socket_path_from("/run/systemd/notify") == "/run/systemd/notify");
  CHECK(sd::socket_path_from("@abstract") == std::string("\0abstract", 9));
  CHECK(sd::socket_path_from("").empty());
  CHECK(sd::socket_path_from("relative/path").empty());
  CHECK(sd::socket_path_from("/" + std::string(200, 'x')).empty());  // longer than sun_path
}

TEST_CASE("notify sends one datagram to the socket and clears the environment", "[sd_notify]") {
  std::string name = "ringsmb-sd-test-" + std::to_string(getpid());
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path + 1, name.data(), name.size());  // abstract: nothing to clean up
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name.size())) == 0);
  setenv("NOTIFY_SOCKET", ("@" + name).c_str(), 1);
  setenv("WATCHDOG_USEC", "3000000", 1);
  setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
  sd::init_from_environment();
  CHECK(getenv("NOTIFY_SOCKET") == nullptr);
  CHECK(getenv("WATCHDOG_USEC") == nullptr);
  CHECK(sd::enabled());
  CHECK(sd::watchdog_usec() == 3000000);
  REQUIRE(sd::notify("READY=1\nSTATUS=testing"));
  char buf[64] = {};
  ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
  CHECK(std::string(buf, size_t(std::max<ssize_t>(n, 0))) == "READY=1\nSTATUS=testing");
  close(fd);

  SECTION("a watchdog meant for another process is ignored") {
    setenv("NOTIFY_SOCKET", ("@" + name).c_str(), 1);
    setenv("WATCHDOG_USEC", "3000000", 1);
    setenv("WATCHDOG_PID", "1", 1);
    sd::init_from_environment();
    CHECK(sd::watchdog_usec() == 0);
  }
}
