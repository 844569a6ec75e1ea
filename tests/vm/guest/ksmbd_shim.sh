# Runs in the guest (busybox sh): ringsmb-ctld drives the guest kernel's
# ksmbd.ko (data plane = ksmbd) and the guest's cifs client mounts it.
#   1. without the module, ringsmb-ctld exits non-zero and says so;
#   2. with it, ctld registers; a second ctld is refused with a message;
#   3. cifs mounts //127.0.0.1/share (3.1.1 signed, then sealed): a large
#      file and a tree written, remounted, md5-checked;
#   4. ringsmbctl adds a user and a share, makes [share] read-only, while
#      ksmbd serves: the new user mounts the new share, writes to [share]
#      are refused; ringsmbctl status says it has nothing to show;
#   5. GUEST-READY on the console: the host's smbclient (through hostfwd)
#      lists shares and puts host.bin; the guest waits for it and checks it.
set -u
failures=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
CTLD=$BIN/daemon/ringsmb-ctld
CTL="$BIN/tools/ringsmbctl --config /job/ringsmb.conf"
mkdir -p /etc
printf 'passwd: files\ngroup: files\n' > /etc/nsswitch.conf
# The SMB users map to rsmb_owner, an ordinary account that owns the shares
# (as tests/integration/lib.sh does on the host): ksmbd.ko does their file
# operations with its uid, not root's.
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\nrsmb_owner:x:1000:1000::/:/bin/false\n' > /etc/passwd
printf 'root:x:0:\nnogroup:x:65534:\nrsmb_owner:x:1000:\n' > /etc/group
mkdir -p /srv/share /srv/extra /var/lib/ringsmb /mnt/share
chown 1000:1000 /srv/share /srv/extra
chmod 755 /srv/share /srv/extra

# 1. no module
if $CTLD --config /job/ringsmb.conf --foreground > /tmp/ctld0.log 2>&1; then
  fail "ringsmb-ctld started without ksmbd.ko"
elif grep -q "ksmbd.ko is not loaded" /tmp/ctld0.log; then
  pass "without ksmbd.ko: $(tail -1 /tmp/ctld0.log)"
else
  fail "without ksmbd.ko, unclear error:"; cat /tmp/ctld0.log
fi

# 2. start, then a second instance
modprobe ksmbd || fail "modprobe ksmbd"
# -d 3: the answers (flags, sizes, never a hash) are logged, for a reader of a failure.
$CTLD --config /job/ringsmb.conf --foreground -d 3 > /tmp/ctld.log 2>&1 &
ctld=$!
for i in $(seq 1 100); do grep -q "driving ksmbd.ko" /tmp/ctld.log && break; sleep 0.1; done
if grep -q "driving ksmbd.ko" /tmp/ctld.log; then pass "ringsmb-ctld drives ksmbd: $(grep -o 'driving.*' /tmp/ctld.log)"
else fail "ringsmb-ctld did not register"; cat /tmp/ctld.log; fi
grep "data plane = ksmbd:" /tmp/ctld.log | sed 's/^/    /'
# ringsmb.conf sets no sizes, limits or leases: ksmbd gets its own defaults
# (docs/kmod-shim.md), not ringsmbd's 8 MiB max trans.
if grep -q "max trans 0,.*max connections 256, max open files 10000, leases off" /tmp/ctld.log; then
  pass "STARTING_UP leaves ksmbd its own max trans, limits and leases"
else
  fail "STARTING_UP did not send ksmbd's defaults"
fi
if $CTLD --config /job/ringsmb.conf --foreground > /tmp/ctld2.log 2>&1; then
  fail "a second ringsmb-ctld started"
elif grep -q "already drives" /tmp/ctld2.log; then
  pass "a second ringsmb-ctld is refused: $(tail -1 /tmp/ctld2.log | cut -c1-110)..."
else
  fail "second ringsmb-ctld, unclear error:"; cat /tmp/ctld2.log
fi

# 3. the guest's cifs client against ksmbd
mount_as() {  # mount_as USER PASS SHARE OPTIONS
  timeout 60 mount -t cifs "//127.0.0.1/$3" /mnt/share -o "username=$1,password=$2,$4" > /tmp/mount.out 2>&1
  local rc=$?
  sed 's/^/    mount: /' /tmp/mount.out
  return $rc
}
# ksmbd bugs show as an oops in the guest's kernel log: report and stop
# instead of waiting for every later mount to time out.
stop_on_oops() {
  if dmesg | grep -q "BUG:\|Oops"; then
    fail "ksmbd.ko oopsed (a kernel bug, see below)"
    dmesg | grep -A40 "BUG:" | head -45
    kill $ctld 2>/dev/null
    echo "guest: $failures failed"
    exit 1
  fi
}
# A step that hangs (a stalled client or server) fails after its timeout
# with the kernel's and ctld's last words, instead of the whole VM's.
stalled() {
  fail "$1 (timed out or failed at $(cut -d' ' -f1 /proc/uptime)s)"
  dmesg | tail -15 | sed 's/^/    dmesg: /'
  grep -v "ksmbd event [0-9]" /tmp/ctld.log | tail -8 | sed 's/^/    ctld: /'
}
for mode in signed:vers=3.1.1,sign sealed:vers=3.1.1,seal; do
  name=${mode%%:*} opts=${mode#*:}
  echo "    $name: start at $(cut -d' ' -f1 /proc/uptime)s"
  if ! mount_as alice "$PASS_A" share "$opts"; then stalled "$name: mount"; stop_on_oops; continue; fi
  # busybox's timeout leaves a watcher process for up to a second after the
  # command, holding the working directory and redirections it started
  # with: never one inside the mount (umount would find it busy).
  mkdir -p /mnt/share/$name && timeout 180 cp /job/big.bin /mnt/share/$name/ &&
    timeout 180 tar xf /job/tree.tar -C /mnt/share/$name || stalled "$name: write"
  umount /mnt/share 2>&1 | sed "s/^/    umount: /"; mount_as alice "$PASS_A" share "$opts" || { stalled "$name: remount"; continue; }
  if [ "$(timeout 180 md5sum /mnt/share/$name/big.bin | cut -d' ' -f1)" = "$(md5sum /job/big.bin | cut -d' ' -f1)" ] &&
     timeout 180 sh -c "cd /mnt/share/$name && exec md5sum -c -s /job/tree.md5"; then
    pass "$name: large file and $(wc -l < /job/tree.md5) files read back from ksmbd"
  else
    fail "$name: files differ"
  fi
  umount /mnt/share
  stop_on_oops
done
stop_on_oops
if mount_as alice wrong-password share vers=3.1.1 2>/dev/null; then fail "a wrong password mounted"; umount /mnt/share
else pass "a wrong password is refused by ksmbd"; fi

# 4. ringsmbctl while ksmbd serves
echo "$PASS_B" | $CTL user add bob --password-stdin --unix-user rsmb_owner > /tmp/ctl.log 2>&1 || { fail "user add"; cat /tmp/ctl.log; }
$CTL share add extra --path /srv/extra --writable > /tmp/ctl.log 2>&1 || { fail "share add"; cat /tmp/ctl.log; }
$CTL share set share --read-only > /tmp/ctl.log 2>&1 || { fail "share set"; cat /tmp/ctl.log; }
$CTL reload > /tmp/ctl.log 2>&1 || { fail "reload"; cat /tmp/ctl.log; }
if mount_as bob "$PASS_B" extra vers=3.1.1,sign && echo hello > /mnt/share/hello.txt && umount /mnt/share &&
   [ "$(cat /srv/extra/hello.txt)" = hello ] && [ "$(stat -c %u /srv/extra/hello.txt)" = 1000 ]; then
  pass "a user and a share added with ringsmbctl while serving: bob writes to [extra], as rsmb_owner"
else
  fail "bob on [extra]"; dmesg | tail -5; umount /mnt/share 2>/dev/null
fi
if mount_as alice "$PASS_A" share vers=3.1.1,sign; then
  if echo x > /mnt/share/ro-test.txt 2>/dev/null; then fail "[share] made read-only still takes writes"
  else pass "[share] made read-only with ringsmbctl refuses writes"; fi
  umount /mnt/share
else
  fail "mount [share] after the change"
fi

if $CTL status > /tmp/ctl.log 2>&1; then fail "ringsmbctl status succeeded with data plane = ksmbd"
elif grep -q "not available with data plane = ksmbd" /tmp/ctl.log; then pass "ringsmbctl status says why it has nothing to show"
else fail "ringsmbctl status, unclear error:"; cat /tmp/ctl.log; fi

# 5. the host's smbclient: ksmbd listens on every interface (one socket
# each, bound to the device); the forward reaches eth0's 10.0.2.15:445.
netstat -ltn 2>/dev/null | grep ':445 ' | sed 's/^/    listening: /'
echo "GUEST-READY after $(cut -d" " -f1 /proc/uptime)s"
for i in $(seq 1 240); do [ -f /srv/extra/host-done ] && break; sleep 0.5; done
if [ -f /srv/extra/host-done ] && [ "$(md5sum < /srv/extra/host.bin)" = "$(cat /job/host.md5)" ]; then
  pass "the host's smbclient put host.bin through hostfwd, intact"
else
  fail "host.bin from the host's smbclient missing or different"
fi

kill $ctld; wait $ctld
grep -q "ksmbd's server stopped" /tmp/ctld.log && pass "stopping ringsmb-ctld stops ksmbd's server" || fail "ksmbd not stopped"
if grep -qiE "segfault|BUG:|Oops" /tmp/ctld.log; then fail "crash in the log"; fi
echo "--- ringsmb-ctld log (without the per-event debug lines)"; grep -v "ksmbd event [0-9]" /tmp/ctld.log | tail -25
echo "guest: $failures failed"
[ $failures -eq 0 ]
