#!/usr/bin/env bash
# `cmake --install` puts the binaries, the systemd unit, the example
# configuration and the man pages where Debian expects them (with --prefix
# and with DESTDIR); the installed ringsmbd finds its ringsmb-ctld and
# serves; the unit names the installed ringsmbd; the example configuration
# is valid; the man pages render without warnings and name every ringsmbctl
# command.
source "$(dirname "$0")/lib.sh"

B=$RINGSMB_BUILD_DIR
cmake --install "$B" --prefix "$T/inst" > "$T/install.log" 2>&1 || { cat "$T/install.log"; fail "cmake --install --prefix"; }

for bin in ringsmbd ringsmb-ctld ringsmbctl; do
  check "sbin/$bin is installed and executable" test -x "$T/inst/sbin/$bin"
done
UNIT=$T/inst/lib/systemd/system/ringsmb.service
check "the unit is in lib/systemd/system" test -f "$UNIT"
check "the unit starts the installed ringsmbd" grep -qx "ExecStart=$T/inst/sbin/ringsmbd --config /etc/ringsmb/ringsmb.conf --foreground" "$UNIT"
check "the unit keeps the Avahi file on the configured port with the installed ringsmbctl" grep -qx \
  "ExecStartPre=-+$T/inst/sbin/ringsmbctl --config /etc/ringsmb/ringsmb.conf discovery avahi" "$UNIT"
for line in "Type=notify" 'ExecReload=/bin/kill -HUP $MAINPID' "Restart=on-failure" "WatchdogSec=30s" \
  "StateDirectory=ringsmb" "ProtectSystem=full" "WantedBy=multi-user.target"; do
  check "the unit has '$line'" grep -qxF "$line" "$UNIT"
done
check "the unit does not hide /home, where shares may live" bash -c "! grep -q '^ProtectHome=' '$UNIT'"
check "systemd-analyze verify accepts the unit" systemd-analyze verify --man=no "$UNIT"
EXAMPLE=$T/inst/share/doc/ringsmb/examples/ringsmb.conf
check "the example configuration is in share/doc/ringsmb/examples" test -f "$EXAMPLE"
# With the directories the README creates, the example has no errors; without
# them, each missing share path is one (the share cannot work), naming the
# file and line.
sed "s#/srv/#$T/srv/#" "$EXAMPLE" > "$T/example.conf"
check "the example configuration: an error for each missing share path" bash -c \
  "'$T/inst/sbin/ringsmbctl' config check '$T/example.conf' 2>&1 | grep -q '^error: .*example.conf:[0-9]*: share \\[media\\]: path $T/srv/media: No such file'"
mkdir -p "$T/srv/media" "$T/srv/public"
check "... and none once the paths exist" "$T/inst/sbin/ringsmbctl" config check "$T/example.conf"
for page in man8/ringsmbd.8 man8/ringsmb-ctld.8 man8/ringsmbctl.8 man5/ringsmb.conf.5; do
  check "$page is installed" test -f "$T/inst/share/man/$page"
  check "$page renders without warnings" bash -c \
    "out=\$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z '$T/inst/share/man/$page' 2>&1) && [ -z \"\$out\" ]"
done

# Every command and option of ringsmbctl --help appears in its man page.
MAN=$RINGSMB_SOURCE_DIR/man/ringsmbctl.8
commands() {  # the subcommand names of `ringsmbctl ARGS --help`
  "$RINGSMBCTL" "$@" --help | awk '/^Subcommands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}'
}
documented() {  # documented WORDS...: the command and each of its options
  local cmd="$*"
  check "ringsmbctl.8 documents '$cmd'" grep -qE "^\.(B|BR|BI) \"?$cmd\b" "$MAN"
  for opt in $("$RINGSMBCTL" "$@" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
    [ "$opt" = "--help" ] || [ "$opt" = "--config" ] && continue
    check "ringsmbctl.8 documents '$cmd $opt'" grep -qF -- "${opt//-/\\-}" "$MAN"
  done
}
for top in $(commands); do
  subs=$(commands "$top" || true)
  [ -z "$subs" ] && documented "$top"
  for sub in $subs; do documented "$top" "$sub"; done
done
# ... and so does every option of the command groups and of ringsmbctl itself.
for group in "" $(commands); do
  # shellcheck disable=SC2086
  for opt in $("$RINGSMBCTL" $group --help | awk '/^Subcommands:/{exit} {print}' | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
    [ "$opt" = "--help" ] || [ "$opt" = "--config" ] && continue
    check "ringsmbctl.8 documents '${group:-ringsmbctl} $opt'" grep -qF -- "${opt//-/\\-}" "$MAN"
  done
done

# DESTDIR: files land under DESTDIR + the configured prefix, and the unit
# names the real path (without DESTDIR).
PREFIX=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$B/CMakeCache.txt")
DESTDIR=$T/dest cmake --install "$B" > "$T/install2.log" 2>&1 || { cat "$T/install2.log"; fail "DESTDIR install"; }
check "DESTDIR install: ringsmbd under DESTDIR$PREFIX/sbin" test -x "$T/dest$PREFIX/sbin/ringsmbd"
check "DESTDIR install: the unit names $PREFIX/sbin/ringsmbd" \
  grep -q "^ExecStart=$PREFIX/sbin/ringsmbd " "$T/dest$PREFIX/lib/systemd/system/ringsmb.service"
check "DESTDIR install: man pages" test -f "$T/dest$PREFIX/share/man/man8/ringsmbctl.8"

# The installed server works: ringsmbd finds ringsmb-ctld next to it.
RINGSMBD=$T/inst/sbin/ringsmbd
RINGSMBCTL=$T/inst/sbin/ringsmbctl
write_config
add_user alice 'secret-A1'
start_server
check "the installed ringsmbd serves through its ringsmb-ctld" smb "alice%secret-A1" share "ls"
check "the installed ringsmb-ctld is the one running" bash -c "grep -q 'started ringsmb-ctld' '$T/server.log' && \
  [ \"\$(readlink /proc/\$(cat '$T/ringsmb-ctld.pid')/exe)\" = '$T/inst/sbin/ringsmb-ctld' ]"
finish
