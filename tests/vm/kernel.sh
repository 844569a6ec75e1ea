#!/usr/bin/env bash
# Fetches Debian 12's own kernel (the package linux-image-amd64 depends on)
# into a cache directory and prints that kernel's directory (vmlinuz and
# lib/modules/<version>/ with a modules.dep made by busybox's depmod).
#
# The package is fetched with `apt-get download` and unpacked with
# `dpkg -x`, never installed: installing a kernel on the host would run
# its postinst hooks (initramfs-tools, bootloader) and change /boot for a
# kernel only the test guest boots.
#
# usage: kernel.sh            (cache: $RINGSMB_VM_CACHE, default
#                              ${XDG_CACHE_HOME:-~/.cache}/ringsmb-vm)
# Set RINGSMB_VM_KERNEL_PKG to pin a package (linux-image-6.1.0-57-amd64).
set -euo pipefail

cache=${RINGSMB_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ringsmb-vm}
mkdir -p "$cache"

# A kernel already unpacked in the cache is used as is: no network needed.
pick_cached() {
  local d
  for d in "$cache"/linux-image-*/; do
    [ -f "$d/.complete" ] || continue
    if [ -z "${RINGSMB_VM_KERNEL_PKG:-}" ] || [ "$(basename "$d")" = "$RINGSMB_VM_KERNEL_PKG" ]; then
      echo "${d%/}"
      return 0
    fi
  done
  return 1
}

if pick_cached; then exit 0; fi

pkg=${RINGSMB_VM_KERNEL_PKG:-}
if [ -z "$pkg" ]; then
  pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -1)
fi
if [ -z "$pkg" ]; then
  echo "kernel.sh: cannot tell which kernel linux-image-amd64 depends on (apt-get update?)" >&2
  exit 1
fi

dir="$cache/$pkg"
work=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "kernel.sh: fetching $pkg into $cache" >&2
# _apt cannot write into a private cache directory: download as the caller.
(cd "$work" && apt-get download -o APT::Sandbox::User="$(id -un)" "$pkg" >&2)
dpkg -x "$work"/"$pkg"_*.deb "$work/root"
version=$(ls "$work/root/lib/modules")
mkdir -p "$work/root/boot"
busybox depmod -b "$work/root" "$version"
[ -s "$work/root/lib/modules/$version/modules.dep" ] || { echo "kernel.sh: depmod made no modules.dep" >&2; exit 1; }
rm -rf "$dir"
mv "$work/root" "$dir"
echo "$version" > "$dir/version"
touch "$dir/.complete"
echo "$dir"
