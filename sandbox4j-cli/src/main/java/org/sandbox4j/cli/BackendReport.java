package org.sandbox4j.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

import org.sandbox4j.codeact.Language;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.Json;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.local.BubblewrapBackend;
import org.sandbox4j.local.ProcessBackend;

/**
 * What {@code doctor} says of one backend: whether it can run here, its rung and the floor, how it
 * limits sandboxes, and what is missing with how to get it.
 *
 * @param backend        which backend
 * @param usable         whether it was built here (its own host checks passed)
 * @param meetsFloor     whether the configured floor admits it
 * @param limitMechanism the mechanism's name, where the backend reports one
 * @param limits         how it bounds memory, processes and CPU
 * @param missing        what this host lacks for it
 * @param fixes          how to get each missing thing
 * @param languages      execute_code languages whose interpreter the guest finds (local backends)
 * @param details        the backend's own diagnostics
 */
record BackendReport(KnownBackend backend, boolean usable, boolean meetsFloor, Optional<String> limitMechanism,
        Optional<String> limits, List<String> missing, List<String> fixes, List<String> languages,
        List<String> details) {

    /** Where a local guest's programs come from: the host's /usr, bound read-only. */
    private static final Map<String, String> GUEST_PATH = Map.of("PATH", "/usr/local/bin:/usr/bin");

    /** Checks one backend by building it, as {@code run} would. */
    static BackendReport check(KnownBackend known, Isolation floor, Sandbox4jCommand root) {
        boolean meetsFloor = known.isolation().meetsFloor(floor);
        List<String> missing = new ArrayList<>();
        List<String> fixes = new ArrayList<>();
        Map<String, String> environment = root.configuration().environment();
        if (HostCommands.find(known.program(), environment).isEmpty()) {
            missing.add(known.program());
            fixes.add(known.install());
        }
        known.missingHostFeature().ifPresent(feature -> {
            missing.add(feature);
            fixes.add("sbx needs " + feature);
        });
        if (!missing.isEmpty()) {
            return new BackendReport(known, false, meetsFloor, Optional.empty(), Optional.empty(), missing, fixes,
                    List.of(), List.of());
        }
        if (known == KnownBackend.SBX) {
            return new BackendReport(known, true, meetsFloor, Optional.empty(),
                    Optional.of("the microVM's own (sbx create --cpus/--memory)"), missing, fixes, List.of(),
                    List.of("sbx found; its login and host settings are checked at the first acquire"));
        }
        SandboxBackend backend;
        try {
            backend = known.open(root.stateDirectory(), environment);
        } catch (CliFailure unavailable) {
            missing.add("a working " + known.wire() + " backend");
            fixes.add(unavailable.getMessage());
            return new BackendReport(known, false, meetsFloor, Optional.empty(), Optional.empty(), missing, fixes,
                    List.of(), List.of());
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
                return new BackendReport(known, true, meetsFloor, Optional.of(bubblewrap.limitMechanism().name()),
                        Optional.of(bubblewrap.limitMechanism().description()), missing, fixes, languages,
                        bubblewrap.diagnostics());
            }
            ProcessBackend process = (ProcessBackend) backend;
            return new BackendReport(known, true, meetsFloor, Optional.of(process.limitMechanism().name()),
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

    String json() {
        return "{\"name\":" + Json.quote(backend.wire())
                + ",\"rung\":" + Json.quote(backend.isolation().wire())
                + ",\"usable\":" + usable
                + ",\"meetsFloor\":" + meetsFloor
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
