// smb2::WorkerMetrics: the latency buckets, summing workers, and the
// Prometheus text rendering (checked line by line; the integration test
// parses it with prometheus_client too).
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "smb2/engine/metrics.hpp"

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

TEST_CASE("metrics: per share and per user counters by slot, merged by name", "[metrics]") {
  WorkerMetrics a, b;
  uint32_t photos = a.shares.slot("photos");
  uint32_t alice = a.users.slot("alice");
  CHECK(a.shares.slot("photos") == photos);  // one slot per name
  a.record(kWrite, 0, 3000, photos, alice);
  a.record(kWrite, 0xC0000022, 1000, photos, kNoScope);
  a.record_data(false, 4096, photos, alice);
  // Worker b numbers its names in another order.
  uint32_t b_music = b.shares.slot("music");
  uint32_t b_photos = b.shares.slot("photos");
  CHECK(b_photos != photos);
  b.record(kCreate, 0, 1000, b_photos, b.users.slot("alice"));
  b.record(kCreate, 0, 1000, b_music, b.users.slot("bob"));
  b.record_data(true, 100, b_photos, kNoScope);
  a.add(b);
  const ScopeMetrics* p = a.shares.find("photos");
  REQUIRE(p);
  CHECK(p->responses[kWrite][0] == 1);
  CHECK(p->responses[kWrite][3] == 1);
  CHECK(p->responses[kCreate][0] == 1);
  CHECK(p->bytes_written == 4096);
  CHECK(p->bytes_read == 100);
  CHECK(p->latency_sum_ns == 5000);
  REQUIRE(a.shares.find("music"));
  CHECK(a.shares.find("music")->responses[kCreate][0] == 1);
  REQUIRE(a.users.find("alice"));
  CHECK(a.users.find("alice")->responses[kWrite][0] == 1);
  CHECK(a.users.find("alice")->responses[kWrite][3] == 0);  // that one had no user
  CHECK(a.users.find("alice")->responses[kCreate][0] == 1);
  CHECK(a.users.find("bob")->responses[kCreate][0] == 1);
  CHECK(a.commands[kCreate].responses[0] == 2);  // the unscoped counters as before
}

TEST_CASE("metrics: a worker's table of names is bounded", "[metrics]") {
  ScopeTable t;
  for (size_t i = 0; i < kMaxScopes + 50; ++i) t.slot("share" + std::to_string(i));
  CHECK(t.size() == kMaxScopes);
  CHECK(t.slot("another") == kMaxScopes - 1);
  CHECK(t.name(kMaxScopes - 1) == kOtherScope);
  CHECK(t.slot("share0") == 0);  // names seen before keep their slots
  CHECK(t.at(kNoScope) == nullptr);
}

TEST_CASE("metrics: the Prometheus text has share and user labels", "[metrics]") {
  WorkerMetrics m;
  uint32_t s = m.shares.slot("photos");
  uint32_t q = m.shares.slot("odd \"name\"\\");
  uint32_t u = m.users.slot("alice");
  m.record(kWrite, 0, 3000, s, u);
  m.record(kCreate, 0xC0000034, 1000, q, u);
  m.record_data(false, 4096, s, u);
  std::string t = render_prometheus(m);
  CHECK(has_line(t, "# TYPE ringsmb_share_requests_total counter"));
  CHECK(has_line(t, "ringsmb_share_requests_total{share=\"photos\",command=\"write\",class=\"success\"} 1"));
  CHECK_FALSE(has_line(t, "ringsmb_share_requests_total{share=\"photos\",command=\"write\",class=\"error\"} 0"));
  CHECK(has_line(t, "ringsmb_share_requests_total{share=\"odd \\\"name\\\"\\\\\",command=\"create\",class=\"error\"} 1"));
  CHECK(has_line(t, "ringsmb_user_requests_total{user=\"alice\",command=\"create\",class=\"error\"} 1"));
  CHECK(has_line(t, "ringsmb_share_written_bytes_total{share=\"photos\"} 4096"));
  CHECK(has_line(t, "ringsmb_share_read_bytes_total{share=\"photos\"} 0"));
  CHECK(has_line(t, "ringsmb_user_written_bytes_total{user=\"alice\"} 4096"));
  CHECK(has_line(t, "# TYPE ringsmb_user_request_duration_seconds histogram"));
  CHECK(has_line(t, "ringsmb_user_request_duration_seconds_bucket{user=\"alice\",le=\"1e-06\"} 1"));
  CHECK(has_line(t, "ringsmb_user_request_duration_seconds_bucket{user=\"alice\",le=\"+Inf\"} 2"));
  CHECK(has_line(t, "ringsmb_user_request_duration_seconds_count{user=\"alice\"} 2"));
  CHECK(has_line(t, "ringsmb_share_request_duration_seconds_sum{share=\"photos\"} 0.000003000"));
  CHECK(t.find("# TYPE ringsmb_share_requests_total") == t.rfind("# TYPE ringsmb_share_requests_total"));
}
