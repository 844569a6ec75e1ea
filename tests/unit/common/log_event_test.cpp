// Structured log lines (common/log_event.hpp): the key=value suffix of the
// syslog/stderr form, and the journal's native datagram, received here on a
// socket standing in for journald's.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "common/log_event.hpp"

using namespace ringsmb;

TEST_CASE("log event: the suffix is key=value, quoted where needed", "[log]") {
  CHECK(event_suffix("login_failure", {{"client", "192.0.2.1"}, {"user", "alice"}}) ==
        " | event=login_failure client=192.0.2.1 user=alice");
  CHECK(event_suffix("login_failure", {{"client", "::1"}, {"user", "bad \"guy\" x"}}) ==
        " | event=login_failure client=::1 user=\"bad \\\"guy\\\" x\"");
  CHECK(event_suffix("share_access_refused", {{"user", ""}, {"share", "a b\nc"}}) ==
        " | event=share_access_refused user=\"\" share=\"a b c\"");
}

TEST_CASE("log event: the journal datagram carries the fields", "[log]") {
  std::string d = journal_datagram(LogLevel::Warn, "ringsmbd", "authentication failure | event=login_failure",
                                   "login_failure", {{"client", "192.0.2.1"}, {"user", "alice"}});
  CHECK(d ==
        "MESSAGE=authentication failure | event=login_failure\nPRIORITY=4\nSYSLOG_IDENTIFIER=ringsmbd\n"
        "RINGSMB_EVENT=login_failure\nSMB_CLIENT=192.0.2.1\nSMB_USER=alice\n");
  // A value with a newline takes the binary form: KEY\n, le64 length, value, \n.
  std::string b = journal_datagram(LogLevel::Error, "x", "m", "e", {{"share", "a\nb"}});
  std::string want = std::string("SMB_SHARE\n") + std::string("\x03\0\0\0\0\0\0\0", 8) + "a\nb\n";
  CHECK(b.substr(b.size() - want.size()) == want);
}

TEST_CASE("log event: keys other than client, user and share are ours", "[log]") {
  std::string d = journal_datagram(LogLevel::Warn, "ringsmbd", "m", "connection_refused",
                                   {{"client", "192.0.2.1"}, {"limit", "max connections"}});
  CHECK(d.ends_with("RINGSMB_EVENT=connection_refused\nSMB_CLIENT=192.0.2.1\nRINGSMB_LIMIT=max connections\n"));
}

TEST_CASE("log event: a scope adds what the fields lack", "[log]") {
  LogClient scope{"192.0.2.9", "bob", "docs"};
  std::string d = journal_datagram(LogLevel::Info, "ringsmbd", "m", "e", {{"user", "alice"}}, &scope);
  CHECK(d.ends_with("RINGSMB_EVENT=e\nSMB_USER=alice\nSMB_CLIENT=192.0.2.9\nSMB_SHARE=docs\n"));
  LogClient no_share{"192.0.2.9", "bob", ""};
  std::string line = journal_datagram(LogLevel::Debug, "ringsmbd", "a line", nullptr, {}, &no_share);
  CHECK(line == "MESSAGE=a line\nPRIORITY=7\nSYSLOG_IDENTIFIER=ringsmbd\nSMB_CLIENT=192.0.2.9\nSMB_USER=bob\n");
}

TEST_CASE("log client scope: nested scopes restore the outer one", "[log]") {
  CHECK(log_client() == nullptr);
  {
    LogClientScope outer("192.0.2.1");
    log_client_about("alice", "docs");
    REQUIRE(log_client());
    CHECK(log_client()->user == "alice");
    {
      LogClientScope inner("192.0.2.2", "bob");
      CHECK(log_client()->client == "192.0.2.2");
      CHECK(log_client()->share.empty());
    }
    CHECK(log_client()->client == "192.0.2.1");
    CHECK(log_client()->share == "docs");
  }
  CHECK(log_client() == nullptr);
  log_client_about("nobody", "");  // outside a scope: nothing
  CHECK(log_client() == nullptr);
}

TEST_CASE("log client scope: a later scope shows none of an earlier one's user and share", "[log]") {
  {
    LogClientScope first("192.0.2.1");
    log_client_about("alice", "docs");
  }
  {
    LogClientScope second("192.0.2.1");
    REQUIRE(log_client());
    CHECK(log_client()->user.empty());
    CHECK(log_client()->share.empty());
    log_client_about("alice", "docs");  // the same again
    CHECK(log_client()->user == "alice");
    CHECK(log_client()->share == "docs");
    log_client_about("bob", "");
    CHECK(log_client()->user == "bob");
    CHECK(log_client()->share.empty());
  }
  {
    LogClientScope third("192.0.2.3", "carol", "");
    CHECK(log_client()->client == "192.0.2.3");
    CHECK(log_client()->user == "carol");
    {
      LogClientScope inner("192.0.2.4");
      CHECK(log_client()->user.empty());
      log_client_about("dave", "tmp");
    }
    CHECK(log_client()->client == "192.0.2.3");
    CHECK(log_client()->user == "carol");
    CHECK(log_client()->share.empty());
  }
  CHECK(log_client() == nullptr);
}

TEST_CASE("log event: journal_send delivers one datagram to the socket", "[log]") {
  char dir[] = "/tmp/ringsmb-journal.XXXXXX";
  REQUIRE(mkdtemp(dir));
  std::string path = std::string(dir) + "/socket";
  int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  strcpy(sa.sun_path, path.c_str());
  REQUIRE(bind(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
  std::string d = journal_datagram(LogLevel::Info, "t", "hello", "ev", {{"user", "bob"}});
  CHECK(journal_send(path.c_str(), d));
  char buf[4096];
  ssize_t n = recv(s, buf, sizeof buf, MSG_DONTWAIT);
  CHECK(std::string(buf, size_t(n > 0 ? n : 0)) == d);
  close(s);
  unlink(path.c_str());
  rmdir(dir);
  CHECK_FALSE(journal_send(path.c_str(), d));  // nobody listens: the caller falls back
}
