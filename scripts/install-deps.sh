#!/usr/bin/env bash
# Installs every build and test dependency of ringsmb from Debian 12's
# packages. Idempotent: quick when everything is already there.
#
# usage: scripts/install-deps.sh [--demo]
#   --demo: only what scripts/demo needs: the compiler and the libraries of
#   ringsmbd, ringsmb-ctld and ringsmbctl, and smbclient for the connect line
set -euo pipefail

# What building the three programs needs.
build_packages=(
  build-essential g++ cmake ninja-build pkg-config
  liburing-dev libnl-3-dev libnl-genl-3-dev libssl-dev libcli11-dev
  # MIT Kerberos' GSSAPI: ringsmb-ctld accepts Kerberos tickets (daemon/kerberos/)
  libkrb5-dev
  # OpenLDAP's client and Cyrus SASL's header: ringsmb-ctld asks the joined
  # domain's DCs for the names of its SIDs (kerberos/ldap_directory.hpp)
  libldap-dev libsasl2-dev
)
# What the tests, benchmarks and the package need besides.
test_packages=(
  # the unit tests, and the clone scripts/test works in
  catch2 git
  # fuzzing: libFuzzer ships with clang; clang 16 is the first that compiles
  # libstdc++ 12's std::expected, which every layer uses
  clang-16 libclang-rt-16-dev
  # real clients and the reference server for tests and benchmarks
  smbclient samba-testsuite samba
  # acl_xattr and streams_xattr for the Samba baseline (scripts/conformance-samba)
  samba-vfs-modules
  # test and benchmark tooling
  python3 procps psmisc iproute2 strace time
  # scrapes the optional /metrics listener (test_prometheus)
  curl
  # the VM tests (tests/vm): Debian's kernel under QEMU (TCG), a busybox
  # initramfs packed with cpio, socat for the guest's one forwarded port,
  # xz for the 6.12 kernel's compressed modules (tests/vm/kernel.sh)
  qemu-system-x86 busybox-static socat cpio xz-utils
  # mkfs.btrfs and btrfs: Previous Versions on a real btrfs with snapshots
  # (test_snapshots, vm.test_cifs_snapshot); without them both tests skip
  btrfs-progs
  # setquota/quotaon: Linux user quotas reported as SMB2 quota entries
  # (vm.test_quota); without them the test skips
  quota
  # setfattr/getfattr: what the host stored for the guest's user.* xattrs
  # (vm.test_cifs_ea), and xattr checks of streams and EAs
  attr
  # systemd-analyze verifies the unit (test_install); systemd need not run
  systemd
  # man pages are checked to render without warnings (test_install)
  groff-base
  # the Debian package (scripts/build-deb: dpkg-buildpackage, lintian) and
  # its test in a fresh Debian 12 root (tests/package: debootstrap, xmllint
  # for the Avahi service file); ccache makes package rebuilds quick.
  # Not ksmbd-tools (import ksmbd's test needs ksmbd.adduser): it conflicts
  # with samba, so the test unpacks it from its .deb instead.
  dpkg-dev debhelper lintian debootstrap libxml2-utils ccache
  # parses `ringsmbctl status --prometheus` (test_prometheus)
  python3-prometheus-client
  # a client nobody here wrote, over SMB 2.0.2 to 3.0.2 (test_impacket)
  python3-impacket
  # the Cockpit page in a real browser (test_cockpit): cockpit-ws serves it,
  # cockpit-bridge runs ringsmbctl, cockpit-system has the shell's base1
  # (cockpit.js); headless Chromium driven by Selenium. About 45 s of
  # download and install here (52 packages, 430 MB on disk).
  cockpit-ws cockpit-bridge cockpit-system chromium chromium-driver python3-selenium
  # test_kerberos: an MIT KDC of the test's own (krb5kdc, kdb5_util,
  # kadmin.local), kinit/klist, and GSSAPI from Python for raw tokens
  krb5-kdc krb5-admin-server krb5-user python3-gssapi
  # ringsmbctl domain join/leave/status run adcli; test_ad_dc provisions a
  # Samba AD domain controller of its own (samba-ad-dc, and the schema
  # files samba-tool domain provision reads from samba-ad-provision)
  adcli samba-ad-dc samba-ad-provision
  # the GSSAPI bind of ringsmb-ctld's LDAP lookups (test_ad_dc), and a
  # clock 10 minutes ahead for one command (faketime: test_ad_dc's skew checks)
  libsasl2-modules-gssapi-mit faketime
  # the kernel's cifs client with sec=krb5 (vm.test_cifs_krb5): its upcall
  # cifs.upcall and keyutils' request-key, packed into the guest
  cifs-utils keyutils
)
if [ "${1:-}" = "--demo" ]; then
  packages=("${build_packages[@]}" smbclient)
else
  packages=("${build_packages[@]}" "${test_packages[@]}")
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}; run as root (or with sudo)" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
