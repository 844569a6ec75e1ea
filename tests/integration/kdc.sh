# An MIT KDC of its own for a test: realm RINGSMB.TEST on 127.0.0.1 with a
# free port, everything (database, stash, log, krb5.conf, ccaches, keytabs)
# under $KDC_DIR. Source it after lib.sh (free_port, $T); start_kdc exports
# KRB5_CONFIG and KRB5_KDC_PROFILE, so every Kerberos tool of the test (and
# the servers it starts) uses this realm and never /etc/krb5.conf.
#
#   start_kdc                     the KDC, running
#   kdc_admin 'addprinc ...'      kadmin.local on its database
#   kdc_user NAME PASSWORD        a user principal
#   kdc_service PRINC KEYTAB      a service principal with a random key, added to KEYTAB
#   kdc_kinit NAME PASSWORD CCACHE   a TGT in CCACHE (FILE:path)
KDC_REALM=RINGSMB.TEST
KDC_HOST=ringsmb-krb.test  # the server's name; never resolved (smbclient -I gives the address)
KDC_PID=""

start_kdc() {
  KDC_DIR="$T/kdc"
  mkdir -p "$KDC_DIR"
  KDC_PORT=$(free_port)
  cat > "$KDC_DIR/krb5.conf" <<CONF
[libdefaults]
  default_realm = $KDC_REALM
  dns_lookup_kdc = false
  dns_lookup_realm = false
  dns_canonicalize_hostname = false
  rdns = false
  udp_preference_limit = 1
  # Everything runs on one clock: a small skew lets a test make a stale
  # token in seconds rather than krb5's default 5 minutes.
  clockskew = 2
[realms]
  $KDC_REALM = {
    kdc = 127.0.0.1:$KDC_PORT
  }
[domain_realm]
  $KDC_HOST = $KDC_REALM
  .test = $KDC_REALM
CONF
  cat > "$KDC_DIR/kdc.conf" <<CONF
[kdcdefaults]
  kdc_listen = 127.0.0.1:$KDC_PORT
  kdc_tcp_listen = 127.0.0.1:$KDC_PORT
[realms]
  $KDC_REALM = {
    database_name = $KDC_DIR/principal
    key_stash_file = $KDC_DIR/stash
    acl_file = $KDC_DIR/kadm5.acl
    max_life = 1h
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
  }
[logging]
  kdc = FILE:$KDC_DIR/kdc.log
CONF
  export KRB5_CONFIG="$KDC_DIR/krb5.conf" KRB5_KDC_PROFILE="$KDC_DIR/kdc.conf"
  kdb5_util create -s -r "$KDC_REALM" -P "master-$RANDOM$RANDOM" > "$KDC_DIR/create.log" 2>&1 || {
    echo "kdb5_util create failed:"; cat "$KDC_DIR/create.log"; return 1; }
  krb5kdc -n -P "$KDC_DIR/kdc.pid" > "$KDC_DIR/kdc.out" 2>&1 &
  KDC_PID=$!
  for _ in $(seq 1 50); do
    if python3 -c "import socket,sys; s=socket.socket(); s.settimeout(0.2); sys.exit(s.connect_ex(('127.0.0.1',$KDC_PORT)))" 2>/dev/null; then
      return 0
    fi
    kill -0 "$KDC_PID" 2>/dev/null || { echo "krb5kdc exited:"; cat "$KDC_DIR/kdc.out" "$KDC_DIR/kdc.log"; return 1; }
    sleep 0.1
  done
  echo "krb5kdc did not listen"; return 1
}

stop_kdc() {
  if [ -n "$KDC_PID" ]; then
    kill "$KDC_PID" 2>/dev/null || true
    wait "$KDC_PID" 2>/dev/null || true
    KDC_PID=""
  fi
}

kdc_admin() { kadmin.local -r "$KDC_REALM" -q "$1" > "$KDC_DIR/kadmin.log" 2>&1 || { cat "$KDC_DIR/kadmin.log"; return 1; }; }
kdc_user() { kdc_admin "addprinc -pw $2 $1"; }
kdc_service() { kdc_admin "addprinc -randkey $1" && kdc_admin "ktadd -k $2 $1"; }
kdc_kinit() { echo "$2" | KRB5CCNAME="$3" kinit "$1" > "$KDC_DIR/kinit.log" 2>&1 || { cat "$KDC_DIR/kinit.log"; return 1; }; }
