#!/usr/bin/env bash
# Issue 11, defect 8: password guessing is slowed per client address and
# per user (control/login_throttle.hpp), the answer held back by the worker
# without blocking it, and every failure logged for fail2ban.
source "$(dirname "$0")/lib.sh"

# One worker, so "the worker serves another connection meanwhile" is about
# the worker holding the reply. ::1 is the "other address".
write_config "workers = 1" "login failure delay = 300" "login failure max delay = 4000"
sed -i 's/^  interfaces = 127.0.0.1$/  interfaces = 127.0.0.1 ::1/' "$T/ringsmb.conf"
add_user alice 'secret-A1'
start_server

# smbv6 USER%PASS: a login and a listing from ::1.
smbv6() { timeout 60 smbclient "//localhost/share" -I ::1 -p "$PORT" -U "$1" -c "ls"; }
ms() { date +%s%3N; }
timed() {  # timed VAR command...: runs the command, VAR = its duration in ms
  local var=$1 t0
  shift
  t0=$(ms)
  "$@" > "$T/timed.out" 2>&1 || true
  printf -v "$var" '%s' "$(( $(ms) - t0 ))"
}

check "a login from ::1 works" smbv6 alice%secret-A1
times=()
for i in 1 2 3 4 5; do
  timed d smb alice%wrong share "ls"
  grep -q NT_STATUS_LOGON_FAILURE "$T/timed.out" || fail "wrong password $i was not refused"
  times+=("$d")
done
echo "wrong passwords from 127.0.0.1 took (ms): ${times[*]}"
check "the wrong passwords get slower (${times[0]} -> ${times[4]} ms)" test "$((times[4] - times[0]))" -ge 1500
check "the fifth waits for its delay (${times[4]} ms >= 2400)" test "${times[4]}" -ge 2400
check "the failures are logged for fail2ban" \
  grep -q "authentication failure: client=127.0.0.1 user=alice " "$T/server.log"

timed quick smbv6 alice%secret-A1
check "a correct password from another address is answered quickly ($quick ms)" test "$quick" -lt 1500
grep -q "blocks of size" "$T/timed.out" || fail "the login from ::1 did not list the share"

# A held answer does not hold the worker: while a wrong guess from
# 127.0.0.1 waits (4 s now), a login from ::1 on the same worker completes.
held_start=$(ms)
( smb alice%wrong share "ls" > "$T/held.out" 2>&1 || true; ms > "$T/held.end" ) &
held=$!
sleep 0.5
timed during smbv6 alice%secret-A1
other_end=$(ms)
wait "$held" || true
held_ms=$(( $(cat "$T/held.end") - held_start ))
check "the guess was held ($held_ms ms >= 3000)" test "$held_ms" -ge 3000
check "another connection was served during the delay ($during ms)" test "$during" -lt 1500
check "... and finished before the held guess" test "$other_end" -lt "$(cat "$T/held.end")"
check "the held guess got its answer" grep -q NT_STATUS_LOGON_FAILURE "$T/held.out"
check "a correct password from the guessing address works (after its delay)" smb alice%secret-A1 share "ls"
finish
