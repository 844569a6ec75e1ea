#!/usr/bin/env bash
# Multichannel through the Linux kernel's cifs client (Debian 12's 6.1 and
# 6.12 kernels in QEMU guests, tests/vm/run): ringsmbd runs in the guest
# (--bin) and reports the guest's 127.0.0.1 as RSS-capable ("interfaces =
# 127.0.0.1;capability=RSS"), so a mount with multichannel,max_channels=4
# opens 4 channels to that one address; guest/cifs_multichannel.sh checks
# them in DebugData and `ringsmbctl status`, copies a 200-file tree and a
# large file, kills one channel's connection on the server's side in the
# middle of the copy of another, and checks that the copy is intact and
# the channel reconnected. The server runs in the guest because the
# client opens its extra channels to the addresses the server reports:
# the host's 127.0.0.1 behind QEMU's user-mode network is none the guest
# can reach.
# RINGSMB_VM_MC_KERNELS: the kernels (default "default 6.12", as
# tests/vm/run --kernel takes them); RINGSMB_VM_MC_MIB: the large files'
# size in MiB (64: the emulated guest, client and server on one vCPU and
# every request signed, wrote 0.7 to 5 MB/s on the shared 2-vCPU machine
# as its load moved; RINGSMB_VM_MC_MIB=1024 with RINGSMB_VM_TIMEOUT=3600
# is the 1 GiB run, 10 to 20 min per kernel; the guest keeps the server's
# files in its RAM).
# RINGSMB_QUICK (the sanitizer pass of scripts/test): the 6.12 kernel only.
# ringsmbd's code is what that pass checks, and one client drives all of it
# that the two do: NEGOTIATE with multichannel, the interface list
# (FSCTL_QUERY_NETWORK_INTERFACE_INFO), three session binds, signed WRITEs
# and READs on 4 channels, the loss of a channel in the middle of a write
# and its bind again, `ringsmbctl status` listing them; the 6.1 client runs
# in the pass without sanitizers.
kernels=${RINGSMB_VM_MC_KERNELS:-default 6.12}
[ -n "${RINGSMB_QUICK:-}" ] && kernels=${RINGSMB_VM_MC_KERNELS:-6.12}
source "$(dirname "$0")/../integration/lib.sh"
VM="$RINGSMB_SOURCE_DIR/tests/vm"
started=$(date +%s)
command -v ss > /dev/null || { echo "SKIP: needs ss (iproute2)"; exit 0; }
PASS_A='secret-A1'
printf '[global]\n  users db = %s/users.db\n  state directory = %s\n' "$T" "$T" > "$T/host.conf"
echo "$PASS_A" | "$RINGSMBCTL" --config "$T/host.conf" user add alice --password-stdin --unix-user "$TEST_UNIX_USER" > /dev/null
cat > "$T/ringsmb.conf" <<CONF
[global]
  users db = /var/lib/ringsmb/users.db
  state directory = /var/lib/ringsmb
  interfaces = 127.0.0.1;capability=RSS
  bind interfaces only = yes

[share]
  path = /srv/share
  writeable = yes
CONF
mkdir -p "$T/src"
python3 "$RINGSMB_SOURCE_DIR/bench/mktree.py" "$T/src/tree" --files 200 --per-dir 25 > /dev/null
tar cf "$T/tree.tar" -C "$T/src" tree
(cd "$T/src" && find tree -type f | sort | xargs md5sum) > "$T/tree.md5"

for kernel in $kernels; do
  t0=$(date +%s)
  if "$VM/run" --kernel "$kernel" --mem $(( ${RINGSMB_VM_MC_MIB:-64} + 1536 )) --timeout "${RINGSMB_VM_TIMEOUT:-800}" \
       --bin "$RINGSMB_BUILD_DIR/daemon/ringsmbd" --bin "$RINGSMB_BUILD_DIR/daemon/ringsmb-ctld" \
       --bin "$RINGSMB_BUILD_DIR/tools/ringsmbctl" --bin "$(command -v ss)" \
       --file "$VM/guest/lib.sh" --file "$VM/guest/cifs_multichannel.sh" --file "$T/ringsmb.conf" \
       --file "$T/users.db=/var/lib/ringsmb/users.db" --file "$T/tree.tar" --file "$T/tree.md5" \
       --file /etc/passwd=/etc/passwd --file /etc/group=/etc/group \
       --env "BIN=$RINGSMB_BUILD_DIR" --env "MIB=${RINGSMB_VM_MC_MIB:-64}" --env SERVER=127.0.0.1 --env SHARE=share --env SMBUSER=alice \
       --env "SMBPASS=$PASS_A" -- 'sh /job/cifs_multichannel.sh' > "$T/guest-$kernel.log" 2>&1; then
    pass "kernel $kernel: the guest's multichannel checks ($(( $(date +%s) - t0 )) s)"
  else
    fail "kernel $kernel: the guest's multichannel checks (exit $?)"
    grep -vE '^(PASS|FAIL)' "$T/guest-$kernel.log" | tail -60
  fi
  grep -E "^(PASS|FAIL|    )" "$T/guest-$kernel.log" | sed "s/^/  [$kernel] /" || tail -40 "$T/guest-$kernel.log"
done
echo "vm test took $(( $(date +%s) - started ))s"
finish
