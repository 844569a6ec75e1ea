#!/usr/bin/env bash
# "worker busy poll": with it on, both backends serve as before (put/get,
# a small tree), and an idle server still sleeps: the polling after the
# last request ends within its bound instead of spinning on.
source "$(dirname "$0")/lib.sh"

cpu_ticks() {  # cpu_ticks PID: user+system clock ticks of the process, all threads
  awk '{print $14 + $15}' "/proc/$1/stat"
}

head -c 3000000 /dev/urandom > "$T/data"
python3 "$RINGSMB_SOURCE_DIR/bench/mktree.py" "$T/src/tree" --files 200 > /dev/null
tar cf "$T/t.tar" -C "$T/src" tree
for backend in io_uring epoll; do
  args=()
  [ "$backend" = epoll ] && args=(--epoll)
  rm -rf "$T/share" "$T/users.db"
  write_config "worker busy poll = 200" "workers = 2"
  add_user alice 'secret-A1'
  start_server "${args[@]}"
  C=alice%secret-A1
  check "$backend: the server reports its backend" grep -q "($backend)" "$T/server.log"
  check "$backend: put/get byte for byte with busy polling" bash -c "
    smbclient //127.0.0.1/share -p $PORT -U $C -c 'put $T/data d; get d $T/back' >/dev/null && cmp $T/data $T/back"
  check "$backend: smbclient -Tx with busy polling" timeout 300 smbclient //127.0.0.1/share -p "$PORT" -U "$C" -Tx "$T/t.tar"
  check "$backend: tree identical" diff -r "$T/src/tree" "$T/share/tree"
  # Idle: 3 s after the last client left, the workers must be asleep. Each
  # wakes once a second for its tick and polls at most 200 µs after it;
  # a worker that kept polling would burn ~2 CPU-seconds per second here.
  sleep 1
  before=$(cpu_ticks "$SERVER_PID")
  sleep 3
  after=$(cpu_ticks "$SERVER_PID")
  hz=$(getconf CLK_TCK)
  check "$backend: idle server used $((after - before)) ticks of CPU in 3 s (at most 0.3 s)" \
    test $((after - before)) -le $((hz * 3 / 10))
  stop_server
done
finish
