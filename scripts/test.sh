#!/usr/bin/env bash
# The project's test command: provisions what the tests need on this machine, then runs the
# whole Maven build (compile, unit and integration tests) through the wrapper.
#
#   scripts/test.sh            # everything
#   scripts/test.sh -pl sandbox4j-core -am   # extra arguments go to Maven
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

say() { printf 'test.sh: %s\n' "$*" >&2; }

require_java() {
    if ! command -v java >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then
        say "no JDK found: install one (Java 17 or newer), e.g. 'apt-get install -y openjdk-17-jdk-headless'"
        exit 1
    fi
    local java_bin="${JAVA_HOME:+$JAVA_HOME/bin/}java"
    local version
    version=$("$java_bin" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}')
    if [ -z "$version" ] || [ "${version%%.*}" -lt 17 ]; then
        say "Java 17 or newer is needed; found '${version:-unknown}' at $java_bin"
        exit 1
    fi
}

# Installs Debian packages for the commands (or, given an absolute path, the files) the tests
# need, when one is missing.
require_commands() {
    local missing=() packages=() command package
    for pair in "$@"; do
        command=${pair%%:*}
        package=${pair##*:}
        if [ "${command#/}" != "$command" ]; then
            [ -e "$command" ] && continue
            missing+=("$command")
            packages+=("$package")
        elif ! command -v "$command" >/dev/null 2>&1; then
            missing+=("$command")
            packages+=("$package")
        fi
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        say "missing ${missing[*]}: install the Debian packages ${packages[*]} (e.g. sudo apt-get install -y ${packages[*]})"
        exit 1
    fi
    say "installing ${packages[*]} for ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
}

# Provisioning: everything the tests need on this machine, so one command stays enough. The TCK's
# own tests run a namespace reference backend (unshare, setpriv) and guest HTTP clients (curl).
# sandbox4j-local runs bubblewrap, limits launches with prlimit when no cgroup is writable, bridges
# the guest to the egress proxy with socat (python3 is the fallback, also tested), and compiles a
# seccomp filter with gcc and libseccomp. sandbox4j-codeact runs programs in every language it offers
# inside bubblewrap guests, which see the host's /usr: python3 and node must be there, not only on PATH.
provision() {
    require_java
    require_commands unshare:util-linux setpriv:util-linux prlimit:util-linux curl:curl bwrap:bubblewrap \
        socat:socat /usr/bin/python3:python3 /usr/bin/node:nodejs gcc:gcc /usr/include/stdio.h:libc6-dev \
        /usr/include/seccomp.h:libseccomp-dev
}

# One closing line over every module's Surefire reports, so the whole run reads as one count.
summarize() {
    local reports
    reports=$(find . -path '*/target/surefire-reports/TEST-*.xml' -newer "$started" 2>/dev/null)
    [ -n "$reports" ] || { say "no test reports were written"; return 0; }
    local total failed errored skipped
    # shellcheck disable=SC2086
    total=$(cat $reports | grep -c '<testcase' || true)
    # shellcheck disable=SC2086
    failed=$(cat $reports | grep -c '<failure' || true)
    # shellcheck disable=SC2086
    errored=$(cat $reports | grep -c '<error' || true)
    # shellcheck disable=SC2086
    skipped=$(cat $reports | grep -c '<skipped' || true)
    failed=$((failed + errored))
    printf 'sandbox4j: %d passed, %d failed, %d skipped\n' "$((total - failed - skipped))" "$failed" "$skipped"
}

provision
started=$(mktemp)
trap 'rm -f "$started"' EXIT
say "running ./mvnw -B verify $*"
status=0
./mvnw -B verify "$@" || status=$?
summarize
exit "$status"
