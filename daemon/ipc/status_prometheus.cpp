// `status --prometheus` and /metrics: the server's current state in the
// Prometheus text exposition format, for the node exporter's textfile collector
// (ringsmbctl status --prometheus > DIR/ringsmb.prom.$$ && mv ...). Gauges
// computed from the same lists `status` prints: connections by dialect,
// sessions and their channels by user, tree connects by share, open files
// by share and user.
#include <algorithm>
#include <iostream>
#include <map>
#include <string>

#include "common/prometheus_label.hpp"
#include "ipc/status_prometheus.hpp"

namespace ringsmb::ipc {

namespace {

// Label values escape backslash, double quote and newline (the format's rule).
std::string label_value(const std::string& v) { return prometheus_label_value(v); }

using Labels = std::map<std::string, std::string>;  // name -> value

std::string labels_text(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (const auto& [k, v] : labels) out += (out.size() > 1 ? "," : "") + k + "=\"" + label_value(v) + "\"";
  return out + "}";
}

void gauge(std::ostream& o, const std::string& name, const std::string& help, const std::map<Labels, size_t>& values) {
  o << "# HELP " << name << " " << help << "\n# TYPE " << name << " gauge\n";
  for (const auto& [labels, n] : values) o << name << labels_text(labels) << " " << n << "\n";
}

}  // namespace

void print_prometheus(std::ostream& o, const ServerStatus* s) {
  o << "# HELP ringsmb_up 1 if ringsmbd answered, 0 if it is not running\n# TYPE ringsmb_up gauge\n"
    << "ringsmb_up " << (s ? 1 : 0) << "\n";
  if (!s) return;
  std::map<Labels, size_t> connections{{{}, 0}}, sessions, trees, files, kept;
  std::map<Labels, size_t> connections_by_dialect;
  for (const auto& c : s->connections) {
    ++connections[{}];
    ++connections_by_dialect[{{"dialect", dialect_name(c.dialect)}}];
  }
  std::map<Labels, size_t> channels;
  for (const auto& x : s->sessions) {
    ++sessions[{{"user", x.user}}];
    channels[{{"user", x.user}}] += std::max<size_t>(1, x.channels.size());  // none listed: an older ringsmbd
  }
  for (const auto& x : s->trees) ++trees[{{"share", x.share}}];
  for (const auto& x : s->open_files)
    ++(x.flags & abi::OPEN_DISCONNECTED ? kept : files)[{{"share", x.share}, {"user", x.user}}];
  gauge(o, "ringsmb_connections", "Client connections", connections);
  gauge(o, "ringsmb_connections_by_dialect", "Client connections by negotiated SMB dialect", connections_by_dialect);
  gauge(o, "ringsmb_sessions", "Logged-in sessions by user", sessions);
  gauge(o, "ringsmb_channels", "Connections of logged-in sessions (multichannel: more than one each), by user",
        channels);
  gauge(o, "ringsmb_tree_connects", "Tree connects by share", trees);
  gauge(o, "ringsmb_open_files", "Open files by share and user", files);
  gauge(o, "ringsmb_disconnected_opens", "Durable opens kept for their client's reconnect, by share and user", kept);
}

}  // namespace ringsmb::ipc
