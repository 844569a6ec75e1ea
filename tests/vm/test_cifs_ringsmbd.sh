#!/usr/bin/env bash
# The Linux kernel's cifs client (Debian 12's kernel, in a QEMU guest: see
# tests/vm/run) against ringsmbd on the host: SMB 3.1.1 signed and sealed
# (encrypted), 3.0 signed, 2.1; in each a large file and a tree of small
# files written, read back after a remount and checked by md5 in the guest,
# then on the host's disk; in each also a tree extracted, listed and read,
# then renamed (a subdirectory in it first) and removed with no remount
# between (the client's deferred-close handles and cached directories are
# below it: the server breaks their leases and waits). Once: rename,
# append, truncate, mtime, chmod and back, a 2,000-entry directory;
# meanwhile a process on the host appends to a file in the share, which
# the guest then reads back complete.
# RINGSMB_QUICK: 3.1.1 only, 500 entries.
source "$(dirname "$0")/../integration/lib.sh"
VM="$RINGSMB_SOURCE_DIR/tests/vm"
started=$(date +%s)

write_config
add_user alice 'secret-A1'
start_server

mkdir -p "$T/src"
python3 "$RINGSMB_SOURCE_DIR/bench/mktree.py" "$T/src/tree" --files "${RINGSMB_VM_TREE_FILES:-200}" --per-dir 25 >/dev/null
tar cf "$T/tree.tar" -C "$T/src" tree
(cd "$T/src" && find tree -type f | sort | xargs md5sum) > "$T/tree.md5"
head -c $((8 * 1024 * 1024 + 4321)) /dev/urandom > "$T/big.bin"
(cd "$T" && md5sum big.bin) > "$T/big.md5"

modes="signed:vers=3.1.1,sign;sealed:vers=3.1.1,seal;smb30:vers=3.0,sign;smb21:vers=2.1"
mode_names="signed sealed smb30 smb21"
entries=${RINGSMB_VM_DIR_ENTRIES:-2000}
if [ -n "${RINGSMB_QUICK:-}" ]; then  # the sanitizer pass of scripts/test: 3.1.1 only
  modes="signed:vers=3.1.1,sign;sealed:vers=3.1.1,seal" mode_names="signed sealed" entries=500
fi
# A concurrent writer on the host, in the share the guest is working in.
host_lines=400
( for i in $(seq 1 $host_lines); do echo "line $i" >> "$T/share/hostwriter.txt"; sleep 0.05; done
  : > "$T/share/hostwriter.done" ) &
writer=$!
if "$VM/run" --timeout "${RINGSMB_VM_TIMEOUT:-600}" --guestfwd "445=$PORT" \
     --file "$VM/guest/lib.sh" --file "$VM/guest/cifs_roundtrip.sh" --file "$T/tree.tar" --file "$T/tree.md5" --file "$T/big.bin" \
     --env SERVER=10.0.2.100 --env SHARE=share --env SMBUSER=alice --env SMBPASS='secret-A1' \
     --env "MODES=$modes" --env "DIR_ENTRIES=$entries" --env "HOST_LINES=$host_lines" \
     -- 'sh /job/cifs_roundtrip.sh' > "$T/guest.log" 2>&1; then
  pass "the guest's cifs checks"
else
  fail "the guest's cifs checks (exit $?)"
fi
wait "$writer"
check "the host's writer wrote every line" bash -c "[ \$(wc -l < '$T/share/hostwriter.txt') -eq $host_lines ]"
grep -E "^(PASS|FAIL|    )" "$T/guest.log" || true
grep -q FAIL "$T/guest.log" && tail -40 "$T/guest.log"

for m in $mode_names; do
  check "$m: the host sees the large file the guest wrote" bash -c "cd '$T/share/$m' && md5sum -c '$T/big.md5'"
  check "$m: the host sees the tree the guest extracted" bash -c "cd '$T/share/$m' && md5sum -c --quiet '$T/tree.md5'"
  check "$m: the tree the guest renamed and removed is gone on the host" bash -c "[ ! -e '$T/share/$m/rn' ]"
done
check "chmod 444 and back over cifs leaves the owner's write bit on the host" \
  bash -c "[ -n \"\$(find '$T/share/signed/renamed.txt' -perm -u+w)\" ]"
check "chmod 444 and 644 over cifs without a remount leaves the owner's write bit on the host" \
  bash -c "[ -n \"\$(find '$T/share/signed/ro2.txt' -perm -u+w)\" ] && [ \"\$(cat '$T/share/signed/ro2.txt')\" = \"\$(printf 'x\\ny')\" ]"
check "the host sees the guest's file operations" bash -c "[ \"\$(cat '$T/share/signed/renamed.txt')\" = firsty ] && [ \$(ls '$T/share/signed/many' | wc -l) -eq $entries ]"
echo "vm test took $(( $(date +%s) - started ))s"
finish
