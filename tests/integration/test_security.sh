#!/usr/bin/env bash
# Signing and encryption with smbclient: signing required by the client,
# signing mandatory on the server, encryption for each 3.x dialect and for
# each cipher, and a share that requires encryption.
source "$(dirname "$0")/lib.sh"

write_config
add_share secret "$T/secret" "writeable = yes" "smb3 encryption = required"
owned_dir "$T/secret"
add_user alice 'secret-A1'
start_server
C=alice%secret-A1
head -c 300000 /dev/urandom > "$T/data"

putget() {  # putget SHARE NAME smbclient-options...
  local share=$1 name=$2
  shift 2
  smb "$C" "$share" "put $T/data $name; get $name $T/back_$name" "$@" >/dev/null && cmp "$T/data" "$T/back_$name"
}

for m in SMB2_02 SMB2_10 SMB3_00 SMB3_02 SMB3_11; do
  check "client requires signing ($m)" putget share "sig_$m" -m "$m" --option=clientsigning=required
done
for m in SMB3_00 SMB3_02 SMB3_11; do
  check "encryption ($m)" putget share "enc_$m" -m "$m" --client-protection=encrypt
done
for cipher in AES-128-CCM AES-128-GCM AES-256-CCM AES-256-GCM; do
  check "encryption with $cipher" putget share "c_$cipher" -m SMB3_11 --client-protection=encrypt \
    "--option=client smb3 encryption algorithms=$cipher"
done
check "share requiring encryption works encrypted" putget secret enc_share -m SMB3_11
expect_status "share requiring encryption refuses SMB2" NT_STATUS_ACCESS_DENIED smb "$C" secret "ls" -m SMB2_10
stop_server

# Server-side mandatory signing.
write_config "server signing = mandatory"
add_user alice 'secret-A1'
start_server
for m in SMB2_02 SMB3_00 SMB3_11; do
  check "server signing mandatory ($m)" putget share "mand_$m" -m "$m"
done
finish
