#!/usr/bin/env bash
# CHANGE_NOTIFY over real connections (a raw SMB2 client, change_notify.py):
# changes by a local process, by another SMB client and by the same client
# on another handle are reported; WATCH_TREE, CANCEL, CLOSE cleanup and
# NOTIFY_ENUM_DIR on overflow; a WATCH_TREE over more directories than
# "max notify watches" is refused and logged. Two workers, so the clients
# may sit on different workers (each has its own inotify instance); then
# the basic part again over the epoll backend.
source "$(dirname "$0")/lib.sh"

write_config "map to guest = bad user" "workers = 2" "max notify watches = 50"
guest_share
start_server
check "change notification" python3 "$RINGSMB_SOURCE_DIR/tests/integration/change_notify.py" "$PORT" share "$T/share"
grep -E "^(PASS|FAIL)" "$T/check.out" || true
check "the refused WATCH_TREE is logged with the setting to raise" \
  grep -q "more than 50 directories to watch (max notify watches per connection); refused" "$T/server.log"
check "the kernel's inotify limits are logged at start" grep -q "fs.inotify.max_user_watches = " "$T/server.log"
# The epoll backend polls the inotify descriptor its own way.
stop_server
rm -rf "$T/share/watched"
start_server --epoll
check "change notification over the epoll backend" python3 "$RINGSMB_SOURCE_DIR/tests/integration/change_notify.py" "$PORT" share "$T/share" basic
grep -E "^(PASS|FAIL)" "$T/check.out" || true
finish
