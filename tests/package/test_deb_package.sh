#!/usr/bin/env bash
# The Debian package in a fresh Debian 12 root: install it, check where
# everything lands (binaries, the unit enabled as Debian does, man pages,
# the conffile, the state directory's owner and mode), run the README's
# setup steps as written, start ringsmbd inside the root as the unit would
# and use the share with smbclient from the host on 127.0.0.1, verify the
# installed unit with systemd-analyze, then purge and check that the state
# is gone.
#
# usage: tests/package/test_deb_package.sh DEB   (as root; scripts/build-deb makes DEB)
#
# The root is a debootstrap --variant=minbase of bookworm with the package's
# dependencies, made once from the mirror the machine's apt uses and kept as
# a tarball in $RINGSMB_CACHE_DIR (default /var/cache/ringsmb-tests): the
# first run takes minutes, later ones seconds.
#
# Safety: nothing is mounted into the root from the host's mount namespace.
# Every command in the root runs in its own private mount namespace
# (unshare --mount) that mounts /proc for it and vanishes with it; before the
# root is deleted (rm -rf --one-file-system) the test checks that nothing is
# mounted under it and unmounts with umount -R if something is.
set -euo pipefail

DEB=${1:?usage: $0 ringsmb_VERSION_ARCH.deb}
DEB=$(realpath "$DEB")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${RINGSMB_CACHE_DIR:-/var/cache/ringsmb-tests}
SUITE=bookworm
[ "$(id -u)" -eq 0 ] || { echo "test_deb_package: run as root (debootstrap, chroot)"; exit 1; }

T=$(mktemp -d /tmp/ringsmb-deb-test.XXXXXX)
ROOT=$T/root
SERVER_PID=""
PASSES=0
FAILURES=0
PASSWORD='Holiday-2026'

teardown_root() {
  [ -d "$ROOT" ] || return 0
  # No process of the test may outlive it inside the root (ringsmb-ctld
  # follows ringsmbd, but check): each is ended by its PID.
  local p pids=()
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$ROOT" ] && pids+=("${p#/proc/}")
  done
  if [ ${#pids[@]} -gt 0 ]; then
    echo "test_deb_package: ending processes left in the root: ${pids[*]}"
    kill "${pids[@]}" 2>/dev/null || true
    sleep 1
  fi
  if findmnt -R -n -o TARGET --list | grep -q "^$ROOT\(/\|$\)"; then
    umount -R "$ROOT" || { echo "test_deb_package: $ROOT still has mounts; left in place"; return 1; }
  fi
  rm -rf --one-file-system "$ROOT"
}
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  teardown_root && rm -rf --one-file-system "$T"
}
trap cleanup EXIT

pass() { echo "PASS: $*"; PASSES=$((PASSES + 1)); }
fail() { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); }
check() {  # check "description" command...
  local what=$1
  shift
  if "$@" > "$T/check.out" 2>&1; then pass "$what"; else fail "$what"; sed 's/^/    /' "$T/check.out" | tail -20; fi
}

# in_root COMMAND...: runs COMMAND chrooted into the root, in a private mount
# namespace with its own /proc (the same PID and network namespaces: the host
# reaches a server started this way on 127.0.0.1).
ROOT_CMD=(unshare --mount --propagation private -- sh -c 'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"'
  "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8)
in_root() { "${ROOT_CMD[@]}" "$@"; }

# The mirror the machine's apt uses for Debian's main archive (deb822 or
# one-line sources), so that debootstrap reaches what apt reaches.
debian_mirror() {
  local f uri
  for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    uri=$(awk -v s="$SUITE" '
      /^URIs:/ {u=$2} /^Suites:/ {for (i=2;i<=NF;i++) if ($i==s) ok=1}
      /^$/ {if (ok && u) {print u; exit} u=""; ok=0}
      /^deb / && $3==s {print $2; exit}
      END {if (ok && u) print u}' "$f" | head -1)
    [ -n "$uri" ] && { echo "$uri"; return; }
  done
  echo http://deb.debian.org/debian
}

# The cached root: minbase plus the package's Depends (names only), systemd
# (as on an installed Debian 12, and the units systemd-analyze verify needs)
# and wsdd (a Recommends, for the WS-Discovery check), keyed by that list so
# that a new dependency makes a new root. Not avahi-daemon: its init script
# would start a daemon that announces on the host's network.
root_tarball() {
  local deps key tarball mirror
  deps=$(dpkg-deb -f "$DEB" Depends | tr ',' '\n' | sed 's/[(|].*//; s/ //g' | grep . | sort -u | paste -sd, -),systemd,wsdd
  key=$(echo "$SUITE minbase $deps" | sha256sum | cut -c1-12)
  tarball=$CACHE/debian-$SUITE-minbase-$key.tar
  if [ ! -f "$tarball" ]; then
    mirror=$(debian_mirror)
    echo "test_deb_package: debootstrap $SUITE from $mirror (once; cached as $tarball)" >&2
    mkdir -p "$CACHE" "$T/bootstrap"
    if ! debootstrap --variant=minbase --include="$deps" "$SUITE" "$T/bootstrap/root" "$mirror" > "$T/debootstrap.log" 2>&1; then
      tail -20 "$T/debootstrap.log" >&2
      rm -rf --one-file-system "$T/bootstrap"
      return 1
    fi
    rm -rf "$T/bootstrap/root/var/cache/apt/archives/"*.deb
    tar --numeric-owner -C "$T/bootstrap/root" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
    rm -rf --one-file-system "$T/bootstrap"
  fi
  echo "$tarball"
}

with_password() { echo "$PASSWORD" | "$@"; }  # with_password COMMAND...: the password on stdin

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# --- the root and the install ----------------------------------------------
start=$SECONDS
tarball=$(root_tarball)
mkdir -p "$ROOT"
tar --numeric-owner -C "$ROOT" -xf "$tarball"
# No maintainer script may start a daemon in the root (policy-rc.d, as in
# any chroot; systemd does not run there anyway).
printf '#!/bin/sh\nexit 101\n' > "$ROOT/usr/sbin/policy-rc.d"
chmod 755 "$ROOT/usr/sbin/policy-rc.d"
echo "test_deb_package: root ready in $((SECONDS - start)) s"
cp "$DEB" "$ROOT/tmp/"
check "dpkg -i installs the package into a fresh Debian 12 root" in_root dpkg -i "/tmp/$(basename "$DEB")"

for bin in ringsmbd ringsmb-ctld ringsmbctl; do
  check "/usr/sbin/$bin is installed" test -x "$ROOT/usr/sbin/$bin"
done
UNIT=$ROOT/lib/systemd/system/ringsmb.service
check "the unit is in /lib/systemd/system" test -f "$UNIT"
check "the unit starts /usr/sbin/ringsmbd" grep -qx "ExecStart=/usr/sbin/ringsmbd --config /etc/ringsmb/ringsmb.conf --foreground" "$UNIT"
check "the unit is enabled (multi-user.target.wants)" \
  test "$(readlink "$ROOT/etc/systemd/system/multi-user.target.wants/ringsmb.service")" = /lib/systemd/system/ringsmb.service
# deb-systemd-invoke starts it where systemd runs (not in this root).
check "postinst starts the unit where systemd runs" bash -c "grep -q '_dh_action=.*start' '$ROOT/var/lib/dpkg/info/ringsmb.postinst' &&
  grep -qF \"deb-systemd-invoke \\\$_dh_action 'ringsmb.service'\" '$ROOT/var/lib/dpkg/info/ringsmb.postinst'"
for page in man8/ringsmbd.8 man8/ringsmbctl.8 man8/ringsmb-ctld.8 man5/ringsmb.conf.5; do
  check "man page $page is installed" test -f "$ROOT/usr/share/man/$page.gz"
done
# ringsmbctl rewrites the configuration: a dpkg conffile would stop every
# upgrade at a prompt, so ucf installs and tracks it instead.
check "/etc/ringsmb/ringsmb.conf is not a dpkg conffile" bash -c \
  "! dpkg-query --admindir='$ROOT/var/lib/dpkg' -W -f='\${Conffiles}' ringsmb | grep -q ringsmb.conf"
check "... ucf tracks it for ringsmb (ucfr)" grep -qE '^ringsmb[[:space:]]+/etc/ringsmb/ringsmb.conf$' "$ROOT/var/lib/ucf/registry"
check "... installed from the template /usr/share/ringsmb/ringsmb.conf" \
  cmp "$ROOT/usr/share/ringsmb/ringsmb.conf" "$ROOT/etc/ringsmb/ringsmb.conf"
check "... with a commented example share" grep -qx ';\[media\]' "$ROOT/etc/ringsmb/ringsmb.conf"
check "... and no active share" bash -c "! grep -E '^\s*\[' '$ROOT/etc/ringsmb/ringsmb.conf' | grep -v '^\[global\]'"
check "the installed configuration is valid" in_root ringsmbctl config check
check "the state directory /var/lib/ringsmb is root:root, mode 700" \
  test "$(stat -c '%U:%G %a' "$ROOT/var/lib/ringsmb")" = "root:root 700"

# The docs: README.md and every doc under docs/, uncompressed, at the same
# relative places as in the source, so that every relative link resolves.
DOC=$ROOT/usr/share/doc/ringsmb
check "README.md is installed uncompressed" test -f "$DOC/README.md"
for f in "$SRC"/docs/*.md; do
  check "docs/$(basename "$f") is installed uncompressed" test -f "$DOC/docs/$(basename "$f")"
done
links_resolve() {
  local md link target bad=0
  for md in "$DOC/README.md" "$DOC"/docs/*.md; do
    # [text](target): relative targets only (no scheme, no bare #anchor).
    while IFS= read -r link; do
      target=${link%%#*}
      [ -z "$target" ] && continue
      if [ ! -e "$(dirname "$md")/$target" ]; then echo "${md#"$DOC"/}: $link does not resolve"; bad=1; fi
    done < <(grep -oE '\]\([^)[:space:]]+\)' "$md" | sed 's/^](//; s/)$//' | grep -vE '^[a-z]+:|^#')
  done
  return $bad
}
check "every relative link of the installed README.md and docs resolves" links_resolve

# systemd-analyze verify: the unit as installed, with its ExecStart= found in
# the root (systemd need not run there).
check "systemd-analyze verify accepts the installed unit" \
  systemd-analyze verify --man=no --root="$ROOT" /lib/systemd/system/ringsmb.service

check "the wsdd drop-in is installed" test -f "$ROOT/lib/systemd/system/wsdd.service.d/ringsmb.conf"
check "systemd-analyze verify accepts wsdd.service with ringsmb's drop-in" \
  systemd-analyze verify --man=no --root="$ROOT" /lib/systemd/system/wsdd.service
check "ringsmb.service wants wsdd.service" grep -qx "Wants=wsdd.service" "$UNIT"

# The Avahi service file: written by `ringsmbctl discovery avahi` (the
# unit's ExecStartPre=) where avahi-daemon made /etc/avahi/services, for
# the configured port; valid against avahi-daemon's DTD (from the
# avahi-daemon package, fetched by apt once and cached: avahi-daemon itself
# is not installed anywhere by this test, so the test makes the directory).
AVAHI=$ROOT/etc/avahi/services/ringsmb.service
check "the unit writes the Avahi file before each start" \
  grep -qx "ExecStartPre=-+/usr/sbin/ringsmbctl --config /etc/ringsmb/ringsmb.conf discovery avahi" "$UNIT"
check "the package ships no Avahi file of its own" test ! -e "$AVAHI"
mkdir -p "$ROOT/etc/avahi/services"
check "ringsmbctl discovery avahi writes /etc/avahi/services/ringsmb.service" in_root ringsmbctl discovery avahi
avahi_dtd() {
  local dtd=$CACHE/avahi-service.dtd
  if [ ! -f "$dtd" ]; then
    mkdir -p "$T/avahi" "$CACHE"
    (cd "$T/avahi" && apt-get download -o APT::Sandbox::User=root avahi-daemon > /dev/null) || return 1
    dpkg-deb --fsys-tarfile "$T"/avahi/avahi-daemon_*.deb | tar -xOf - ./usr/share/avahi/avahi-service.dtd > "$dtd.tmp"
    mv "$dtd.tmp" "$dtd"
  fi
  echo "$dtd"
}
if dtd=$(avahi_dtd); then
  check "the Avahi service file is valid (xmllint against avahi-service.dtd)" \
    xmllint --noout --nonet --dtdvalid "$dtd" "$AVAHI"
  check "... and announces _smb._tcp on 445 and _device-info._tcp" bash -c \
    "grep -q '<type>_smb._tcp</type>' '$AVAHI' && grep -q '<port>445</port>' '$AVAHI' && grep -q '<type>_device-info._tcp</type>' '$AVAHI'"
else
  fail "apt-get download avahi-daemon (for avahi-service.dtd)"
fi

# --- WS-Discovery -------------------------------------------------------------
# Two network namespaces made here and joined by a veth pair (192.0.2.0/24,
# a documentation range, exists only between them): in one, the root's wsdd
# run as the drop-in runs it, through ringsmbctl discovery wsdd, with a
# configuration naming the server TESTNAS in workgroup HOMELAB; from the
# other, a Probe, a Resolve and a Get (tests/package/wsd_probe.py) as
# Windows sends them. Nothing outside the two namespaces is addressed.
NS_SERVER=ringsmb-wsd-$$-s
NS_CLIENT=ringsmb-wsd-$$-c
WSDD_PID=""
wsd_teardown() {
  if [ -n "$WSDD_PID" ]; then kill "$WSDD_PID" 2>/dev/null || true; wait "$WSDD_PID" 2>/dev/null || true; WSDD_PID=""; fi
  ip netns del "$NS_SERVER" 2>/dev/null || true
  ip netns del "$NS_CLIENT" 2>/dev/null || true
}
trap 'wsd_teardown; cleanup' EXIT
ip netns add "$NS_SERVER"
ip netns add "$NS_CLIENT"
ip -n "$NS_SERVER" link add wsd0 type veth peer name wsd1 netns "$NS_CLIENT"
ip -n "$NS_SERVER" addr add 192.0.2.1/24 dev wsd0
ip -n "$NS_CLIENT" addr add 192.0.2.2/24 dev wsd1
for ns in "$NS_SERVER" "$NS_CLIENT"; do ip -n "$ns" link set lo up; done
ip -n "$NS_SERVER" link set wsd0 up
ip -n "$NS_CLIENT" link set wsd1 up
cat > "$ROOT/tmp/wsd-test.conf" <<'CONF'
[global]
    netbios name = TESTNAS
    workgroup = HOMELAB
    interfaces = wsd0
    bind interfaces only = yes
CONF
wsdd_command_line() {
  in_root ringsmbctl -c /tmp/wsd-test.conf discovery wsdd --print -- -4 |
    grep -qx '/usr/sbin/wsdd --shortlog --hostname TESTNAS --workgroup HOMELAB --interface wsd0 -4'
}
check "ringsmbctl discovery wsdd runs wsdd with the configuration's names and interfaces" wsdd_command_line
ip netns exec "$NS_SERVER" "${ROOT_CMD[@]}" ringsmbctl -c /tmp/wsd-test.conf discovery wsdd -- -4 > "$T/wsdd.log" 2>&1 &
WSDD_PID=$!
check "a WS-Discovery Probe from the other namespace finds TESTNAS in HOMELAB" bash -c \
  "ip netns exec '$NS_CLIENT' python3 '$SRC/tests/package/wsd_probe.py' --source 192.0.2.2 --timeout 15 | tee /dev/stderr |
   grep -qx 'computer: TESTNAS/Workgroup:HOMELAB'"
wsd_teardown

# --- the README's setup steps, as written ----------------------------------
# The block between the package-test markers in README.md, line by line: in
# the root, except smbclient, which runs on the host. Two changes only: the
# password comes from stdin instead of the terminal, and smbclient gets the
# test's port and the password.
PORT=$(free_port)
sed -i "s/^\[global\]\$/[global]\n    tcp port = $PORT\n    interfaces = 127.0.0.1\n    bind interfaces only = yes/" "$ROOT/etc/ringsmb/ringsmb.conf"
# Not through the in_root function: $! must be ringsmbd itself (unshare, sh,
# chroot and env each exec the next).
"${ROOT_CMD[@]}" /usr/sbin/ringsmbd --config /etc/ringsmb/ringsmb.conf --foreground > "$T/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do
  python3 -c "import socket,sys; s=socket.socket(); s.settimeout(0.2); sys.exit(s.connect_ex(('127.0.0.1',$PORT)))" 2>/dev/null && break
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
check "ringsmbd starts in the root with the packaged configuration (no shares yet)" kill -0 "$SERVER_PID"
avahi_follows_port() { in_root ringsmbctl discovery avahi > /dev/null && grep -q "<port>$PORT</port>" "$AVAHI"; }
check "with tcp port = $PORT the Avahi file announces $PORT" avahi_follows_port

steps=$(sed -n '/<!-- package-test: begin -->/,/<!-- package-test: end -->/p' "$SRC/README.md" | sed -n '/^```sh$/,/^```$/p' | grep -v '^```')
[ -n "$steps" ] || fail "README.md has no package-test block"
while IFS= read -r line; do
  [ -z "$line" ] && continue
  case $line in
    smbclient*)
      cmd=$(echo "$line" | sed "s/ -U \([a-z]*\) / -U \1%$PASSWORD -p $PORT /")
      check "README (host): $line" bash -c "timeout 60 $cmd" ;;
    *"ringsmbctl user add "*)
      check "README: $line" with_password in_root bash -c "${line/user add /user add --password-stdin }" ;;
    *)
      check "README: $line" in_root bash -c "$line" ;;
  esac
done <<< "$steps"

# The share works for writing too, and the files belong to the user's Unix account.
echo hello > "$T/hello.txt"
check "alice writes a file through smbclient" timeout 60 smbclient //127.0.0.1/photos -p "$PORT" -U "alice%$PASSWORD" -c "put $T/hello.txt hello.txt"
check "... owned by the Unix user alice in the root" bash -c \
  "[ \"\$(stat -c %u '$ROOT/srv/photos/hello.txt')\" = \"\$(chroot '$ROOT' id -u alice)\" ]"
status_shows_alice() {  # while alice's smbclient is connected
  (sleep 0.3; echo ls; sleep 3; echo quit) | timeout 60 smbclient //127.0.0.1/photos -p "$PORT" -U "alice%$PASSWORD" > /dev/null &
  local client=$! found=1
  for _ in $(seq 1 15); do
    sleep 0.2
    in_root ringsmbctl status | grep -q alice && { found=0; break; }
  done
  wait "$client"
  return $found
}
check "ringsmbctl status in the root lists alice's session" status_shows_alice
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""

# --- upgrade -----------------------------------------------------------------
# ringsmbctl share add rewrote /etc/ringsmb/ringsmb.conf above. A newer build
# (the same package with a higher version and a changed configuration
# template, the harder case for ucf) installs without a question, with
# stdin closed and DEBIAN_FRONTEND=noninteractive as unattended-upgrades
# runs dpkg, and without any --force-conf* option; the shares stay.
newer_deb() {
  local dir=$T/newer version
  rm -rf "$dir"
  dpkg-deb -R "$DEB" "$dir"
  version=$(dpkg-deb -f "$DEB" Version)+upgradetest1
  sed -i "s/^Version: .*/Version: $version/" "$dir/DEBIAN/control"
  echo "; a line only the newer template has" >> "$dir/usr/share/ringsmb/ringsmb.conf"
  (cd "$dir" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | xargs -0 md5sum > DEBIAN/md5sums)
  dpkg-deb --root-owner-group -b "$dir" "$ROOT/tmp/ringsmb-newer.deb" > /dev/null
  echo "$version"
}
NEWER=$(newer_deb)
# upgrade_quietly [DEB]: dpkg -i as unattended-upgrades runs it; debconf's
# developer log shows every question a maintainer script put (INPUT), even
# those the noninteractive frontend answers with their default.
upgrade_quietly() {
  timeout 120 "${ROOT_CMD[@]}" env DEBIAN_FRONTEND=noninteractive DEBCONF_DEBUG=developer \
    dpkg -i "${1:-/tmp/ringsmb-newer.deb}" < /dev/null > "$T/upgrade.log" 2>&1
}
asked_nothing() {  # prints what it found
  ! grep -iE 'conffile|configuration file|\*\*\* ringsmb.conf|INPUT .*ucf/' "$T/upgrade.log"
}
check "a newer build installs non-interactively (no conffile prompt, no --force-conf*)" upgrade_quietly
check "... asked nothing about the configuration (not even through debconf)" asked_nothing
check "... and is the installed version" test "$(dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f='${Version}' ringsmb)" = "$NEWER"
check "... the share ringsmbctl added is still in /etc/ringsmb/ringsmb.conf" grep -qx '\[photos\]' "$ROOT/etc/ringsmb/ringsmb.conf"
lists_photos() { in_root ringsmbctl share list | grep -q photos; }
check "... and ringsmbctl still lists it" lists_photos
check "... the new template waits beside it (ringsmb.conf.ucf-dist)" \
  grep -qx '; a line only the newer template has' "$ROOT/etc/ringsmb/ringsmb.conf.ucf-dist"

# --- purge -------------------------------------------------------------------
check "the users db was in the state directory" test -f "$ROOT/var/lib/ringsmb/users.db"
check "dpkg --purge removes the package" in_root dpkg --purge ringsmb
check "... and the state directory" test ! -e "$ROOT/var/lib/ringsmb"
check "... and /etc/ringsmb" test ! -e "$ROOT/etc/ringsmb"
check "... and the unit's enablement" test ! -e "$ROOT/etc/systemd/system/multi-user.target.wants/ringsmb.service"
check "... and the binaries" test ! -e "$ROOT/usr/sbin/ringsmbd"
check "... and the Avahi file ringsmbctl wrote" test ! -e "$AVAHI"

# --- upgrade from the dpkg conffile layout -----------------------------------
# Up to 0.1.0 /etc/ringsmb/ringsmb.conf was a dpkg conffile and the
# maintainer scripts knew nothing of ucf. That package, remade from this
# one (a lower version, the template as the conffile, a postinst without
# ucf), is installed into the purged root, ringsmbctl adds a share, and
# this package then installs over it without a question, keeping the file.
old_layout_deb() {
  local dir=$T/old
  rm -rf "$dir"
  dpkg-deb -R "$DEB" "$dir"
  sed -i "s/^Version: .*/Version: $(dpkg-deb -f "$DEB" Version)~old1/" "$dir/DEBIAN/control"
  install -d "$dir/etc/ringsmb"
  mv "$dir/usr/share/ringsmb/ringsmb.conf" "$dir/etc/ringsmb/ringsmb.conf"
  rm -f "$dir/usr/share/ringsmb/ringsmb.conf.md5sum"
  echo /etc/ringsmb/ringsmb.conf >> "$dir/DEBIAN/conffiles"
  { printf '#!/bin/sh\nset -e\n[ "$1" = configure ] && install -d -m 0700 /var/lib/ringsmb\n'
    sed -n '/^# Automatically added by dh_/,$p' "$dir/DEBIAN/postinst"; } > "$dir/DEBIAN/postinst.old"
  mv "$dir/DEBIAN/postinst.old" "$dir/DEBIAN/postinst"
  chmod 755 "$dir/DEBIAN/postinst"
  (cd "$dir" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | xargs -0 md5sum > DEBIAN/md5sums)
  dpkg-deb --root-owner-group -b "$dir" "$ROOT/tmp/ringsmb-old.deb" > /dev/null
}
old_layout_deb
conf_listed() {  # conf_listed PATTERN: the line dpkg keeps for ringsmb.conf matches PATTERN
  dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f='${Conffiles}\n' ringsmb | grep -F ' /etc/ringsmb/ringsmb.conf ' | grep -qE "$1"
}
check "the conffile layout installs into the purged root" in_root dpkg -i /tmp/ringsmb-old.deb
check "... ringsmb.conf a dpkg conffile there" conf_listed '^ /etc/ringsmb/ringsmb.conf [0-9a-f]+$'
mkdir -p "$ROOT/srv/docs"
check "ringsmbctl share add rewrites the conffile" in_root ringsmbctl share add docs --path /srv/docs
cp "$ROOT/etc/ringsmb/ringsmb.conf" "$T/edited.conf"
check "this package installs over it non-interactively" upgrade_quietly "/tmp/$(basename "$DEB")"
check "... asked nothing about the configuration (not even through debconf)" asked_nothing
check "... kept the file ringsmbctl wrote" cmp "$T/edited.conf" "$ROOT/etc/ringsmb/ringsmb.conf"
lists_docs() { in_root ringsmbctl share list | grep -q docs; }
check "... ringsmbctl lists its share" lists_docs
check "... ucf tracks it for ringsmb now" grep -qE '^ringsmb[[:space:]]+/etc/ringsmb/ringsmb.conf$' "$ROOT/var/lib/ucf/registry"
check "... the new template beside it (ringsmb.conf.ucf-dist)" \
  cmp "$ROOT/usr/share/ringsmb/ringsmb.conf" "$ROOT/etc/ringsmb/ringsmb.conf.ucf-dist"
check "... dpkg keeps it only as an obsolete conffile" conf_listed ' obsolete$'
check "the next upgrade asks nothing either" upgrade_quietly
check "... (debconf)" asked_nothing
check "... and keeps the share" lists_docs
check "dpkg --purge then removes it" in_root dpkg --purge ringsmb
check "... and /etc/ringsmb" test ! -e "$ROOT/etc/ringsmb"

echo "test_deb_package: $((SECONDS - start)) s"
if [ "$FAILURES" -ne 0 ]; then echo "--- server log"; tail -30 "$T/server.log" 2>/dev/null || true; fi
echo "$PASSES passed, $FAILURES failed"
[ "$FAILURES" -eq 0 ]
