#!/usr/bin/env bash
# smb3 encryption policies and sessions that cannot be encrypted (guest,
# anonymous, SMB 2.x): "desired" encrypts only the sessions that can be and
# serves the others in the clear; "required" refuses them with
# ACCESS_DENIED at SESSION_SETUP (MS-SMB2 3.3.5.5) rather than failing every
# later request.
source "$(dirname "$0")/lib.sh"

guest_share_config() {  # guest_share_config POLICY
  write_config "smb3 encryption = $1" "map to guest = bad user"
  add_share public "$T/public" "guest ok = yes" "read only = yes"
  mkdir -p "$T/public" && echo hello > "$T/public/hello.txt"
  add_user alice 'secret-A1'
}

# --- desired ------------------------------------------------------------------
guest_share_config desired
start_server
for m in SMB3_00 SMB3_11; do
  check "desired: anonymous $m client lists and reads the guest share" \
    smb "%" public "ls; get hello.txt $T/anon_$m" -N -m "$m"
  check "desired: mapped guest $m client lists the guest share" smb "nosuchuser%whatever" public "ls" -m "$m"
done
check "desired: anonymous share listing works" timeout 60 smbclient -L 127.0.0.1 -p "$PORT" -N -m SMB3_11
check "desired: a user's session is encrypted and works" smb alice%secret-A1 share "ls" -m SMB3_11 --client-protection=encrypt
check "desired: a user's SMB 2.1 session works unencrypted" smb alice%secret-A1 share "ls" -m SMB2_10
stop_server

# --- required -----------------------------------------------------------------
guest_share_config required
start_server
expect_status "required: anonymous SMB3 session is refused at session setup" \
  "session setup failed: NT_STATUS_ACCESS_DENIED" smb "%" public "ls" -N -m SMB3_11
expect_status "required: mapped guest SMB3 session is refused at session setup" \
  "session setup failed: NT_STATUS_ACCESS_DENIED" smb "nosuchuser%whatever" public "ls" -m SMB3_11
expect_status "required: SMB 2.1 is refused at session setup" \
  "session setup failed: NT_STATUS_ACCESS_DENIED" smb alice%secret-A1 share "ls" -m SMB2_10
check "required: a user's SMB3 session works encrypted" smb alice%secret-A1 share "ls" -m SMB3_11
check "required: a user's SMB 3.0 session works encrypted" smb alice%secret-A1 share "ls" -m SMB3_00
# Large encrypted WRITEs are decrypted where their frame was received, and
# a request behind them waits with its frame given back as it came: the
# file must come back the same over AES-128-GCM (3.1.1) and AES-128-CCM (3.0).
head -c $((24 << 20)) /dev/urandom > "$T/big.bin"
for m in SMB3_11 SMB3_00; do
  check "required: a 24 MiB file goes up and comes back over $m" \
    smb alice%secret-A1 share "put $T/big.bin big_$m.bin; get big_$m.bin $T/big_back_$m" -m "$m"
  check "required: what came back over $m is what went up" cmp "$T/big.bin" "$T/big_back_$m"
done
finish
