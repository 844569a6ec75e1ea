#!/usr/bin/env bash
# Manual probe (not in ctest; run as root): the Linux kernel client's
# `chmod 444` then `chmod 644` of a file against ringsmbd and against
# Samba's smbd, each on its own loopback port, with the traffic captured
# (tcpdump -i lo) and, when tshark is installed, the requests and the
# attributes each reply reported listed per file. The evidence behind
# docs/security.md ("READONLY ... the kernel client").
# usage: tests/vm/trace_readonly_chmod.sh [OUTDIR]   (default: a new /tmp dir)
# RINGSMB_BUILD_DIR: ringsmbd's build (default build/).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RINGSMB_BUILD_DIR:-$top/build}
out=${1:-$(mktemp -d /tmp/ringsmb-chmodtrace.XXXXXX)}
mkdir -p "$out"
for tool in smbd smbpasswd tcpdump; do command -v $tool >/dev/null || { echo "$tool missing" >&2; exit 2; }; done
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
wait_port() { for _ in $(seq 1 100); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.1; done; return 1; }
pids=()
trap 'for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2>/dev/null || true; done' EXIT

start_ringsmbd() {  # start_ringsmbd DIR PORT
  mkdir -p "$1/share" && chmod 777 "$1/share"
  printf '[global]\n  tcp port = %s\n  interfaces = 127.0.0.1\n  bind interfaces only = yes\n  users db = %s/users.db\n  state directory = %s\n  log level = 3\n[share]\n  path = %s/share\n  writeable = yes\n' \
    "$2" "$1" "$1" "$1" > "$1/ringsmb.conf"
  echo secret-A1 | "$build/tools/ringsmbctl" --config "$1/ringsmb.conf" user add root --password-stdin --unix-user root >/dev/null
  "$build/daemon/ringsmbd" --config "$1/ringsmb.conf" --foreground > "$1/server.log" 2>&1 &
  pids+=($!)
}
start_samba() {  # start_samba DIR PORT
  mkdir -p "$1/share" && chmod 777 "$1/share"
  for s in state lock cache pid private ncalrpc; do mkdir -p "$1/$s"; done
  cat > "$1/smb.conf" <<C
[global]
  smb ports = $2
  interfaces = 127.0.0.1
  bind interfaces only = yes
  server role = standalone server
  disable netbios = yes
  passdb backend = tdbsam:$1/private/passdb.tdb
  state directory = $1/state
  lock directory = $1/lock
  cache directory = $1/cache
  pid directory = $1/pid
  private dir = $1/private
  ncalrpc dir = $1/ncalrpc
  log file = $1/log.smbd
  load printers = no
  printcap name = /dev/null
  disable spoolss = yes
[share]
  path = $1/share
  read only = no
C
  printf 'secret-A1\nsecret-A1\n' | smbpasswd -c "$1/smb.conf" -s -a root >/dev/null 2>&1
  setsid smbd -s "$1/smb.conf" -F --no-process-group > "$1/smbd.stdout" 2>&1 &
  pids+=($!)
}

for server in ringsmbd samba; do
  d=$out/$server port=$(free_port)
  mkdir -p "$d"
  if [ $server = ringsmbd ]; then start_ringsmbd "$d" "$port"; else start_samba "$d" "$port"; fi
  wait_port "$port" || { echo "$server did not start (see $d)" >&2; exit 1; }
  tcpdump -i lo -s 0 -w "$d/trace.pcap" "tcp port $port" 2>/dev/null &
  dump=$!
  sleep 1
  "$top/tests/vm/run" --timeout 300 --guestfwd "445=$port" --file "$top/tests/vm/guest/readonly_chmod.sh" \
    --env SERVER=10.0.2.100 --env SHARE=share --env SMBUSER=root --env SMBPASS=secret-A1 \
    -- 'sh /job/readonly_chmod.sh' > "$d/guest.log" 2>&1 || true
  sleep 1
  kill "$dump"; wait "$dump" 2>/dev/null || true
  echo "== $server (port $port, $d)"
  grep '^RESULT' "$d/guest.log" || tail -20 "$d/guest.log"
  if command -v tshark >/dev/null; then
    # is-reply, command (tshark names the file), status, FileAttributes, lease state
    tshark -r "$d/trace.pcap" -d "tcp.port==$port,nbss" -Y smb2 \
      -T fields -e smb2.flags.response -e _ws.col.Info -e smb2.nt_status -e smb2.file_attribute -e smb2.lease.lease_state \
      2>/dev/null > "$d/trace.txt" || true
    echo "   the plain case's requests (all of them: $d/trace.txt):"
    awk '/File: plain/ && !p {p=1} /File: sub.plain/ {exit} p {print "   " $0}' "$d/trace.txt"

  fi
done
