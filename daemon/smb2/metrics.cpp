#include "smb2/metrics.hpp"

#include <cctype>
#include <cstdio>

#include "smb2/dispatch.hpp"

namespace ringsmb::smb2 {
namespace {

constexpr const char* kClassNames[kStatusClasses] = {"success", "informational", "warning", "error"};

std::string command_label(uint16_t cmd) {
  const CommandSpec* spec = command_spec(wire::Command(cmd));
  std::string name = spec ? spec->name : std::to_string(cmd);
  for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

void header(std::string& o, const char* name, const char* type, const char* help) {
  o += "# HELP ";
  o += name;
  o += ' ';
  o += help;
  o += "\n# TYPE ";
  o += name;
  o += ' ';
  o += type;
  o += '\n';
}

void sample(std::string& o, const char* name, const std::string& labels, uint64_t v) {
  o += name;
  if (!labels.empty()) o += "{" + labels + "}";
  o += ' ';
  o += std::to_string(v);
  o += '\n';
}

void counter(std::string& o, const char* name, const char* help, uint64_t v) {
  header(o, name, "counter", help);
  sample(o, name, "", v);
}

void requests(std::string& o, const WorkerMetrics& m) {
  header(o, "ringsmb_requests_total", "counter", "SMB2 requests answered, by command and NTSTATUS severity");
  for (uint16_t c = 0; c < wire::kCommandCount; ++c) {
    if (c == uint16_t(wire::Command::Cancel)) continue;  // has no response of its own
    std::string cmd = "command=\"" + command_label(c) + "\"";
    for (size_t k = 0; k < kStatusClasses; ++k)
      sample(o, "ringsmb_requests_total", cmd + ",class=\"" + kClassNames[k] + "\"", m.commands[c].responses[k]);
  }
}

// Prometheus histograms are cumulative: bucket le=X counts everything <= X.
void latency(std::string& o, const WorkerMetrics& m) {
  const char* name = "ringsmb_request_duration_seconds";
  header(o, name, "histogram", "Time the server spent on a request, from its arrival to its response (waits for locks, breaks or notifications excluded)");
  for (uint16_t c = 0; c < wire::kCommandCount; ++c) {
    const CommandMetrics& cm = m.commands[c];
    uint64_t total = 0;
    for (uint64_t n : cm.latency) total += n;
    if (total == 0) continue;
    std::string cmd = "command=\"" + command_label(c) + "\"";
    uint64_t running = 0;
    for (size_t k = 0; k < kLatencyBuckets; ++k) {
      running += cm.latency[k];
      char le[32];
      if (k + 1 < kLatencyBuckets)
        snprintf(le, sizeof le, "%.6g", double(uint64_t(1) << k) * 1e-6);
      else
        snprintf(le, sizeof le, "+Inf");
      sample(o, "ringsmb_request_duration_seconds_bucket", cmd + ",le=\"" + le + "\"", running);
    }
    char sum[32];
    snprintf(sum, sizeof sum, "%.9f", double(cm.latency_sum_ns) * 1e-9);
    o += "ringsmb_request_duration_seconds_sum{" + cmd + "} " + sum + "\n";
    sample(o, "ringsmb_request_duration_seconds_count", cmd, total);
  }
}

void connections(std::string& o, const WorkerMetrics& m) {
  counter(o, "ringsmb_connections_accepted_total", "TCP connections accepted", m.connections_accepted);
  const char* name = "ringsmb_connections_refused_total";
  header(o, name, "counter", "TCP connections refused at accept, by the limit that refused them");
  sample(o, name, "reason=\"max_connections\"", m.refused_max_connections);
  sample(o, name, "reason=\"max_connections_per_address\"", m.refused_per_address);
  sample(o, name, "reason=\"descriptors\"", m.refused_descriptors);
}

}  // namespace

void WorkerMetrics::add(const WorkerMetrics& o) {
  for (size_t c = 0; c < commands.size(); ++c) {
    for (size_t k = 0; k < kStatusClasses; ++k) commands[c].responses[k] += o.commands[c].responses[k];
    for (size_t k = 0; k < kLatencyBuckets; ++k) commands[c].latency[k] += o.commands[c].latency[k];
    commands[c].latency_sum_ns += o.commands[c].latency_sum_ns;
  }
  bytes_received += o.bytes_received;
  bytes_sent += o.bytes_sent;
  connections_accepted += o.connections_accepted;
  refused_max_connections += o.refused_max_connections;
  refused_per_address += o.refused_per_address;
  refused_descriptors += o.refused_descriptors;
  login_failures += o.login_failures;
  logins_locked_out += o.logins_locked_out;
  breaks_sent += o.breaks_sent;
  durable_kept += o.durable_kept;
  durable_reconnected += o.durable_reconnected;
  durable_expired += o.durable_expired;
}

std::string render_prometheus(const WorkerMetrics& m) {
  std::string o;
  requests(o, m);
  latency(o, m);
  counter(o, "ringsmb_received_bytes_total", "Bytes received from clients (SMB frames with their TCP framing)",
          m.bytes_received);
  counter(o, "ringsmb_sent_bytes_total", "Bytes of replies sent to clients", m.bytes_sent);
  connections(o, m);
  counter(o, "ringsmb_login_failures_total", "SESSION_SETUP refused: wrong password, unknown user, bad MIC",
          m.login_failures);
  counter(o, "ringsmb_logins_locked_out_total", "SESSION_SETUP refused because the account is locked out",
          m.logins_locked_out);
  counter(o, "ringsmb_breaks_sent_total", "Oplock and lease break notifications sent", m.breaks_sent);
  const char* name = "ringsmb_durable_opens_total";
  header(o, name, "counter", "Durable opens kept after their connection ended, reclaimed by a reconnect, expired");
  sample(o, name, "event=\"kept\"", m.durable_kept);
  sample(o, name, "event=\"reconnected\"", m.durable_reconnected);
  sample(o, name, "event=\"expired\"", m.durable_expired);
  return o;
}

}  // namespace ringsmb::smb2
