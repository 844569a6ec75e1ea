// smb2::WorkerMetrics: the latency buckets, summing workers, and the
// Prometheus text rendering (checked line by line; the integration test
// parses it with prometheus_client too).
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "smb2/metrics.hpp"

using namespace ringsmb;
using namespace ringsmb::smb2;

namespace {

bool has_line(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l == line) return true;
  return false;
}

constexpr uint16_t kCreate = uint16_t(wire::Command::Create);
constexpr uint16_t kWrite = uint16_t(wire::Command::Write);

}  // namespace

TEST_CASE("metrics: latency bucket k holds up to 2^k microseconds", "[metrics]") {
  CHECK(WorkerMetrics::latency_bucket(0) == 0);
  CHECK(WorkerMetrics::latency_bucket(1000) == 0);     // 1 us
  CHECK(WorkerMetrics::latency_bucket(1001) == 1);     // just over 1 us
  CHECK(WorkerMetrics::latency_bucket(2000) == 1);     // 2 us
  CHECK(WorkerMetrics::latency_bucket(2001) == 2);
  CHECK(WorkerMetrics::latency_bucket(4000) == 2);
  CHECK(WorkerMetrics::latency_bucket(1024000) == 10);  // 1024 us
  CHECK(WorkerMetrics::latency_bucket(1024001) == 11);
  CHECK(WorkerMetrics::latency_bucket(uint64_t(1) << 20 << 10) == kLatencyBuckets - 1);  // 2^30 ns > 2^20 us
  CHECK(WorkerMetrics::latency_bucket(uint64_t(1048576) * 1000) == 20);  // 2^20 us: the last finite bucket
  CHECK(WorkerMetrics::latency_bucket(uint64_t(60) * 1000000000) == kLatencyBuckets - 1);  // +Inf
  CHECK(WorkerMetrics::latency_bucket(UINT64_MAX - 1000) == kLatencyBuckets - 1);
}

TEST_CASE("metrics: a request is counted by command, NTSTATUS severity and latency", "[metrics]") {
  WorkerMetrics m;
  m.record(kCreate, 0x00000000, 3000);   // success, 3 us
  m.record(kCreate, 0xC0000034, 50000);  // OBJECT_NAME_NOT_FOUND: error, 50 us
  m.record(kCreate, 0x80000006, 1000);   // NO_MORE_FILES: warning
  m.record(kCreate, 0x00000103, 1000);   // PENDING: success
  m.record(0x13, 0, 1000);               // not a command: ignored
  const CommandMetrics& c = m.commands[kCreate];
  CHECK(c.responses == std::array<uint64_t, kStatusClasses>{2, 0, 1, 1});
  CHECK(c.latency[0] == 2);
  CHECK(c.latency[2] == 1);
  CHECK(c.latency[6] == 1);  // 50 us <= 64 us
  CHECK(c.latency_sum_ns == 55000);
}

TEST_CASE("metrics: workers' counters add up", "[metrics]") {
  WorkerMetrics a, b;
  a.record(kWrite, 0, 1000);
  b.record(kWrite, 0, 1000);
  b.record(kWrite, 0xC0000022, 5000);
  a.bytes_received = 10;
  b.bytes_received = 5;
  b.durable_expired = 2;
  a.refused_per_address = 1;
  a.add(b);
  CHECK(a.commands[kWrite].responses[0] == 2);
  CHECK(a.commands[kWrite].responses[3] == 1);
  CHECK(a.commands[kWrite].latency[0] == 2);
  CHECK(a.commands[kWrite].latency_sum_ns == 7000);
  CHECK(a.bytes_received == 15);
  CHECK(a.durable_expired == 2);
  CHECK(a.refused_per_address == 1);
}

TEST_CASE("metrics: the Prometheus text has counters and cumulative histograms", "[metrics]") {
  WorkerMetrics m;
  m.record(kWrite, 0, 1000);        // le 1e-06
  m.record(kWrite, 0, 3000);        // le 4e-06
  m.record(kWrite, 0xC0000022, 3000);
  m.bytes_received = 1234;
  m.bytes_sent = 99;
  m.connections_accepted = 3;
  m.refused_max_connections = 1;
  m.login_failures = 4;
  m.logins_locked_out = 1;
  m.breaks_sent = 2;
  m.durable_kept = 5;
  m.durable_reconnected = 3;
  m.durable_expired = 1;
  std::string t = render_prometheus(m);
  CHECK(has_line(t, "# TYPE ringsmb_requests_total counter"));
  CHECK(has_line(t, "ringsmb_requests_total{command=\"write\",class=\"success\"} 2"));
  CHECK(has_line(t, "ringsmb_requests_total{command=\"write\",class=\"error\"} 1"));
  CHECK(has_line(t, "ringsmb_requests_total{command=\"create\",class=\"success\"} 0"));  // every command, from the start
  CHECK_FALSE(has_line(t, "ringsmb_requests_total{command=\"cancel\",class=\"success\"} 0"));
  CHECK(has_line(t, "# TYPE ringsmb_request_duration_seconds histogram"));
  CHECK(has_line(t, "ringsmb_request_duration_seconds_bucket{command=\"write\",le=\"1e-06\"} 1"));
  CHECK(has_line(t, "ringsmb_request_duration_seconds_bucket{command=\"write\",le=\"2e-06\"} 1"));
  CHECK(has_line(t, "ringsmb_request_duration_seconds_bucket{command=\"write\",le=\"4e-06\"} 3"));
  CHECK(has_line(t, "ringsmb_request_duration_seconds_bucket{command=\"write\",le=\"1.04858\"} 3"));
  CHECK(has_line(t, "ringsmb_request_duration_seconds_bucket{command=\"write\",le=\"+Inf\"} 3"));
  CHECK(has_line(t, "ringsmb_request_duration_seconds_sum{command=\"write\"} 0.000007000"));
  CHECK(has_line(t, "ringsmb_request_duration_seconds_count{command=\"write\"} 3"));
  CHECK(t.find("ringsmb_request_duration_seconds_count{command=\"create\"}") == std::string::npos);  // unused
  CHECK(has_line(t, "ringsmb_received_bytes_total 1234"));
  CHECK(has_line(t, "ringsmb_sent_bytes_total 99"));
  CHECK(has_line(t, "ringsmb_connections_accepted_total 3"));
  CHECK(has_line(t, "ringsmb_connections_refused_total{reason=\"max_connections\"} 1"));
  CHECK(has_line(t, "ringsmb_connections_refused_total{reason=\"max_connections_per_address\"} 0"));
  CHECK(has_line(t, "ringsmb_login_failures_total 4"));
  CHECK(has_line(t, "ringsmb_logins_locked_out_total 1"));
  CHECK(has_line(t, "ringsmb_breaks_sent_total 2"));
  CHECK(has_line(t, "ringsmb_durable_opens_total{event=\"kept\"} 5"));
  CHECK(has_line(t, "ringsmb_durable_opens_total{event=\"reconnected\"} 3"));
  CHECK(has_line(t, "ringsmb_durable_opens_total{event=\"expired\"} 1"));
  // Each metric family's TYPE comes once, before its samples.
  CHECK(t.find("# TYPE ringsmb_requests_total") == t.rfind("# TYPE ringsmb_requests_total"));
}

TEST_CASE("metrics: every worker command's histogram fits the ctl message pieces", "[metrics]") {
  WorkerMetrics m;
  for (uint16_t c = 0; c < wire::kCommandCount; ++c) m.record(c, 0, 1000);
  std::string t = render_prometheus(m);
  // Whole: about 20 histograms of 24 lines; sent in 4 KiB pieces.
  CHECK(t.size() < 64 * 1024);
  CHECK(t.back() == '\n');
}
