#!/usr/bin/env bash
# ringsmb's Cockpit page (cockpit/) in a real browser: headless Chromium
# driven by Selenium (cockpit_ui.py) through a cockpit-ws this test starts
# on a free loopback port, against a ringsmbd it starts. Through the page:
# a user and a share are added (then smbclient uses them), the share is
# edited, a session is closed, counters are drawn, the user's password is
# set, both are deleted; bad input shows ringsmbctl's own error text. Then
# the page with a bridge running as an ordinary user is refused what
# ringsmbctl refuses that user, in ringsmbctl's words.
#
# cockpit-ws runs with --local-session: it starts cockpit-bridge as this
# process's user without a login (no PAM, no systemd, which a container
# lacks); the page is the one a logged-in admin gets. Skipped (exit 77)
# when cockpit-ws, Chromium, chromedriver or Selenium are not installed
# (scripts/install-deps.sh installs them).
# RINGSMB_QUICK (the sanitizer pass of scripts/test): skipped. The page's
# part of ringsmbd is the admin endpoint behind ringsmbctl (users, shares,
# status, session and file close, counters), which test_admin,
# test_admin_ops, test_ctl_json and test_prometheus drive in that pass;
# what this test adds is the page and the browser, checked in the pass
# without sanitizers.
if [ -n "${RINGSMB_QUICK:-}" ]; then
  echo "SKIP: RINGSMB_QUICK (the ringsmbctl commands the page runs are tested by test_admin, test_admin_ops, test_ctl_json, test_prometheus)"
  exit 77
fi
PY=/usr/bin/python3
missing=()
for f in /usr/lib/cockpit/cockpit-ws /usr/bin/cockpit-bridge /usr/lib/chromium/chromium /usr/bin/chromedriver; do
  [ -x "$f" ] || missing+=("$f")
done
ls /usr/share/cockpit/base1/cockpit.js* > /dev/null 2>&1 || missing+=(/usr/share/cockpit/base1/cockpit.js)
"$PY" -c "import selenium" 2> /dev/null || missing+=("python3-selenium")
if [ ${#missing[@]} -gt 0 ]; then
  echo "SKIP: not installed: ${missing[*]} (apt-get install cockpit-ws cockpit-bridge cockpit-system chromium chromium-driver python3-selenium)"
  exit 77
fi

source "$(dirname "$0")/lib.sh"
WS_PID=""
stop_ws() {
  if [ -n "$WS_PID" ]; then
    kill "$WS_PID" 2> /dev/null || true
    wait "$WS_PID" 2> /dev/null || true
    WS_PID=""
  fi
}
# start_ws [runuser -u USER --]: cockpit-ws and its bridge (as USER) on a
# free port; sets WS_PORT and URL.
start_ws() {
  WS_PORT=$(free_port)
  URL="http://127.0.0.1:$WS_PORT/cockpit/@localhost/ringsmb/index.html"
  "$@" env XDG_DATA_HOME="$T/xdg" XDG_CONFIG_HOME="$T/xdg-config" \
    /usr/lib/cockpit/cockpit-ws --local-session=/usr/bin/cockpit-bridge --port "$WS_PORT" --address 127.0.0.1 \
    > "$T/cockpit-ws.log" 2>&1 &
  WS_PID=$!
  for _ in $(seq 1 50); do
    curl -fs -o /dev/null "$URL" && return 0
    sleep 0.1
  done
}
# run_ui LOG [VAR=VALUE...]: cockpit_ui.py against the running cockpit-ws.
run_ui() {
  local log=$1
  shift
  env "$@" COCKPIT_URL="$URL" CTL="$T/bin/ringsmbctl" SMB_PORT="$PORT" SHARE_DIR="$T/docs" \
    MISSING_DIR="$T/no-such-dir" UNIX_USER="$TEST_UNIX_USER" WORK="$T" \
    timeout 120 "$PY" "$(dirname "$0")/cockpit_ui.py" > "$log" 2>&1 || true
  cat "$log"
  PASSES=$((PASSES + $(grep -c '^PASS: ' "$log" || true)))
  FAILURES=$((FAILURES + $(grep -c '^FAIL: ' "$log" || true)))
}
trap 'stop_ws; cleanup' EXIT

write_config
start_server

# The page runs the ringsmbctl its manifest's config names; here that is
# the build's, with the test's configuration.
mkdir -p "$T/bin" "$T/xdg/cockpit/ringsmb"
cat > "$T/bin/ringsmbctl" <<EOS
#!/bin/sh
exec '$RINGSMBCTL' --config '$T/ringsmb.conf' "\$@"
EOS
chmod 755 "$T/bin/ringsmbctl"
# The module from the source tree, where cockpit-bridge looks for a user's
# packages ($XDG_DATA_HOME/cockpit), its manifest pointing at that wrapper.
for f in "$RINGSMB_SOURCE_DIR"/cockpit/*; do ln -s "$f" "$T/xdg/cockpit/ringsmb/"; done
rm "$T/xdg/cockpit/ringsmb/manifest.json"
python3 -c "
import json, sys
m = json.load(open(sys.argv[1]))
assert m['config']['ringsmbctl'] == '/usr/sbin/ringsmbctl', m
m['config']['ringsmbctl'] = sys.argv[2]
json.dump(m, open(sys.argv[3], 'w'))" "$RINGSMB_SOURCE_DIR/cockpit/manifest.json" "$T/bin/ringsmbctl" "$T/xdg/cockpit/ringsmb/manifest.json"

start_ws
check "cockpit-ws serves the module" curl -fs -o /dev/null "$URL"
check "the shell lists the module in its menu" \
  bash -c "curl -fs 'http://127.0.0.1:$WS_PORT/cockpit/@localhost/manifests.json' | grep -q 'SMB file sharing'"

owned_dir "$T/docs"
run_ui "$T/ui.out"
if ! grep -q "no script errors in the browser console" "$T/ui.out"; then
  fail "the browser test ran to its end"
  tail -20 "$T/cockpit-ws.log"
fi
stop_ws

# The same page for an ordinary user (the bridge runs as that user): it
# can do no more than ringsmbctl lets that user do.
start_ws runuser -u "$TEST_UNIX_USER2" --
run_ui "$T/ui-unprivileged.out" UNPRIVILEGED_AS="$TEST_UNIX_USER2"
stop_ws
finish
