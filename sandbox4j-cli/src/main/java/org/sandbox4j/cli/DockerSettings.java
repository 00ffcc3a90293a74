package org.sandbox4j.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

import org.sandbox4j.docker.DockerBackend;
import org.sandbox4j.docker.DockerLimits;
import org.sandbox4j.core.SandboxImageNotUsable;

/**
 * What the docker backend is built from: the engine, the image and the runtime. Its rung is not
 * here: the backend declares it once the engine has confirmed the runtime.
 *
 * @param host    the engine endpoint
 * @param image   the image sandboxes run; empty when nothing configured one
 * @param runtime the OCI runtime, as the engine registers it
 */
record DockerSettings(String host, Optional<String> image, String runtime) {

    static final String DEFAULT_HOST = DockerBackend.DEFAULT_HOST;
    static final String DEFAULT_RUNTIME = DockerBackend.DEFAULT_RUNTIME;
    /** Within this an engine on this host answers, or it is not there: doctor stays quick. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);
    /** Where the backend's egress proxy sockets live under the state directory. */
    static final String EGRESS_SUBDIRECTORY = "docker";

    /** No image configured: what to do, for run's usage error and doctor's fix alike. */
    static final String IMAGE_FIX = "give the docker backend an image already in the engine: --image IMAGE (or "
            + Setting.IMAGE.variable() + "=IMAGE, or " + Setting.IMAGE.key() + "=IMAGE in the config file). Nothing "
            + "is pulled: build or load one first (docker build -t IMAGE DIR, docker load -i IMAGE.tar, or docker "
            + "import ROOTFS.tar IMAGE); it needs sh, and python3 to run python programs";

    /** The fix when the engine does not answer. */
    String engineFix() {
        return "start a container engine at " + host + " (dockerd, or podman system service), or point --docker-host "
                + "(or " + Setting.DOCKER_HOST.variable() + ", or " + Setting.DOCKER_HOST.key() + "= in the config "
                + "file) at a running one";
    }

    /**
     * Connects, and lets the backend check the runtime and the image.
     *
     * @param stateDir    where the egress proxies' sockets go; empty means the backend's default
     * @param callTimeout bound on each control call to the engine
     * @throws CliFailure                a usage failure when no image is configured or the host is not a URI
     * @throws org.sandbox4j.docker.SandboxEngineUnreachable the engine does not answer
     * @throws org.sandbox4j.docker.SandboxRuntimeMissing    the engine lacks the runtime
     * @throws org.sandbox4j.core.SandboxImageNotUsable      the image is not in the engine
     */
    DockerBackend build(Optional<Path> stateDir, Duration callTimeout) {
        return build(stateDir, callTimeout, DockerLimits.DEFAULT);
    }

    /** As {@link #build(Optional, Duration)}, every container bounded by {@code limits}. */
    DockerBackend build(Optional<Path> stateDir, Duration callTimeout, DockerLimits limits) {
        String reference = image.orElseThrow(() -> CliFailure.usage("backend 'docker' needs an image: " + IMAGE_FIX));
        DockerBackend.Builder builder = DockerBackend.builder();
        try {
            builder.host(host).image(reference).runtime(runtime);
        } catch (IllegalArgumentException wrong) {
            throw CliFailure.usage(wrong.getMessage());
        }
        builder.connectTimeout(CONNECT_TIMEOUT).commandTimeout(callTimeout).limits(limits);
        stateDir.ifPresent(dir -> builder.egressRoot(dir.resolve(EGRESS_SUBDIRECTORY)));
        return builder.build();
    }
}
