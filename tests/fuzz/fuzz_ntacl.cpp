// libFuzzer target: a security descriptor comes straight off the wire
// (SET_INFO security, the SecD create context) or from the
// trusted.ringsmb.ntacl xattr, so ntacl::parse and decode_ntacl_value must
// cope with any bytes. A descriptor that parsed must encode back to one
// that parses the same, and inheritance and the access check must run on
// it without failing.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "vfs/ntacl.hpp"
#include "vfs/ntacl_store.hpp"

namespace {

using namespace ringsmb;
using namespace ringsmb::vfs;

// An invariant that does not hold: name its line, then abort (a finding).
void check_at(bool ok, int line) {
  if (ok) return;
  fprintf(stderr, "fuzz_ntacl: invariant at line %d does not hold\n", line);
  abort();
}
#define check(ok) check_at((ok), __LINE__)

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteSpan in(data, size);
  (void)decode_ntacl_value(in);
  auto sd = ntacl::parse(in);
  if (!sd) return 0;
  Bytes encoded = ntacl::serialize(*sd);
  auto again = ntacl::parse(encoded);
  check(again.has_value());
  // serialize() keeps the owner, group and DACL and, of the control bits,
  // only the DACL's (a SACL is never stored; the *_DEFAULTED bits go).
  check(again->owner == sd->owner && again->group == sd->group && again->dacl == sd->dacl);
  check(ntacl::serialize(*again) == encoded);

  ntacl::Token token;
  token.sids = {ntacl::unix_user_sid(1000), ntacl::unix_group_sid(100), ntacl::world_sid()};
  uint32_t desired = size >= 4 ? load_le32(data) : ntacl::kMaximumAllowed;
  auto granted = ntacl::access_check(*sd, token, desired);
  if (granted) check((ntacl::map_generic_file(desired) & ~ntacl::kMaximumAllowed & ~*granted) == 0);
  check((ntacl::maximal_access(*sd, token) & ~ntacl::kFileAllAccess) == 0);
  for (bool dir : {false, true}) {
    auto child = ntacl::create_descriptor(&*sd, nullptr, dir, ntacl::unix_user_sid(1000), ntacl::unix_group_sid(100),
                                          std::nullopt);
    auto child_again = ntacl::parse(ntacl::serialize(child));
    check(child_again.has_value());
    // What a file inherits never propagates further.
    if (!dir && child.dacl)
      for (const auto& a : child.dacl->aces)
        if (a.raw.empty()) check((a.flags & 0x0F) == 0);
  }
  return 0;
}
