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
# RINGSMB_QUICK (the sanitizer pass of scripts/test): the list in two
# smbtorture processes at once against the one server, the second on a
# share of its own (no test meets the other's files): every entry runs,
# most of their time is smbtorture waiting for breaks and timeouts, and
# the server serves both at once (more interleavings for the sanitizers).
# The lines that name a share or run rpc.* stay in the first; smb2.notify.*
# runs alone after both (its tests expect every change of a burst in one
# reply, which a second client's load can split). The pass without
# sanitizers runs the list in one process. RINGSMB_TORTURE_STREAMS=1 or 2
# chooses either way.
streams=${RINGSMB_TORTURE_STREAMS:-$([ -n "${RINGSMB_QUICK:-}" ] && echo 2 || echo 1)}
if [ $streams = 2 ]; then owned_dir "$T/torture2"; add_share torture2 "$T/torture2" "writeable = yes"; fi
start_server
run_list() {  # run_list SHARE LIST OUTDIR
  TORTURE_TIMEOUT=${TORTURE_TIMEOUT:-60} "$RINGSMB_SOURCE_DIR/tests/conformance/smbtorture-run" \
    "//127.0.0.1/$1" torture%Torture-1 "$PORT" "$2" "$3" | tail -1
}
if [ $streams = 1 ]; then
  run_list share "$list" "$T/torture"
else
  awk -v a="$T/list.1" -v b="$T/list.2" -v c="$T/list.3" '{ line = $0; sub(/#.*/, "", line) }
    line ~ /^[ \t]*$/ { next } line ~ /^[ \t]*smb2\.notify/ { print > c; next }
    line ~ /(share|option)=/ || line ~ /^[ \t]*rpc\./ || n++ % 2 == 0 { print > a; next } { print > b }' "$list"
  # A part may be empty (a hand-made RINGSMB_TORTURE_LIST): it runs
  # nothing and adds nothing.
  for i in 1 2 3; do touch "$T/list.$i"; done
  run_list share "$T/list.1" "$T/torture" &
  first=$!
  run_list torture2 "$T/list.2" "$T/torture.2"
  wait $first
  run_list share "$T/list.3" "$T/torture.3"
  for i in 2 3; do
    cat "$T/torture.$i/results.tsv" >> "$T/torture/results.tsv"
    find "$T/torture.$i/logs" -type f -exec cp -t "$T/torture/logs/" {} +
  done
fi
# A guard against a test that outwaits its own timeouts on a loaded
# machine (docs/conformance.md): a failing test runs once more, on its own:
# it passes only if the second run passes, and the first failure is shown
# either way.
# More than a handful of failures is a regression, not a race: no rerun.
# The list's own lines, with their share= and option= words.
awk -F'\t' 'NR == FNR { if ($2 != "pass" && $2 != "skip") bad[$1] = 1; next }
  { line = $0; sub(/#.*/, "", line); name = line
    while (match(name, /[ \t]+(share|option)=[^ \t]+[ \t]*$/)) name = substr(name, 1, RSTART - 1)
    gsub(/^[ \t]+|[ \t]+$/, "", name)
    if (name in bad) { print line; delete bad[name] } }' "$T/torture/results.tsv" "$list" > "$T/rerun.list"
: > "$T/rerun.tsv"
if [ -s "$T/rerun.list" ] && [ "$(wc -l < "$T/rerun.list")" -le 5 ]; then
  mkdir -p "$T/torture-rerun"
  TORTURE_TIMEOUT=${TORTURE_TIMEOUT:-60} "$RINGSMB_SOURCE_DIR/tests/conformance/smbtorture-run" \
    //127.0.0.1/share torture%Torture-1 "$PORT" "$T/rerun.list" "$T/torture-rerun" | tail -1
  cp "$T/torture-rerun/results.tsv" "$T/rerun.tsv"
fi
log_tail() { sed 's/^/    /' "$1/logs/$(tr ' /' '__' <<< "$2").log" | tail -15; }
declare -A rerun_verdict
while IFS=$'\t' read -r name verdict _; do rerun_verdict[$name]=$verdict; done < "$T/rerun.tsv"
failed=()
: > "$T/final.tsv"
while IFS=$'\t' read -r name verdict secs; do
  again=${rerun_verdict[$name]:-}
  if [ "$verdict" = pass ]; then pass "$name (${secs}s)"
  elif [ "$again" = pass ]; then
    pass "$name: passed when run again (first run: $verdict)"; log_tail "$T/torture" "$name"
  else fail "$name: $verdict${again:+, run again: $again}"; log_tail "$T/torture" "$name"; failed+=("$name"); fi
  printf '%s\t%s\n' "$name" "$([ "$verdict" = pass ] || [ "$again" = pass ] && echo pass || echo fail)" >> "$T/final.tsv"
done < "$T/torture/results.tsv"
# Named again last: ctest's output of a long run may be cut in the middle.
[ ${#failed[@]} -eq 0 ] || echo "smbtorture tests that failed: ${failed[*]}"

# The floor: how many core-list tests passed, against tests/conformance/core.floor
# (not for another list).
if [ -n "${RINGSMB_TORTURE_LIST:-}" ]; then finish; exit; fi
core_names() { sed 's/#.*//; s/[[:space:]]*$//; s/^[[:space:]]*//' "$1" | grep -v '^$' | sort -u; }
core_passed=$(comm -12 <(core_names "$RINGSMB_SOURCE_DIR/tests/conformance/core.list") \
  <(awk -F'\t' '$2 == "pass" { print $1 }' "$T/final.tsv" | sort -u) | wc -l)
floor=$(grep -v '^#' "$RINGSMB_SOURCE_DIR/tests/conformance/core.floor" | tr -d '[:space:]')
if [ "$core_passed" -ge "$floor" ]; then pass "core list: $core_passed passed, floor $floor"
else fail "core list: $core_passed passed, below the floor of $floor (tests/conformance/core.floor)"; fi
finish
