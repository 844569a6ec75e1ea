// Password entry for `user add` / `user passwd`.
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "ctl.hpp"

namespace ringsmb::ctl {

namespace {

// Saved terminal state for the signal handler: a Ctrl-C during the prompt
// must not leave the user's terminal without echo.
struct termios g_saved_tty;
volatile sig_atomic_t g_tty_saved = 0;

void restore_and_reraise(int sig) {
  if (g_tty_saved) ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &g_saved_tty);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

class NoEcho {
 public:
  NoEcho() {
    if (::tcgetattr(STDIN_FILENO, &g_saved_tty) != 0) return;
    g_tty_saved = 1;
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(sig, restore_and_reraise);
    struct termios quiet = g_saved_tty;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    quiet.c_lflag |= ECHONL;  // the Enter key still moves to a new line
    ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
  }
  ~NoEcho() {
    if (!g_tty_saved) return;
    ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &g_saved_tty);
    g_tty_saved = 0;
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(sig, SIG_DFL);
  }
  NoEcho(const NoEcho&) = delete;
  NoEcho& operator=(const NoEcho&) = delete;
};

bool read_line(std::string& out) {
  if (!std::getline(std::cin, out)) return false;
  if (!out.empty() && out.back() == '\r') out.pop_back();
  return true;
}

std::expected<std::string, std::string> prompt(const char* text) {
  std::cerr << text << std::flush;
  std::string pw;
  NoEcho guard;
  if (!read_line(pw)) return std::unexpected("no password entered");
  return pw;
}

std::expected<std::string, std::string> checked(std::string pw) {
  if (pw.empty()) return std::unexpected("empty password");
  return pw;
}

}  // namespace

std::expected<std::string, std::string> read_password(bool from_stdin) {
  if (from_stdin) {
    std::string pw;
    if (!read_line(pw)) return std::unexpected("no password on stdin");
    return checked(std::move(pw));
  }
  if (!::isatty(STDIN_FILENO)) return std::unexpected("stdin is not a terminal; use --password-stdin");
  auto first = prompt("New SMB password: ");
  if (!first) return first;
  auto second = prompt("Retype new SMB password: ");
  if (!second) return second;
  if (*first != *second) return std::unexpected("passwords do not match");
  return checked(std::move(*first));
}

}  // namespace ringsmb::ctl
