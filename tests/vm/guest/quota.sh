# In the guest (tests/vm/test_quota.sh): an ext4 image with the quota
# feature mounted with usrquota, a user quota for rsmb_owner set with
# setquota, ringsmbd serving it, and Samba's smbcquotas and smbclient
# against it over the guest's loopback. Prints PASS/FAIL lines.
. /job/lib.sh
check() { d=$1; shift; if "$@"; then pass "$d"; else fail "$d"; fi; }
modprobe loop; modprobe ext4; modprobe quota_v2
mkdir -p /srv/q /srv/plain /var/lib/ringsmb /var/lib/samba/private /var/cache/samba /var/log/samba /run/samba
mount -t ext4 -o loop,usrquota,grpquota /job/quota.img /srv/q || { echo "FAIL: mount the quota image"; exit 1; }
mount -t tmpfs tmpfs /srv/plain
mkdir /srv/q/share && chown rsmb_owner: /srv/q/share /srv/plain
head -c 1048576 /dev/zero > /srv/q/share/used.bin && chown rsmb_owner: /srv/q/share/used.bin
setquota -u rsmb_owner 4096 8192 0 0 /srv/q   # KiB: 4 MiB soft, 8 MiB hard
$BIN/daemon/ringsmbd --config /job/ringsmb.conf --foreground > /job/server.log 2>&1 &
for _ in $(seq 1 100); do grep -q ':01BD .* 0A ' /proc/net/tcp && break; sleep 0.2; done

q() { u=$1; shift; smbcquotas //127.0.0.1/q -U "$u" "$@" 2>&1; }
has() { echo "$1" | grep -Eiq "$2"; }
# alice: an ordinary user with a quota. du: "N blocks of size S. A blocks available".
du_line=$(smbclient //127.0.0.1/q -U "alice%$PASS_A" -c du 2>&1 | grep 'blocks of size')
echo "alice du: $du_line"
set -- $(echo "$du_line" | sed 's/^[[:space:]]*\([0-9]*\) blocks of size \([0-9]*\)\. \([0-9]*\) blocks available.*/\1 \2 \3/')
check "alice's disk is her 4 MiB soft limit" [ "$(($1 * $2))" = 4194304 ]
# What the kernel charges her: the file and the share's directory block.
used=$(($(repquota -u /srv/q | awk '$1 == "rsmb_owner" { print $3 }') * 1024))
check "alice's free space is the limit less what she uses" [ "$(($3 * $2))" = $(((4194304 - used) / $2 * $2)) ]
out=$(q "alice%$PASS_A" -u alice -n); echo "$out"
check "smbcquotas -u alice: her usage, limits 4 and 8 MiB" has "$out" " $used/ +4194304/ +8388608$"
out=$(q "alice%$PASS_A" -u bob -n); echo "$out"
check "alice may not read bob's quota" has "$out" ACCESS_DENIED
out=$(q "alice%$PASS_A" -S UQLIM:alice:1000000000/2000000000 -n); echo "$out"
check "alice may not set her own limits" has "$out" ACCESS_DENIED
# bob: an "admin users" account, without a quota of his own.
out=$(q "bob%$PASS_B" -S UQLIM:bob:2097152/3145728 -n); echo "$out"
rep=$(repquota -v -u /srv/q | grep '^rsmb_other'); echo "repquota: $rep"
check "bob's limits set over SMB are the kernel's (2048/3072 KiB)" has "$rep" ' 2048 +3072 '
out=$(q "bob%$PASS_B" -L -n); echo "$out"
check "the listing holds alice's entry" has "$out" "^S-1-22-1-$(id -u rsmb_owner) .* $used/ +4194304/ +8388608$"
check "the listing holds bob's new entry" has "$out" "^S-1-22-1-$(id -u rsmb_other) .*/ +2097152/ +3145728$"
out=$(q "bob%$PASS_B" -F -n); echo "$out"
check "smbcquotas -F: quotas tracked and enforced" has "$out" 'deny'
out=$(q "alice%$PASS_A" -L -n); echo "$out"
check "alice's listing holds only her entry" [ "$(echo "$out" | grep -c '^S-1-')" = 1 ]
out=$(smbcquotas //127.0.0.1/plain -U "bob%$PASS_B" -u bob -n 2>&1); echo "$out"
check "a share without quotas says so" has "$out" 'not supported'
kill %1 2>/dev/null
[ "$failures" = 0 ] || { tail -30 /job/server.log; exit 1; }
