#!/usr/bin/env bash
# Fetches one of Debian 12's kernels into a cache directory and prints that
# kernel's directory (vmlinuz and lib/modules/<version>/ with uncompressed
# modules and a modules.dep made by busybox's depmod).
#
# Which kernel (SERIES):
#   default  the kernel linux-image-amd64 depends on (6.1, Debian 12's own)
#   6.12     the newest linux-image-6.12.*+deb12-amd64 (Debian 12 ships
#            these too; the ksmbd VM test uses it: docs/kmod-shim.md)
# RINGSMB_VM_KERNEL_PKG pins one package (linux-image-6.1.0-57-amd64) and
# wins over SERIES.
#
# The package is fetched with `apt-get download` and unpacked with
# `dpkg -x`, never installed: installing a kernel on the host would run
# its postinst hooks (initramfs-tools, bootloader) and change /boot for a
# kernel only the test guest boots.
#
# usage: kernel.sh [SERIES]   (cache: $RINGSMB_VM_CACHE, default
#                              ${XDG_CACHE_HOME:-~/.cache}/ringsmb-vm)
set -euo pipefail

series=${1:-default}
cache=${RINGSMB_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ringsmb-vm}
mkdir -p "$cache"

# The package names a series may use (the cache and apt are searched with it).
case $series in
  default) pattern='^linux-image-[0-9]+\.[0-9]+\.[0-9]+-[0-9]+-amd64$' ;;
  [0-9]*.[0-9]*) pattern="^linux-image-${series//./\\.}\\.[0-9]+\\+deb12-amd64\$" ;;
  *) echo "kernel.sh: unknown kernel series '$series' (default, or MAJOR.MINOR such as 6.12)" >&2; exit 2 ;;
esac

# The newest complete kernel of the series in the cache (or the pinned
# package): used as is, so no network is needed once cached.
pick_cached() {
  local name
  if [ -n "${RINGSMB_VM_KERNEL_PKG:-}" ]; then
    [ -f "$cache/$RINGSMB_VM_KERNEL_PKG/.complete" ] && { echo "$cache/$RINGSMB_VM_KERNEL_PKG"; return 0; }
    return 1
  fi
  name=$(for d in "$cache"/linux-image-*/; do
    [ -f "$d/.complete" ] && basename "$d"
  done | grep -E "$pattern" | sort -V | tail -1 || true)
  [ -n "$name" ] && echo "$cache/$name"
}

if pick_cached; then exit 0; fi

pkg=${RINGSMB_VM_KERNEL_PKG:-}
if [ -z "$pkg" ] && [ "$series" = default ]; then
  pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -1)
elif [ -z "$pkg" ]; then
  pkg=$(apt-cache pkgnames linux-image- 2>/dev/null | grep -E "$pattern" | sort -V | tail -1 || true)
fi
if [ -z "$pkg" ]; then
  echo "kernel.sh: apt knows no kernel of series '$series' (apt-get update?)" >&2
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
# Newer Debian kernels ship xz-compressed modules; busybox's depmod and
# modprobe read plain ones.
find "$work/root/lib/modules/$version" -name '*.ko.xz' -print0 | xargs -0 -r -n 64 xz -d
mkdir -p "$work/root/boot"
busybox depmod -b "$work/root" "$version"
[ -s "$work/root/lib/modules/$version/modules.dep" ] || { echo "kernel.sh: depmod made no modules.dep" >&2; exit 1; }
rm -rf "$dir"
mv "$work/root" "$dir"
echo "$version" > "$dir/version"
touch "$dir/.complete"
echo "$dir"
