package org.sandbox4j.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.docker.DockerBackend;
import org.sandbox4j.docker.DockerLimits;
import org.sandbox4j.docker.SandboxEngineUnreachable;
import org.sandbox4j.local.BubblewrapBackend;
import org.sandbox4j.local.LocalLimits;
import org.sandbox4j.local.ProcessBackend;
import org.sandbox4j.microvm.GuestImage;
import org.sandbox4j.microvm.MicroVmBackend;
import org.sandbox4j.sbx.SbxBackend;
import org.sandbox4j.sbx.SbxConfig;

/** Every backend the command knows, by the name {@code --backend} takes. */
enum KnownBackend {

    BUBBLEWRAP(BubblewrapBackend.DEFAULT_NAME, Isolation.CONTAINER, "bwrap",
            "install bubblewrap: apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora), "
                    + "pacman -S bubblewrap (Arch); ./sandbox4j installs it itself when it runs as root with apt-get"),
    PROCESS(ProcessBackend.DEFAULT_NAME, Isolation.OS_PROCESS, "setsid",
            "install util-linux (setsid): apt-get install util-linux"),
    SBX(SbxConfig.DEFAULT_NAME, Isolation.MICROVM, SbxConfig.DEFAULT_SBX,
            "install Docker Sandboxes (sbx): macOS brew install docker/tap/sbx, Windows winget install -h Docker.sbx, "
                    + "Ubuntu the docker-sbx apt package; then sbx login. It boots a microVM per sandbox, so it needs "
                    + "hardware virtualisation (/dev/kvm on Linux)"),
    MICROVM(MicroVmBackend.DEFAULT_NAME, Isolation.MICROVM, "qemu-system-x86_64",
            "install QEMU: apt-get install --no-install-recommends qemu-system-x86 (Debian, Ubuntu), dnf install "
                    + "qemu-system-x86-core (Fedora); ./sandbox4j installs it itself when it runs as root with "
                    + "apt-get"),
    /**
     * Docker Engine or Podman: no host program, and no rung of its own until built, because the
     * rung follows the runtime the engine confirms (runc: container, runsc: hardened_container).
     */
    DOCKER(DockerBackend.DEFAULT_NAME, null, null, null);

    /**
     * The backend {@code run} and {@code exec} use unless told otherwise: a microVM, which meets the
     * default floor, where QEMU and a guest are on this host; else bubblewrap, which the default floor
     * refuses with the fix.
     */
    static KnownBackend preferred(Map<String, String> environment) {
        return HostCommands.find(MICROVM.program, environment).isPresent() && GuestImage.installed().isPresent()
                ? MICROVM : BUBBLEWRAP;
    }

    private static final long MIB = 1L << 20;

    /** Where a Linux host exposes hardware virtualisation. */
    static final Path KVM = Path.of("/dev/kvm");

    private final String wire;
    private final Isolation isolation;
    private final String program;
    private final String install;

    KnownBackend(String wire, Isolation isolation, String program, String install) {
        this.wire = wire;
        this.isolation = isolation;
        this.program = program;
        this.install = install;
    }

    String wire() {
        return wire;
    }

    /**
     * The rung the backend declares whatever the host; empty when it depends on what the backend
     * finds (docker), so only the built backend's declarations say.
     */
    Optional<Isolation> isolation() {
        return Optional.ofNullable(isolation);
    }

    /** The host program it cannot work without, if any. */
    Optional<String> program() {
        return Optional.ofNullable(program);
    }

    /** How to get that program. */
    String install() {
        return install;
    }

    static KnownBackend parse(String value) {
        String wanted = value.strip().toLowerCase(Locale.ROOT);
        return Arrays.stream(values()).filter(backend -> backend.wire.equals(wanted)).findFirst()
                .orElseThrow(() -> {
                    List<String> near = Suggestions.among(wanted, names());
                    return CliFailure.usage("unknown backend " + GuestText.quote(value) + "; "
                            + (near.isEmpty() ? "" : "did you mean " + String.join(" or ", near) + "? ")
                            + "choose one of " + names());
                });
    }

    static List<String> names() {
        return Arrays.stream(values()).map(KnownBackend::wire).toList();
    }

    /**
     * Builds the backend, which checks that it can work here.
     *
     * @param stateDir where the local backends keep their sandboxes (sbx its workspaces, docker its
     *                 egress sockets); empty means each backend's default
     * @param docker   the docker backend's engine, image and runtime
     * @throws CliFailure {@link ExitCodes#UNAVAILABLE} naming what is missing and how to get it, or
     *                    {@link ExitCodes#USAGE} when docker has no image
     */
    SandboxBackend open(Optional<Path> stateDir, Map<String, String> environment, DockerSettings docker) {
        return open(stateDir, environment, docker, GuestLimits.DEFAULTS);
    }

    /**
     * As {@link #open(Optional, Map, DockerSettings)}, each sandbox bounded by {@code limits} where
     * they ask (else the backend's defaults).
     *
     * @throws CliFailure also a usage failure when a limit is out of the backend's range, or sbx is
     *                    given limits (its microVMs take theirs from sbx itself)
     */
    SandboxBackend open(Optional<Path> stateDir, Map<String, String> environment, DockerSettings docker,
            GuestLimits limits) {
        if (this == SBX && limits.asked()) {
            throw CliFailure.usage("backend 'sbx' sets its own memory and process limits (sbx create --memory); drop "
                    + GuestLimits.MEMORY_FLAG + " and " + GuestLimits.PROCESSES_FLAG);
        }
        if (this == DOCKER) {
            return openDocker(stateDir, docker, limits);
        }
        Optional<Path> binary = HostCommands.find(program, environment);
        if (binary.isEmpty()) {
            throw CliFailure.unavailable("backend '" + wire + "' is unavailable: '" + program + "' is not on PATH; "
                    + install);
        }
        try {
            return switch (this) {
                case BUBBLEWRAP -> {
                    BubblewrapBackend.Builder builder = BubblewrapBackend.builder().limits(localLimits(limits));
                    stateDir.ifPresent(builder::stateRoot);
                    yield builder.build();
                }
                case PROCESS -> {
                    ProcessBackend.Builder builder = ProcessBackend.builder().limits(localLimits(limits));
                    stateDir.ifPresent(builder::stateRoot);
                    yield builder.build();
                }
                case MICROVM -> {
                    MicroVmBackend.Builder builder = MicroVmBackend.builder().qemu(binary.get());
                    limits.memoryBytes().ifPresent(bytes ->
                            inRange(GuestLimits.MEMORY_FLAG, () -> builder.memoryMib(mebibytes(bytes))));
                    limits.processes().ifPresent(count ->
                            inRange(GuestLimits.PROCESSES_FLAG, () -> builder.processes(count)));
                    stateDir.ifPresent(dir -> builder.stateRoot(dir.resolve("microvm")));
                    yield builder.build();
                }
                case SBX -> {
                    SbxConfig.Builder builder = SbxConfig.builder().sbxPath(binary.get().toString());
                    stateDir.ifPresent(dir -> builder.workspaceRoot(dir.resolve("sbx-workspaces")));
                    yield new SbxBackend(builder.build());
                }
                case DOCKER -> throw new IllegalStateException("docker is opened by openDocker");
            };
        } catch (SandboxException | IllegalArgumentException e) {
            throw CliFailure.unavailable("backend '" + wire + "' is unavailable: " + Failures.forUser(e.getMessage()));
        }
    }

    /**
     * The memory limit a sandbox of this backend gets with {@code limits}; empty where the backend
     * alone knows (sbx).
     */
    Optional<Long> memoryBytes(GuestLimits limits) {
        if (limits.memoryBytes().isPresent()) {
            return limits.memoryBytes();
        }
        return switch (this) {
            case BUBBLEWRAP, PROCESS -> Optional.of(LocalLimits.DEFAULT_MEMORY_BYTES);
            case DOCKER -> Optional.of(DockerLimits.DEFAULT.memoryBytes());
            case MICROVM -> Optional.of(MicroVmBackend.DEFAULT_MEMORY_MIB * MIB);
            case SBX -> Optional.empty();
        };
    }

    private static LocalLimits localLimits(GuestLimits limits) {
        LocalLimits local = LocalLimits.DEFAULT;
        if (limits.memoryBytes().isPresent()) {
            LocalLimits base = local;
            local = inRange(GuestLimits.MEMORY_FLAG, () -> base.withMemoryBytes(limits.memoryBytes().get()));
        }
        if (limits.processes().isPresent()) {
            LocalLimits base = local;
            local = inRange(GuestLimits.PROCESSES_FLAG, () -> base.withMaxProcesses(limits.processes().get()));
        }
        return local;
    }

    /** A backend's limit setter, whose range refusal becomes a usage failure naming the flag. */
    private static <T> T inRange(String flag, Supplier<T> setting) {
        try {
            return setting.get();
        } catch (IllegalArgumentException outOfRange) {
            throw CliFailure.usage(flag + " is out of range for this backend: " + outOfRange.getMessage());
        }
    }

    /** Whole MiB, as QEMU takes guest memory (the builder then refuses what is out of its range). */
    private static int mebibytes(long bytes) {
        long mib = bytes / MIB;
        if (mib > Integer.MAX_VALUE) {
            throw CliFailure.usage(GuestLimits.MEMORY_FLAG + " " + Sizes.describe(bytes) + " is more than a guest can "
                    + "have");
        }
        return (int) mib;
    }

    private static SandboxBackend openDocker(Optional<Path> stateDir, DockerSettings docker, GuestLimits limits) {
        DockerLimits containerLimits = DockerLimits.DEFAULT;
        if (limits.memoryBytes().isPresent()) {
            DockerLimits base = containerLimits;
            containerLimits = inRange(GuestLimits.MEMORY_FLAG, () -> base.withMemoryBytes(limits.memoryBytes().get()));
        }
        if (limits.processes().isPresent()) {
            DockerLimits base = containerLimits;
            containerLimits = inRange(GuestLimits.PROCESSES_FLAG, () -> base.withProcesses(limits.processes().get()));
        }
        try {
            return docker.build(stateDir, DockerBackend.DEFAULT_COMMAND_TIMEOUT, containerLimits);
        } catch (SandboxEngineUnreachable unreachable) {
            throw CliFailure.unavailable(unreachableSentence(docker, unreachable));
        } catch (SandboxException | IllegalArgumentException e) {
            // A missing runtime or image: the backend's own sentence names the runtimes the engine has, or how
            // to get the image there.
            throw CliFailure.unavailable("backend 'docker' is unavailable: " + Failures.forUser(e.getMessage()));
        }
    }

    /** Lets go of a backend {@link #open} built, stopping what it started (egress proxies). */
    static void release(SandboxBackend backend) {
        if (backend instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception e) {
                // Quiet: at exit nothing is left to tell the user, and listing starts no proxy.
            }
        }
    }

    /**
     * An engine that does not answer, said for a command-line user (the flag and variable, not the
     * builder), with the transport's innermost reason.
     */
    static String unreachableSentence(DockerSettings docker, SandboxEngineUnreachable unreachable) {
        Throwable cause = unreachable;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        return "backend 'docker' is unavailable: no container engine answers at " + docker.host() + " ("
                + ErrorDetail.of(cause) + "); " + docker.engineFix();
    }

    /** What the backend needs besides its program, and how to get it. */
    String hostFeatureFix() {
        return this == MICROVM ? "./sandbox4j builds it on first use (as root with apt-get), or build it with "
                + "sandbox4j-microvm/src/main/guest/build-guest.sh DIR ROOT_TAR and set "
                + GuestImage.DIRECTORY_VARIABLE : "sbx needs hardware virtualisation: run on bare metal or in a VM with nested virtualisation";
    }

    /**
     * Whether this host lacks what the backend needs besides its program (microvm: a guest; sbx:
     * hardware virtualisation).
     */
    Optional<String> missingHostFeature() {
        if (this == MICROVM && GuestImage.installed().isEmpty()) {
            return Optional.of("the microVM guest (kernel, initramfs, root disk) in " + GuestImage.defaultDirectory()
                    + " or " + GuestImage.DIRECTORY_VARIABLE);
        }
        if (this == SBX && System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux")
                && !Files.exists(KVM)) {
            return Optional.of(KVM + " (hardware virtualisation): run on bare metal or in a VM with nested "
                    + "virtualisation");
        }
        return Optional.empty();
    }
}
