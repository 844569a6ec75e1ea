# In the guest (tests/vm/test_cifs_multichannel.sh): ringsmbd serves
# /srv/share on the guest's loopback, reporting 127.0.0.1 as RSS-capable
# (the kernel opens more than one channel to one address only then), and
# the kernel's cifs client mounts it with multichannel,max_channels=4:
# DebugData and `ringsmbctl status` show 4 channels; a 200-file tree and a
# $MIB MiB file are copied, read back after a remount and md5-checked;
# then, in the middle of the copy of another $MIB MiB file, one channel's
# connection is killed on the server's side (ss -K, by the client's port):
# the copy completes intact and the client reconnects the channel. The
# large files are streamed from /dev/urandom through tee (their md5 taken
# on the way), so that the guest's RAM holds only the server's copy.
# Prints PASS/FAIL lines.
. /job/lib.sh
check() { d=$1; shift; if "$@"; then pass "$d"; else fail "$d"; fi; }
modprobe inet_diag && modprobe tcp_diag || echo "no inet_diag/tcp_diag: ss -K cannot work"
mkdir -p /srv/share /var/lib/ringsmb
# The share on a tmpfs of its own, sized for the large file: the root
# file system's tmpfs holds half the guest's RAM, less than 1 GiB then.
mount -t tmpfs -o size=$((MIB + 64))m tmpfs /srv/share
chown rsmb_owner: /srv/share
$BIN/daemon/ringsmbd --config /job/ringsmb.conf --foreground > /job/server.log 2>&1 &
for _ in $(seq 1 100); do grep -q ':01BD .* 0A ' /proc/net/tcp && break; sleep 0.2; done
CTL() { $BIN/tools/ringsmbctl --config /job/ringsmb.conf "$@"; }
OPTS="vers=3.1.1,multichannel,max_channels=4"

# The session's channels as the kernel counts them (1 + "Extra Channels").
client_channels() {
  n=$(sed -n 's/.*Extra Channels: *\([0-9]*\).*/\1/p' /proc/fs/cifs/DebugData | head -1)
  echo $((${n:-0} + 1))
}
# ESTABLISHED connections to the server's port 445, seen from its side.
server_conns() { ss -tnH state established '( sport = :445 )' | wc -l; }
# The client ports of the session's channels in `ringsmbctl status`, the first channel first.
channel_ports() { CTL status | awk '/^Channels:/ { on = 1; next } on && NF == 0 { on = 0 } on && $1 ~ /^0x/ { print $3 }' | sed 's/.*://'; }
wait_channels() {  # wait_channels N: until the client and the server both count N, up to 30 s
  for _ in $(seq 1 150); do
    [ "$(client_channels)" = "$1" ] && [ "$(server_conns)" = "$1" ] && [ "$(channel_ports | wc -l)" = "$1" ] &&
      ! grep -qE 'DISCONNECTED|RECONNECTING' /proc/fs/cifs/DebugData && return 0
    sleep 0.2
  done
  return 1
}
show() { grep -E 'Channel|Extra|DISCONNECTED|RECONNECTING|Instance|interfaces|Speed|Capabilities|IP addr' /proc/fs/cifs/DebugData | sed 's/^/    /' | head -30; CTL status | sed 's/^/    /'; }

mount_or_exit "$OPTS"
if wait_channels 4; then
  pass "4 channels: DebugData, ringsmbctl status and the server's sockets agree"
else
  fail "4 channels (client $(client_channels), server $(server_conns))"; show; dmesg | grep -i cifs | tail -10
fi
CTL status | awk '/^Sessions:/,/^$/' | sed 's/^/    /'

# stream_to FILE MD5FILE: $MIB MiB and 4321 bytes of random data written to
# FILE and fsync'ed (a failed write or fsync fails it), their md5 in MD5FILE.
# One dd per MiB, each counted in /tmp/streamed: how far the copy is. With
# PAUSE_AT set, the stream stops after that many MiB until /tmp/go exists,
# so that the copy is certainly still going when a channel is killed.
stream_to() {
  ( set -o pipefail
    { i=0; while [ $i -lt $MIB ]; do dd if=/dev/urandom bs=1M count=1 2>/dev/null; i=$((i + 1)); echo $i > /tmp/streamed
        if [ $i = "${PAUSE_AT:-}" ]; then while [ ! -e /tmp/go ]; do sleep 0.1; done; fi; done
      head -c 4321 /dev/urandom; } | tee "$1" | md5sum > "$2" ) &&
    sync "$1"
}
size=$((MIB * 1048576 + 4321))
t0=$(date +%s)
mkdir $mnt/mc && (cd $mnt/mc && tar xf /job/tree.tar) && stream_to $mnt/mc/big.bin /tmp/big.md5 ||
  fail "copy the tree and the large file"
echo "    the tree and $size bytes written in $(( $(date +%s) - t0 )) s"
umount $mnt && mount_or_exit "$OPTS"
check "the $(wc -l < /job/tree.md5) files of the tree read back intact after a remount" \
  sh -c "cd $mnt/mc && md5sum -c -s /job/tree.md5"
check "the $size-byte file reads back intact after a remount" [ "$(md5sum < $mnt/mc/big.bin)" = "$(cat /tmp/big.md5)" ]
wait_channels 4 || { fail "4 channels after the remount"; show; }
rm $mnt/mc/big.bin  # the guest's RAM holds the server's files

# One channel lost in the middle of a copy: the server's end of the last
# channel (not the session's first) is destroyed, the client sees a reset.
# Small dirty-page limits make the client write back while the data
# stream in, not all of it at the fsync: a quarter into the stream, its
# writes are on the wire.
echo $((4 << 20)) > /proc/sys/vm/dirty_bytes
echo $((1 << 20)) > /proc/sys/vm/dirty_background_bytes
before=$(channel_ports | tr '\n' ' ')
victim=$(channel_ports | tail -1)
echo 0 > /tmp/streamed
rm -f /tmp/go
PAUSE_AT=$((MIB / 4)) stream_to $mnt/mc/big2.bin /tmp/big2.md5 &
copier=$!
for _ in $(seq 1 6000); do  # until a quarter is streamed, up to 600 s
  [ "$(cat /tmp/streamed)" -ge $((MIB / 4)) ] 2>/dev/null && break
  kill -0 $copier 2>/dev/null || break
  sleep 0.1
done
echo "    killing the channel from port $victim with $(cat /tmp/streamed) MiB streamed, $(wc -c < /srv/share/mc/big2.bin) of $size bytes on the server; channels were: $before"
check "the copy is still running when the channel is killed" kill -0 $copier
ss -K -tnH state established "( sport = :445 and dport = :$victim )" | sed 's/^/    killed: /'
check "the killed connection is gone on the server's side" \
  sh -c "! ss -tnH state established '( sport = :445 and dport = :$victim )' | grep -q ."
touch /tmp/go  # the rest of the stream
wait $copier
rc=$?
sync
check "the copy during the loss of a channel completes" [ $rc = 0 ]
if wait_channels 4; then
  pass "the client reconnected the channel: 4 again (ports now $(channel_ports | tr '\n' ' '))"
else
  fail "the channel was not reconnected (client $(client_channels), server $(server_conns))"; show
fi
check "the killed port is no channel any more" sh -c "! echo '$(channel_ports)' | grep -qx $victim"
umount $mnt && mount_or_exit "$OPTS"
check "the file copied during the loss reads back intact after a remount" \
  [ "$(md5sum < $mnt/mc/big2.bin)" = "$(cat /tmp/big2.md5)" ]
check "... and on the server's disk" [ "$(md5sum < /srv/share/mc/big2.bin)" = "$(cat /tmp/big2.md5)" ]
check "... of $size bytes" [ "$(wc -c < /srv/share/mc/big2.bin)" = $size ]
umount $mnt
kill %1 2>/dev/null
[ "$failures" = 0 ] || { dmesg | grep -i cifs | tail -20; tail -30 /job/server.log; }
exit $failures
