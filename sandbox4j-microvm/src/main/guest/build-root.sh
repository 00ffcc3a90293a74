#!/bin/bash
# Builds a guest root file system with debootstrap (Debian minbase plus the packages named) and keeps it
# as a tar: the test image's root for the container engines, and the root disk the microVM guest is made from.
#
#   build-root.sh SUITE PACKAGES OUT_TAR LOG
#
# Needs root (debootstrap) and the Debian mirror this host's apt uses. Writes OUT_TAR whole or not at all.
set -euo pipefail

die() { echo "build-root: $*" >&2; exit 1; }
[ $# -eq 4 ] || die "usage: build-root.sh SUITE PACKAGES OUT_TAR LOG"
suite=$1 packages=$2 out=$3 log=$4
command -v debootstrap >/dev/null || die "debootstrap is missing (apt-get install debootstrap)"
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}
mkdir -p "$(dirname "$out")"
staging=$(mktemp -d "$(dirname "$out")/build.XXXXXX")
trap 'rm -rf "$staging"' EXIT
debootstrap --variant=minbase --include="$packages" "$suite" "$staging/root" "$mirror" >"$log" 2>&1 \
    || die "debootstrap failed; see $log"
rm -rf "$staging/root/var/cache/apt/archives/"*.deb "$staging/root/var/lib/apt/lists/"* \
    "$staging/root/usr/share/doc" "$staging/root/usr/share/man" "$staging/root/usr/share/locale"
tar --numeric-owner -C "$staging/root" -cf "$out.part" . && mv "$out.part" "$out"
