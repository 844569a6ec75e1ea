#!/usr/bin/env bash
# Builds (once per kernel and per version of this script and guest-init) the
# base initramfs of the test guest and prints its path: busybox-static,
# guest-init as /init, and the kernel's modules that the tests need, with
# every module they depend on: cifs (client), ksmbd (server), the virtio
# network driver, the crypto modules (signing and encryption ask for cmac,
# ccm, gcm, sha512, ... through /sbin/modprobe), the NLS tables, and ext4,
# the quota formats and loop devices, and the socket diagnostics ss -K uses.
#
# usage: initramfs.sh KERNEL_DIR     (KERNEL_DIR as printed by kernel.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kdir=$1
version=$(cat "$kdir/version")
mods=$kdir/lib/modules/$version

key=$(cat "$here/initramfs.sh" "$here/guest-init" | sha256sum | cut -c1-12)
image=$kdir/initramfs-base-$key.cpio.gz
if [ -s "$image" ]; then echo "$image"; exit 0; fi

work=$(mktemp -d "$kdir/.initramfs.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root/bin" "$root/sbin" "$root/lib/modules/$version"
cp "$(command -v busybox)" "$root/bin/busybox"
ldd "$root/bin/busybox" >/dev/null 2>&1 && { echo "initramfs.sh: busybox is not static (install busybox-static)" >&2; exit 1; }
cp "$here/guest-init" "$root/init"
chmod 755 "$root/init"
# modprobe must exist before /init runs busybox --install: the kernel may ask.
ln -s ../bin/busybox "$root/sbin/modprobe"

# Wanted modules (paths relative to $mods), then their closure from modules.dep.
wanted=$(cd "$mods" && {
  echo kernel/fs/smb/client/cifs.ko kernel/fs/smb/server/ksmbd.ko
  find kernel/drivers/net/virtio_net.ko kernel/drivers/virtio -name '*.ko'
  find kernel/crypto kernel/arch/x86/crypto kernel/fs/nls -name '*.ko'
  # ss -K, which kills a connection by its ports (test_cifs_multichannel.sh).
  echo kernel/net/ipv4/inet_diag.ko kernel/net/ipv4/tcp_diag.ko
  # Local file systems on loop devices, with quotas (test_quota.sh).
  find kernel/fs/ext4 kernel/fs/quota kernel/drivers/block/loop.ko -name '*.ko' 2>/dev/null || true
} | tr ' ' '\n')
closure=$(for m in $wanted; do
  echo "$m"
  sed -n "s|^$m: *||p" "$mods/modules.dep" | tr ' ' '\n'
done | grep . | sort -u)
for m in $closure; do
  mkdir -p "$root/lib/modules/$version/$(dirname "$m")"
  cp "$mods/$m" "$root/lib/modules/$version/$m"
done
cp "$mods/modules.builtin" "$mods/modules.order" "$root/lib/modules/$version/"
busybox depmod -b "$root" "$version"
(cd "$root" && find . | cpio -o -H newc --quiet -R 0:0 | gzip -1) > "$work/image"
mv "$work/image" "$image"
echo "$image"
