#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time on its corpus directory
# (created, and seeded for fuzz_smb2_frame and fuzz_ksmbd_shim), under the sanitizers the fuzz
# build links (ASan + UBSan: any report fails the run). Prints libFuzzer's
# last status line (execs, coverage) and the run's summary.
# usage: run_target.sh BINARY SECONDS CORPUS_ROOT [extra libFuzzer args...]
set -euo pipefail
bin=$1 secs=$2 root=$3
shift 3
name=$(basename "$bin")
here=$(cd "$(dirname "$0")" && pwd)
corpus="$root/$name"
mkdir -p "$corpus"
if [ "$name" = fuzz_smb2_frame ] && [ -z "$(ls -A "$corpus")" ]; then
  python3 "$here/make_smb2_seeds.py" "$corpus"
fi
if [ "$name" = fuzz_ksmbd_shim ] && [ -z "$(ls -A "$corpus")" ]; then
  python3 "$here/make_ksmbd_seeds.py" "$corpus"
fi
# The transform target starts from the same requests, each seed's first
# frame as the plaintext of mode 1 (encrypted by the harness), one per cipher.
if [ "$name" = fuzz_transform ] && [ -z "$(ls -A "$corpus")" ]; then
  seeds=$(mktemp -d)
  python3 "$here/make_smb2_seeds.py" "$seeds"
  python3 - "$seeds" "$corpus" <<'PY'
import os, sys
src, dst = sys.argv[1], sys.argv[2]
for i, name in enumerate(sorted(os.listdir(src))):
    data = open(os.path.join(src, name), "rb").read()
    if len(data) < 2:
        continue
    n = int.from_bytes(data[:2], "little")
    open(os.path.join(dst, f"seed-{name}"), "wb").write(bytes([0x04 | (i & 3)]) + data[2:2 + n])
PY
  rm -rf "$seeds"
fi
# The PAC target starts from MS-PAC's example LOGON_INFO (the unit tests'
# copy), bare and inside a PACTYPE next to a server checksum buffer.
if [ "$name" = fuzz_pac ] && [ -z "$(ls -A "$corpus")" ]; then
  python3 - "$here/../unit/kerberos/pac_spec_example.inc" "$corpus" <<'PY'
import os, re, struct, sys
info = bytes.fromhex("".join(re.findall(r'"([0-9a-f]+)"', open(sys.argv[1]).read())))
open(os.path.join(sys.argv[2], "seed-logon-info"), "wb").write(info)
pad = (-len(info)) % 8
pac = struct.pack("<II", 2, 0) + struct.pack("<IIQ", 1, len(info), 40) + struct.pack("<IIQ", 6, 16, 40 + len(info) + pad)
open(os.path.join(sys.argv[2], "seed-pac"), "wb").write(pac + info + bytes(pad) + bytes(16))
PY
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
"$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=25 -print_final_stats=1 "$@" "$corpus" > "$log" 2>&1
rc=$?
set -e
grep -E "^#[0-9]+.*(pulse|DONE|REDUCE|NEW)" "$log" | tail -1 || true
grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$log" || true
if [ $rc -ne 0 ]; then
  echo "$name FAILED (exit $rc):"
  grep -E -A30 "ERROR: |runtime error:|==ERROR|deadly signal" "$log" | head -60
fi
exit $rc
