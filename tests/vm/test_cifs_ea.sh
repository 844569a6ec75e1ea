#!/usr/bin/env bash
# The Linux kernel's cifs client (tests/vm/run) and EAs: user.* xattrs of a
# cifs mount are SMB EAs, which ringsmbd keeps in trusted.ringsmb.ea.*
# (docs/configuration.md, "Extended attributes"). Needs setfattr/getfattr
# (the attr package) on the host, copied into the guest.
source "$(dirname "$0")/../integration/lib.sh"
VM="$RINGSMB_SOURCE_DIR/tests/vm"
if ! command -v setfattr > /dev/null || ! command -v getfattr > /dev/null; then
  echo "FAIL: no setfattr/getfattr (scripts/install-deps.sh installs attr)"; exit 1
fi
write_config
add_user alice 'secret-A1'
start_server
if "$VM/run" --timeout "${RINGSMB_VM_TIMEOUT:-600}" --guestfwd "445=$PORT" \
     --file "$VM/guest/lib.sh" --file "$VM/guest/cifs_ea.sh" --bin "$(command -v setfattr)" --bin "$(command -v getfattr)" \
     --env SERVER=10.0.2.100 --env SHARE=share --env SMBUSER=alice --env SMBPASS='secret-A1' \
     -- 'sh /job/cifs_ea.sh' > "$T/guest.log" 2>&1; then
  pass "the guest's xattr checks"
else
  fail "the guest's xattr checks (exit $?)"
fi
grep -E "^(PASS|FAIL)" "$T/guest.log" || tail -40 "$T/guest.log"
xattrs() { python3 -c 'import os,sys; print("\n".join(os.listxattr(sys.argv[1])))' "$1"; }
check "the host keeps it in trusted.ringsmb.ea.KEPT" bash -c "$(declare -f xattrs); xattrs '$T/share/ea.txt' | grep -qx trusted.ringsmb.ea.KEPT"
check "and nothing of the removed one" bash -c "$(declare -f xattrs); ! xattrs '$T/share/ea.txt' | grep -q COLOUR"
finish
