package org.sandbox4j.cli;

import org.sandbox4j.docker.DockerBackend;

/**
 * A setting the command reads from a flag, else the environment, else the config file. Its flag
 * is always its key after {@code --}.
 */
enum Setting {

    BACKEND("backend", "SANDBOX4J_BACKEND"),
    FLOOR("floor", "SANDBOX4J_FLOOR"),
    STATE_DIR("state-dir", "SANDBOX4J_STATE_DIR"),
    SCOPE("scope", "SANDBOX4J_SCOPE"),
    TIMEOUT("timeout", "SANDBOX4J_TIMEOUT"),
    /** Egress rules, separated by commas or spaces in the environment and the file. */
    ALLOW("allow", "SANDBOX4J_ALLOW"),
    /** What "no network" means when no host is allowed: closed or deny-all. */
    NO_NETWORK("no-network", "SANDBOX4J_NO_NETWORK"),
    /** The docker backend's engine endpoint; the variable is the one the docker CLI reads. */
    DOCKER_HOST("docker-host", DockerBackend.HOST_VARIABLE),
    /** The image the docker backend's sandboxes run. */
    IMAGE("image", "SANDBOX4J_DOCKER_IMAGE"),
    /** The OCI runtime of the docker backend's containers: runc, or runsc (gVisor). */
    RUNTIME("runtime", "SANDBOX4J_DOCKER_RUNTIME");

    private static final String FLAG_PREFIX = "--";

    private final String key;
    private final String variable;

    Setting(String key, String variable) {
        this.key = key;
        this.variable = variable;
    }

    /** The key in the config file. */
    String key() {
        return key;
    }

    /** The environment variable. */
    String variable() {
        return variable;
    }

    /** The command-line flag: {@code --} and the key. */
    String flag() {
        return FLAG_PREFIX + key;
    }
}
