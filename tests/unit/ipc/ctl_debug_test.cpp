// DEBUG (ctl_abi.hpp): ringsmbctl debug's request, as both daemons answer it.
#include <catch2/catch.hpp>

#include <optional>

#include "common/log.hpp"
#include "ipc/ctl_debug.hpp"

using namespace ringsmb;
using namespace ringsmb::ipc;
using namespace ringsmb::ipc::abi;

namespace {

struct Reply {
  NtStatus status;
  uint32_t level;
  std::string text;
};

Reply ask_debug(std::optional<uint32_t> level) {
  MsgBuilder b(CMD_DEBUG, 7, true);
  if (level) b.u32(ATTR_LOG_LEVEL, *level);
  ByteSpan w = b.wire();
  Bytes request(w.begin(), w.end());
  auto m = parse_message(request.data(), request.size());
  REQUIRE(m);
  Bytes answer = answer_debug(*m, 1234);
  auto r = parse_message(answer.data(), answer.size());
  REQUIRE(r);
  CHECK_FALSE(r->is_request);
  CHECK(r->seq == 7);
  return {NtStatus(r->u32(ATTR_STATUS)), r->u32(ATTR_LOG_LEVEL), r->str(ATTR_TEXT)};
}

}  // namespace

TEST_CASE("the log level scale is the key's", "[ipc][debug]") {
  CHECK(log_level_for(0) == LogLevel::Warn);
  CHECK(log_level_for(1) == LogLevel::Info);
  CHECK(log_level_for(2) == LogLevel::Debug);
  CHECK(log_level_for(10) == LogLevel::Debug);
}

TEST_CASE("DEBUG sets, reports and refuses levels", "[ipc][debug]") {
  int saved = log_level_setting();
  auto set = ask_debug(3u);
  CHECK(set.status == NtStatus::Success);
  CHECK(set.level == 3);
  CHECK(log_level_setting() == 3);
  CHECK(log_level() == LogLevel::Debug);

  auto shown = ask_debug(std::nullopt);
  CHECK(shown.status == NtStatus::Success);
  CHECK(shown.level == 3);

  auto bad = ask_debug(11u);
  CHECK(bad.status == NtStatus::InvalidParameter);
  CHECK(bad.text == "log level 11 is out of range (0..10)");
  CHECK(bad.level == 3);  // unchanged

  auto zero = ask_debug(0u);
  CHECK(zero.level == 0);
  CHECK(log_level() == LogLevel::Warn);
  set_log_level(saved);
}
