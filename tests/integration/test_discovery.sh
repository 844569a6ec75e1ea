#!/usr/bin/env bash
# ringsmbctl discovery avahi: the Avahi service file announces _smb._tcp on
# the configured port (the first of "tcp port"), is valid against
# avahi-daemon's avahi-service.dtd, equals conf/avahi/ringsmb.service for
# the default port, is rewritten only when it changes, and a file written
# by hand is left alone unless --force. ringsmb.service runs it before
# each start.
source "$(dirname "$0")/lib.sh"

CTL() { "$RINGSMBCTL" -c "$1" discovery avahi "${@:2}"; }
printf '[global]\n' > "$T/default.conf"
printf '[global]\n  smb ports = 4450 445\n' > "$T/moved.conf"
printf '[global]\n  tcp port = 10445\n' > "$T/moved2.conf"

check "the default port gives conf/avahi/ringsmb.service" \
  bash -c "'$RINGSMBCTL' -c '$T/default.conf' discovery avahi --print | diff - '$RINGSMB_SOURCE_DIR/conf/avahi/ringsmb.service'"
check "'smb ports = 4450 445' announces 4450" bash -c \
  "'$RINGSMBCTL' -c '$T/moved.conf' discovery avahi --print | grep -q '^    <port>4450</port>\$'"

# avahi-service.dtd comes with avahi-daemon: installed, cached by the
# package test, or fetched once with apt-get download (not installed).
CACHE=${RINGSMB_CACHE_DIR:-/var/cache/ringsmb-tests}
find_dtd() {
  local d
  for d in /usr/share/avahi/avahi-service.dtd "$CACHE/avahi-service.dtd"; do [ -f "$d" ] && { echo "$d"; return 0; }; done
  mkdir -p "$T/avahi-deb"
  (cd "$T/avahi-deb" && apt-get download -o APT::Sandbox::User=root avahi-daemon > /dev/null 2>&1) || return 1
  dpkg-deb --fsys-tarfile "$T"/avahi-deb/avahi-daemon_*.deb | tar -xOf - ./usr/share/avahi/avahi-service.dtd > "$T/avahi-service.dtd" || return 1
  if mkdir -p "$CACHE" 2>/dev/null && cp "$T/avahi-service.dtd" "$CACHE/avahi-service.dtd.tmp" 2>/dev/null; then
    mv "$CACHE/avahi-service.dtd.tmp" "$CACHE/avahi-service.dtd"
  fi
  echo "$T/avahi-service.dtd"
}
"$RINGSMBCTL" -c "$T/moved.conf" discovery avahi --print > "$T/moved.service"

# Time Machine: shares with fruit:time machine = yes are announced in
# _adisk._tcp, the records macOS reads to offer a backup disk.
printf '[global]\n[backups]\n  path = %s\n  vfs objects = catia fruit streams_xattr\n  fruit:time machine = yes\n' "$T" > "$T/tm.conf"
printf '[plain]\n  path = %s\n  vfs objects = fruit\n[Mac Backups]\n  path = %s\n  vfs objects = fruit\n  fruit:time machine = yes\n' "$T" "$T" >> "$T/tm.conf"
"$RINGSMBCTL" -c "$T/tm.conf" discovery avahi --print > "$T/tm.service"
check "no Time Machine share: no _adisk._tcp" bash -c "! grep -q _adisk '$T/moved.service'"
check "Time Machine shares: _adisk._tcp" grep -q '<type>_adisk._tcp</type>' "$T/tm.service"
check "... sys=waMa=0,adVF=0x100" grep -qx '    <txt-record>sys=waMa=0,adVF=0x100</txt-record>' "$T/tm.service"
check "... dk0=adVN=backups,adVF=0x82" grep -qx '    <txt-record>dk0=adVN=backups,adVF=0x82</txt-record>' "$T/tm.service"
check "... dk1=adVN=Mac Backups,adVF=0x82" grep -qx '    <txt-record>dk1=adVN=Mac Backups,adVF=0x82</txt-record>' "$T/tm.service"
check "... not a fruit share without time machine" bash -c "! grep -q 'adVN=plain' '$T/tm.service'"
if DTD=$(find_dtd); then
  for f in "$RINGSMB_SOURCE_DIR/conf/avahi/ringsmb.service" "$T/moved.service" "$T/tm.service"; do
    check "$(basename "$f") is valid against avahi-service.dtd (xmllint)" xmllint --noout --nonet --dtdvalid "$DTD" "$f"
  done
else
  echo "SKIP: avahi-service.dtd not found and apt-get download avahi-daemon failed; well-formedness only"
  check "the file is well-formed XML (xmllint)" xmllint --noout --nonet "$T/moved.service"
  check "the Time Machine file is well-formed XML (xmllint)" xmllint --noout --nonet "$T/tm.service"
fi

OUT=$T/etc/avahi/services/ringsmb.service
status_of() { set +e; "$@" > "$T/out" 2>&1; echo $?; set -e; }
check "no services directory (avahi-daemon missing): exit 3, nothing written" \
  bash -c "[ $(status_of CTL "$T/default.conf" --output "$OUT") = 3 ] && [ ! -e '$OUT' ]"
mkdir -p "$T/etc/avahi/services"
check "writes the file" bash -c "'$RINGSMBCTL' -c '$T/default.conf' discovery avahi --output '$OUT' | grep -qx 'wrote $OUT (_smb._tcp on port 445)'"
check "... readable by avahi-daemon (0644)" [ "$(stat -c %a "$OUT")" = 644 ]
inode=$(stat -c %i "$OUT")
check "unchanged configuration: left as it is" bash -c \
  "'$RINGSMBCTL' -c '$T/default.conf' discovery avahi --output '$OUT' | grep -q 'up to date' && [ \$(stat -c %i '$OUT') = $inode ]"
check "a new tcp port: rewritten with it" bash -c \
  "'$RINGSMBCTL' -c '$T/moved2.conf' discovery avahi --output '$OUT' > /dev/null && grep -q '<port>10445</port>' '$OUT'"
printf '<service-group><name>mine</name></service-group>\n' > "$OUT"
check "a file written by hand: exit 4, left alone" \
  bash -c "[ $(status_of CTL "$T/default.conf" --output "$OUT") = 4 ] && grep -q mine '$OUT'"
check "... replaced with --force" bash -c \
  "'$RINGSMBCTL' -c '$T/default.conf' discovery avahi --output '$OUT' --force > /dev/null && grep -q '<port>445</port>' '$OUT'"
check "ringsmb.service writes it before each start (ignoring a missing avahi)" grep -qx \
  'ExecStartPre=-+/usr/sbin/ringsmbctl --config /etc/ringsmb/ringsmb.conf discovery avahi' "$RINGSMB_SOURCE_DIR/conf/ringsmb.service"
finish
