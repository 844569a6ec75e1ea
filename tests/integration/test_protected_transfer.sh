#!/usr/bin/env bash
# A 3 MB file put and read back by smbclient, signed and encrypted, over
# every dialect: each signing algorithm (HMAC-SHA256 for 2.1, AES-CMAC for
# 3.0 and 3.0.2, AES-GMAC for 3.1.1) and cipher (AES-128-CCM for 3.0 and
# 3.0.2, AES-128-GCM for 3.1.1) over many messages of one session, so every
# message after the first reuses its key's context (crypto/keyed_contexts).
source "$(dirname "$0")/lib.sh"

write_config "server signing = mandatory"
add_user alice 'secret-A1'
start_server
head -c 3000000 /dev/urandom > "$T/src.bin"
for m in SMB2_10 SMB3_00 SMB3_02 SMB3_11; do
  for prot in sign encrypt; do
    [ "$m" = SMB2_10 ] && [ "$prot" = encrypt ] && continue  # no encryption before 3.0
    rm -f "$T/back.bin"
    check "$m $prot: a 3 MB file put and read back unchanged" \
      bash -c "smbclient //127.0.0.1/share -p $PORT -U alice%secret-A1 -m $m --client-protection=$prot \
        -c 'put $T/src.bin f_$m.bin; get f_$m.bin $T/back.bin' && cmp $T/src.bin $T/back.bin"
  done
done
# Bytes changed in the file on disk come back changed: the reads are real.
printf 'changed on disk!' | dd of="$T/share/f_SMB3_11.bin" bs=1 seek=1000 conv=notrunc status=none
rm -f "$T/back.bin"
check "SMB3_11 encrypt: the file read back is the one on disk" \
  bash -c "smbclient //127.0.0.1/share -p $PORT -U alice%secret-A1 -m SMB3_11 --client-protection=encrypt \
    -c 'get f_SMB3_11.bin $T/back.bin' && cmp $T/share/f_SMB3_11.bin $T/back.bin && ! cmp -s $T/src.bin $T/back.bin"
finish
