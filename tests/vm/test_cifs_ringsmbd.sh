#!/usr/bin/env bash
# The Linux kernel's cifs client (Debian 12's kernel, in a QEMU guest: see
# tests/vm/run) against ringsmbd on the host: SMB 3.1.1 signed, and sealed
# (encrypted); a large file and a tree of small files written, read back
# after a remount and checked by md5 in the guest, then on the host's disk.
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

modes="signed:vers=3.1.1,sign;sealed:vers=3.1.1,seal"
if "$VM/run" --timeout "${RINGSMB_VM_TIMEOUT:-600}" --guestfwd "445=$PORT" \
     --file "$VM/guest/cifs_roundtrip.sh" --file "$T/tree.tar" --file "$T/tree.md5" --file "$T/big.bin" \
     --env SERVER=10.0.2.100 --env SHARE=share --env SMBUSER=alice --env SMBPASS='secret-A1' \
     --env "MODES=$modes" \
     -- 'sh /job/cifs_roundtrip.sh' > "$T/guest.log" 2>&1; then
  pass "the guest's cifs checks"
else
  fail "the guest's cifs checks (exit $?)"
fi
grep -E "^(PASS|FAIL|    )" "$T/guest.log" || true
grep -q FAIL "$T/guest.log" && tail -40 "$T/guest.log"

for m in signed sealed; do
  check "$m: the host sees the large file the guest wrote" bash -c "cd '$T/share/$m' && md5sum -c '$T/big.md5'"
  check "$m: the host sees the tree the guest extracted" bash -c "cd '$T/share/$m' && md5sum -c --quiet '$T/tree.md5'"
done
echo "vm test took $(( $(date +%s) - started ))s"
finish
