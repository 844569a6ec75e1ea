# Runs in the guest of tests/vm/run (busybox sh), started by bench/guest-ksmbd:
# the guest's cifs client extracts /job/tree<N>.tar with GNU tar onto each
# server in turn over the guest's loopback, and prints one line per run:
#   RUN server=S mode=M files=N rep=R wall=S guest_user=S guest_sys=S
#       server_user=S server_sys=S requests=N
# (seconds of the guest's clock and CPU; the server's CPU counted from
# /proc/<pid>/stat: ksmbd's kthreads and the kernel workers last named
# "-ksmbd-io", or the ringsmbd and ringsmb-ctld processes with all their
# threads; Samba: every process whose name starts with smbd, and its RPC
# helpers). Each run gets a fresh tmpfs as the share, a freshly started
# server and its own mount; the counters cover the extract, a sync and the
# 3 s in which the client sends the closes it deferred.
#
# Environment: SERVERS (names of /job/<name>.conf; "ringsmbd*" are run with
# ringsmbd on port 4455, "samba*" with smbd on port 4456, the others with
# ringsmb-ctld driving ksmbd.ko),
# MODES (plain, signed), SIZES (500 2000), REPS, BIN (the build tree),
# SMBPASS; STRACE_MODE / STRACE_FILES: one more ringsmbd extract under
# strace -c -f, after the measured ones.
set -u
mkdir -p /etc
printf 'passwd: files\ngroup: files\n' > /etc/nsswitch.conf
# alice is Samba's user (its SMB user is a Unix user), the same uid as
# rsmb_owner, the Unix user of the other servers' alice.
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\nrsmb_owner:x:1000:1000::/:/bin/false\nalice:x:1000:1000::/:/bin/false\n' > /etc/passwd
printf 'root:x:0:\nnogroup:x:65534:\nrsmb_owner:x:1000:\n' > /etc/group
mkdir -p /srv/share /mnt/share /var/lib/ringsmb /var/lib/ringsmb-r
modprobe ksmbd || { echo "FAIL: modprobe ksmbd"; exit 1; }
case " $SERVERS " in *" samba"*)
  mkdir -p /var/lib/samba/private /var/lib/samba/lock /var/lib/samba/cache /var/lib/samba/pid /var/lib/samba/ncalrpc
  for s in $SERVERS; do case $s in samba*) conf=/job/$s.conf ;; esac; done
  printf '%s\n%s\n' "$SMBPASS" "$SMBPASS" | smbpasswd -c "$conf" -s -a alice > /tmp/smbpasswd.log 2>&1 ||
    { echo "FAIL: smbpasswd"; cat /tmp/smbpasswd.log; } ;;
esac
now() { cut -d' ' -f1 /proc/uptime; }
log() { echo "    [$(now)s] $*"; }

# "pid comm utime stime" of every process and kernel thread (ticks).
threads() {
  for f in /proc/[0-9]*/stat; do cat "$f" 2>/dev/null; echo; done |
    awk 'NF { c = $0; sub(/^[0-9]+ \(/, "", c); sub(/\) .*/, "", c); r = $0; sub(/^.*\) /, "", r);
              split(r, v, " "); print $1, c, v[12], v[13] }'
}
# The server's user and system ticks between two threads() snapshots.
server_ticks() {  # server_ticks BEFORE AFTER SERVER
  awk -v srv="$3" '
    function mine(c) {
      if (srv ~ /^ringsmbd/) return c == "ringsmbd" || c == "ringsmb-ctld"
      if (srv ~ /^samba/) return c ~ /^smbd/ || c ~ /^samba-dcerpcd/ || c ~ /^rpcd_/ || c ~ /cleanupd/
      return c ~ /^ksmbd/ || c ~ /-ksmbd-io$/ }
    FNR == NR { c0[$1] = $2; u0[$1] = $3; s0[$1] = $4; next }
    mine($2) || mine(c0[$1]) { u += $3 - u0[$1]; s += $4 - s0[$1] }
    END { print u + 0, s + 0 }' "$1" "$2"
}
cpu() { awk '$1 == "cpu" { print $2 + $3, $4 + $7 + $8 }' /proc/stat; }
requests() { sed -n 's/^SMBs: *\([0-9]*\).*/\1/p' /proc/fs/cifs/Stats | head -1; }
# "Creates 10 Closes 10 ...": the client's per-command counters.
commands() { awk '$3 == "total" { sub(":", "", $1); n[$1] += $2 } END { for (k in n) printf "%s %d ", k, n[k] }' /proc/fs/cifs/Stats; }

start_server() {  # start_server NAME: sets PORT and SRV_PID
  case $1 in
    ringsmbd*)
      PORT=4455
      $BIN/daemon/ringsmbd --config /job/$1.conf --foreground > /tmp/server.log 2>&1 &
      SRV_PID=$!
      for i in $(seq 1 200); do netstat -ltn 2>/dev/null | grep -q ":4455 " && return 0; sleep 0.1; done ;;
    samba*)
      PORT=4456
      # Without --no-process-group smbd makes a process group of its own,
      # so its exit does not signal this script's.
      smbd -F -s /job/$1.conf > /tmp/server.log 2>&1 &
      SRV_PID=$!
      for i in $(seq 1 300); do netstat -ltn 2>/dev/null | grep -q ":4456 " && return 0; sleep 0.1; done ;;
    *)
      PORT=445
      # After the previous ctld's kill_server the module resets for a
      # moment and refuses a new daemon (EINVAL): try again.
      for attempt in $(seq 1 40); do
        $BIN/daemon/ringsmb-ctld --config /job/$1.conf --foreground -d 2 > /tmp/server.log 2>&1 &
        SRV_PID=$!
        for i in $(seq 1 50); do
          grep -q "driving ksmbd.ko" /tmp/server.log && return 0
          kill -0 $SRV_PID 2>/dev/null || break
          sleep 0.1
        done
        wait $SRV_PID 2>/dev/null
        sleep 0.5
      done ;;
  esac
  echo "FAIL: $1 did not start"; tail -5 /tmp/server.log; return 1
}
stop_server() {
  kill $SRV_PID 2>/dev/null; wait $SRV_PID 2>/dev/null
}

one_run() {  # one_run SERVER MODE FILES REP
  local opts="vers=3.1.1,username=alice,password=$SMBPASS"
  [ "$2" = signed ] && opts="$opts,sign"
  mount -t tmpfs -o size=600m tmpfs /srv/share && chown 1000:1000 /srv/share && chmod 755 /srv/share
  start_server "$1" || return 1
  [ "$1" = "${STARTUP_SHOWN:-}" ] || { grep "data plane = ksmbd:" /tmp/server.log | sed 's/^/    /'; STARTUP_SHOWN=$1; }
  # ksmbd may still be taking the previous daemon's listener down: a
  # refused first mount is tried again.
  local tries=0
  until timeout 120 mount -t cifs "//127.0.0.1/share" /mnt/share -o "$opts,port=$PORT" 2>/tmp/mount.err; do
    tries=$((tries + 1)); [ $tries -lt 5 ] || break; sleep 1
  done
  if [ $tries -ge 5 ]; then
    cat /tmp/mount.err
    echo "FAIL: mount $1 $2"; stop_server; umount /srv/share; return 1
  fi
  threads > /tmp/t0; local c0=$(cpu) r0=$(requests) k0=$(commands) t0=$(now)
  echo "MARK begin"  # the host reads QEMU's own CPU time at each MARK
  (cd /mnt/share && tar xf /job/tree$3.tar) && sync
  local t1=$(now)
  sleep 3
  echo "MARK end"
  threads > /tmp/t1; local c1=$(cpu) r1=$(requests) k1=$(commands)
  local srv=$(server_ticks /tmp/t0 /tmp/t1 "$1")
  local n=$(find /srv/share -type f | wc -l)
  umount /mnt/share; stop_server; umount /srv/share
  [ "$n" = "$3" ] || echo "FAIL: $1 $2: $n files on the share, not $3"
  echo "RUN server=$1 mode=$2 files=$3 rep=$4 wall=$(echo "$t1 $t0" | awk '{print $1 - $2}')" \
    "$(echo "$c0 $c1" | awk '{printf "guest_user=%.2f guest_sys=%.2f", ($3 - $1) / 100, ($4 - $2) / 100}')" \
    "$(echo "$srv" | awk '{printf "server_user=%.2f server_sys=%.2f", $1 / 100, $2 / 100}')" "requests=$((r1 - r0))"
  echo "$k0 | $k1" | awk '{ for (i = 1; $i != "|"; i += 2) b[$i] = $(i + 1); for (i++; i < NF; i += 2) if ($(i + 1) > b[$i]) printf "%s=%d ", $i, $(i + 1) - b[$i]; print "" }' |
    sed "s/^/COMMANDS server=$1 mode=$2 files=$3 rep=$4 /"
}

# One unmeasured run of each server first: the first extract after boot
# also pays for loading and translating code that later runs reuse (under
# TCG several times a measured run's cost).
for srv in $SERVERS; do
  set -- $SIZES
  log "$srv warm-up, $1 files"
  one_run "$srv" plain "$1" warm-up > /tmp/warm-up.log 2>&1 || cat /tmp/warm-up.log
done
# The servers alternate: each repetition starts one further along the list.
rotate() {  # rotate K LIST...: LIST rotated left by K
  local k=$1; shift; local n=$#
  for i in $(seq 0 $((n - 1))); do eval "echo \${$(( (i + k) % n + 1 ))}"; done
}
for files in $SIZES; do
  for mode in $MODES; do
    for rep in $(seq 0 $((REPS - 1))); do
      for srv in $(rotate $rep $SERVERS); do
        log "$srv $mode $files files, rep $rep"
        one_run "$srv" "$mode" "$files" "$rep"
      done
    done
  done
done

# ringsmbd's system calls for one extract: strace -c over all its threads
# (ringsmb-ctld not included); far slower, so never one of the measured runs.
if [ -n "${STRACE_MODE:-}" ]; then
  opts="vers=3.1.1,username=alice,password=$SMBPASS,port=4455"
  [ "$STRACE_MODE" = signed ] && opts="$opts,sign"
  mount -t tmpfs -o size=600m tmpfs /srv/share && chown 1000:1000 /srv/share
  start_server ringsmbd && timeout 120 mount -t cifs //127.0.0.1/share /mnt/share -o "$opts" && {
    strace -c -f -p $SRV_PID -o /tmp/strace.out & st=$!
    sleep 2; r0=$(requests)
    (cd /mnt/share && tar xf /job/tree$STRACE_FILES.tar) && sync; sleep 3
    r1=$(requests); kill -INT $st; wait $st
    umount /mnt/share
    echo "STRACE mode=$STRACE_MODE files=$STRACE_FILES requests=$((r1 - r0))"
    sed 's/^/STRACE| /' /tmp/strace.out
  }
  stop_server; umount /srv/share
fi
echo "guest done at $(now)s"
