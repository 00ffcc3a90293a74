package org.sandbox4j.docker;

import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import org.sandbox4j.agent.AgentBinaries;

/**
 * The guest agent a backend mounts into the containers it creates: sandbox4j-agent's packaged
 * static binary, as a host file the engine can bind-mount, or the reason there is none.
 *
 * @param path    the host file, when there is one
 * @param absence why there is none (empty when there is)
 */
record AgentBinary(Optional<Path> path, String absence) {

    AgentBinary {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(absence, "absence");
    }

    /**
     * The agent, when it is wanted, the engine shares this host's file system (a {@code unix://}
     * endpoint) and the sandbox4j-agent jar carries one for this architecture.
     */
    static AgentBinary find(boolean wanted, Engine engine) {
        if (!wanted) {
            return none("turned off (guestAgent(false))");
        }
        if (engine.socketPath().isEmpty()) {
            return none("the engine at " + engine.host() + " is not reached through a unix socket on this host, so "
                    + "it cannot mount a file of this host");
        }
        try {
            return AgentBinaries.packaged().map(binary -> new AgentBinary(Optional.of(binary), ""))
                    .orElseGet(() -> none(AgentBinaries.missingReason()));
        } catch (UncheckedIOException unusable) {
            return none(ErrorText.bounded(unusable.getMessage()));
        }
    }

    private static AgentBinary none(String why) {
        return new AgentBinary(Optional.empty(), why);
    }

    /** For diagnostics; {@code refused} is why the engine refused the mount, null while it has not. */
    String describe(String refused) {
        if (path.isEmpty()) {
            return "none, commands and files go through the engine: " + absence;
        }
        if (refused != null) {
            return "none in new containers, commands and files go through the engine: it refused to mount "
                    + path.get() + " (" + refused + ")";
        }
        return path.get() + ", mounted read-only at " + ContainerAgent.GUEST_PATH + " in every container this "
                + "backend creates; commands and files go through it";
    }
}
