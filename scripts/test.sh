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
# install_qemu and apt_install_quietly.
# shellcheck source=scripts/qemu-install.sh
. "$root/scripts/qemu-install.sh"

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
    apt_install_quietly -- "${packages[@]}" || exit 1
}

# Provisioning: everything the tests need on this machine, so one command stays enough. The TCK's
# own tests run a namespace reference backend (unshare, setpriv) and guest HTTP clients (curl).
# sandbox4j-local runs bubblewrap, limits launches with prlimit when no cgroup is writable, bridges
# the guest to the egress proxy with socat (python3 is the fallback, also tested), and compiles a
# seccomp filter with gcc and libseccomp. sandbox4j-codeact runs programs in every language it offers
# inside bubblewrap guests, which see the host's /usr: python3 and node must be there, not only on PATH.
# The sbx and ACA emulators give each guest a NIC (ip) whose traffic their filter takes over with
# iptables and ip6tables rules inside the guest's own network namespace, entered with nsenter.
provision() {
    require_java
    require_commands unshare:util-linux setpriv:util-linux prlimit:util-linux nsenter:util-linux curl:curl \
        bwrap:bubblewrap socat:socat /usr/bin/python3:python3 /usr/bin/node:nodejs gcc:gcc \
        /usr/include/stdio.h:libc6-dev /usr/include/seccomp.h:libseccomp-dev ip:iproute2 iptables:iptables \
        ip6tables:iptables
    provision_engines
    provision_mcp_typescript_sdk
}

# ---------------------------------------------------------------- container engines (sandbox4j-docker)
# There is no systemd here, so dockerd and Podman's API service are started by hand, each only if its
# socket does not already answer, each with its own socket and data under one short directory. The
# tests find them through SANDBOX4J_DOCKER_HOST and SANDBOX4J_PODMAN_HOST, and the image through
# SANDBOX4J_TEST_IMAGE. When provisioning fails the variables say why (SANDBOX4J_ENGINES_PROBLEM), so
# the engine tests fail with the reason instead of skipping.
engine_dir=${SANDBOX4J_ENGINE_DIR:-/var/lib/s4j-engines}
# The test image's recipe (also the microVM guest's root).
# shellcheck source=scripts/image-recipe.sh
. "$root/scripts/image-recipe.sh"

# Whether the Engine API behind a unix socket answers its ping.
engine_answers() {
    [ -S "$1" ] && curl -fsS --max-time 5 --unix-socket "$1" http://engine/_ping >/dev/null 2>&1
}

# Waits up to 60 s for a socket to answer; names the log when it does not.
await_engine() {
    local socket=$1 log=$2 what=$3 i
    for i in $(seq 1 120); do
        engine_answers "$socket" && return 0
        sleep 0.5
    done
    engine_problem "$what did not answer on $socket within 60 s; see $log"
    return 1
}

engine_problem() {
    say "$*"
    export SANDBOX4J_ENGINES_PROBLEM="${SANDBOX4J_ENGINES_PROBLEM:+$SANDBOX4J_ENGINES_PROBLEM; }$*"
}

# dockerd with no bridge and no iptables rules (containers run with --network none), the ulimit
# defaults this machine can grant (no CAP_SYS_RESOURCE), and gVisor's runsc registered as a runtime
# (allowed to reach host unix sockets: the egress proxy's socket is mounted into the guest).
start_dockerd() {
    local socket=$engine_dir/docker.sock
    if engine_answers "$socket"; then
        say "dockerd already answers on $socket"
        return 0
    fi
    say "starting dockerd on $socket (log $engine_dir/dockerd.log)"
    cat > "$engine_dir/daemon.json" <<'JSON'
{
  "runtimes": {
    "runsc": {"path": "/usr/bin/runsc", "runtimeArgs": ["--network=none", "--fsgofer-host-uds"]}
  }
}
JSON
    rm -f "$socket"
    # From /, not this checkout: an engine outlives the build, and a deleted working directory
    # breaks every container it starts later (conmon: "Failed to get working directory").
    (cd / && setsid nohup dockerd --config-file "$engine_dir/daemon.json" \
        --data-root "$engine_dir/docker-data" --exec-root "$engine_dir/docker-exec" \
        --pidfile "$engine_dir/dockerd.pid" -H "unix://$socket" \
        --bridge=none --iptables=false --ip-forward=false --ip-masq=false \
        --default-ulimit nofile=20000:20000 --default-ulimit nproc=32768:32768 \
        </dev/null >"$engine_dir/dockerd.log" 2>&1 &)
    await_engine "$socket" "$engine_dir/dockerd.log" dockerd
}

# Podman's Docker-compatible API service, rootful, with runc (crun refuses this host's hybrid
# cgroups) and the same ulimit workaround, its storage under the engine directory.
podman_flags() {
    printf '%s\n' --root "$engine_dir/podman-root" --runroot "$engine_dir/podman-run"
}

start_podman() {
    local socket=$engine_dir/podman.sock
    cat > "$engine_dir/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
    if engine_answers "$socket"; then
        say "podman already answers on $socket"
        return 0
    fi
    say "starting podman system service on $socket (log $engine_dir/podman.log)"
    rm -f "$socket"
    # shellcheck disable=SC2046
    (cd / && CONTAINERS_CONF=$engine_dir/containers.conf setsid nohup podman $(podman_flags) \
        system service --time=0 "unix://$socket" </dev/null >"$engine_dir/podman.log" 2>&1 &)
    await_engine "$socket" "$engine_dir/podman.log" "podman system service"
}

# Builds the test image's root file system once (debootstrap from the Debian mirror; no registry),
# keeps it as a tar named by the recipe's digest, and imports it into each engine that lacks the tag.
provision_test_image() {
    local digest tag tarball staging
    digest=$(printf '%s\n' "$image_recipe_version" "$image_suite" "$image_packages" | sha256sum | cut -c1-12)
    tag=localhost/sandbox4j-test:$digest
    tarball=$engine_dir/images/rootfs-$digest.tar
    if [ ! -s "$tarball" ]; then
        say "building the test image's root file system (debootstrap $image_suite, $image_packages; about 2 min, once)"
        if ! sandbox4j-microvm/src/main/guest/build-root.sh "$image_suite" "$image_packages" "$tarball" \
                "$engine_dir/images/debootstrap.log"; then
            engine_problem "debootstrap failed; see $engine_dir/images/debootstrap.log"
            return 1
        fi
    fi
    if ! DOCKER_HOST=unix://$engine_dir/docker.sock docker image inspect "$tag" >/dev/null 2>&1; then
        say "importing $tag into dockerd"
        DOCKER_HOST=unix://$engine_dir/docker.sock docker import "$tarball" "$tag" >/dev/null \
            || engine_problem "docker import of $tarball failed"
    fi
    # shellcheck disable=SC2046
    if ! CONTAINERS_CONF=$engine_dir/containers.conf podman $(podman_flags) image exists "$tag"; then
        say "importing $tag into podman"
        # shellcheck disable=SC2046
        CONTAINERS_CONF=$engine_dir/containers.conf podman $(podman_flags) import -q "$tarball" "$tag" >/dev/null \
            || engine_problem "podman import of $tarball failed"
    fi
    export SANDBOX4J_TEST_IMAGE=$tag
    test_image_tarball=$tarball
}

# Podman 4.3 leaves the conmon of every exec made through its Docker-compatible API running, even
# after the container is gone. After the build, end those whose container no longer exists (by pid;
# the service this script starts is their parent's parent), so runs do not pile them up.
reap_podman_exec_monitors() {
    command -v podman >/dev/null 2>&1 || return 0
    local live pid args container reaped=0
    # shellcheck disable=SC2046
    live=$(CONTAINERS_CONF=$engine_dir/containers.conf podman $(podman_flags) ps -aq --no-trunc 2>/dev/null) || return 0
    for pid in $(pgrep -x conmon 2>/dev/null); do
        # Whole-string tests, no pipes: under pipefail a grep -q that stops early fails its pipeline.
        args=$(tr '\0' '\n' 2>/dev/null <"/proc/$pid/cmdline") || continue
        case $'\n'"$args"$'\n' in *$'\n--exec-attach\n'*) ;; *) continue ;; esac
        case $'\n'"$args"$'\n' in *$'\n'"$engine_dir/podman-root"$'\n'*) ;; *) continue ;; esac
        container=${args#*$'\n'-c$'\n'}
        container=${container%%$'\n'*}
        [ -n "$container" ] && [ "$container" != "$args" ] || continue
        case $'\n'"$live"$'\n' in *$'\n'"$container"$'\n'*) continue ;; esac
        kill "$pid" 2>/dev/null && reaped=$((reaped + 1))
    done
    [ "$reaped" -eq 0 ] || say "ended $reaped exec monitors (conmon) Podman left for removed containers"
}

provision_engines() {
    require_commands dockerd:docker.io docker:docker.io podman:podman runc:runc runsc:runsc \
        debootstrap:debootstrap docker-init:tini catatonit:catatonit
    mkdir -p "$engine_dir/images"
    start_dockerd && export SANDBOX4J_DOCKER_HOST=unix://$engine_dir/docker.sock
    start_podman && export SANDBOX4J_PODMAN_HOST=unix://$engine_dir/podman.sock
    provision_test_image || true
    provision_microvm_guest || true
}

# ---------------------------------------------------------------- microVM guest (sandbox4j-microvm)
# QEMU, and the guest build-guest.sh makes from the test image's root (a kernel extracted from Debian's
# package, a busybox initramfs, a read-only ext4 root with the guest agent), cached by its recipe's digest
# under the engine directory. The tests find it through SANDBOX4J_MICROVM_GUEST; when it cannot be made,
# SANDBOX4J_MICROVM_PROBLEM says why, so they fail with the reason.
provision_microvm_guest() {
    require_commands mke2fs:e2fsprogs xz:xz-utils
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        install_qemu || say "installing QEMU failed"
    fi
    require_commands qemu-system-x86_64:qemu-system-x86
    qemu_has_snapshots || say "QEMU $(qemu_version) is older than 8.2: microVM guests will boot cold (no snapshots)"
    local tarball=${test_image_tarball:-} guest
    if [ -z "$tarball" ] || [ ! -s "$tarball" ]; then
        export SANDBOX4J_MICROVM_PROBLEM="no test image root to build the guest from (see the engines' problem)"
        return 1
    fi
    if ! guest=$(sandbox4j-microvm/src/main/guest/build-guest.sh "$engine_dir/guest" "$tarball" \
            2> >(tee "$engine_dir/guest-build.log" >&2)) || [ ! -f "$guest/vmlinux" ]; then
        say "building the microVM guest failed; see $engine_dir/guest-build.log"
        export SANDBOX4J_MICROVM_PROBLEM="build-guest.sh failed; see $engine_dir/guest-build.log"
        return 1
    fi
    say "microVM guest: $guest"
    export SANDBOX4J_MICROVM_GUEST=$guest
    # Where ./sandbox4j looks when the variable is unset (GuestImage.defaultDirectory): the README's first
    # command then finds this guest too.
    local default_guest=${XDG_CACHE_HOME:-$HOME/.cache}/sandbox4j/microvm-guest
    mkdir -p "$(dirname "$default_guest")"
    if [ -L "$default_guest" ] || [ ! -e "$default_guest" ]; then
        ln -sfn "$guest" "$default_guest"
    fi
}

# ---------------------------------------------------------------- MCP TypeScript SDK (sandbox4j-mcp)
# McpTypeScriptClientTest drives the MCP server with the official TypeScript SDK, pinned by the committed
# package.json and package-lock.json under sandbox4j-mcp/src/test/node. npm ci installs it once into a cache
# directory named by the lock's digest, from the npm registry; the test finds it through
# SANDBOX4J_MCP_NODE_MODULES and fails (naming this script) when the modules are not there.
provision_mcp_typescript_sdk() {
    local recipe=$root/sandbox4j-mcp/src/test/node digest cache
    digest=$(cat "$recipe/package.json" "$recipe/package-lock.json" | sha256sum | cut -c1-12)
    cache=${XDG_CACHE_HOME:-$HOME/.cache}/sandbox4j/mcp-node-$digest
    if [ ! -f "$cache/.installed" ]; then
        require_commands npm:npm
        say "installing the MCP TypeScript SDK for sandbox4j-mcp's tests into $cache (npm ci, once)"
        rm -rf "$cache"
        mkdir -p "$cache"
        cp "$recipe/package.json" "$recipe/package-lock.json" "$cache/"
        if ! (cd "$cache" && npm ci --ignore-scripts --no-audit --no-fund >"$cache/npm.log" 2>&1); then
            say "npm ci failed; see $cache/npm.log"
            return 0
        fi
        touch "$cache/.installed"
    fi
    export SANDBOX4J_MCP_NODE_MODULES=$cache/node_modules
}

# One closing line over every module's Surefire and Failsafe reports, so the whole run reads as one count.
summarize() {
    local reports
    reports=$(find . \( -path '*/target/surefire-reports/TEST-*.xml' -o -path '*/target/failsafe-reports/TEST-*.xml' \) \
        -newer "$started" 2>/dev/null)
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
reap_podman_exec_monitors
summarize
exit "$status"
