#!/usr/bin/env bash
# DCE/RPC over IPC$ named pipes with real clients, once through ringsmb-ctld
# (the default with --config) and once with the in-process control plane
# (--no-ctld): smbclient -L, and rpcclient over ncacn_np for srvsvc,
# wkssvc, lsarpc and samr, plain, signed over SMB 2.0.2 and SMB3-encrypted.
# Through ctld, every pipe opened is closed again (RPC_OPEN = RPC_CLOSE).
source "$(dirname "$0")/lib.sh"

write_config "server string = Ringsmb Test Server" "netbios name = RINGTEST" "workgroup = TESTGROUP" \
  "admin users = alice"
add_share docs "$T/share" "comment = The team docs"
add_share hidden "$T/share" "comment = Not listed" "browseable = no"
add_user alice 'secret-A1'
add_user bob 'secret-B2' nobody
C=alice%secret-A1
WINPATH="C:$(echo "$T/share" | tr / '\\')"

rpc() {  # rpc COMMANDS [rpcclient options...]
  local cmds=$1
  shift
  timeout 60 rpcclient -p "$PORT" -U "$C" "$@" -c "$cmds" ncacn_np:127.0.0.1
}

# out_has "description" PATTERN command...: the command succeeds and prints PATTERN (fixed string).
out_has() {
  local what=$1 pattern=$2
  shift 2
  if "$@" > "$T/out" 2>&1 && grep -qF -- "$pattern" "$T/out"; then
    pass "$what"
  else
    fail "$what (wanted '$pattern')"
    sed 's/^/    /' "$T/out" | tail -20
  fi
}

out_lacks() {
  local what=$1 pattern=$2
  shift 2
  if "$@" > "$T/out" 2>&1 && ! grep -qF -- "$pattern" "$T/out"; then
    pass "$what"
  else
    fail "$what (did not want '$pattern')"
    sed 's/^/    /' "$T/out" | tail -20
  fi
}

# NetWkstaGetInfo's output is printed only at debug level 10 (NDR dump).
wksta() { rpc "wkssvc_wkstagetinfo $1" -d 10 --debug-stdout; }

run_checks() {  # run_checks MODE
  local m=$1
  out_has "$m: smbclient -L lists docs with its comment" "The team docs" \
    timeout 60 smbclient -L //127.0.0.1 -p "$PORT" -U "$C"
  out_has "$m: smbclient -L lists IPC\$" "IPC\$" timeout 60 smbclient -L //127.0.0.1 -p "$PORT" -U "$C"
  out_lacks "$m: smbclient -L hides the non-browseable share" "hidden" \
    timeout 60 smbclient -L //127.0.0.1 -p "$PORT" -U "$C"

  rpc "netshareenumall" > "$T/enum" 2>&1 || true
  for want in "netname: share" "netname: docs" "remark:	The team docs" "path:	$WINPATH" "netname: IPC\$"; do
    if grep -qF -- "$want" "$T/enum"; then pass "$m: netshareenumall shows '$want'"; else fail "$m: netshareenumall lacks '$want'"; cat "$T/enum"; fi
  done
  out_lacks "$m: netshareenumall hides the non-browseable share" "hidden" rpc "netshareenumall"
  for level in 1 2 502; do  # rpcclient prints no other level (0 and 501: unit tests)
    out_has "$m: netshareenumall level $level" "netname: docs" rpc "netshareenumall $level"
  done
  out_has "$m: netsharegetinfo docs (comment)" "remark:	The team docs" rpc "netsharegetinfo docs"
  out_has "$m: netsharegetinfo docs 2 (path)" "path:	$WINPATH" rpc "netsharegetinfo docs 2"
  out_has "$m: netsharegetinfo finds a hidden share by name" "remark:	Not listed" rpc "netsharegetinfo hidden 502"
  expect_status "$m: netsharegetinfo of a missing share" WERR_NERR_NETNAMENOTFOUND rpc "netsharegetinfo nosuch"
  out_has "$m: srvinfo names the server" "RINGTEST" rpc "srvinfo"
  out_has "$m: srvinfo shows the server string" "Ringsmb Test Server" rpc "srvinfo"
  out_has "$m: srvinfo platform" "platform_id     :	500" rpc "srvinfo"

  out_has "$m: wkssvc_wkstagetinfo succeeds" "result                   : WERR_OK" wksta 100
  for level in 100 101 102; do
    out_has "$m: NetWkstaGetInfo $level domain" "domain_name              : 'TESTGROUP'" wksta $level
    out_has "$m: NetWkstaGetInfo $level server" "server_name              : 'RINGTEST'" wksta $level
  done

  rpc "lookupnames alice" > "$T/names" 2>&1 || true
  local sid
  sid=$(awk '/^alice S-1-5-21-/ {print $2}' "$T/names")
  if [[ "$sid" =~ ^S-1-5-21-[0-9]+-[0-9]+-[0-9]+-[0-9]+$ ]]; then pass "$m: lookupnames alice gives a SID ($sid)"; else fail "$m: lookupnames alice"; cat "$T/names"; fi
  out_has "$m: lookupsids maps the SID back to RINGTEST\\alice" "$sid RINGTEST\\alice (1)" rpc "lookupsids $sid"
  out_has "$m: lookupsids of a well-known SID" "BUILTIN\\Administrators" rpc "lookupsids S-1-5-32-544"
  expect_status "$m: lookupnames of nobody known" NT_STATUS_NONE_MAPPED rpc "lookupnames nosuchuser"
  out_has "$m: lsaquery 5 (account domain)" "Domain Sid: ${sid%-*}" rpc "lsaquery 5"

  out_has "$m: enumdomusers lists alice" "user:[alice] rid:[0x$(printf %x "${sid##*-}")]" rpc "enumdomusers"
  out_has "$m: enumdomusers lists bob" "user:[bob]" rpc "enumdomusers"
  out_has "$m: enumdomains" "name:[RINGTEST]" rpc "enumdomains"
  out_has "$m: samlookupnames" "name alice: 0x$(printf %x "${sid##*-}") (1)" rpc "samlookupnames domain alice"
  out_has "$m: queryuser alice" "User Name   :	alice" rpc "queryuser alice"
  out_has "$m: queryuser rid" "user_rid :	0x$(printf %x "${sid##*-}")" rpc "queryuser alice"
  out_has "$m: anonymous smbclient -L" "The team docs" timeout 60 smbclient -L //127.0.0.1 -p "$PORT" -N
  expect_status "$m: anonymous sessions get no share paths" WERR_ACCESS_DENIED \
    timeout 60 rpcclient -p "$PORT" -U% -N -c "netshareenumall 2" ncacn_np:127.0.0.1
  # Share paths (levels 2 and 502) only for "admin users": bob is logged in but not one.
  for level in 2 502; do
    expect_status "$m: a user who is no admin gets no share paths (level $level)" WERR_ACCESS_DENIED \
      rpc "netshareenumall $level" -U bob%secret-B2
  done
  expect_status "$m: a user who is no admin gets no share path by name" WERR_ACCESS_DENIED \
    rpc "netsharegetinfo docs 2" -U bob%secret-B2
  out_has "$m: a user who is no admin still lists the shares (level 1)" "netname: docs" \
    rpc "netshareenumall 1" -U bob%secret-B2
  # rpcclient's netshareenumall without a level asks for level 2 (docs/rpc.md).
  expect_status "$m: a user who is no admin gets WERR_ACCESS_DENIED from a plain netshareenumall" WERR_ACCESS_DENIED \
    rpc "netshareenumall" -U bob%secret-B2
  out_has "$m: smbclient -L works for a user who is no admin" "The team docs" \
    timeout 60 smbclient -L //127.0.0.1 -p "$PORT" -U bob%secret-B2
  expect_status "$m: anonymous sessions cannot enumerate users" NT_STATUS_ACCESS_DENIED \
    timeout 60 rpcclient -p "$PORT" -U% -N -c enumdomusers ncacn_np:127.0.0.1

  out_has "$m: netshareenumall over SMB3 encryption" "netname: docs" rpc "netshareenumall" --client-protection=encrypt
  out_has "$m: lookupnames over SMB3 encryption" "alice S-1-5-21-" rpc "lookupnames alice" --client-protection=encrypt
  out_has "$m: netshareenumall signed over SMB 2.0.2" "netname: docs" rpc "netshareenumall" \
    --client-protection=sign -m SMB2_02
  out_has "$m: several pipes in one rpcclient" "user:[alice]" rpc "srvinfo; lookupnames alice; enumdomusers"
}

start_server -d 3
check "ringsmb-ctld runs" bash -c "kill -0 \$(cat $T/ringsmb-ctld.pid)"
run_checks ctld
opens=$(grep -c "ctl: RPC_OPEN from" "$T/server.log" || true)
closes=$(grep -c "ctl: RPC_CLOSE from" "$T/server.log" || true)
if [ "$opens" -gt 0 ] && [ "$opens" = "$closes" ]; then
  pass "ctld: every pipe opened was closed ($opens)"
else
  fail "ctld: $opens RPC_OPEN, $closes RPC_CLOSE"
fi
finish_one() { stop_server; mv "$T/server.log" "$T/server-ctld.log"; }
finish_one

start_server --no-ctld
run_checks no-ctld
finish
