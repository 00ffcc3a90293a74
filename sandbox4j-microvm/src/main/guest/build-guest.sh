#!/bin/bash
# Provisions the microVM guest: an uncompressed kernel, an initramfs and a read-only ext4 root.
#
#   build-guest.sh CACHE_DIR ROOTFS_TAR
#
# The result lands in CACHE_DIR/<digest>/ (vmlinux, initrd.cpio.gz, rootfs.ext4, s4j-agent, recipe.txt), where
# <digest> hashes this script, the agent's source, the kernel and busybox package versions and the root tarball,
# so a changed recipe builds anew and an unchanged one is reused. Progress goes to stderr; stdout is that directory.
# Nothing is installed on the host: packages are fetched with `apt-get download` and unpacked with dpkg-deb -x.
# Environment: S4J_KERNEL_PACKAGE (default: what linux-image-amd64 depends on), S4J_ROOT_SLACK_MB (default 64).
set -euo pipefail

die() { echo "build-guest: $*" >&2; exit 1; }
step() { echo "build-guest: $*" >&2; }

[ $# -eq 2 ] || die "usage: build-guest.sh CACHE_DIR ROOTFS_TAR"
cache_dir=$1
rootfs_tar=$2
[ -f "$rootfs_tar" ] || die "no root tarball at $rootfs_tar"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
agent_src="$here/../../../../sandbox4j-agent/src/main/c/s4j-agent.c"
[ -f "$agent_src" ] || die "no agent source at $agent_src"
for tool in apt-get apt-cache dpkg-deb gcc mke2fs gzip sha256sum tar; do
    command -v "$tool" >/dev/null || die "$tool is missing (apt-get install ${tool/mke2fs/e2fsprogs})"
done

# The modules the guest needs, in the names modinfo uses; their dependencies are added from the package.
# crc32c_generic is named because ext4 asks the crypto API for "crc32c" at mount time (metadata_csum): that is
# no `depends=` entry, and the initramfs has no modprobe to load it on request.
wanted_modules="virtio_mmio virtio_blk virtio_console virtio_rng crc32c_generic ext4 overlay"

kernel_of_meta_package() {
    apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -1
}
kernel_pkg=${S4J_KERNEL_PACKAGE:-$(kernel_of_meta_package)}
if [ -z "$kernel_pkg" ] && [ "$(id -u)" -eq 0 ]; then
    step "apt-get update (the package lists do not know linux-image-amd64 yet)"
    apt-get update -qq >/dev/null 2>&1 || true
    kernel_pkg=$(kernel_of_meta_package)
fi
[ -n "$kernel_pkg" ] || die "cannot tell which kernel linux-image-amd64 depends on (apt-get update?)"
kernel_ver=$(apt-cache policy "$kernel_pkg" | sed -n 's/^ *Candidate: //p')
[ -n "$kernel_ver" ] && [ "$kernel_ver" != "(none)" ] || die "no candidate for $kernel_pkg"
busybox_ver=$(apt-cache policy busybox-static | sed -n 's/^ *Candidate: //p')

step "[1/6] recipe: hashing inputs ($kernel_pkg $kernel_ver, busybox-static $busybox_ver, $(basename "$rootfs_tar"))"
rootfs_sum=$(sha256sum "$rootfs_tar" | cut -d' ' -f1)
recipe=$(printf 'script %s\nagent %s\nkernel %s %s\nbusybox %s\nmodules %s\nrootfs %s\n' \
    "$(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)" "$(sha256sum "$agent_src" | cut -d' ' -f1)" \
    "$kernel_pkg" "$kernel_ver" "$busybox_ver" "$wanted_modules" "$rootfs_sum")
digest=$(printf '%s' "$recipe" | sha256sum | cut -c1-16)
out="$cache_dir/$digest"
if [ -f "$out/recipe.txt" ]; then
    step "cached: $out"
    echo "$out"
    exit 0
fi

mkdir -p "$cache_dir"
work=$(mktemp -d "$cache_dir/.build-$digest.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/out"

step "[2/6] kernel: apt-get download $kernel_pkg, extracting vmlinux"
(cd "$work" && apt-get download -q "$kernel_pkg=$kernel_ver" >/dev/null 2>&1) || die "apt-get download $kernel_pkg failed"
dpkg-deb -x "$work"/linux-image-*.deb "$work/kpkg"
release=${kernel_pkg#linux-image-}
vmlinuz="$work/kpkg/boot/vmlinuz-$release"
[ -f "$vmlinuz" ] || die "no vmlinuz in $kernel_pkg"

# vmlinuz is a boot stub plus a compressed ELF: find each known magic, decompress from there, keep the first ELF.
extract_vmlinux() {
    local image=$1 target=$2 magic tool offset
    for pair in '\x1f\x8b\x08:gzip -dc' '\xfd\x37\x7a\x58\x5a\x00:xz -dc' '\x28\xb5\x2f\xfd:zstd -dcq' \
                '\x5d\x00\x00\x00:xz -dc --format=lzma' 'BZh:bzip2 -dc' '\x02\x21\x4c\x18:lz4 -dc'; do
        magic=${pair%%:*}
        tool=${pair#*:}
        command -v "${tool%% *}" >/dev/null || continue
        for offset in $(LC_ALL=C grep -obUaP "$magic" "$image" | cut -d: -f1 | head -20); do
            tail -c +$((offset + 1)) "$image" | $tool > "$target" 2>/dev/null || true
            if [ "$(head -c 4 "$target" | od -An -tx1 | tr -d ' \n')" = "7f454c46" ]; then
                echo "${tool%% *} at offset $offset"
                return 0
            fi
        done
    done
    return 1
}
found=$(extract_vmlinux "$vmlinuz" "$work/out/vmlinux") || die "no compressed ELF found in $vmlinuz"
step "      vmlinux: $found, $(($(stat -c %s "$work/out/vmlinux") / 1048576)) MiB"

step "[3/6] agent: gcc -static -O2 s4j-agent.c"
gcc -static -O2 -Wall -o "$work/out/s4j-agent" "$agent_src"

step "[4/6] initramfs: busybox-static and modules ($wanted_modules + dependencies)"
busybox="$work/busybox"
(cd "$work" && apt-get download -q "busybox-static=$busybox_ver" >/dev/null 2>&1) || die "apt-get download busybox-static failed"
dpkg-deb -x "$work"/busybox-static_*.deb "$work/bbpkg"
cp "$work/bbpkg/bin/busybox" "$busybox"

moddir="$work/kpkg/lib/modules/$release"
declare -A module_path=()
while IFS= read -r -d '' ko; do
    name=$(basename "$ko"); name=${name%%.ko*}; name=${name//-/_}
    module_path[$name]=$ko
done < <(find "$moddir" -name '*.ko*' -print0)
module_text() { # the .modinfo strings of one module, whatever its compression
    case $1 in
        *.ko.xz) xz -dc "$1" ;; *.ko.zst) zstd -dcq "$1" ;; *.ko.gz) gzip -dc "$1" ;; *) cat "$1" ;;
    esac
}
declare -A visited=()
order=()
visit() { # depth first: dependencies before the module that needs them
    local name=$1 dep deps
    [ -n "${visited[$name]:-}" ] && return 0
    visited[$name]=1
    [ -n "${module_path[$name]:-}" ] || { step "      $name: built in (no module)"; return 0; }
    deps=$(module_text "${module_path[$name]}" | tr '\0' '\n' | sed -n 's/^depends=//p' | head -1)
    for dep in ${deps//,/ }; do visit "${dep//-/_}"; done
    order+=("$name")
}
for m in $wanted_modules; do visit "$m"; done
step "      load order: ${order[*]}"

initrd="$work/initrd"
mkdir -p "$initrd"/{bin,dev,proc,sys,mnt/lower,mnt/rw,mnt/root,lib/modules}
cp "$busybox" "$initrd/bin/busybox"
for applet in sh mount umount insmod mkdir sleep cat switch_root echo; do ln -s busybox "$initrd/bin/$applet"; done
cp "$work/out/s4j-agent" "$initrd/s4j-agent"
: > "$initrd/modules.order"
for name in "${order[@]}"; do
    module_text "${module_path[$name]}" > "$initrd/lib/modules/$name.ko"
    echo "$name" >> "$initrd/modules.order"
done
cat > "$initrd/init" <<'INIT'
#!/bin/sh
# s4j guest init: load the virtio modules in order, then run the agent as PID 1, on an overlay of the
# read-only root disk when the kernel command line names one (s4j.root=/dev/vda), else from this initramfs.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules.order); do insmod /lib/modules/$m.ko 2>/dev/null || echo "init: insmod $m failed"; done
root=; overlay_size=256m; pids_max=256; user=1000:1000
for word in $(cat /proc/cmdline); do
    case $word in
        s4j.root=*) root=${word#s4j.root=} ;;
        s4j.overlay_size=*) overlay_size=${word#s4j.overlay_size=} ;;
        s4j.pids_max=*) pids_max=${word#s4j.pids_max=} ;;
        s4j.user=*) user=${word#s4j.user=} ;;
    esac
done
# Commands and file primitives run as the unprivileged sandbox user, never as the guest's root.
agent_args="--init --user $user --pids-max $pids_max --virtio-name agent --egress-virtio-name egress"
if [ -z "$root" ]; then
    exec /s4j-agent $agent_args
fi
n=0
while [ ! -b "$root" ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
mount -t ext4 -o ro "$root" /mnt/lower || { echo "init: cannot mount $root"; exec /s4j-agent $agent_args; }
# tmpfs's default inode count (half the guest's pages) runs out before its size does: size bounds it instead
mount -t tmpfs -o "size=$overlay_size,nr_inodes=262144,mode=0755" tmpfs /mnt/rw
mkdir -p /mnt/rw/upper /mnt/rw/work
mount -t overlay overlay -o lowerdir=/mnt/lower,upperdir=/mnt/rw/upper,workdir=/mnt/rw/work /mnt/root
mount --move /dev /mnt/root/dev
umount /proc /sys
exec switch_root /mnt/root /sbin/s4j-agent $agent_args
INIT
chmod 755 "$initrd/init"
# the host's cpio if there is one, else busybox's own (files are root's: this runs as root)
if command -v cpio >/dev/null; then archive=(cpio --null -o -H newc --owner 0:0 --quiet); else archive=("$busybox" cpio -0 -o -H newc); fi
(cd "$initrd" && find . -print0 | LC_ALL=C sort -z | "${archive[@]}") | gzip -9 -n > "$work/out/initrd.cpio.gz"
# Whole pages: under QEMU 10's microvm an initrd whose last page is nearly full (size mod 4096 above ~3600)
# stops the kernel at its APIC setup, every boot (measured; 7.2 does not). The kernel's unpacker skips the
# zero padding between and after archives.
size=$(stat -c %s "$work/out/initrd.cpio.gz")
head -c $(( (4096 - size % 4096) % 4096 )) /dev/zero >> "$work/out/initrd.cpio.gz"
step "      initrd.cpio.gz: $(($(stat -c %s "$work/out/initrd.cpio.gz") / 1024)) KiB"

step "[5/6] root: $(basename "$rootfs_tar") + agent, mkfs.ext4 -d (read-only, no journal)"
tree="$work/tree"
mkdir -p "$tree"
tar --numeric-owner -xpf "$rootfs_tar" -C "$tree" --exclude='./dev/*' --exclude='dev/*'
mkdir -p "$tree"/{proc,sys,dev,tmp,run,sbin}
install -m 0755 "$work/out/s4j-agent" "$tree/sbin/s4j-agent"
# the user the agent runs every command as (uid and gid 1000, home /tmp as the guest environment says)
grep -q '^sandbox:' "$tree/etc/passwd" || echo 'sandbox:x:1000:1000:sandbox:/tmp:/bin/sh' >> "$tree/etc/passwd"
grep -q '^sandbox:' "$tree/etc/group" || echo 'sandbox:x:1000:' >> "$tree/etc/group"
chmod 1777 "$tree/tmp"
size_mb=$(( $(du -sm "$tree" | cut -f1) * 12 / 10 + ${S4J_ROOT_SLACK_MB:-64} ))
mke2fs -q -t ext4 -F -L s4jroot -O ^has_journal -m 0 -E root_owner=0:0 -d "$tree" "$work/out/rootfs.ext4" "${size_mb}M" >/dev/null
step "      rootfs.ext4: ${size_mb} MiB"

step "[6/6] cache: $out"
printf '%s\nrelease %s\nmodules %s\n' "$recipe" "$release" "${order[*]}" > "$work/out/recipe.txt"
rm -rf "$out"
mv "$work/out" "$out"
echo "$out"
