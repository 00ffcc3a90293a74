#!/bin/sh
# Builds the guest agent into the module's classes, so the jar carries it for the backends that run it
# as a resident process (bubblewrap, containers): build-into.sh <source.c> <output file>.
# A host without gcc or a static libc still builds the rest of sandbox4j: the agent is then left out,
# and a backend that wants it says so (AgentBinaries.packaged() is empty) and runs each command as before.
set -eu
source=$1
out=$2
if ! command -v "${CC:-gcc}" >/dev/null 2>&1; then
    echo "build-into.sh: no ${CC:-gcc}: the guest agent is left out of the jar (apt-get install gcc libc6-dev)" >&2
    exit 0
fi
mkdir -p "$(dirname "$out")"
partial="$out.partial.$$"
if "${CC:-gcc}" -static -O2 -Wall -Wextra -Wno-unused-parameter -o "$partial" "$source"; then
    mv -f "$partial" "$out"
    # Its SHA-256 and size beside it, so a JVM finds its copy without reading and hashing the agent.
    rm -f "$out.sha256"
    if command -v sha256sum >/dev/null 2>&1; then
        printf '%s %s\n' "$(sha256sum < "$out" | cut -c1-64)" "$(wc -c < "$out" | tr -d ' ')" > "$out.sha256"
    fi
else
    rm -f "$partial"
    echo "build-into.sh: gcc could not build a static agent: it is left out of the jar (a static libc: apt-get install libc6-dev)" >&2
fi
