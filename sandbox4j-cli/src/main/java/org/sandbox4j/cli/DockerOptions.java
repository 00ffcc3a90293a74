package org.sandbox4j.cli;

import picocli.CommandLine.Model.CommandSpec;

/** {@code --docker-host}, {@code --image}, {@code --runtime}: where the docker backend runs its sandboxes. */
final class DockerOptions {

    String host;
    String image;
    String runtime;

    /** Declares the options on {@code spec}, writing this object's fields. */
    void addTo(CommandSpec spec) {
        spec.addOption(CliSpec.option("--docker-host", "URI", String.class, () -> host, value -> host = value,
                "docker backend: the engine, unix:///path/docker.sock (Podman: its service's socket) or "
                        + "tcp://host:port (env DOCKER_HOST; default " + DockerSettings.DEFAULT_HOST + ").").build());
        spec.addOption(CliSpec.option("--image", "IMAGE", String.class, () -> image, value -> image = value,
                "docker backend: the image its sandboxes run, already in the engine (env SANDBOX4J_DOCKER_IMAGE; "
                        + "required for docker). It needs sh, and python3 for python programs.").build());
        spec.addOption(CliSpec.option("--runtime", "RUNTIME", String.class, () -> runtime, value -> runtime = value,
                "docker backend: the OCI runtime, runc (container, default) or runsc (gVisor, hardened_container), "
                        + "as the engine registers it (env SANDBOX4J_DOCKER_RUNTIME).").build());
    }

    /** The settings, each from its flag, else the environment, else the config file, else its default. */
    DockerSettings settings(Configuration configuration) {
        return new DockerSettings(
                configuration.value(Setting.DOCKER_HOST, host).orElse(DockerSettings.DEFAULT_HOST),
                configuration.value(Setting.IMAGE, image),
                configuration.value(Setting.RUNTIME, runtime).orElse(DockerSettings.DEFAULT_RUNTIME));
    }
}
