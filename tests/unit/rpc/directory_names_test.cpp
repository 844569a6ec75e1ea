// The domain directory's answers: kept for a while, asked for off the
// caller's thread, and a slow or failing directory costs a bounded wait.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "rpc/directory_names.hpp"

using namespace ringsmb;
using namespace ringsmb::rpc;

namespace {

const Sid kDomain = *Sid::parse("S-1-5-21-1004336348-1177238915-682003330");

// A directory of two accounts that counts how often it is asked (for
// something: the thread's warm-up asks for nothing).
struct FakeDirectory {
  std::atomic<int> asked{0};
  std::atomic<bool> down{false};
  std::atomic<int> delay_ms{0};
  DirectoryNames::Backend backend() {
    return [this](const std::vector<Sid>& sids, const std::vector<std::string>& names)
               -> std::expected<std::vector<DomainAccountName>, std::string> {
      if (sids.empty() && names.empty()) return std::vector<DomainAccountName>{};  // the warm-up
      ++asked;
      if (delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      if (down) return std::unexpected("Can't contact LDAP server");
      const DomainAccountName staff{"EXAMPLE", "nasstaff", true, kDomain, kDomain.with_rid(1105)};
      const DomainAccountName alice{"EXAMPLE", "alice", false, kDomain, kDomain.with_rid(1104)};
      std::vector<DomainAccountName> out;
      for (const auto& account : {staff, alice}) {
        bool hit = std::find(sids.begin(), sids.end(), account.sid) != sids.end() ||
                   std::find(names.begin(), names.end(), account.name) != names.end();
        if (hit) out.push_back(account);
      }
      return out;
    };
  }
};

struct Clock {
  std::atomic<int64_t> ms{1000};
  std::function<int64_t()> fn() {
    return [this] { return ms.load(); };
  }
};

DirectoryNames::Options options(Clock& clock) {
  DirectoryNames::Options o;
  o.domain = "EXAMPLE";
  o.dns_domain = "example.test";
  o.now_ms = clock.fn();
  o.found_ttl_ms = 10000;
  o.missing_ttl_ms = 2000;
  o.retry_after_ms = 5000;
  o.wait_ms = 2000;
  return o;
}

}  // namespace

TEST_CASE("DirectoryNames: names a group's SID, keeps the answer, and leaves others unmapped", "[rpc]") {
  FakeDirectory dir;
  Clock clock;
  DirectoryNames names(dir.backend(), options(clock));
  Sid unknown = kDomain.with_rid(99999);
  Sid local = *Sid::parse("S-1-22-1-1000");  // not a domain account: never asked for
  auto got = names.by_sids({kDomain.with_rid(1105), unknown, local});
  REQUIRE(got.size() == 3);
  REQUIRE(got[0]);
  CHECK(got[0]->name == "nasstaff");
  CHECK(got[0]->is_group);
  CHECK_FALSE(got[1]);
  CHECK_FALSE(got[2]);
  CHECK(dir.asked == 1);  // one asking for the whole call
  // Kept: found ones and missing ones alike.
  CHECK(names.by_sids({kDomain.with_rid(1105), unknown})[0]);
  CHECK(dir.asked == 1);
  // A missing one is asked again sooner than a found one.
  clock.ms += 3000;
  names.by_sids({kDomain.with_rid(1105), unknown});
  CHECK(dir.asked == 2);
  clock.ms += 20000;
  CHECK(names.by_sids({kDomain.with_rid(1105)})[0]);
  CHECK(dir.asked == 3);
}

TEST_CASE("DirectoryNames: names of the joined domain to SIDs", "[rpc]") {
  FakeDirectory dir;
  Clock clock;
  DirectoryNames names(dir.backend(), options(clock));
  auto got = names.by_names({{"example", "NasStaff"}, {"example.test", "alice"}, {"OTHER", "alice"}, {"", "alice"}});
  REQUIRE(got.size() == 4);
  REQUIRE(got[0]);
  CHECK(got[0]->sid == kDomain.with_rid(1105));
  REQUIRE(got[1]);
  CHECK(got[1]->sid == kDomain.with_rid(1104));
  CHECK_FALSE(got[2]);  // another domain: not ours to ask
  REQUIRE(got[3]);      // an isolated name: the primary domain's too
  CHECK(got[3]->sid == kDomain.with_rid(1104));
  CHECK(dir.asked == 1);
  // What a name lookup found serves SID lookups too.
  CHECK(names.by_sids({kDomain.with_rid(1104)})[0]);
  CHECK(dir.asked == 1);
}

TEST_CASE("DirectoryNames: a failing directory is not asked again for a while, and nobody waits for it", "[rpc]") {
  FakeDirectory dir;
  Clock clock;
  DirectoryNames names(dir.backend(), options(clock));
  dir.down = true;
  CHECK_FALSE(names.by_sids({kDomain.with_rid(1105)})[0]);
  CHECK(dir.asked == 1);
  CHECK(names.failing());
  auto start = std::chrono::steady_clock::now();
  CHECK_FALSE(names.by_sids({kDomain.with_rid(1106)})[0]);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500));
  CHECK(dir.asked == 1);
  dir.down = false;
  clock.ms += 6000;
  CHECK(names.by_sids({kDomain.with_rid(1105)})[0]);
  CHECK(dir.asked == 2);
  CHECK_FALSE(names.failing());
}

TEST_CASE("DirectoryNames: a slow directory costs a call at most its wait; the answer serves the next", "[rpc]") {
  FakeDirectory dir;
  Clock clock;
  auto o = options(clock);
  o.wait_ms = 100;
  DirectoryNames names(dir.backend(), o);
  dir.delay_ms = 600;
  auto start = std::chrono::steady_clock::now();
  CHECK_FALSE(names.by_sids({kDomain.with_rid(1105)})[0]);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500));
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  CHECK(names.by_sids({kDomain.with_rid(1105)})[0]);
  CHECK(dir.asked == 1);
}
