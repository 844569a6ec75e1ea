#!/usr/bin/env bash
# data plane = ksmbd, in a QEMU guest running Debian's kernel (tests/vm/run):
# ringsmb-ctld drives the guest's ksmbd.ko; the guest's cifs client and the
# host's smbclient (through hostfwd to 127.0.0.1) use it. The guest side is
# guest/ksmbd_shim.sh; here: the host's smbclient -L, put and get.
source "$(dirname "$0")/../integration/lib.sh"
VM="$RINGSMB_SOURCE_DIR/tests/vm"
started=$(date +%s)
PASS_A='secret-A1' PASS_B='secret-B2'
# Debian 12's own 6.1 kernels have a ksmbd that oopses on any CREATE granted
# no oplock (opinfo_put(NULL) in smb2_open: docs/kmod-shim.md); Debian 12
# also ships 6.12 kernels, whose ksmbd has not that bug.
KERNEL=${RINGSMB_VM_KSMBD_KERNEL:-6.12}

# The users db is made on the host (same format), then edited in the guest.
printf '[global]\n  users db = %s/users.db\n  state directory = %s\n' "$T" "$T" > "$T/host.conf"
echo "$PASS_A" | "$RINGSMBCTL" --config "$T/host.conf" user add alice --password-stdin --unix-user "$TEST_UNIX_USER" >/dev/null
cat > "$T/ringsmb.conf" <<CONF
[global]
  data plane = ksmbd
  netbios name = RINGSMBVM
  users db = /var/lib/ringsmb/users.db
  state directory = /var/lib/ringsmb
  server signing = auto
  log level = 1

[share]
  path = /srv/share
  writeable = yes
CONF

mkdir -p "$T/src"
python3 "$RINGSMB_SOURCE_DIR/bench/mktree.py" "$T/src/tree" --files "${RINGSMB_VM_TREE_FILES:-100}" --per-dir 25 >/dev/null
tar cf "$T/tree.tar" -C "$T/src" tree
(cd "$T/src" && find tree -type f | sort | xargs md5sum) > "$T/tree.md5"
head -c $((4 * 1024 * 1024 + 77)) /dev/urandom > "$T/big.bin"
head -c $((3 * 1024 * 1024 + 5)) /dev/urandom > "$T/host.bin"
md5sum < "$T/host.bin" > "$T/host.md5"

HOSTPORT=$(free_port)
"$VM/run" --kernel "$KERNEL" --timeout "${RINGSMB_VM_TIMEOUT:-600}" --hostfwd "$HOSTPORT=445" \
  --bin "$RINGSMB_BUILD_DIR/daemon/ringsmb-ctld" --bin "$RINGSMB_BUILD_DIR/tools/ringsmbctl" \
  --file "$VM/guest/ksmbd_shim.sh" --file "$T/ringsmb.conf" --file "$T/users.db=/var/lib/ringsmb/users.db" \
  --file "$T/tree.tar" --file "$T/tree.md5" --file "$T/big.bin" --file "$T/host.md5" \
  --env "BIN=$RINGSMB_BUILD_DIR" --env "PASS_A=$PASS_A" --env "PASS_B=$PASS_B" \
  -- 'sh /job/ksmbd_shim.sh' > "$T/guest.log" 2>&1 &
vm=$!

for _ in $(seq 1 1200); do
  grep -q '^GUEST-READY' "$T/guest.log" && break
  kill -0 $vm 2>/dev/null || break
  sleep 0.5
done
if grep -q '^GUEST-READY' "$T/guest.log"; then
  hsmb() { timeout 120 smbclient "//127.0.0.1/$1" -p "$HOSTPORT" -U "$2" -m SMB3 "${@:3}"; }
  check "the host's smbclient -L lists the guest's shares" \
    bash -c "$(declare -f hsmb); HOSTPORT=$HOSTPORT; hsmb IPC\$ 'alice%$PASS_A' -L 127.0.0.1 | grep -E '^\s+extra\s+Disk'"
  check "the host's smbclient puts and gets a file through hostfwd, byte for byte" \
    bash -c "$(declare -f hsmb); HOSTPORT=$HOSTPORT; cd '$T' && hsmb extra 'bob%$PASS_B' -c 'put host.bin; get host.bin back.bin' && cmp host.bin back.bin"
  check "an encrypted smbclient session (--encrypt) works too" \
    bash -c "$(declare -f hsmb); HOSTPORT=$HOSTPORT; hsmb extra 'bob%$PASS_B' --client-protection=encrypt -c 'ls host.bin'"
  touch "$T/host-done"
  (cd "$T" && hsmb extra "bob%$PASS_B" -c 'put host-done') >/dev/null 2>&1 || fail "put host-done"
else
  fail "the guest never got ready for the host's client"
fi
if wait $vm; then pass "the guest's checks"; else fail "the guest's checks (exit $?)"; fi
grep -E "^(PASS|FAIL|    )" "$T/guest.log" || true
if grep -q "^FAIL" "$T/guest.log" || ! grep -q "^RINGSMB_VM_EXIT=0" "$T/guest.log"; then
  echo "--- the guest's console from /init on (tail)"
  sed -n '/Run \/init/,$p' "$T/guest.log" | tail -150
fi
echo "vm test took $(( $(date +%s) - started ))s"
finish
