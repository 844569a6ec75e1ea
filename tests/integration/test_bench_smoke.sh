#!/usr/bin/env bash
# smbench (tools/smbench) against a real ringsmbd and, when run as root with
# Samba installed, once against Samba's smbd through bench/run --serve: both
# must complete and report files/s. Kept small: a smoke test, not a benchmark.
source "$(dirname "$0")/lib.sh"

SMBENCH="$RINGSMB_BUILD_DIR/tools/smbench"
write_config
add_user alice 'secret-A1'
start_server

bench() {  # bench PORT USER PASS SHARE [smbench args...]: output in $T/bench.out
  local port=$1 user=$2 pass=$3 share=$4
  shift 4
  timeout 30 "$SMBENCH" --host 127.0.0.1 --port "$port" --user "$user" --password "$pass" --share "$share" "$@" \
    > "$T/bench.out" 2>&1
}
reports_rate() { grep -Eq '^RESULT .*files_s=[0-9.]+' "$T/bench.out"; }
result_has() { grep -Eq "^RESULT .* $1( |\$)" "$T/bench.out"; }  # result_has errors=0

check "smbench: 2 connections, 50 files" bench "$PORT" alice secret-A1 share --connections 2 --depth 2 --files 50
check "smbench reports files/s" reports_rate
check "50 files written" test "$(ls "$T/share" | grep -c '^smbench_')" -eq 50
check "smbench compound, signed, SMB 2.1" bench "$PORT" alice secret-A1 share --compound --sign --dialect 2.1 \
  --files 20 --prefix c21
check "smbench --large 4 MiB" bench "$PORT" alice secret-A1 share --large $((4 << 20))
check "large file size" test "$(stat -c %s "$T/share/smbench_large.bin")" -eq $((4 << 20))
check "smbench --profile windows, AES-GMAC signed" bench "$PORT" alice secret-A1 share --profile windows \
  --dialect 3.1.1 --sign --connections 2 --files 40 --prefix win
check "windows profile: no request failed" result_has errors=0
check "windows profile: signed with AES-GMAC (2)" result_has signing_alg=2
check "windows profile: 40 files" test "$(ls "$T/share" | grep -c '^win_')" -eq 40
check "smbench --profile windows --compound --encrypt" bench "$PORT" alice secret-A1 share --profile windows \
  --dialect 3.1.1 --encrypt --compound --files 20 --prefix wenc
check "encrypted windows profile: no request failed, encrypted" \
  sh -c "grep -Eq '^RESULT .* errors=0 ' '$T/bench.out' && grep -Eq '^RESULT .* encrypted=1( |$)' '$T/bench.out'"
check "smbench --large, encrypted, with FLUSH" bench "$PORT" alice secret-A1 share --large $((3 << 20)) --encrypt \
  --dialect 3.1.1 --flush --prefix encl
check "encrypted large file size" test "$(stat -c %s "$T/share/encl_large.bin")" -eq $((3 << 20))
check "smbench --large over 3 channels (2 connections bound to the session)" bench "$PORT" alice secret-A1 share \
  --large $((6 << 20)) --channels 3 --depth 2 --dialect 3.1.1 --prefix mc
check "multichannel: written and read over 3 channels" grep -q "^read $((6 << 20)) bytes over 3 channel" "$T/bench.out"
check "multichannel large file size" test "$(stat -c %s "$T/share/mc_large.bin")" -eq $((6 << 20))
mkdir -p "$T/local"
check "smbench --local" timeout 30 "$SMBENCH" --local "$T/local" --connections 2 --files 50

if [ -n "${RINGSMB_QUICK:-}" ]; then
  # The sanitizer pass: what ringsmbd serves in the rows of bench/run and
  # bench/flush-ab below, without Samba and the harness (both run in the
  # pass without sanitizers) and with fewer files: the Windows profile
  # signed and sealed on 16 connections, 80 connections at once, and small
  # files while another connection writes and FLUSHes large ones.
  no_errors() {  # no_errors KEY=VALUE...: the RESULT line has errors=0 and each of them
    local kv
    for kv in errors=0 "$@"; do grep -Eq "^RESULT (.* )?$kv( |\$)" "$T/bench.out" || return 1; done
  }
  check "windows profile, AES-GMAC signed, 16 connections" bench "$PORT" alice secret-A1 share --profile windows \
    --dialect 3.1.1 --sign --connections 16 --depth 1 --files 160 --prefix w16
  check "... no request failed, signed with AES-GMAC" no_errors signing_alg=2
  check "windows profile, encrypted, 16 connections" bench "$PORT" alice secret-A1 share --profile windows \
    --dialect 3.1.1 --encrypt --connections 16 --depth 1 --files 160 --prefix e16
  check "... no request failed, encrypted" no_errors encrypted=1
  check "80 connections, one file in flight on each" bench "$PORT" alice secret-A1 share --connections 80 --depth 1 \
    --files 160 --prefix many
  check "... no request failed, 160 files" no_errors files=160
  timeout 120 "$SMBENCH" --host 127.0.0.1 --port "$PORT" --user alice --password secret-A1 --share share \
    --large $((4 << 20)) --large-op write --flush --repeat 1000000 --prefix writer > "$T/writer.out" 2>&1 &
  writer=$!
  for _ in $(seq 1 100); do [ -s "$T/share/writer_large.bin" ] && break; sleep 0.1; done
  check "small files while another connection writes and FLUSHes 4 MiB files" bench "$PORT" alice secret-A1 share \
    --connections 1 --depth 1 --files 100 --prefix busy
  check "... no request failed" no_errors files=100
  check "... and the writer was still writing" kill -0 "$writer"
  kill "$writer" 2>/dev/null || true
  wait "$writer" 2>/dev/null || true
elif [ "$(id -u)" -eq 0 ] && command -v smbd >/dev/null; then
  RINGSMB_BUILD_DIR="$RINGSMB_BUILD_DIR" python3 "$RINGSMB_SOURCE_DIR/bench/run" --serve > "$T/serve.out" 2>&1 &
  SERVE_PID=$!
  for _ in $(seq 1 100); do grep -q '^samba:' "$T/serve.out" && break; sleep 0.2; done
  read -r _ _ sport _ suser _ spass _ sshare _ < <(grep '^samba:' "$T/serve.out") || true
  check "smbench against Samba" bench "${sport:-0}" "${suser:-x}" "${spass:-x}" "${sshare:-x}" \
    --connections 2 --depth 2 --files 50
  check "smbench against Samba reports files/s" reports_rate
  kill "$SERVE_PID" 2>/dev/null || true
  wait "$SERVE_PID" 2>/dev/null || true
  # The Windows-shaped, many-connection and flush rows of bench/run, small:
  # each must run on both servers with no request failing (bench/run exits
  # non-zero when a run failed, and smbench fails a run on any error status).
  check "bench/run --quick --only windows,manyconn,flush" env RINGSMB_BUILD_DIR="$RINGSMB_BUILD_DIR" \
    timeout 600 python3 "$RINGSMB_SOURCE_DIR/bench/run" --quick --only windows,manyconn,flush --many-connections 80 \
    --many-active 16 --many-files 160 --flush-size $((4 << 20))
  cp "$T/check.out" "$T/quick.out"
  for row in "windows signed C=1" "windows signed C=16" "windows encrypted C=1" "windows encrypted C=16" \
    "manyconn 80 conns, 16 active" "flush alone" "flush with a writer"; do
    check "bench/run row: $row, both servers" grep -Eq "^\| $row[^|]* \| files/s \| [0-9.,]+ \| [0-9.,]+ \|" "$T/quick.out"
  done
else
  echo "SKIP: Samba part (needs root and smbd)"
fi
if [ "$(id -u)" -eq 0 ] && [ -z "${RINGSMB_QUICK:-}" ]; then
  # bench/flush-ab (ringsmbd builds side by side, the flush row), small.
  check "bench/flush-ab, one build, 2 runs" timeout 300 "$RINGSMB_SOURCE_DIR/bench/flush-ab" --reps 2 --files 100 \
    "$RINGSMB_BUILD_DIR"
  cp "$T/check.out" "$T/flush-ab.out"
  check "bench/flush-ab prints the medians" \
    grep -Eq "2 runs, median p99 alone [0-9]+ us, with the writer [0-9]+ us, ratio [0-9.]+" "$T/flush-ab.out"
fi
finish
