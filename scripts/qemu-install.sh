# QEMU for the microVM backend, shared by scripts/test.sh and ./sandbox4j. Snapshots of a booted guest
# (the fast acquire) map the template's memory read-only into each new guest, which takes QEMU 8.2 or later
# (memory-backend-file rom=off); Debian 12 ships 7.2, so on bookworm QEMU comes from bookworm-backports
# (Debian's own archive, signed by its archive key). Elsewhere the distribution's QEMU is used as it is.
# Needs root and apt-get; says on stderr only what failed.
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

# apt-get update and install, quietly: apt's and dpkg's progress goes to a log, whose tail is shown only
# when the install fails. Extra apt-get options come first, then "--", then the packages.
apt_install_quietly() {
    local options=() log
    while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do options+=("$1"); shift; done
    shift
    log=$(mktemp "${TMPDIR:-/tmp}/sandbox4j-apt.XXXXXX")
    if apt-get update -qq >"$log" 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends "${options[@]}" "$@" >>"$log" 2>&1; then
        rm -f "$log"
        return 0
    fi
    printf 'apt-get install %s failed; its last lines (all in %s):\n' "$*" "$log" >&2
    tail -n 15 "$log" >&2
    return 1
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
        apt_install_quietly -t "$suite" -- qemu-system-x86
    else
        apt_install_quietly -- qemu-system-x86
    fi
}
