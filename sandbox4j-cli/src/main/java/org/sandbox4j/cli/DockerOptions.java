package org.sandbox4j.cli;

import picocli.CommandLine.Option;

/** {@code --docker-host}, {@code --image}, {@code --runtime}: where the docker backend runs its sandboxes. */
final class DockerOptions {

    @Option(names = "--docker-host", paramLabel = "URI",
            description = "docker backend: the engine, unix:///path/docker.sock (Podman: its service's socket) or "
                    + "tcp://host:port (env DOCKER_HOST; default " + DockerSettings.DEFAULT_HOST + ").")
    String host;

    @Option(names = "--image", paramLabel = "IMAGE",
            description = "docker backend: the image its sandboxes run, already in the engine (env "
                    + "SANDBOX4J_DOCKER_IMAGE; required for docker). It needs sh, and python3 for python programs.")
    String image;

    @Option(names = "--runtime", paramLabel = "RUNTIME",
            description = "docker backend: the OCI runtime, runc (container, default) or runsc (gVisor, "
                    + "hardened_container), as the engine registers it (env SANDBOX4J_DOCKER_RUNTIME).")
    String runtime;

    /** The settings, each from its flag, else the environment, else the config file, else its default. */
    DockerSettings settings(Configuration configuration) {
        return new DockerSettings(
                configuration.value(Setting.DOCKER_HOST, host).orElse(DockerSettings.DEFAULT_HOST),
                configuration.value(Setting.IMAGE, image),
                configuration.value(Setting.RUNTIME, runtime).orElse(DockerSettings.DEFAULT_RUNTIME));
    }
}
