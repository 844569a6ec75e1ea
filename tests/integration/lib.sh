# Shared helpers for integration tests: start a real ringsmbd on a free
# loopback port with its own config, users and share, drive real clients.
# Source it; every test gets its own temporary directory, removed on exit.
set -euo pipefail

: "${RINGSMB_BUILD_DIR:?run through ctest (RINGSMB_BUILD_DIR unset)}"
: "${RINGSMB_SOURCE_DIR:?run through ctest (RINGSMB_SOURCE_DIR unset)}"
RINGSMBD="$RINGSMB_BUILD_DIR/daemon/ringsmbd"
RINGSMBCTL="$RINGSMB_BUILD_DIR/tools/ringsmbctl"

T=$(mktemp -d /tmp/ringsmb-test.XXXXXX)
chmod 755 "$T"
SERVER_PID=""
PORT=""
FAILURES=0
PASSES=0

cleanup() {
  stop_server
  rm -rf "$T"
}
trap cleanup EXIT

# The Unix accounts SMB users are mapped to: ordinary users, as on a NAS
# (none of them root). TEST_UNIX_USER owns the test's shares; TEST_UNIX_USER2
# is another ordinary user of the same shares. A test about root names root
# itself (add_user NAME PASS root).
TEST_UNIX_USER=rsmb_owner
TEST_UNIX_USER2=rsmb_other
ensure_unix_user() {  # ensure_unix_user NAME: an ordinary account without a home or a shell
  id "$1" >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin "$1" 2>/dev/null || id "$1" >/dev/null
}
ensure_unix_user "$TEST_UNIX_USER"
ensure_unix_user "$TEST_UNIX_USER2"

# owned_dir DIR [USER]: makes DIR, owned by USER (default TEST_UNIX_USER), mode 0755.
owned_dir() {
  mkdir -p "$1"
  chown "${2:-$TEST_UNIX_USER}": "$1"
  chmod 755 "$1"
}

# mount_btrfs_image SIZE: a loop-mounted btrfs in $T/mnt (exported as M) with
# a subvolume $M/data owned by the share's owner and a root-owned
# $M/data/.snapshots, as snapper or a cron job makes it; skips the test
# (exit 0) where btrfs is missing. The image is unmounted before $T is
# removed; if it cannot be, nothing below the mount point is removed.
mount_btrfs_image() {
  if ! command -v mkfs.btrfs > /dev/null || ! grep -qw btrfs /proc/filesystems; then
    echo "SKIP: no btrfs (apt-get install btrfs-progs; the kernel's btrfs module)"
    exit 0
  fi
  M="$T/mnt"
  trap unmount_btrfs_image EXIT
  truncate -s "$1" "$T/btrfs.img"
  mkfs.btrfs -q "$T/btrfs.img" > /dev/null
  mkdir -p "$M"
  mount -o loop "$T/btrfs.img" "$M"
  btrfs -q subvolume create "$M/data" > /dev/null
  chown "$TEST_UNIX_USER": "$M/data"
  mkdir "$M/data/.snapshots"
}
unmount_btrfs_image() {
  stop_server
  if mountpoint -q "$M"; then umount -R "$M" || umount -l "$M" || true; fi
  if mountpoint -q "$M"; then echo "left $M mounted"; return; fi
  rm -rf --one-file-system "$T"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# write_config [extra global lines...]: a config with share [share] at
# $T/share, owned by TEST_UNIX_USER.
write_config() {
  PORT=$(free_port)
  owned_dir "$T/share"
  {
    echo "[global]"
    echo "  tcp port = $PORT"
    echo "  interfaces = 127.0.0.1"
    echo "  bind interfaces only = yes"
    echo "  users db = $T/users.db"
    echo "  state directory = $T"
    for line in "$@"; do echo "  $line"; done
    echo
    echo "[share]"
    echo "  path = $T/share"
    echo "  writeable = yes"
  } > "$T/ringsmb.conf"
}

# guest_share: [share] takes guest sessions too (the caller's write_config
# says "map to guest = bad user") and belongs to the guest account, as a
# NAS's public share does, so that guests may write to it.
TEST_GUEST_USER=nobody  # the default "guest account"
guest_share() {
  sed -i 's/^\[share\]$/[share]\n  guest ok = yes/' "$T/ringsmb.conf"
  owned_dir "$T/share" "$TEST_GUEST_USER"
}

add_share() {  # add_share NAME PATH [extra lines...]
  local name=$1 path=$2
  shift 2
  { echo; echo "[$name]"; echo "  path = $path"; for line in "$@"; do echo "  $line"; done; } >> "$T/ringsmb.conf"
}

# The shares that lines of tests/conformance lists name with ' share=NAME'
# (tests/conformance/smbtorture-run), next to [share]: [noncanonical] keeps
# SE_DACL_AUTO_INHERITED as sent (smb2.acls_non_canonical, as Samba's test
# share does).
#
# And the shares of tests/conformance/fruit.conf for the vfs.fruit tests
# (Apple's extensions), all on [share]'s directory, which smbtorture-run
# also hands to tests as torture:localdir ({sharedir}: TORTURE_SHARE_DIR).
add_conformance_shares() {
  owned_dir "$T/noncanonical"
  add_share noncanonical "$T/noncanonical" "writeable = yes" "acl flag inherited canonicalization = no"
  { echo; sed "s|@SHARE_DIR@|$T/share|g" "$RINGSMB_SOURCE_DIR/tests/conformance/fruit.conf"; } >> "$T/ringsmb.conf"
  export TORTURE_SHARE_DIR=$T/share
}

add_user() {  # add_user NAME PASSWORD [UNIX_USER (default: TEST_UNIX_USER)]
  local args=(--config "$T/ringsmb.conf" user add "$1" --password-stdin --unix-user "${3:-$TEST_UNIX_USER}")
  echo "$2" | "$RINGSMBCTL" "${args[@]}" >/dev/null
}

start_server() {  # start_server [extra ringsmbd args...]
  "$RINGSMBD" --config "$T/ringsmb.conf" --foreground "$@" > "$T/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 100); do
    if python3 -c "import socket,sys; s=socket.socket(); s.settimeout(0.2); sys.exit(s.connect_ex(('127.0.0.1',$PORT)))" 2>/dev/null; then
      return 0
    fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      echo "ringsmbd exited at start:"; cat "$T/server.log"; SERVER_PID=""; return 1
    fi
    sleep 0.1
  done
  echo "ringsmbd did not start listening"; cat "$T/server.log"; return 1
}

stop_server() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
  fi
}

server_alive() { [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; }

# metric 'NAME{LABELS}': the running server's sample of that exact name
# and labels (ringsmbctl status --prometheus), as an integer; empty if none.
metric() {
  "$RINGSMBCTL" --config "$T/ringsmb.conf" status --prometheus | awk -v m="$1" '$1 == m {print int($2)}'
}

# smb USER%PASS SHARE COMMANDS [smbclient options...]
smb() {
  local cred=$1 share=$2 cmds=$3
  shift 3
  timeout 120 smbclient "//127.0.0.1/$share" -p "$PORT" -U "$cred" "$@" -c "$cmds"
}

pass() { echo "PASS: $*"; PASSES=$((PASSES + 1)); }
fail() { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); }

# check "description" command...: runs the command, records pass/fail.
check() {
  local what=$1
  shift
  if "$@" > "$T/check.out" 2>&1; then pass "$what"; else fail "$what"; sed 's/^/    /' "$T/check.out" | tail -20; fi
}

# expect_status "description" NT_STATUS_X command...: the command's output must name the status.
expect_status() {
  local what=$1 status=$2
  shift 2
  "$@" > "$T/check.out" 2>&1 || true
  if grep -q "$status" "$T/check.out"; then pass "$what"; else fail "$what (wanted $status)"; sed 's/^/    /' "$T/check.out" | tail -20; fi
}

# CTL ARGS...: ringsmbctl with the test's config.
CTL() { "$RINGSMBCTL" --config "$T/ringsmb.conf" "$@"; }

# expect_exit "description" CODE 'message' command...: the command's exit
# code and a text of its output (kept in $T/last.out for further checks).
expect_exit() {
  local what=$1 code=$2 message=$3
  shift 3
  local rc=0
  "$@" > "$T/last.out" 2>&1 || rc=$?
  if [ "$rc" = "$code" ] && grep -qF -- "$message" "$T/last.out"; then
    pass "$what"
  else
    fail "$what (wanted exit $code and '$message', got exit $rc)"
    sed 's/^/    /' "$T/last.out" | tail -10
  fi
}

finish() {
  if [ -n "$SERVER_PID" ] && ! server_alive; then
    fail "ringsmbd died during the test"
    tail -30 "$T/server.log"
  fi
  stop_server
  # Sanitizer builds report leaks and undefined behaviour at exit.
  if grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:" "$T/server.log" 2>/dev/null; then
    fail "sanitizer report in the server log"
    grep -E -A20 "ERROR: (Address|Leak)Sanitizer|runtime error:" "$T/server.log" | head -60
  fi
  echo "$PASSES passed, $FAILURES failed"
  if [ "$FAILURES" -ne 0 ]; then
    echo "--- server log (tail)"; tail -40 "$T/server.log" || true
    exit 1
  fi
}
