#!/usr/bin/env bash
# smbtorture (Samba's conformance suite, a client we did not write) runs the
# tests of tests/conformance/ci.list against a real ringsmbd; every one must
# pass. ci.list is the part of the core list that passes reliably; the full
# tally of the core list lives in docs/conformance.md (scripts/conformance).
source "$(dirname "$0")/lib.sh"

list="$RINGSMB_SOURCE_DIR/tests/conformance/ci.list"
# rpc.srvsvc "(admin access)" runs as an administrator: share paths need "admin users".
write_config "admin users = torture"
add_user torture 'Torture-1'
start_server
TORTURE_TIMEOUT=${TORTURE_TIMEOUT:-60} "$RINGSMB_SOURCE_DIR/tests/conformance/smbtorture-run" \
  //127.0.0.1/share torture%Torture-1 "$PORT" "$list" "$T/torture" | tail -1
while IFS=$'\t' read -r name verdict secs; do
  if [ "$verdict" = pass ]; then pass "$name (${secs}s)"; else fail "$name: $verdict"; sed 's/^/    /' "$T/torture/logs/${name// /_}.log" | tail -15; fi
done < "$T/torture/results.tsv"
finish
