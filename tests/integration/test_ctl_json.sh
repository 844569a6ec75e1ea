#!/usr/bin/env bash
# ringsmbctl's --json lists (share list, user list, config show, status):
# each document parses, its objects have the documented fields (ringsmbctl(8),
# JSON OUTPUT) with the documented types and no undocumented ones, and the values
# agree with the text output. The Cockpit page reads these documents, and
# writes passwords into a pipe (checked at the end).
source "$(dirname "$0")/lib.sh"

# The field names ringsmbctl(8) documents in its JSON OUTPUT section.
DOCUMENTED=$(sed -n '/^\.SH JSON OUTPUT/,/^\.SH EXIT STATUS/p' "$RINGSMB_SOURCE_DIR/man/ringsmbctl.8" | grep -o '"[a-z_]*"' | sort -u | tr -d '"' | tr '\n' ' ')

# json_check 'description' FILE 'python statements over d': the statements
# raise (assert) when the document is wrong. fields(OBJ, {name: type}):
# every documented field is there with its type, and any other field is
# documented too (fields may be added, never renamed or dropped).
json_check() {
  local what=$1 file=$2 code=$3
  check "$what" python3 -c "
import json, sys
d = json.load(open('$file'))
documented = set('$DOCUMENTED'.split())
def fields(obj, want):
    missing = set(want) - set(obj)
    assert not missing, ('missing fields', sorted(missing), sorted(obj))
    for k, t in want.items():
        assert type(obj[k]) is t, ('wrong type', k, obj[k])
    undocumented = set(obj) - set(want) - documented
    assert not undocumented, ('not in ringsmbctl(8) JSON OUTPUT', sorted(undocumented))
$code"
}

write_config
owned_dir "$T/media"
add_share media "$T/media" "comment = Films \"and\" music" "valid users = alice, @staff" "guest ok = yes" "hosts allow = 127.0.0.1"
add_user alice 'secret-A1'
add_user bob 'secret-B2' "$TEST_UNIX_USER2"

CTL share list --json > "$T/shares.json"
CTL config show media > "$T/media.txt"
check "the man page documents JSON fields" test -n "$DOCUMENTED"
json_check "share list --json: the documented fields and types" "$T/shares.json" "
assert list(d) == ['shares'], list(d)
want = {'name': str, 'path': str, 'comment': str, 'read_only': bool, 'guest_ok': bool,
          'browseable': bool, 'valid_users': list, 'settings': dict}
for s in d['shares']:
    fields(s, want)
    assert all(type(v) is str for v in s['settings'].values())
names = [s['name'] for s in d['shares']]
assert names == ['share', 'media'], names
m = d['shares'][1]
assert m['path'] == '$T/media' and m['comment'] == 'Films \"and\" music', m
assert m['read_only'] and m['guest_ok'] and m['browseable'], m
assert m['valid_users'] == ['alice', '@staff'], m['valid_users']
assert not d['shares'][0]['read_only']"
json_check "share list --json: settings are config show's keys and values" "$T/shares.json" "
text = {}
for line in open('$T/media.txt'):
    if line.startswith('\t'):
        k, _, v = line.strip().partition(' =')
        text[k] = v.strip()
s = d['shares'][1]['settings']
assert list(s) == list(text), (list(s), list(text))
assert s == text, (s, text)
assert s['hosts allow'] == '127.0.0.1' and s['guest ok'] == 'yes'"

CTL user list --json > "$T/users.json"
json_check "user list --json: name and unix_user of every user" "$T/users.json" "
assert list(d) == ['users'], list(d)
for u in d['users']:
    fields(u, {'name': str, 'unix_user': str, 'disabled': bool})
assert sorted((u['name'], u['unix_user']) for u in d['users']) == [('alice', '$TEST_UNIX_USER'), ('bob', '$TEST_UNIX_USER2')], d"

CTL config show --json > "$T/config.json"
CTL config show > "$T/config.txt"
json_check "config show --json: global and every share, as the text" "$T/config.json" "
assert list(d) == ['global', 'shares'], list(d)
sections, cur = {}, None
for line in open('$T/config.txt'):
    line = line.rstrip('\n')
    if line.startswith('['):
        cur = sections.setdefault(line.strip('[]'), {})
    elif cur is not None and line.startswith('\t'):
        k, _, v = line.strip().partition(' =')
        cur[k] = v.strip()
assert d['global'] == sections['global'], (d['global'], sections['global'])
assert [s['name'] for s in d['shares']] == ['share', 'media']
for s in d['shares']:
    fields(s, {'name': str, 'settings': dict})
    assert s['settings'] == sections[s['name']], s['name']"
CTL config show media --json > "$T/one.json"
json_check "config show SHARE --json: that share alone" "$T/one.json" "
assert list(d) == ['shares'] and [s['name'] for s in d['shares']] == ['media'], d"
expect_exit "config show --json of an unknown share: not found, nothing on stdout" 3 "share 'nope' not found" \
  CTL config show nope --json
check "... and stdout is empty" bash -c "'$RINGSMBCTL' --config '$T/ringsmb.conf' config show nope --json 2>/dev/null | wc -c | grep -qx 0"

# An empty users db is an empty list, not an error.
sed -i "s|users db = .*|users db = $T/none.db|" "$T/ringsmb.conf"
CTL user list --json > "$T/nousers.json"
json_check "user list --json without users: an empty list" "$T/nousers.json" "assert d == {'users': []}, d"
sed -i "s|users db = .*|users db = $T/users.db|" "$T/ringsmb.conf"

# A program that writes the password into the pipe (Cockpit's bridge) must
# be able to write it even when the command then fails: ringsmbctl reads it
# before it checks the name, so the writer never meets a closed pipe.
password_writer_survives() {  # password_writer_survives ARGS...: the writer's exit status is 0
  local statuses
  { sleep 0.3; printf 'pw\n'; } | "$RINGSMBCTL" --config "$T/ringsmb.conf" --no-reload "$@" > /dev/null 2>&1 || true
  statuses=("${PIPESTATUS[@]}")
  [ "${statuses[0]}" = 0 ]
}
check "user add with a bad name reads the password from the pipe first" \
  password_writer_survives user add bad/name --password-stdin --unix-user "$TEST_UNIX_USER"
check "user add with an unknown unix user too" \
  password_writer_survives user add dave --password-stdin --unix-user no_such_unix_account
check "user passwd of an unknown user too" password_writer_survives user passwd nobody_here --password-stdin

# status --json with a client connected and a file open.
start_server
printf 'some text\n' > "$T/share/f.txt"
chown "$TEST_UNIX_USER": "$T/share/f.txt"
rm -f "$T/cmds"; mkfifo "$T/cmds"
timeout 60 smbclient //127.0.0.1/share -p "$PORT" -U alice%secret-A1 < "$T/cmds" > "$T/long.out" 2>&1 &
CLIENT=$!
exec 3> "$T/cmds"
echo "open f.txt" >&3
for _ in $(seq 1 100); do
  CTL status --json > "$T/status.json" 2>/dev/null && grep -q '"f.txt"' "$T/status.json" && break
  sleep 0.1
done
json_check "status --json: the documented fields of each list" "$T/status.json" "
assert list(d) == ['connections', 'sessions', 'tree_connects', 'open_files'], list(d)
want = {
  'connections': {'id': int, 'client': str, 'dialect': str},
  'sessions': {'session_id': str, 'connection_id': int, 'user': str, 'client': str, 'dialect': str,
               'signing': bool, 'encryption': bool, 'guest': bool, 'anonymous': bool},
  'tree_connects': {'session_id': str, 'tree_id': int, 'share': str, 'user': str, 'client': str},
  'open_files': {'file_id': str, 'session_id': str, 'tree_id': int, 'share': str, 'path': str, 'user': str,
                 'client': str, 'directory': bool, 'durable': bool, 'resilient': bool, 'oplock': str,
                 'lease_state': str, 'breaking': bool, 'lock_count': int, 'locks': list, 'disconnected': bool},
}
for name, types in want.items():
    assert d[name], name + ' is empty'
    for item in d[name]:
        fields(item, types)
assert any(f['path'] == 'f.txt' and f['user'] == 'alice' and f['share'] == 'share' for f in d['open_files'])
assert all(s['session_id'].startswith('0x') for s in d['sessions'])"
exec 3>&-
wait "$CLIENT" 2>/dev/null || true

finish
