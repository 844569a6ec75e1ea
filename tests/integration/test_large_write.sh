#!/usr/bin/env bash
# Large WRITEs are received in place (the rest of a big frame goes straight
# into the frame buffer, not through the reactor's buffers). smbclient puts
# files of sizes around the in-place threshold (64 KiB still missing) and
# large ones over an unsigned, a signed and an encrypted session, on both
# backends, and what lands on disk must have the same md5.
source "$(dirname "$0")/lib.sh"

write_config
add_user alice 'secret-A1'
C=alice%secret-A1

# name size: around 64 KiB (one 16 KiB provided buffer plus the threshold,
# too), a frame straddling the maximum write, and several MiB.
sizes=(0 1 65535 65536 65537 81919 81920 81921 1048575 1048576 1048577 3145731 5242883)
for n in "${sizes[@]}"; do head -c "$n" /dev/urandom > "$T/f$n"; done
puts=""
for n in "${sizes[@]}"; do puts="$puts put $T/f$n f$n;"; done

same_on_disk() {  # same_on_disk DIR
  local n
  for n in "${sizes[@]}"; do
    [ "$(md5sum < "$T/f$n")" = "$(md5sum < "$T/share/$1/f$n")" ] || { echo "f$n differs"; return 1; }
  done
}

put_all() {  # put_all DIR PROTECTION
  smb "$C" share "mkdir $1; cd $1; $puts" -m SMB3_11 --client-protection="$2" >/dev/null && same_on_disk "$1"
}

in_place_bytes() {  # the sum of the "N of M bytes received in place" lines so far
  awk '/bytes received in place/ { s += $(NF-6) } END { print s + 0 }' "$T/server.log"
}

for backend in io_uring epoll; do
  args=(-d 3)
  [ "$backend" = epoll ] && args+=(--epoll)
  start_server "${args[@]}"
  check "$backend: server reports its backend" grep -q "($backend)" "$T/server.log"
  check "$backend: server receives large frames in place" grep -q "large frame is received in place" "$T/server.log"
  for prot in off sign encrypt; do
    check "$backend: put of every size, md5 on disk ($prot)" put_all "${backend}_$prot" "$prot"
  done
  check "$backend: get back the largest (encrypted)" bash -c "
    smbclient //127.0.0.1/share -p $PORT -U $C -m SMB3_11 --client-protection=encrypt \
      -c 'get ${backend}_encrypt/f5242883 $T/back' >/dev/null && cmp $T/f5242883 $T/back"
  stop_server
  check "$backend: large frames were received in place" test "$(in_place_bytes)" -gt 1048576
  grep "received in place" "$T/server.log" || true
  mv "$T/server.log" "$T/server-$backend.log"
done
finish
