# QEMU for the microVM backend, shared by scripts/test.sh and ./sandbox4j. Snapshots of a booted guest
# (the fast acquire) map the template's memory read-only into each new guest, which takes QEMU 8.2 or later
# (memory-backend-file rom=off); Debian 12 ships 7.2, so on bookworm QEMU comes from bookworm-backports
# (Debian's own archive, signed by its archive key). Elsewhere the distribution's QEMU is used as it is.
# Needs root and apt-get; prints what it does on stderr.
qemu_backports_suite() {
    local codename=""
    [ -r /etc/os-release ] && codename=$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")
    [ "$codename" = "bookworm" ] && printf 'bookworm-backports'
}

# The installed QEMU's version as MAJOR.MINOR, or nothing.
qemu_version() {
    qemu-system-x86_64 -version 2>/dev/null | sed -n 's/^QEMU emulator version \([0-9]*\.[0-9]*\).*/\1/p'
}

qemu_has_snapshots() {
    local version
    version=$(qemu_version)
    [ -n "$version" ] && [ "$(printf '%s\n8.2\n' "$version" | sort -V | head -1)" = "8.2" ]
}

install_qemu() {
    local suite
    suite=$(qemu_backports_suite)
    if command -v qemu-system-x86_64 >/dev/null 2>&1 && { qemu_has_snapshots || [ -z "$suite" ]; }; then
        return 0
    fi
    if [ -n "$suite" ]; then
        if ! grep -rqs "$suite" /etc/apt/sources.list /etc/apt/sources.list.d/; then
            printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
                "$suite" /usr/share/keyrings/debian-archive-keyring.gpg > /etc/apt/sources.list.d/sandbox4j-backports.sources
        fi
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -t "$suite" qemu-system-x86 >&2
    else
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-system-x86 >&2
    fi
}
