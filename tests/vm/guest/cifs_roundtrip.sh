# Runs in the guest (busybox sh): the kernel's cifs client mounts
# //$SERVER/$SHARE once per option set in $MODES (";"-separated, each
# "NAME:mount options"), and in a directory NAME on the share: writes a large
# file and reads it back after a remount (so the read comes from the server,
# not the page cache), extracts tree.tar and checks every file's md5 after
# another remount. The host then checks the same files on its disk.
. /job/lib.sh

run_mode() {  # run_mode NAME OPTIONS
  local name=$1 opts=$2
  if ! mount_share "$opts"; then fail "$name: mount -o $opts"; dmesg | tail -5; return; fi
  pass "$name: mount -o $opts"
  grep -E "Signing|Encrypt|Dialect|SMB3\.1\.1" /proc/fs/cifs/DebugData | sed "s/^/    $name: /" | head -8
  mkdir -p $mnt/$name
  cp /job/big.bin $mnt/$name/big.bin && sync
  (cd $mnt/$name && tar xf /job/tree.tar) || fail "$name: tar x"
  umount $mnt && mount_share "$opts" || { fail "$name: remount"; return; }
  if [ "$(md5sum < $mnt/$name/big.bin)" = "$(md5sum < /job/big.bin)" ]; then
    pass "$name: large file read back after a remount"
  else
    fail "$name: large file differs"
  fi
  if (cd $mnt/$name && md5sum -c -s /job/tree.md5); then
    pass "$name: $(wc -l < /job/tree.md5) extracted files match their md5"
  else
    fail "$name: extracted files differ"; (cd $mnt/$name && md5sum -c /job/tree.md5 | grep -v ': OK' | head)
  fi
  tree_rename $mnt/$name "$name"
  if [ $first = 1 ]; then first=0; file_ops $mnt/$name "$opts"; fi
  umount $mnt || fail "$name: umount"
}

# A tree extracted, listed (ls -lR), every file read and stat-ed, then a
# subdirectory renamed inside it and the tree itself renamed and removed,
# without a remount: the client still holds the files' handles with their
# RH leases (deferred close, closetimeo) and the directories' with RH
# directory leases, and the server must break those and wait for their
# CLOSEs rather than refuse the rename (Windows and Samba rename it).
tree_rename() {  # tree_rename DIR MODE_NAME
  local d=$1/rn name=$2 n
  mkdir -p $d && (cd $d && tar xf /job/tree.tar) || { fail "$name: tar x for the rename"; return; }
  ls -lR $d > /dev/null
  find $d -type f -exec cat {} + > /dev/null
  find $d -type f -exec stat {} + > /dev/null
  n=$(find $d/tree -type f | wc -l)
  local sub=$(find $d/tree -mindepth 2 -maxdepth 2 -type d | head -1) t0=$(date +%s)
  if mv "$sub" "$sub.moved" && mv $d/tree $d/tree2; then
    [ "$(find $d/tree2 -type f | wc -l)" = "$n" ] \
      && pass "$name: a just-read tree of $n files renamed, and a subdirectory in it ($(($(date +%s) - t0)) s)" \
      || fail "$name: the renamed tree has $(find $d/tree2 -type f | wc -l) of $n files"
  else
    fail "$name: rename of a just-read tree ($(($(date +%s) - t0)) s)"
  fi
  t0=$(date +%s)
  rm -rf $d && [ ! -e $d ] && pass "$name: rm -rf of the renamed tree ($(($(date +%s) - t0)) s)" \
    || fail "$name: rm -rf of the renamed tree ($(($(date +%s) - t0)) s)"
}

# File operations on a mounted share (run once, in the first mode's
# directory): rename, truncate, append, mtime, chmod and back, and a
# directory with $DIR_ENTRIES entries listed back complete.
file_ops() {  # file_ops DIR MOUNT_OPTIONS
  local d=$1 ok=1
  echo "first line" > $d/ops.txt && mv $d/ops.txt $d/renamed.txt && [ ! -e $d/ops.txt ] && [ -f $d/renamed.txt ] \
    && pass "rename" || { fail "rename"; ok=0; }
  echo "second line" >> $d/renamed.txt && [ "$(sed -n 2p $d/renamed.txt)" = "second line" ] \
    && pass "append" || fail "append"
  truncate -s 5 $d/renamed.txt && [ "$(cat $d/renamed.txt)" = "first" ] && pass "truncate" || fail "truncate"
  touch -d "2001-02-03 04:05:06" $d/renamed.txt && [ "$(date -r $d/renamed.txt +%Y%m%d%H%M%S)" = 20010203040506 ] \
    && pass "mtime set and read back" || fail "mtime: $(date -r $d/renamed.txt)"
  # Without POSIX extensions the client maps "no write bit" to the
  # READONLY attribute: the mode it reads back loses its write bits. The
  # client (6.1) does not record the attributes its own SET_INFO set, and
  # re-reads them only when its attribute cache has expired (actimeo, 1 s)
  # and it holds no read lease on the file (the handle of the last write
  # stays open, with its RWH lease, for closetimeo, 1 s). So a chmod back
  # right away sends nothing (it believes READONLY is not set), the file
  # stays READONLY on the server and the next write open is refused
  # (MS-FSA 2.1.5.1.2.1; Samba 4.17 gets the same requests and refuses it
  # too: docs/security.md). Here the client re-reads the attributes before
  # the chmod back: once after a remount, once after waiting out both
  # caches (4 s: the deferred CLOSE, about 1 s in, restarts the 1 s
  # attribute cache without taking the attributes from its reply);
  # either way the server reports READONLY and the chmod back clears it
  # (CREATE FILE_WRITE_ATTRIBUTES + SET_INFO + CLOSE).
  local before=$(stat -c %a $d/renamed.txt)
  chmod 444 $d/renamed.txt
  umount $mnt && mount_share "$2" || { fail "chmod 444: remount"; return; }
  local ro=$(stat -c %a $d/renamed.txt)
  chmod "$before" $d/renamed.txt
  case $ro in
    *[2367]*) fail "chmod 444: mode read back from the server is $ro" ;;
    *) pass "chmod 444 reads back read-only from the server ($ro)" ;;
  esac
  echo y >> $d/renamed.txt && pass "chmod back ($before): writable again" || fail "chmod back: not writable"
  echo x > $d/ro2.txt && chmod 444 $d/ro2.txt && sleep 4
  ro=$(stat -c %a $d/ro2.txt)
  chmod 644 $d/ro2.txt
  case $ro in
    *[2367]*) fail "chmod 444, no remount: mode re-read from the server is $ro" ;;
    *) pass "chmod 444, no remount: re-read read-only from the server ($ro)" ;;
  esac
  echo y >> $d/ro2.txt && [ "$(cat $d/ro2.txt)" = "$(printf 'x\ny')" ] \
    && pass "chmod 644 without a remount: writable again" || fail "chmod 644 without a remount: not writable"
  mkdir -p $d/many && (cd $d/many && i=0; while [ $i -lt $DIR_ENTRIES ]; do : > e$i; i=$((i + 1)); done)
  [ "$(ls $d/many | wc -l)" -eq "$DIR_ENTRIES" ] && pass "a $DIR_ENTRIES-entry directory lists complete" \
    || fail "$DIR_ENTRIES-entry directory: $(ls $d/many | wc -l) listed"
}

# While the modes above ran, a process on the host appended $HOST_LINES
# numbered lines to hostwriter.txt in the share and then created
# hostwriter.done: the client must see all of them, in order, through a
# fresh mount (the host's side is checked on the host).
host_writer() {
  [ -n "${HOST_LINES:-}" ] || return 0
  mount_share "vers=3.1.1" || { fail "host writer: mount"; return; }
  local i=0
  while [ ! -e $mnt/hostwriter.done ] && [ $i -lt 120 ]; do sleep 1; i=$((i + 1)); done
  local n=$(wc -l < $mnt/hostwriter.txt) last=$(tail -n 1 $mnt/hostwriter.txt)
  if [ "$n" = "$HOST_LINES" ] && [ "$last" = "line $HOST_LINES" ]; then
    pass "the host's concurrent writer: $n lines seen in order"
  else
    fail "the host's concurrent writer: $n of $HOST_LINES lines, last '$last'"
  fi
  umount $mnt
}

first=1
IFS=';'
for m in $MODES; do
  unset IFS
  run_mode "${m%%:*}" "${m#*:}"
done
host_writer
echo "guest: $failures failed"
[ $failures -eq 0 ]
