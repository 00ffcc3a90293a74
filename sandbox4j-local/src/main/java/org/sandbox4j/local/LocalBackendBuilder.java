package org.sandbox4j.local;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import org.sandbox4j.core.spi.BackendNames;

/**
 * The settings every local backend's builder has, written once: its name, where its sandboxes
 * live, their limits, where the cgroups are, and the owner's lease. Each backend's public
 * {@code Builder} extends it and adds its own.
 *
 * @param <B> the backend's own builder, returned by every setter so calls chain
 */
abstract class LocalBackendBuilder<B extends LocalBackendBuilder<B>> {

    String name;
    Path stateRoot = LocalStore.defaultStateRoot();
    LocalLimits limits = LocalLimits.DEFAULT;
    Path cgroupRoot = BubblewrapBackend.DEFAULT_CGROUP_ROOT;
    Duration lease = BubblewrapBackend.DEFAULT_LEASE;

    LocalBackendBuilder(String defaultName) {
        this.name = defaultName;
    }

    abstract B self();

    /** The name the router and messages use. Default: the backend's {@code DEFAULT_NAME}. */
    public B name(String value) {
        this.name = BackendNames.require(value);
        return self();
    }

    /**
     * Where sandboxes and their records live; processes sharing it share the sandboxes.
     * Default {@code $XDG_STATE_HOME/sandbox4j}, else {@code ~/.local/state/sandbox4j}.
     */
    public B stateRoot(Path value) {
        this.stateRoot = Objects.requireNonNull(value, "stateRoot");
        return self();
    }

    /** Memory, processes and CPU per sandbox, where the host lets them be applied. Default {@link LocalLimits#DEFAULT}. */
    public B limits(LocalLimits value) {
        this.limits = Objects.requireNonNull(value, "limits");
        return self();
    }

    /** Where the cgroup file systems are mounted. Default {@code /sys/fs/cgroup}. */
    public B cgroupRoot(Path value) {
        this.cgroupRoot = Objects.requireNonNull(value, "cgroupRoot");
        return self();
    }

    /** How long an owner vouches for its sandboxes before a reaper may take them. Default 10 minutes. */
    public B lease(Duration value) {
        this.lease = LocalStore.requirePositive(value, "the lease");
        return self();
    }
}
