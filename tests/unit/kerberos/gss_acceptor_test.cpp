// The acceptor's own decisions; tickets themselves are checked against a
// real KDC in tests/integration/test_kerberos.sh.
#include <catch2/catch.hpp>

#include "kerberos/gss_acceptor.hpp"

using namespace ringsmb;
using namespace ringsmb::kerberos;

TEST_CASE("only cifs/, host/ and the computer account of the realm are SMB services", "[kerberos]") {
  CHECK(is_smb_service_principal("cifs/nas.example.test@EXAMPLE.TEST", "EXAMPLE.TEST"));
  CHECK(is_smb_service_principal("HOST/nas.example.test@EXAMPLE.TEST", "EXAMPLE.TEST"));
  CHECK(is_smb_service_principal("CIFS/nas@OTHER", ""));
  CHECK_FALSE(is_smb_service_principal("cifs/nas@OTHER.TEST", "EXAMPLE.TEST"));
  CHECK_FALSE(is_smb_service_principal("HTTP/nas.example.test@EXAMPLE.TEST", "EXAMPLE.TEST"));
  CHECK_FALSE(is_smb_service_principal("cifsx/nas@EXAMPLE.TEST", "EXAMPLE.TEST"));
  CHECK_FALSE(is_smb_service_principal("cifs@EXAMPLE.TEST", "EXAMPLE.TEST"));
  CHECK_FALSE(is_smb_service_principal("cifs/nas", ""));
  CHECK_FALSE(is_smb_service_principal("", ""));
  // The computer account an AD KDC names in a ticket for cifs/nas...
  CHECK(is_smb_service_principal("NAS$@EXAMPLE.TEST", "EXAMPLE.TEST"));
  CHECK_FALSE(is_smb_service_principal("NAS$@OTHER.TEST", "EXAMPLE.TEST"));
  CHECK_FALSE(is_smb_service_principal("alice@EXAMPLE.TEST", "EXAMPLE.TEST"));
  CHECK_FALSE(is_smb_service_principal("$@EXAMPLE.TEST", "EXAMPLE.TEST"));
  CHECK_FALSE(is_smb_service_principal("krbtgt/EXAMPLE.TEST@EXAMPLE.TEST", "EXAMPLE.TEST"));
}

TEST_CASE("malformed tokens are refused with a reason, never accepted", "[kerberos]") {
  AcceptorSettings s{"FILE:/nonexistent/ringsmb-test.keytab", "EXAMPLE.TEST", ""};
  const uint8_t junk[] = {0x60, 0x05, 0x06, 0x03, 0x2a, 0x86, 0x48};
  for (size_t n = 0; n <= sizeof(junk); ++n) {
    auto r = accept_ap_req(s, ByteSpan(junk, n));
    REQUIRE_FALSE(r);
    CHECK_FALSE(r.error().reason.empty());
  }
}
