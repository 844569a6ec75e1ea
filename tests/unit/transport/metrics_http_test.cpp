// The /metrics listener's answers (transport/metrics_http.hpp) to good and
// bad requests; the integration test scrapes a running ringsmbd.
#include <catch2/catch.hpp>

#include <expected>
#include <string>

#include "transport/metrics_http.hpp"

using namespace ringsmb::transport;

namespace {

std::string answer(const std::string& request, bool* produced = nullptr) {
  return MetricsHttp::respond(request, [&] {
    if (produced) *produced = true;
    return std::expected<std::string, std::string>("ringsmb_up 1\n");
  });
}

}  // namespace

TEST_CASE("metrics http: GET /metrics answers the text format", "[transport][metrics]") {
  std::string r = answer("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(r.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(r.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n") != std::string::npos);
  CHECK(r.find("Content-Length: 13\r\n") != std::string::npos);
  CHECK(r.size() > 13);
  CHECK(r.substr(r.size() - 13) == "ringsmb_up 1\n");
  CHECK(answer("GET /metrics?name[]=x HTTP/1.0\n\n").rfind("HTTP/1.1 200", 0) == 0);
}

TEST_CASE("metrics http: HEAD has the headers only", "[transport][metrics]") {
  std::string r = answer("HEAD /metrics HTTP/1.1\r\n\r\n");
  CHECK(r.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(r.substr(r.size() - 4) == "\r\n\r\n");
}

TEST_CASE("metrics http: other paths, methods and garbage are refused without gathering", "[transport][metrics]") {
  bool produced = false;
  CHECK(answer("GET / HTTP/1.1\r\n\r\n", &produced).rfind("HTTP/1.1 404", 0) == 0);
  CHECK(answer("GET /metricsx HTTP/1.1\r\n\r\n", &produced).rfind("HTTP/1.1 404", 0) == 0);
  CHECK(answer("POST /metrics HTTP/1.1\r\n\r\n", &produced).rfind("HTTP/1.1 405", 0) == 0);
  CHECK(answer("GET /metrics\r\n\r\n", &produced).rfind("HTTP/1.1 400", 0) == 0);  // no HTTP version
  CHECK(answer("", &produced).rfind("HTTP/1.1 400", 0) == 0);
  CHECK(answer(std::string(8192, 'A'), &produced).rfind("HTTP/1.1 400", 0) == 0);
  CHECK_FALSE(produced);
}

TEST_CASE("metrics http: a worker that does not answer gives 503", "[transport][metrics]") {
  std::string r = MetricsHttp::respond("GET /metrics HTTP/1.1\r\n\r\n", [] {
    return std::expected<std::string, std::string>(std::unexpect, "1 worker(s) did not answer within 2000 ms");
  });
  CHECK(r.rfind("HTTP/1.1 503", 0) == 0);
  CHECK(r.find("did not answer") != std::string::npos);
}
