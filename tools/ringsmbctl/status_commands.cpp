// `status [--json|--prometheus]` and `session close ID`: questions for ringsmbd, which
// holds connections, sessions, tree connects and open files in its workers
// (LIST_*, GET_METRICS and CLOSE_SESSION in daemon/ipc/ctl_abi.hpp).
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "ctl.hpp"
#include "ipc/ctl_codec.hpp"
#include "ipc/ctl_status.hpp"
#include "ipc/status_prometheus.hpp"

namespace ringsmb::ctl {
namespace {

using namespace ipc::abi;

std::string yes_no(bool b) { return b ? "yes" : "no"; }

// LIST_CONNECTIONS first: ringsmbd answers the three others from the
// snapshot it took for it (ctl_abi.hpp), so the lists agree.
std::expected<ipc::ServerStatus, Failure> fetch_status(const config::Config& cfg) {
  ipc::ServerStatus status;
  for (Cmd cmd : {CMD_LIST_CONNECTIONS, CMD_LIST_SESSIONS, CMD_LIST_TREE_CONNECTS, CMD_LIST_OPEN_FILES}) {
    auto a = ask(cfg, Daemon::Ringsmbd, cmd);
    if (!a) return std::unexpected(a.error());
    if (a->status != NtStatus::Success)
      return std::unexpected(Failure{kExitError, std::string(cmd_name(cmd)) + " failed" +
                                                     (a->text.empty() ? "" : ": " + a->text)});
    for (const auto& d : a->datagrams) {
      auto m = ipc::parse_message(d.data(), d.size());
      if (!m || !ipc::decode_list_reply(d.data(), d.size(), *m, status))
        return std::unexpected(Failure{kExitError, std::string("malformed ") + cmd_name(cmd) + " reply from ringsmbd"});
    }
  }
  return status;
}

// A plain column table: widths from the longest cell.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& out) const {
    std::vector<size_t> w(rows_[0].size(), 0);
    for (const auto& r : rows_)
      for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
    for (const auto& r : rows_) {
      out << "  ";
      for (size_t i = 0; i < r.size(); ++i)
        out << (i + 1 < r.size() ? std::string(r[i]) + std::string(w[i] - r[i].size() + 2, ' ') : r[i]);
      out << "\n";
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

// What --locks and --leases add to the text output.
struct Details {
  bool locks = false;
  bool leases = false;
};

std::string caching_of(const ipc::OpenFileStatus& x) {
  if (x.oplock_level == ipc::kOplockLevelLease) return "lease " + ipc::lease_state_name(x.lease_state);
  return ipc::oplock_level_name(x.oplock_level);
}

std::string hex_bytes(const std::array<uint8_t, 16>& b) {
  std::string out;
  char buf[4];
  for (uint8_t v : b) {
    snprintf(buf, sizeof buf, "%02x", v);
    out += buf;
  }
  return out;
}

bool disconnected(const ipc::OpenFileStatus& x) { return x.flags & OPEN_DISCONNECTED; }

void print_open_files(const ipc::ServerStatus& s, Details d) {
  size_t live = std::ranges::count_if(s.open_files, [](const auto& x) { return !disconnected(x); });
  std::cout << "\nOpen files: " << live << "\n";
  if (live == 0) return;
  std::vector<std::string> header{"FILE ID", "SESSION ID", "SHARE", "PATH", "USER", "CLIENT"};
  if (d.leases) header.insert(header.end(), {"CACHING", "DURABLE"});
  Table t(header);
  for (const auto& x : s.open_files) {
    if (disconnected(x)) continue;
    std::vector<std::string> row{hex_id(x.file_id), hex_id(x.session_id), x.share, x.path.empty() ? "." : x.path,
                                 x.user, x.client_address};
    if (d.leases) {
      std::string caching = caching_of(x) + (x.flags & OPEN_LEASE_BREAKING ? " (breaking)" : "");
      row.insert(row.end(), {caching, yes_no(x.flags & (OPEN_DURABLE | OPEN_RESILIENT))});
    }
    t.add(std::move(row));
  }
  t.print(std::cout);
}

// Durable opens whose connection ended, kept for their client's reconnect
// (MS-SMB2 3.3.7.1): what they hold stays held until then.
void print_disconnected(const ipc::ServerStatus& s) {
  size_t kept = std::ranges::count_if(s.open_files, disconnected);
  std::cout << "\nDisconnected durable opens: " << kept << "\n";
  if (kept == 0) return;
  Table t({"FILE ID", "SHARE", "PATH", "USER", "LAST CLIENT", "CLOSED IN"});
  for (const auto& x : s.open_files)
    if (disconnected(x))
      t.add({hex_id(x.file_id), x.share, x.path.empty() ? "." : x.path, x.user, x.client_address,
             std::to_string((x.kept_for_ms + 999) / 1000) + " s"});
  t.print(std::cout);
}

// smbstatus -L: one row per byte-range lock.
void print_locks(const ipc::ServerStatus& s) {
  size_t total = 0;
  for (const auto& x : s.open_files) total += x.lock_count;
  std::cout << "\nByte-range locks: " << total << "\n";
  if (total == 0) return;
  Table t({"FILE ID", "PATH", "TYPE", "OFFSET", "LENGTH"});
  for (const auto& x : s.open_files) {
    for (const auto& l : x.locks)
      t.add({hex_id(x.file_id), x.path.empty() ? "." : x.path, l.exclusive ? "exclusive" : "shared",
             std::to_string(l.offset), std::to_string(l.length)});
    if (x.lock_count > x.locks.size())
      t.add({hex_id(x.file_id), x.path, "...", std::to_string(x.lock_count - x.locks.size()) + " more", ""});
  }
  t.print(std::cout);
}

// smbstatus -B: the leases (with their keys) and oplocks held.
void print_leases(const ipc::ServerStatus& s) {
  size_t held = 0;
  for (const auto& x : s.open_files) held += x.oplock_level != 0 ? 1 : 0;
  std::cout << "\nLeases and oplocks: " << held << "\n";
  if (held == 0) return;
  Table t({"FILE ID", "PATH", "TYPE", "STATE", "LEASE KEY"});
  for (const auto& x : s.open_files) {
    if (x.oplock_level == 0) continue;
    bool lease = x.oplock_level == ipc::kOplockLevelLease;
    std::string state = ipc::lease_state_name(x.lease_state) + (x.flags & OPEN_LEASE_BREAKING ? " (breaking)" : "");
    t.add({hex_id(x.file_id), x.path.empty() ? "." : x.path, lease ? "lease" : "oplock " + ipc::oplock_level_name(x.oplock_level),
           state, x.lease_key ? hex_bytes(*x.lease_key) : "-"});
  }
  t.print(std::cout);
}

// A session reported without its channels (an older ringsmbd) has one.
size_t channel_count(const ipc::SessionStatus& x) { return std::max<size_t>(1, x.channels.size()); }

// Every connection of every session (multichannel: several per session),
// with the client's port, which tells the connections of one client apart.
void print_channels(const ipc::ServerStatus& s) {
  size_t total = 0;
  for (const auto& x : s.sessions) total += x.channels.size();
  std::cout << "\nChannels: " << total << "\n";
  if (total == 0) return;
  Table t({"SESSION ID", "CONNECTION ID", "CLIENT"});
  for (const auto& x : s.sessions)
    for (const auto& c : x.channels)
      t.add({hex_id(x.session_id), std::to_string(c.connection_id), ipc::address_with_port(c.client_address, c.client_port)});
  t.print(std::cout);
}

void print_text(const ipc::ServerStatus& s, Details d) {
  std::cout << "Connections: " << s.connections.size() << "\n";
  if (!s.connections.empty()) {
    Table t({"ID", "CLIENT", "DIALECT"});
    for (const auto& c : s.connections) t.add({std::to_string(c.connection_id), c.client_address, ipc::dialect_name(c.dialect)});
    t.print(std::cout);
  }
  std::cout << "\nSessions: " << s.sessions.size() << "\n";
  if (!s.sessions.empty()) {
    Table t({"SESSION ID", "USER", "CLIENT", "DIALECT", "SIGNING", "ENCRYPTION", "CHANNELS"});
    for (const auto& x : s.sessions) {
      std::string user = x.user;
      if (x.flags & SESSION_ANONYMOUS) user = "(anonymous)";
      else if (x.flags & SESSION_GUEST) user += " (guest)";
      t.add({hex_id(x.session_id), user, x.client_address, ipc::dialect_name(x.dialect),
             yes_no(x.flags & SESSION_SIGNED), yes_no(x.flags & SESSION_ENCRYPTED),
             std::to_string(channel_count(x))});
    }
    t.print(std::cout);
  }
  print_channels(s);
  std::cout << "\nTree connects: " << s.trees.size() << "\n";
  if (!s.trees.empty()) {
    Table t({"SESSION ID", "SHARE", "USER", "CLIENT"});
    for (const auto& x : s.trees) t.add({hex_id(x.session_id), x.share, x.user, x.client_address});
    t.print(std::cout);
  }
  print_open_files(s, d);
  print_disconnected(s);
  if (d.locks) print_locks(s);
  if (d.leases) print_leases(s);
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

// One JSON object per line in arrays keeps the output greppable.
template <typename T, typename F>
void json_array(std::ostream& out, const char* name, const std::vector<T>& items, F&& object, bool last) {
  out << "  \"" << name << "\": [";
  for (size_t i = 0; i < items.size(); ++i) out << (i ? ",\n    " : "\n    ") << object(items[i]);
  out << (items.empty() ? "]" : "\n  ]") << (last ? "\n" : ",\n");
}

// The caching and locks of an open (always in JSON; --locks and --leases
// choose what the text output shows).
std::string json_open_details(const ipc::OpenFileStatus& x) {
  const char* no = "false";
  const char* yes = "true";
  std::string out = "\"directory\": " + std::string(x.flags & OPEN_DIRECTORY ? yes : no) +
                    ", \"durable\": " + (x.flags & OPEN_DURABLE ? yes : no) +
                    ", \"resilient\": " + (x.flags & OPEN_RESILIENT ? yes : no) +
                    ", \"oplock\": " + json_string(ipc::oplock_level_name(x.oplock_level)) +
                    ", \"lease_state\": " + json_string(x.oplock_level ? ipc::lease_state_name(x.lease_state) : "") +
                    ", \"lease_key\": " + (x.lease_key ? json_string(hex_bytes(*x.lease_key)) : std::string("null")) +
                    ", \"breaking\": " + (x.flags & OPEN_LEASE_BREAKING ? yes : no) +
                    ", \"disconnected\": " + (x.flags & OPEN_DISCONNECTED ? yes : no) +
                    ", \"kept_for_ms\": " + (x.flags & OPEN_DISCONNECTED ? std::to_string(x.kept_for_ms) : "null") +
                    ", \"lock_count\": " + std::to_string(x.lock_count) + ", \"locks\": [";
  for (size_t i = 0; i < x.locks.size(); ++i)
    out += std::string(i ? ", " : "") + "{\"offset\": " + std::to_string(x.locks[i].offset) +
           ", \"length\": " + std::to_string(x.locks[i].length) +
           ", \"exclusive\": " + (x.locks[i].exclusive ? yes : no) + "}";
  return out + "]";
}

std::string json_channels(const std::vector<ipc::ChannelStatus>& channels) {
  std::string out = "[";
  for (size_t i = 0; i < channels.size(); ++i)
    out += std::string(i ? ", " : "") + "{\"connection_id\": " + std::to_string(channels[i].connection_id) +
           ", \"client\": " + json_string(ipc::address_with_port(channels[i].client_address, channels[i].client_port)) +
           "}";
  return out + "]";
}

void print_json(const ipc::ServerStatus& s) {
  std::ostream& o = std::cout;
  o << "{\n";
  json_array(o, "connections", s.connections, [](const ipc::ConnectionStatus& c) {
    return "{\"id\": " + std::to_string(c.connection_id) + ", \"client\": " + json_string(c.client_address) +
           ", \"dialect\": " + json_string(ipc::dialect_name(c.dialect)) + "}";
  }, false);
  json_array(o, "sessions", s.sessions, [](const ipc::SessionStatus& x) {
    return "{\"session_id\": " + json_string(hex_id(x.session_id)) +
           ", \"connection_id\": " + std::to_string(x.connection_id) + ", \"user\": " + json_string(x.user) +
           ", \"client\": " + json_string(x.client_address) +
           ", \"dialect\": " + json_string(ipc::dialect_name(x.dialect)) +
           ", \"signing\": " + (x.flags & SESSION_SIGNED ? "true" : "false") +
           ", \"encryption\": " + (x.flags & SESSION_ENCRYPTED ? "true" : "false") +
           ", \"guest\": " + (x.flags & SESSION_GUEST ? "true" : "false") +
           ", \"anonymous\": " + (x.flags & SESSION_ANONYMOUS ? "true" : "false") +
           ", \"channels\": " + json_channels(x.channels) + "}";
  }, false);
  json_array(o, "tree_connects", s.trees, [](const ipc::TreeConnectStatus& x) {
    return "{\"session_id\": " + json_string(hex_id(x.session_id)) + ", \"tree_id\": " + std::to_string(x.tree_id) +
           ", \"share\": " + json_string(x.share) + ", \"user\": " + json_string(x.user) +
           ", \"client\": " + json_string(x.client_address) + "}";
  }, false);
  json_array(o, "open_files", s.open_files, [](const ipc::OpenFileStatus& x) {
    return "{\"file_id\": " + json_string(hex_id(x.file_id)) + ", \"session_id\": " + json_string(hex_id(x.session_id)) +
           ", \"tree_id\": " + std::to_string(x.tree_id) + ", \"share\": " + json_string(x.share) +
           ", \"path\": " + json_string(x.path) + ", \"user\": " + json_string(x.user) +
           ", \"client\": " + json_string(x.client_address) + ", " + json_open_details(x) + "}";
  }, true);
  o << "}\n";
}

// ringsmbd's counters, already in the Prometheus text format (GET_METRICS:
// the TEXT of every datagram, in order).
std::expected<std::string, Failure> fetch_metrics(const config::Config& cfg) {
  auto a = ask(cfg, Daemon::Ringsmbd, CMD_GET_METRICS);
  if (!a) return std::unexpected(a.error());
  if (a->status != NtStatus::Success)
    return std::unexpected(Failure{kExitError, "GET_METRICS failed" + (a->text.empty() ? "" : ": " + a->text)});
  std::string text;
  for (const auto& d : a->datagrams) {
    auto m = ipc::parse_message(d.data(), d.size());
    if (m) text += m->str(ATTR_TEXT);
  }
  return text;
}

// Gauges from the status lists, then the counters. A stopped server is a
// value for a scraper (ringsmb_up 0), not an error; any other failure is,
// so that a textfile collector keeps its last complete file.
int print_prometheus_status(const config::Config& cfg, const std::expected<ipc::ServerStatus, Failure>& s) {
  if (!s && s.error().code == kExitNotRunning) {
    ipc::print_prometheus(std::cout, nullptr);
    return kExitOk;
  }
  if (!s) return fail(s.error());
  auto counters = fetch_metrics(cfg);
  if (!counters) return fail(counters.error());
  ipc::print_prometheus(std::cout, &*s);
  std::cout << *counters;
  return kExitOk;
}

// With data plane = ksmbd there is no ringsmbd to ask, and ksmbd.ko reports
// no connections or sessions over its netlink interface.
constexpr const char* kNoStatusWithKsmbd =
    "not available with data plane = ksmbd: ksmbd.ko reports no connections, sessions or open files to "
    "ringsmb-ctld (docs/kmod-shim.md)";

int cmd_status(const Context& ctx, bool json, bool prometheus, Details details) {
  auto cfg = load_config(ctx.config_path);
  if (!cfg) return fail_loading(cfg.error());
  if (cfg->global.data_plane == config::DataPlane::Ksmbd) return fail(std::string("status: ") + kNoStatusWithKsmbd);
  auto s = fetch_status(*cfg);
  if (prometheus) return print_prometheus_status(*cfg, s);
  if (!s) return fail(s.error());
  if (json) print_json(*s);
  else print_text(*s, details);
  return kExitOk;
}

int cmd_session_close(const Context& ctx, const std::string& id_text) {
  auto parsed = parse_id(id_text);
  if (!parsed) return fail(kExitUsage, "'" + id_text + "' is not a session id (see 'ringsmbctl status')");
  uint64_t id = *parsed;
  auto cfg = load_config(ctx.config_path);
  if (!cfg) return fail_loading(cfg.error());
  if (cfg->global.data_plane == config::DataPlane::Ksmbd)
    return fail(std::string("session close: ") + kNoStatusWithKsmbd);
  auto a = ask(*cfg, Daemon::Ringsmbd, CMD_CLOSE_SESSION, id);
  if (!a) return fail(a.error());
  if (a->status == NtStatus::NotFound) return fail(kExitNotFound, "session " + hex_id(id) + " not found");
  if (a->status != NtStatus::Success) return fail("session close failed" + (a->text.empty() ? "" : ": " + a->text));
  std::cout << "closed session " << hex_id(id) << "\n";
  return kExitOk;
}

}  // namespace

void add_status_commands(CLI::App& app, Context& ctx) {
  auto json = std::make_shared<bool>(false);
  auto prometheus = std::make_shared<bool>(false);
  auto* status = app.add_subcommand(
      "status",
      "Show connections, sessions (user, client, dialect, signing, encryption, channels), each session's "
      "channels (the client's address and port), tree connects, open files (with "
      "the FILE ID that 'file close' takes) and the durable opens kept for a disconnected client's reconnect");
  status->add_flag("--json", *json, "Print JSON instead of tables");
  status->add_flag("--prometheus", *prometheus,
                   "Print gauges and counters in the Prometheus text format (for the node exporter's textfile "
                   "collector); "
                   "ringsmb_up 0 when the server is not running (docs/monitoring.md)");
  auto details = std::make_shared<Details>();
  status->add_flag("--locks", details->locks, "Also list the byte-range locks of every open (as smbstatus -L)");
  status->add_flag("--leases", details->leases,
                   "Also show each open's lease or oplock and durability, and list the leases (as smbstatus -B)");
  status->callback([&ctx, json, prometheus, details] {
    ctx.exit_code = cmd_status(ctx, *json, *prometheus, *details);
  });

  auto* session = app.add_subcommand("session", "Act on client sessions");
  session->require_subcommand(1);
  auto id = std::make_shared<std::string>();
  auto* close = session->add_subcommand(
      "close", "Close a session: its open files are closed and its connection is dropped if it has no other session");
  close->add_option("ID", *id, "Session id as 'ringsmbctl status' shows it (0x... or decimal)")->required();
  close->callback([&ctx, id] { ctx.exit_code = cmd_session_close(ctx, *id); });
}

}  // namespace ringsmb::ctl
