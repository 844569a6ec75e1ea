#!/usr/bin/env bash
# The admin workflow with real smbclient, in both control-plane modes
# (ringsmb-ctld, and --no-ctld): while the server runs, ringsmbctl adds a
# share and a user, the user writes; share set --read-only makes new writes
# fail while a connected client keeps reading; status shows the connected
# session, its tree and its open file (also as JSON); session close ends it;
# user del makes logins fail; share del makes the share unreachable; the
# error messages and exit codes of the documented failures.
source "$(dirname "$0")/lib.sh"

LONG_PID=""
# A client that stays connected: smbclient reading commands from a fifo.
start_long_client() {  # start_long_client CRED SHARE [smbclient options...]
  local cred=$1 share=$2
  shift 2
  rm -f "$T/cmds"
  mkfifo "$T/cmds"
  timeout 300 smbclient "//127.0.0.1/$share" -p "$PORT" -U "$cred" "$@" < "$T/cmds" > "$T/long.out" 2>&1 &
  LONG_PID=$!
  exec 3> "$T/cmds"
}
long_cmd() { echo "$1" >&3; }
stop_long_client() {
  if [ -n "$LONG_PID" ]; then
    exec 3>&- || true
    wait "$LONG_PID" 2>/dev/null || true
    LONG_PID=""
  fi
}
# wait_for COMMAND...: up to 10 s for a condition.
wait_for() {
  for _ in $(seq 1 100); do
    "$@" > /dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}

# The json document of `status --json` must parse and satisfy a python check.
json_check() {  # json_check 'python expression over d'
  CTL status --json > "$T/status.json" &&
    python3 -c "import json,sys; d=json.load(open('$T/status.json')); sys.exit(0 if ($1) else 1)"
}

run_workflow() {  # run_workflow MODE_LABEL
  local mode=$1
  local dir="$T/projects-$mode"
  owned_dir "$dir"
  head -c 200000 /dev/urandom > "$T/payload"
  cp "$T/ringsmb.conf" "$T/before.conf"

  check "[$mode] share add while the server runs" CTL share add projects --path "$dir" --comment "Team projects"
  check "[$mode] share add keeps the rest of the file byte for byte" \
    cmp -n "$(stat -c %s "$T/before.conf")" "$T/before.conf" "$T/ringsmb.conf"
  check "[$mode] user add while the server runs" \
    bash -c "echo 'secret-B2' | '$RINGSMBCTL' --config '$T/ringsmb.conf' user add bob --password-stdin --unix-user $TEST_UNIX_USER"
  check "[$mode] the new user writes to the new share" smb "bob%secret-B2" projects "put $T/payload f1"
  check "[$mode] the file arrived intact" cmp "$T/payload" "$dir/f1"

  # A client that stays connected across the changes below, with a file open.
  start_long_client "bob%secret-B2" projects --client-protection=encrypt
  long_cmd "open f1"
  check "[$mode] status shows the connected, encrypted session" \
    wait_for bash -c "'$RINGSMBCTL' --config '$T/ringsmb.conf' status | grep -E '^  0x[0-9a-f]{16} +bob +127\.0\.0\.1 +3\.1\.1 +yes +yes'"
  check "[$mode] status --json parses and lists session, tree and open file" \
    wait_for json_check "any(s['user']=='bob' and s['dialect']=='3.1.1' and s['client']=='127.0.0.1' and s['encryption'] and s['signing'] for s in d['sessions']) and any(t['share']=='projects' and t['user']=='bob' for t in d['tree_connects']) and any(f['path']=='f1' and f['share']=='projects' and f['user']=='bob' for f in d['open_files']) and len(d['connections'])>=1"

  check "[$mode] share set --read-only" CTL share set projects --read-only
  expect_status "[$mode] a new connection cannot write to the read-only share" NT_STATUS_ACCESS_DENIED \
    smb "bob%secret-B2" projects "put $T/payload f2"
  check "[$mode] no file was created by the refused write" test ! -e "$dir/f2"
  long_cmd "get f1 $T/back-$mode"
  check "[$mode] the connected client keeps reading" wait_for cmp "$T/payload" "$T/back-$mode"
  check "[$mode] a new connection still reads" smb "bob%secret-B2" projects "get f1 $T/back2-$mode"
  check "[$mode] share set --writable makes it writable again" CTL share set projects --writable
  check "[$mode] a new connection writes again" smb "bob%secret-B2" projects "put $T/payload f3"

  # session close: the long client's session disappears from status.
  local sid
  sid=$(python3 -c "import json; d=json.load(open('$T/status.json')); print([s['session_id'] for s in d['sessions'] if s['user']=='bob'][0])")
  check "[$mode] session close" CTL session close "$sid"
  check "[$mode] the closed session is gone from status" \
    wait_for json_check "not any(s['session_id']=='$sid' for s in d['sessions']) and not d['open_files']"
  expect_exit "[$mode] closing it again: not found" 3 "session $sid not found" CTL session close "$sid"
  stop_long_client

  check "[$mode] user del" CTL user del bob
  expect_status "[$mode] a deleted user cannot log in" NT_STATUS_LOGON_FAILURE smb "bob%secret-B2" projects "ls"
  check "[$mode] share del" CTL share del projects
  check "[$mode] share del restores the file byte for byte" cmp "$T/before.conf" "$T/ringsmb.conf"
  expect_status "[$mode] a deleted share is unreachable" NT_STATUS_BAD_NETWORK_NAME smb "alice%secret-A1" projects "ls"
  check "[$mode] other shares still work" smb "alice%secret-A1" share "ls"
}

write_config
# Comments, odd spacing and a continuation line that edits must keep.
cat >> "$T/ringsmb.conf" <<'EOF'
; a comment the editor must keep
#   and another one
  comment = the first share, \
            continued
EOF
add_user alice 'secret-A1'

start_server
run_workflow ctld
check "[ctld] SIGHUP still reloads" kill -HUP "$SERVER_PID"
check "[ctld] reload" CTL reload
stop_server
check "ringsmbd removed its pid file" test ! -e "$T/ringsmbd.pid"

start_server --no-ctld
run_workflow no-ctld
# The in-process control plane reloads on SIGHUP too: add a share by hand.
owned_dir "$T/byhand"
add_share byhand "$T/byhand" "writeable = yes"
expect_status "[no-ctld] a share added by hand is unknown before SIGHUP" NT_STATUS_BAD_NETWORK_NAME \
  smb "alice%secret-A1" byhand "ls"
kill -HUP "$SERVER_PID"
check "[no-ctld] ... and served after SIGHUP" wait_for smb "alice%secret-A1" byhand "ls"
# A broken file is refused by reload; the server keeps the previous one.
cp "$T/ringsmb.conf" "$T/good.conf"
echo "[broken" >> "$T/ringsmb.conf"
expect_exit "[no-ctld] reload reports a broken file" 1 "reload failed" "$RINGSMBCTL" --config "$T/good.conf" reload
expect_exit "[no-ctld] ... naming file and line" 1 "ringsmb.conf:" "$RINGSMBCTL" --config "$T/good.conf" reload
cp "$T/good.conf" "$T/ringsmb.conf"
check "[no-ctld] the server kept serving" smb "alice%secret-A1" byhand "ls"

# Documented errors and exit codes.
expect_exit "share del of a missing share" 3 "share 'nope' not found" CTL share del nope
expect_exit "share set of a missing share" 3 "share 'nope' not found" CTL share set nope --read-only
expect_exit "share show of a missing share" 3 "share 'nope' not found" CTL share show nope
expect_exit "share add with a missing path" 3 "path '/nonexistent/dir' does not exist" \
  CTL share add newone --path /nonexistent/dir
expect_exit "share add of an existing share" 4 "share 'share' already exists" CTL share add SHARE --path "$T/share"
expect_exit "share add of a reserved name" 2 "reserved" CTL share add global --path "$T/share"
expect_exit "user del of a missing user" 3 "user 'nobody2' not found" CTL user del nobody2
expect_exit "an unknown subcommand is a usage error" 2 "" CTL share frobnicate
check "the failures left the file alone" cmp "$T/good.conf" "$T/ringsmb.conf"
cp "$T/ringsmb.conf" "$T/ringsmb.conf.ro-test"
chmod 644 "$T/ringsmb.conf"
expect_exit "a user who cannot write the file: permission denied" 5 "permission denied: run as root" \
  setpriv --reuid=nobody --regid=nogroup --clear-groups "$RINGSMBCTL" --config "$T/ringsmb.conf" \
  share add x --path "$T/share"
expect_exit "status as an unprivileged user: permission denied" 5 "permission denied: run as root" \
  setpriv --reuid=nobody --regid=nogroup --clear-groups "$RINGSMBCTL" --config "$T/ringsmb.conf" status
check "share list" bash -c "'$RINGSMBCTL' --config '$T/ringsmb.conf' share list | grep -E '^byhand +$T/byhand +writable'"
check "share show prints the lines as written" \
  bash -c "'$RINGSMBCTL' --config '$T/ringsmb.conf' share show share | grep -F 'comment = the first share,'"
for sub in "" "share" "share add" "share set" "share del" "share list" "share show" "user" "user add" \
  "user del" "user passwd" "user list" "status" "session" "session close" "reload" "shutdown" "config check"; do
  # shellcheck disable=SC2086
  check "--help of '$sub' shows the exit codes" bash -c "'$RINGSMBCTL' $sub --help | grep -q 'permission denied (run as root)'"
done

# user add without --password-stdin: two prompts on the terminal, no echo.
PTY="python3 $(dirname "$0")/pty_password.py"
check "user add on a terminal" bash -c "$PTY 'pw-Tty1' 'pw-Tty1' '$RINGSMBCTL' --config '$T/ringsmb.conf' \
  user add carol --unix-user $TEST_UNIX_USER > '$T/pty.out'"
check "... prompts twice" test "$(grep -c 'password: ' "$T/pty.out")" = 2
check "... without echoing the password" bash -c "! grep -q 'pw-Tty1' '$T/pty.out'"
check "... and the typed password logs in" smb "carol%pw-Tty1" share "ls"
expect_exit "user passwd with two different answers" 1 "passwords do not match" \
  $PTY 'pw-Tty2' 'pw-Other' "$RINGSMBCTL" --config "$T/ringsmb.conf" user passwd carol
check "... keeps the old password" smb "carol%pw-Tty1" share "ls"

check "ringsmbctl shutdown stops the --no-ctld server" CTL shutdown
check "ringsmbd exited" wait_for bash -c "! kill -0 $SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""
expect_exit "status when the server is not running" 6 "not running" CTL status
finish
