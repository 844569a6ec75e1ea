#!/usr/bin/env bash
# FSCTL_QUERY_NETWORK_INTERFACE_INFO with Samba's per-interface options in
# `interfaces` (docs/configuration.md): the address the server listens on,
# with the link speed, RSS capability and index the entry gives.
source "$(dirname "$0")/lib.sh"

write_config
sed -i 's/^  interfaces = 127.0.0.1$/  interfaces = "127.0.0.1;capability=RSS,speed=25G,if_index=9"/' "$T/ringsmb.conf"
check "the interfaces entry carries its options" grep -q 'capability=RSS' "$T/ringsmb.conf"
add_user owner 'Owner-1'
start_server

if timeout 30 python3 "$(dirname "$0")/interface_info_probe.py" "$PORT" share owner 'Owner-1' > "$T/probe.out" 2>&1; then
  pass "the interface info reports the configured values ($(tail -1 "$T/probe.out"))"
else
  fail "interface info probe"
  sed 's/^/    /' "$T/probe.out" | tail -20
fi
finish
