#!/usr/bin/env bash
# smbtorture (Samba's conformance suite, a client we did not write) runs the
# tests of tests/conformance/ci.list against a real ringsmbd; every one must
# pass. ci.list is the part of the core list that passes reliably; the full
# tally of the core list lives in docs/conformance.md (scripts/conformance).
# The core tests among them must number at least tests/conformance/core.floor.
source "$(dirname "$0")/lib.sh"

# RINGSMB_TORTURE_LIST runs another list (to repeat one flaky test, say).
list="${RINGSMB_TORTURE_LIST:-$RINGSMB_SOURCE_DIR/tests/conformance/ci.list}"
# rpc.srvsvc "(admin access)" runs as an administrator: share paths need "admin users".
# Tests fail logons on purpose (bad passwords, invalid NTLMSSP); the login
# throttle would then hold every later login from 127.0.0.1 for up to its
# maximum delay, which makes the run outlast ctest's limit. test_login_throttle
# tests the throttle.
write_config "admin users = torture" "login failure delay = 0"
add_conformance_shares
add_user torture 'Torture-1'
start_server
TORTURE_TIMEOUT=${TORTURE_TIMEOUT:-60} "$RINGSMB_SOURCE_DIR/tests/conformance/smbtorture-run" \
  //127.0.0.1/share torture%Torture-1 "$PORT" "$list" "$T/torture" | tail -1
while IFS=$'\t' read -r name verdict secs; do
  if [ "$verdict" = pass ]; then pass "$name (${secs}s)"; else fail "$name: $verdict"; sed 's/^/    /' "$T/torture/logs/$(tr ' /' '__' <<< "$name").log" | tail -15; fi
done < "$T/torture/results.tsv"

# The floor: how many core-list tests passed, against tests/conformance/core.floor
# (not for another list).
if [ -n "${RINGSMB_TORTURE_LIST:-}" ]; then finish; exit; fi
core_names() { sed 's/#.*//; s/[[:space:]]*$//; s/^[[:space:]]*//' "$1" | grep -v '^$' | sort -u; }
core_passed=$(comm -12 <(core_names "$RINGSMB_SOURCE_DIR/tests/conformance/core.list") \
  <(awk -F'\t' '$2 == "pass" { print $1 }' "$T/torture/results.tsv" | sort -u) | wc -l)
floor=$(grep -v '^#' "$RINGSMB_SOURCE_DIR/tests/conformance/core.floor" | tr -d '[:space:]')
if [ "$core_passed" -ge "$floor" ]; then pass "core list: $core_passed passed, floor $floor"
else fail "core list: $core_passed passed, below the floor of $floor (tests/conformance/core.floor)"; fi
finish
