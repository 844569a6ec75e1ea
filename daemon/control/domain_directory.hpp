// The joined domain's directory for LSA's lookups (rpc/directory_names.hpp)
// in ringsmb-ctld: with `security = ads`, a realm and a keytab, the names
// of the domain's SIDs come from its domain controllers over LDAP, bound
// as the computer account with the keytab's keys
// (kerberos/ldap_directory.hpp). Only ringsmb-ctld sets it up: the asking
// runs on a thread of its own there, never on one of ringsmbd's workers.
#pragma once

#include "config/config.hpp"

namespace ringsmb::control {

// Starts, replaces or stops the process's directory to match CFG; a
// reload that changes none of realm, keytab and workgroup keeps it (and
// what it has learnt).
void configure_domain_directory(const config::Config& cfg);

}  // namespace ringsmb::control
