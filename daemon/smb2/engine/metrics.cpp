#include "smb2/engine/metrics.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "common/prometheus_label.hpp"
#include "smb2/engine/dispatch.hpp"

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
void histogram(std::string& o, const char* name, const std::string& labels,
               const std::array<uint64_t, kLatencyBuckets>& buckets, uint64_t sum_ns) {
  const std::string bucket = std::string(name) + "_bucket";
  uint64_t running = 0;
  for (size_t k = 0; k < kLatencyBuckets; ++k) {
    running += buckets[k];
    char le[32];
    if (k + 1 < kLatencyBuckets)
      snprintf(le, sizeof le, "%.6g", double(uint64_t(1) << k) * 1e-6);
    else
      snprintf(le, sizeof le, "+Inf");
    sample(o, bucket.c_str(), labels + ",le=\"" + le + "\"", running);
  }
  char sum[32];
  snprintf(sum, sizeof sum, "%.9f", double(sum_ns) * 1e-9);
  o += std::string(name) + "_sum{" + labels + "} " + sum + "\n";
  sample(o, (std::string(name) + "_count").c_str(), labels, running);
}

uint64_t total_of(const std::array<uint64_t, kLatencyBuckets>& buckets) {
  uint64_t total = 0;
  for (uint64_t n : buckets) total += n;
  return total;
}

void latency(std::string& o, const WorkerMetrics& m) {
  const char* name = "ringsmb_request_duration_seconds";
  header(o, name, "histogram", "Time the server spent on a request, from its arrival to its response (waits for locks, breaks or notifications excluded)");
  for (uint16_t c = 0; c < wire::kCommandCount; ++c) {
    const CommandMetrics& cm = m.commands[c];
    if (total_of(cm.latency) == 0) continue;
    histogram(o, name, "command=\"" + command_label(c) + "\"", cm.latency, cm.latency_sum_ns);
  }
}

// Label values escape backslash, double quote and newline (the format's rule).
std::string label_value(const std::string& v) { return prometheus_label_value(v); }

// The slots of T in name order (the output stays stable between scrapes).
std::vector<size_t> by_name(const ScopeTable& t) {
  std::vector<size_t> order(t.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return t.name(a) < t.name(b); });
  return order;
}

// The families of one ScopeTable: ringsmb_<KIND>_... with label KIND="name".
void scoped(std::string& o, const ScopeTable& t, const std::string& kind) {
  const std::vector<size_t> order = by_name(t);
  auto label = [&](size_t i) { return kind + "=\"" + label_value(t.name(i)) + "\""; };
  const std::string requests = "ringsmb_" + kind + "_requests_total";
  header(o, requests.c_str(), "counter",
         ("SMB2 requests answered, by " + kind + ", command and NTSTATUS severity (combinations seen)").c_str());
  for (size_t i : order)
    for (uint16_t c = 0; c < wire::kCommandCount; ++c)
      for (size_t k = 0; k < kStatusClasses; ++k)
        if (uint64_t n = t.metrics(i).responses[c][k])
          sample(o, requests.c_str(), label(i) + ",command=\"" + command_label(c) + "\",class=\"" + kClassNames[k] + "\"", n);
  const std::string duration = "ringsmb_" + kind + "_request_duration_seconds";
  header(o, duration.c_str(), "histogram", ("Time the server spent on a request, by " + kind + ", all commands").c_str());
  for (size_t i : order) histogram(o, duration.c_str(), label(i), t.metrics(i).latency, t.metrics(i).latency_sum_ns);
  const std::string read = "ringsmb_" + kind + "_read_bytes_total";
  header(o, read.c_str(), "counter", ("File data returned by READ, by " + kind).c_str());
  for (size_t i : order) sample(o, read.c_str(), label(i), t.metrics(i).bytes_read);
  const std::string written = "ringsmb_" + kind + "_written_bytes_total";
  header(o, written.c_str(), "counter", ("File data written by WRITE, by " + kind).c_str());
  for (size_t i : order) sample(o, written.c_str(), label(i), t.metrics(i).bytes_written);
}

void connections(std::string& o, const WorkerMetrics& m) {
  counter(o, "ringsmb_connections_accepted_total", "TCP connections accepted", m.connections_accepted);
  counter(o, "ringsmb_connections_moved_total",
          "Connections moved to their worker's bulk worker, having streamed large WRITEs", m.connections_moved);
  const char* name = "ringsmb_connections_refused_total";
  header(o, name, "counter", "TCP connections refused at accept, by the limit that refused them");
  sample(o, name, "reason=\"max_connections\"", m.refused_max_connections);
  sample(o, name, "reason=\"max_connections_per_address\"", m.refused_per_address);
  sample(o, name, "reason=\"descriptors\"", m.refused_descriptors);
}

}  // namespace

void ScopeMetrics::add(const ScopeMetrics& o) {
  for (size_t c = 0; c < responses.size(); ++c)
    for (size_t k = 0; k < kStatusClasses; ++k) responses[c][k] += o.responses[c][k];
  for (size_t k = 0; k < kLatencyBuckets; ++k) latency[k] += o.latency[k];
  latency_sum_ns += o.latency_sum_ns;
  bytes_read += o.bytes_read;
  bytes_written += o.bytes_written;
}

uint32_t ScopeTable::slot(const std::string& name) {
  if (auto it = index_.find(name); it != index_.end()) return it->second;
  // The last slot is the overflow's: full, every new name lands there.
  std::string key = names_.size() + 1 < kMaxScopes ? name : std::string(kOtherScope);
  if (auto it = index_.find(key); it != index_.end()) return it->second;
  uint32_t s = uint32_t(names_.size());
  names_.push_back(key);
  slots_.emplace_back();
  index_.emplace(key, s);
  return s;
}

const ScopeMetrics* ScopeTable::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &slots_[it->second];
}

void ScopeTable::add(const ScopeTable& o) {
  for (size_t i = 0; i < o.names_.size(); ++i) {
    uint32_t mine = slot(o.names_[i]);  // may grow slots_
    slots_[mine].add(o.slots_[i]);
  }
}

void WorkerMetrics::add(const WorkerMetrics& o) {
  shares.add(o.shares);
  users.add(o.users);
  for (size_t c = 0; c < commands.size(); ++c) {
    for (size_t k = 0; k < kStatusClasses; ++k) commands[c].responses[k] += o.commands[c].responses[k];
    for (size_t k = 0; k < kLatencyBuckets; ++k) commands[c].latency[k] += o.commands[c].latency[k];
    commands[c].latency_sum_ns += o.commands[c].latency_sum_ns;
  }
  bytes_received += o.bytes_received;
  bytes_received_off_worker += o.bytes_received_off_worker;
  bytes_sent += o.bytes_sent;
  connections_accepted += o.connections_accepted;
  connections_moved += o.connections_moved;
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
  counter(o, "ringsmb_received_off_worker_bytes_total",
          "Of those, bytes of large frames received by a worker's receiving thread, not by the worker",
          m.bytes_received_off_worker);
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
  scoped(o, m.shares, "share");
  scoped(o, m.users, "user");
  return o;
}

}  // namespace ringsmb::smb2
