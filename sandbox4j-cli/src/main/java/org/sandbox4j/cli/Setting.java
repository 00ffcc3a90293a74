package org.sandbox4j.cli;

import org.sandbox4j.docker.DockerBackend;

/** A setting the command reads from a flag, else the environment, else the config file. */
enum Setting {

    BACKEND("backend", "SANDBOX4J_BACKEND", "--backend"),
    FLOOR("floor", "SANDBOX4J_FLOOR", "--floor"),
    STATE_DIR("state-dir", "SANDBOX4J_STATE_DIR", "--state-dir"),
    SCOPE("scope", "SANDBOX4J_SCOPE", "--scope"),
    TIMEOUT("timeout", "SANDBOX4J_TIMEOUT", "--timeout"),
    /** Egress rules, separated by commas or spaces in the environment and the file. */
    ALLOW("allow", "SANDBOX4J_ALLOW", "--allow"),
    /** What "no network" means when no host is allowed: closed or deny-all. */
    NO_NETWORK("no-network", "SANDBOX4J_NO_NETWORK", "--no-network"),
    /** The docker backend's engine endpoint; the variable is the one the docker CLI reads. */
    DOCKER_HOST("docker-host", DockerBackend.HOST_VARIABLE, "--docker-host"),
    /** The image the docker backend's sandboxes run. */
    IMAGE("image", "SANDBOX4J_DOCKER_IMAGE", "--image"),
    /** The OCI runtime of the docker backend's containers: runc, or runsc (gVisor). */
    RUNTIME("runtime", "SANDBOX4J_DOCKER_RUNTIME", "--runtime");

    private final String key;
    private final String variable;
    private final String flag;

    Setting(String key, String variable, String flag) {
        this.key = key;
        this.variable = variable;
        this.flag = flag;
    }

    /** The key in the config file. */
    String key() {
        return key;
    }

    /** The environment variable. */
    String variable() {
        return variable;
    }

    String flag() {
        return flag;
    }
}
