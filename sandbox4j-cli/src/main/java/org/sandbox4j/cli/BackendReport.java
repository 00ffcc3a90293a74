package org.sandbox4j.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

import org.sandbox4j.codeact.Language;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.spi.Json;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.docker.DockerBackend;
import org.sandbox4j.docker.DockerLimits;
import org.sandbox4j.docker.SandboxEngineUnreachable;
import org.sandbox4j.core.SandboxImageNotUsable;
import org.sandbox4j.docker.SandboxRuntimeMissing;
import org.sandbox4j.local.BubblewrapBackend;
import org.sandbox4j.local.ProcessBackend;
import org.sandbox4j.microvm.MicroVmBackend;

/**
 * What {@code doctor} says of one backend: whether it can run here, its rung and the floor, how it
 * limits sandboxes, and what is missing with how to get it.
 *
 * @param backend        which backend
 * @param rung           the rung it declares; empty when only a built backend says and it could not be built
 * @param usable         whether it was built here (its own host checks passed)
 * @param meetsFloor     whether the configured floor admits it; empty with the rung
 * @param limitMechanism the mechanism's name, where the backend reports one
 * @param limits         how it bounds memory, processes and CPU
 * @param missing        what this host lacks for it
 * @param fixes          how to get each missing thing
 * @param languages      execute_code languages whose interpreter the guest finds (local backends)
 * @param details        the backend's own diagnostics
 */
record BackendReport(KnownBackend backend, Optional<Isolation> rung, boolean usable, Optional<Boolean> meetsFloor,
        Optional<String> limitMechanism,
        Optional<String> limits, List<String> missing, List<String> fixes, List<String> languages,
        List<String> details) {

    /** Where a local guest's programs come from: the host's /usr, bound read-only. */
    private static final Map<String, String> GUEST_PATH = Map.of("PATH", "/usr/local/bin:/usr/bin");

    /** Bound on each call doctor makes to a container engine: one that hangs must not hold the report. */
    static final Duration ENGINE_CALL_TIMEOUT = Duration.ofSeconds(10);
    private static final long MIB = 1024L * 1024;

    /** Checks one backend by building it, as {@code run} would. */
    static BackendReport check(KnownBackend known, Isolation floor, Sandbox4jCommand root, DockerSettings docker) {
        if (known == KnownBackend.DOCKER) {
            return checkDocker(floor, root, docker);
        }
        Isolation rung = known.isolation().orElseThrow();
        Optional<Isolation> declared = Optional.of(rung);
        Optional<Boolean> meetsFloor = Optional.of(rung.meetsFloor(floor));
        List<String> missing = new ArrayList<>();
        List<String> fixes = new ArrayList<>();
        Map<String, String> environment = root.configuration().environment();
        String program = known.program().orElseThrow();
        if (HostCommands.find(program, environment).isEmpty()) {
            missing.add(program);
            fixes.add(known.install());
        }
        known.missingHostFeature().ifPresent(feature -> {
            missing.add(feature);
            fixes.add(known.hostFeatureFix());
        });
        if (!missing.isEmpty()) {
            return new BackendReport(known, declared, false, meetsFloor, Optional.empty(), Optional.empty(), missing, fixes,
                    List.of(), List.of());
        }
        if (known == KnownBackend.SBX) {
            return new BackendReport(known, declared, true, meetsFloor, Optional.empty(),
                    Optional.of("the microVM's own (sbx create --cpus/--memory)"), missing, fixes, List.of(),
                    List.of("sbx found; its login and host settings are checked at the first acquire"));
        }
        SandboxBackend backend;
        try {
            backend = known.open(root.stateDirectory(), environment, docker);
        } catch (CliFailure unavailable) {
            missing.add("a working " + known.wire() + " backend");
            fixes.add(unavailable.getMessage());
            return new BackendReport(known, declared, false, meetsFloor, Optional.empty(), Optional.empty(), missing, fixes,
                    List.of(), List.of());
        }
        if (backend instanceof MicroVmBackend microvm) {
            try (microvm) {
                return new BackendReport(known, declared, true, meetsFloor, Optional.of(microvm.accelerator()
                        .accelerator().name()), Optional.of(microvm.limits()), missing, fixes, List.of(),
                        microvm.diagnostics());
            }
        }
        try {
            List<String> languages = new ArrayList<>();
            for (Language language : Language.values()) {
                if (HostCommands.find(language.requiredCommand(), GUEST_PATH).isPresent()) {
                    languages.add(language.wire());
                } else {
                    missing.add(language.requiredCommand() + " (for " + language.wire() + " programs)");
                    fixes.add("install " + language.requiredCommand() + " under /usr, where the guest finds it");
                }
            }
            if (backend instanceof BubblewrapBackend bubblewrap) {
                return new BackendReport(known, declared, true, meetsFloor, Optional.of(bubblewrap.limitMechanism().name()),
                        Optional.of(bubblewrap.limitMechanism().description()), missing, fixes, languages,
                        bubblewrap.diagnostics());
            }
            ProcessBackend process = (ProcessBackend) backend;
            // It builds, but every command keeps its program off the network and it cannot: not usable.
            missing.add("a way to keep the program off the network (it shares this host's)");
            fixes.add(Refusals.PROCESS_SHARES_THE_NETWORK);
            return new BackendReport(known, declared, false, meetsFloor, Optional.of(process.limitMechanism().name()),
                    Optional.of(process.limitMechanism().description()), missing, fixes, languages,
                    process.diagnostics());
        } finally {
            if (backend instanceof AutoCloseable closeable) {
                try {
                    closeable.close();
                } catch (Exception ignored) {
                    // Only proxies to stop, and doctor started none.
                }
            }
        }
    }

    /**
     * Docker is usable when its engine answers, has the runtime and holds the image; its rung is
     * what the built backend declares for that runtime.
     */
    private static BackendReport checkDocker(Isolation floor, Sandbox4jCommand root, DockerSettings docker) {
        KnownBackend known = KnownBackend.DOCKER;
        List<String> missing = new ArrayList<>();
        List<String> fixes = new ArrayList<>();
        List<String> configured = List.of("engine: " + docker.host(), "runtime: " + docker.runtime(),
                "image: " + docker.image().orElse("none configured"));
        if (docker.image().isEmpty()) {
            missing.add("an image (--image)");
            fixes.add(DockerSettings.IMAGE_FIX);
            return new BackendReport(known, Optional.empty(), false, Optional.empty(), Optional.empty(),
                    Optional.empty(), missing, fixes, List.of(), configured);
        }
        DockerBackend backend;
        try {
            backend = docker.build(root.stateDirectory(), ENGINE_CALL_TIMEOUT);
        } catch (CliFailure wrong) {
            missing.add("a valid configuration");
            fixes.add(wrong.getMessage());
            return new BackendReport(known, Optional.empty(), false, Optional.empty(), Optional.empty(),
                    Optional.empty(), missing, fixes, List.of(), configured);
        } catch (SandboxEngineUnreachable unreachable) {
            missing.add("a container engine answering at " + docker.host());
            fixes.add(KnownBackend.unreachableSentence(docker, unreachable));
            return new BackendReport(known, Optional.empty(), false, Optional.empty(), Optional.empty(),
                    Optional.empty(), missing, fixes, List.of(), configured);
        } catch (SandboxRuntimeMissing absent) {
            missing.add("the runtime '" + docker.runtime() + "' in the engine");
            fixes.add(Failures.forUser(absent.getMessage()));
            return new BackendReport(known, Optional.empty(), false, Optional.empty(), Optional.empty(),
                    Optional.empty(), missing, fixes, List.of(), configured);
        } catch (SandboxImageNotUsable absent) {
            missing.add("the image '" + docker.image().get() + "' in the engine");
            fixes.add(Failures.forUser(absent.getMessage()));
            return new BackendReport(known, Optional.empty(), false, Optional.empty(), Optional.empty(),
                    Optional.empty(), missing, fixes, List.of(), configured);
        } catch (SandboxException | IllegalArgumentException failing) {
            missing.add("a working docker backend");
            fixes.add(Failures.forUser(failing.getMessage()));
            return new BackendReport(known, Optional.empty(), false, Optional.empty(), Optional.empty(),
                    Optional.empty(), missing, fixes, List.of(), configured);
        }
        try (backend) {
            Isolation rung = backend.declarations().isolation();
            return new BackendReport(known, Optional.of(rung), true, Optional.of(rung.meetsFloor(floor)),
                    Optional.empty(), Optional.of(limits(DockerLimits.DEFAULT)),
                    missing, fixes, List.of(), backend.diagnostics());
        }
    }

    /** The limits every container of the command's docker backend gets, as the engine enforces them. */
    static String limits(DockerLimits limits) {
        return "the engine's, per container: memory " + limits.memoryBytes() / MIB + " MiB (no swap), "
                + limits.cpus() + " CPU, " + limits.processes() + " processes, work area "
                + limits.workAreaBytes() / MIB + " MiB, /tmp " + limits.tmpBytes() / MIB + " MiB";
    }

    String json() {
        return "{\"name\":" + Json.quote(backend.wire())
                + ",\"rung\":" + rung.map(Isolation::wire).map(Json::quote).orElse("null")
                + ",\"usable\":" + usable
                + ",\"meetsFloor\":" + meetsFloor.map(String::valueOf).orElse("null")
                + ",\"limitMechanism\":" + limitMechanism.map(Json::quote).orElse("null")
                + ",\"limits\":" + limits.map(Json::quote).orElse("null")
                + ",\"missing\":" + array(missing)
                + ",\"fixes\":" + array(fixes)
                + ",\"languages\":" + array(languages)
                + ",\"details\":" + array(details) + "}";
    }

    static String array(List<String> values) {
        return values.stream().map(Json::quote).collect(Collectors.joining(",", "[", "]"));
    }
}
