// The LDAP directory's encodings: search base, objectSid values, filters.
// (The asking itself runs against a real domain controller in
// tests/integration/test_ad_dc.sh.)
#include <catch2/catch.hpp>

#include "kerberos/ldap_directory.hpp"

using namespace ringsmb::kerberos;

TEST_CASE("ldap directory: the realm's search base", "[kerberos]") {
  CHECK(realm_base_dn("AD.RINGSMB.TEST") == "DC=ad,DC=ringsmb,DC=test");
  CHECK(realm_base_dn("EXAMPLE") == "DC=example");
  CHECK(realm_base_dn("A..B.") == "DC=a,DC=b");
}

TEST_CASE("ldap directory: objectSid values in and out", "[kerberos]") {
  // S-1-5-21-1004336348-1177238915-682003330-1105 as AD stores it (MS-DTYP 2.4.2.2).
  const std::string bytes("\x01\x05\x00\x00\x00\x00\x00\x05\x15\x00\x00\x00\xdc\xf4\xdc\x3b\x83\x3d\x2b\x46"
                          "\x82\x8b\xa6\x28\x51\x04\x00\x00",
                          28);
  auto sid = sid_from_binary(bytes);
  REQUIRE(sid);
  CHECK(sid->to_string() == "S-1-5-21-1004336348-1177238915-682003330-1105");
  std::string filter = sid_filter_value(*sid);
  CHECK(filter.starts_with("\\01\\05\\00\\00\\00\\00\\00\\05\\15\\00\\00\\00"));
  CHECK(filter.size() == 28 * 3);
  CHECK_FALSE(sid_from_binary(bytes.substr(0, 27)));           // one byte short
  CHECK_FALSE(sid_from_binary(std::string("\x02") + bytes.substr(1)));  // revision 2
  CHECK_FALSE(sid_from_binary(""));
}

TEST_CASE("ldap directory: filter values escape RFC 4515's specials", "[kerberos]") {
  CHECK(escape_filter_value("nasstaff") == "nasstaff");
  CHECK(escape_filter_value("a*)(objectClass=*") == "a\\2a\\29\\28objectClass=\\2a");
  CHECK(escape_filter_value(std::string("x\\\0y", 4)) == "x\\5c\\00y");
}
