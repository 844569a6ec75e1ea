#!/usr/bin/env bash
# ringsmbd speaks systemd's notify protocol without systemd: a python3
# listener plays the service manager (tests/integration/sd_notify_listener.py)
# with ringsmb-ctld (the default) and with --no-ctld.
source "$(dirname "$0")/lib.sh"

write_config
add_user alice 'secret-A1'
for mode in ctld no-ctld; do
  extra=()
  [ "$mode" = no-ctld ] && extra=(--no-ctld)
  rm -f "$T/notify.sock"
  python3 "$(dirname "$0")/sd_notify_listener.py" "$T/notify.sock" "$PORT" \
    "$RINGSMBD" --config "$T/ringsmb.conf" "${extra[@]}" > "$T/notify.out" 2>&1 || true
  while read -r verdict what; do
    case "$verdict" in
      OK) pass "[$mode] $what" ;;
      FAIL) fail "[$mode] $what" ;;
      *) fail "[$mode] listener: $verdict $what" ;;
    esac
  done < "$T/notify.out"
  check "[$mode] the listener reported" grep -q "every datagram came from" "$T/notify.out"
done
finish
