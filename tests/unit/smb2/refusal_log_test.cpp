// The reasons for refused logins and tree connects are logged once per
// connection and at most kRefusalLinesPerMinute lines a minute.
#include <catch2/catch.hpp>

#include "smb2/engine/refusal_log.hpp"

using namespace ringsmb::smb2;

TEST_CASE("refusal log: once per connection and reason, a minute's limit across connections", "[smb2][log]") {
  const int64_t t0 = 1'000'000'000;  // far from any earlier test's window
  ConnState a;
  CHECK(refusal_may_log(a, Refusal::Ntlmv1, t0));
  CHECK_FALSE(refusal_may_log(a, Refusal::Ntlmv1, t0 + 1));  // the same client retrying
  CHECK(refusal_may_log(a, Refusal::ShareRequiresEncryption, t0 + 2));  // another reason

  uint32_t logged = 2;
  std::vector<ConnState> others(kRefusalLinesPerMinute + 5);
  for (auto& c : others) logged += refusal_may_log(c, Refusal::Ntlmv1, t0 + 3);
  CHECK(logged == kRefusalLinesPerMinute);  // the rest of the minute is dropped

  ConnState later;
  CHECK(refusal_may_log(later, Refusal::Ntlmv1, t0 + 61'000));  // a new minute
}
