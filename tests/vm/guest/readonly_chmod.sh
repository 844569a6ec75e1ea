# Runs in the guest (busybox sh), from tests/vm/trace_readonly_chmod.sh:
# `echo x > f; chmod 444 f; chmod 644 f; echo y >> f` on a cifs mount of
# //$SERVER/$SHARE, plain and with what changes the client's caching
# (a sleep between the chmods, actimeo, closetimeo, nolease), one file
# each; prints one RESULT line per case (docs/security.md).
set -u
mnt=/mnt/share
mkdir -p $mnt
case_() {  # case_ NAME EXTRA_MOUNT_OPTIONS SLEEP
  mount -t cifs "//$SERVER/$SHARE" $mnt -o "username=$SMBUSER,password=$SMBPASS,vers=3.1.1$2" \
    || { echo "RESULT $1: mount failed"; return; }
  mkdir -p $mnt/sub
  for f in $mnt/$1 $mnt/sub/$1; do
    echo x > $f; chmod 444 $f; [ "$3" = 0 ] || sleep "$3"; chmod 644 $f
    if echo y >> $f 2>/dev/null; then r=written; else r=refused; fi
    echo "RESULT ${f#$mnt/} (options '${2#,}', sleep $3): append $r"
  done
  umount $mnt
}
case_ plain "" 0
case_ sleep2 "" 2
case_ sleep4 "" 4
case_ actimeo0 ",actimeo=0" 0
case_ closetimeo0 ",closetimeo=0" 0
case_ closetimeo0_actimeo0 ",closetimeo=0,actimeo=0" 0
case_ nolease ",nolease" 0
case_ nolease_actimeo0 ",nolease,actimeo=0" 0
