#!/usr/bin/env bash
# How long the README's first command takes on a fresh Debian 12: a
# debootstrap --variant=minbase root (no compiler, no cmake, no python3),
# a copy of this checkout in it, and `scripts/demo` run inside it until it
# prints its connect line; then the line is used once with the root's own
# smbclient and everything the demo started is ended by its PID.
#
# usage: tests/package/time_demo_fresh_root.sh   (as root; prints the time)
#
# Packages come from the mirror the host's apt uses (its sources and apt
# settings are copied into the root). The minbase root is made once and kept
# as a tarball in $RINGSMB_CACHE_DIR (default /var/cache/ringsmb-tests); its
# making is not part of the time. ccache is not in the root: the build is
# a cold one.
#
# Safety as in test_deb_package.sh: every command in the root runs in its own
# private mount namespace that mounts /proc and /dev/pts for it and vanishes
# with it; the root is deleted with rm -rf --one-file-system after checking
# that nothing is mounted under it.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${RINGSMB_CACHE_DIR:-/var/cache/ringsmb-tests}
LIMIT=${RINGSMB_DEMO_LIMIT:-1800}   # give up after this many seconds
[ "$(id -u)" -eq 0 ] || { echo "time_demo_fresh_root: run as root (debootstrap, chroot)"; exit 1; }
command -v debootstrap > /dev/null || { echo "time_demo_fresh_root: needs debootstrap (scripts/install-deps.sh installs it)"; exit 1; }

T=$(mktemp -d /tmp/ringsmb-demo-root.XXXXXX)
ROOT=$T/root
DEMO_PID=""

root_pids() {  # the processes whose root is $ROOT
  local p
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$ROOT" ] && echo "${p#/proc/}"
  done
  return 0
}
cleanup() {
  local pids
  pids=$(root_pids)
  if [ -n "$pids" ]; then
    # shellcheck disable=SC2086
    kill $pids 2>/dev/null || true
    sleep 1
    pids=$(root_pids)
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
  fi
  [ -z "$DEMO_PID" ] || wait "$DEMO_PID" 2>/dev/null || true
  if findmnt -R -n -o TARGET --list | grep -q "^$ROOT\(/\|$\)"; then
    umount -R "$ROOT" || { echo "time_demo_fresh_root: $ROOT still has mounts; left in place"; return 1; }
  fi
  rm -rf --one-file-system "$T"
}
trap cleanup EXIT

mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}
tarball=$CACHE/debian-bookworm-minbase-plain.tar
if [ ! -f "$tarball" ]; then
  echo "time_demo_fresh_root: debootstrap bookworm minbase from $mirror (once; cached as $tarball)"
  mkdir -p "$CACHE"
  debootstrap --variant=minbase bookworm "$T/bootstrap" "$mirror" > "$T/debootstrap.log" 2>&1 ||
    { tail -20 "$T/debootstrap.log"; exit 1; }
  rm -rf "$T/bootstrap/var/cache/apt/archives/"*.deb
  tar --numeric-owner -C "$T/bootstrap" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
  rm -rf --one-file-system "$T/bootstrap"
fi
mkdir -p "$ROOT"
tar --numeric-owner -C "$ROOT" -xf "$tarball"
for tool in gcc g++ cmake python3 ninja; do
  if [ -e "$ROOT/usr/bin/$tool" ]; then echo "time_demo_fresh_root: the root is not minimal ($tool)"; exit 1; fi
done
# The host's apt sources and settings (a mirror or proxy the sandbox needs),
# its resolver, and no daemon started by a maintainer script.
cp -a /etc/apt/sources.list.d/. "$ROOT/etc/apt/sources.list.d/"
[ ! -f /etc/apt/sources.list ] || cp /etc/apt/sources.list "$ROOT/etc/apt/"
cp -a /etc/apt/apt.conf.d/. "$ROOT/etc/apt/apt.conf.d/"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
printf '#!/bin/sh\nexit 101\n' > "$ROOT/usr/sbin/policy-rc.d"
chmod 755 "$ROOT/usr/sbin/policy-rc.d"
# The checkout as a clone would have it: tracked files only, no build tree.
mkdir -p "$ROOT/root/ringsmb"
git -C "$SRC" ls-files -z | (cd "$SRC" && xargs -0 cp --parents -a -t "$ROOT/root/ringsmb")

in_root() {
  unshare --mount --propagation private -- sh -c \
    'mount -t proc proc "$0/proc" && mount -t devpts -o newinstance devpts "$0/dev/pts" 2>/dev/null; exec chroot "$0" "$@"' \
    "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 TERM=dumb "$@"
}

echo "time_demo_fresh_root: running scripts/demo in a fresh root (load before: $(cut -d' ' -f1-3 /proc/loadavg))"
start=$SECONDS
in_root bash -c 'cd /root/ringsmb && exec scripts/demo /tmp/ringsmb-demo' > "$T/demo.out" 2>&1 &
DEMO_PID=$!
connect=""
while [ $((SECONDS - start)) -lt "$LIMIT" ]; do
  connect=$(grep -m1 '^smbclient ' "$T/demo.out" || true)
  [ -n "$connect" ] && break
  if ! kill -0 "$DEMO_PID" 2>/dev/null; then break; fi
  sleep 1
done
elapsed=$((SECONDS - start))
cat "$T/demo.out"
if [ -z "$connect" ]; then
  echo "time_demo_fresh_root: no connect line after ${elapsed} s; the demo's log:"
  tail -30 "$ROOT/tmp/ringsmb-demo.log" 2>/dev/null || true
  exit 1
fi
echo "time_demo_fresh_root: connect line after ${elapsed} s ($((elapsed / 60))m$((elapsed % 60))s; load after: $(cut -d' ' -f1-3 /proc/loadavg))"
grep '^ringsmb demo: ' "$ROOT/tmp/ringsmb-demo.log" | sed 's/^/time_demo_fresh_root: /' || true
# What apt fetched, as apt said it ("Need to get ... of archives").
grep -h '^Need to get\|^Fetched' "$ROOT/tmp/ringsmb-demo.log" | sed 's/^/time_demo_fresh_root: apt: /' || true
# Use the line as printed (the share listing) from inside the root.
cmd=${connect%%#*}
if in_root bash -c "$cmd -c ls" > "$T/use.out" 2>&1; then
  echo "time_demo_fresh_root: the connect line works: $(grep -c . "$T/use.out") lines of listing"
else
  echo "time_demo_fresh_root: the connect line failed:"; cat "$T/use.out"; exit 1
fi
