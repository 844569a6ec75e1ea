#!/usr/bin/env bash
# READ replies: large unsigned ones go out with sendfile() straight from the
# page cache; large signed and AES-GCM encrypted ones are read into a buffer
# of their own (not zero-filled) sent after the reply; small ones, and
# AES-CCM encrypted ones (SMB 3.0), are copied into the reply buffer.
# smbclient gets of files around the threshold (64 KiB,
# smb2::ServerContext::sendfile_min_read) and larger, unsigned, signed and
# encrypted, over io_uring and epoll, must match the originals; a file
# truncated while it is being read (unsigned, signed, encrypted) and a
# client killed in the middle of a get must leave the server serving.
source "$(dirname "$0")/lib.sh"

write_config
add_user alice 'secret-A1'
C=alice%secret-A1
THRESHOLD=65536
SIZES=(0 1 $((THRESHOLD - 1)) $THRESHOLD $((THRESHOLD + 1)) $((3 * 1024 * 1024 + 17)))
for n in "${SIZES[@]}"; do head -c "$n" /dev/urandom > "$T/share/f$n"; done

# get_all LABEL [smbclient options...]: gets every file and compares md5 sums.
get_all() {
  local label=$1
  shift
  local cmds="" n
  mkdir -p "$T/back"
  rm -f "$T/back/"*
  for n in "${SIZES[@]}"; do cmds+="get f$n $T/back/f$n; "; done
  if ! smb "$C" share "$cmds" "$@" > "$T/get.out" 2>&1; then
    fail "$label: smbclient get"
    tail -5 "$T/get.out"
    return
  fi
  for n in "${SIZES[@]}"; do
    if [ "$(md5sum < "$T/share/f$n")" = "$(md5sum < "$T/back/f$n" 2>/dev/null)" ]; then
      pass "$label: $n bytes"
    else
      fail "$label: $n bytes differ"
    fi
  done
}

# The unsigned gets must really take the sendfile path (and the others not).
count_sendfile() {  # count_sendfile OUTFILE smbclient options...: sendfile calls during a get of the 3 MiB file
  local out=$1
  shift
  strace -f -qq -e trace=sendfile -o "$out" -p "$SERVER_PID" &
  local tracer=$!
  sleep 0.5
  smb "$C" share "get f$((3 * 1024 * 1024 + 17)) /dev/null" "$@" > /dev/null 2>&1 || true
  sleep 0.2
  kill "$tracer" 2>/dev/null || true
  wait "$tracer" 2>/dev/null || true
  grep -c "sendfile(" "$out" || true
}

run_backend() {  # run_backend LABEL [ringsmbd args...]
  local label=$1
  shift
  start_server "$@"
  get_all "$label unsigned" -m SMB3_11 --client-protection=off
  get_all "$label signed" -m SMB3_11 --client-protection=sign
  get_all "$label encrypted" -m SMB3_11 --client-protection=encrypt
  get_all "$label SMB 3.0 encrypted (AES-CCM)" -m SMB3_00 --client-protection=encrypt
  get_all "$label SMB 2.1 unsigned" -m SMB2_10 --client-protection=off
  if command -v strace > /dev/null && strace -qq -o /dev/null true 2>/dev/null; then
    local calls
    calls=$(count_sendfile "$T/strace.unsigned" -m SMB3_11 --client-protection=off)
    check "$label: an unsigned get uses sendfile ($calls calls)" test "$calls" -gt 0
    calls=$(count_sendfile "$T/strace.signed" -m SMB3_11 --client-protection=sign)
    check "$label: a signed get copies (sendfile calls: $calls)" test "$calls" -eq 0
  fi
  stop_server
}

run_backend io_uring
run_backend epoll --epoll

start_server
# A file that shrinks while it is read: every get ends (with whatever the
# client makes of it) and the server goes on serving.
head -c $((64 * 1024 * 1024)) /dev/zero > "$T/share/shrinking"
for prot in off sign encrypt; do
  for i in 1 2 3; do
    head -c $((64 * 1024 * 1024)) /dev/zero > "$T/share/shrinking"
    smb "$C" share "get shrinking $T/shrunk" --client-protection=$prot > /dev/null 2>&1 &
    getter=$!
    sleep 0.$((i * 2))
    truncate -s 100000 "$T/share/shrinking"
    if ! wait "$getter"; then :; fi  # the get may fail; it must not hang (smb() has a timeout)
  done
  check "server alive after reads racing truncates (protection $prot)" server_alive
done

# A client killed in the middle of a large get (the server waiting for room
# in the socket) does not stop the others.
head -c $((256 * 1024 * 1024)) /dev/zero > "$T/share/huge"
timeout -s KILL 0.5 smbclient //127.0.0.1/share -p "$PORT" -U "$C" --client-protection=off \
  -c "get huge /dev/null" > /dev/null 2>&1 || true
check "server alive after a client died mid-get" server_alive
get_all "after the killed client" --client-protection=off
finish
