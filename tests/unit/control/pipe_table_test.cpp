#include <catch2/catch.hpp>

#include <memory>

#include "config/config.hpp"
#include "control/pipe_table.hpp"

using namespace ringsmb;
using namespace ringsmb::control;

namespace {

ipc::PipeOpenRequest open_request(uint32_t handle, std::string pipe = "srvsvc") {
  ipc::PipeOpenRequest req;
  req.handle = handle;
  req.pipe = std::move(pipe);
  req.user = "alice";
  return req;
}

}  // namespace

TEST_CASE("pipe table: opens served pipes and answers unknown handles", "[control][pipe_table]") {
  auto cfg = std::make_shared<const config::Config>();
  PipeTable table;
  CHECK(table.open(open_request(1, "nosuchpipe"), cfg).status == NtStatus::ObjectNameNotFound);
  CHECK(table.open(open_request(1), cfg).status == NtStatus::Success);
  CHECK(table.size() == 1);
  CHECK(table.read(2, 100).status == NtStatus::InvalidHandle);
  CHECK(table.write(2, {}).status == NtStatus::InvalidHandle);
  CHECK(table.close(1));
  CHECK_FALSE(table.close(1));
  CHECK(table.size() == 0);
}

TEST_CASE("pipe table: bounded; a full table refuses new handles, not reused ones", "[control][pipe_table]") {
  auto cfg = std::make_shared<const config::Config>();
  PipeTable table(3);
  for (uint32_t h = 1; h <= 3; ++h) REQUIRE(table.open(open_request(h), cfg).status == NtStatus::Success);
  CHECK(table.open(open_request(4), cfg).status == NtStatus::InsufficientResources);
  CHECK(table.size() == 3);
  // A handle ringsmbd forgot to close is replaced, not refused.
  CHECK(table.open(open_request(2), cfg).status == NtStatus::Success);
  CHECK(table.size() == 3);
  // A pipe we do not serve is still ObjectNameNotFound when full.
  CHECK(table.open(open_request(5, "nosuchpipe"), cfg).status == NtStatus::ObjectNameNotFound);
  table.close(1);
  CHECK(table.open(open_request(4), cfg).status == NtStatus::Success);
  CHECK(table.clear() == 3);
  CHECK(table.size() == 0);
}

TEST_CASE("pipe table: the default bound is the one both control planes use", "[control][pipe_table]") {
  STATIC_REQUIRE(PipeTable::kMaxOpenPipes == 16384);
  auto cfg = std::make_shared<const config::Config>();
  PipeTable table;
  for (uint32_t h = 0; h < PipeTable::kMaxOpenPipes; ++h) REQUIRE(table.open(open_request(h), cfg).status == NtStatus::Success);
  CHECK(table.open(open_request(PipeTable::kMaxOpenPipes), cfg).status == NtStatus::InsufficientResources);
}
