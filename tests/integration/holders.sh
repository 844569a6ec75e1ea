# Background raw clients (limits_client.py) that hold connections open for
# the resource-limit tests. Source after lib.sh; they are killed on exit.
client="$RINGSMB_SOURCE_DIR/tests/integration/limits_client.py"
holders=()
stop_holders() {
  for p in "${holders[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  holders=()
}
trap 'stop_holders; cleanup' EXIT
# hold NAME ARGS...: limits_client.py ARGS in the background until it says
# "ready N"; echoes N (the connections it holds).
hold() {
  local out="$T/hold.$1"
  : > "$out"
  shift
  python3 "$client" "$@" > "$out" 2>&1 &
  holders+=($!)
  for _ in $(seq 1 300); do grep -q '^ready' "$out" && break; sleep 0.1; done
  awk '/^ready/ {print $2}' "$out"
}
rss_mib() { echo $(( $(awk '/^VmRSS:/ {print $2}' "/proc/$SERVER_PID/status") / 1024 )); }
