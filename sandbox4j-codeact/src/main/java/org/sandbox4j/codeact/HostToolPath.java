package org.sandbox4j.codeact;

import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;

import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.hosttools.HostToolRegistry;
import org.sandbox4j.core.hosttools.HostToolRun;
import org.sandbox4j.core.tool.ToolCall;
import org.sandbox4j.core.tool.ToolRefusal;

/**
 * Runs a program that may call host tools: the call directory splits into {@code work/} (the
 * program's working directory, where shared files and outputs live) and {@code host_tools/} (the
 * transport: program, shim, launcher, requests and responses), and {@link HostToolSupervisor}
 * dispatches each request through a fresh {@link HostToolRun} — one ledger per call, so the
 * dispatch cap and byte budget hold per program.
 */
final class HostToolPath {

    /** Where model-named files live in a host-tool run, beside the transport's own directory. */
    static final String WORK_DIRECTORY = GuestRunLayout.WORK_DIRECTORY;

    private final HostToolRegistry registry;
    private final CodeActConfig config;
    private final Map<Language, String> shims = new EnumMap<>(Language.class);

    HostToolPath(HostToolRegistry registry, CodeActConfig config) {
        this.registry = registry;
        this.config = config;
        // A call may wait on the host as long as the whole run may last, never less.
        Duration callTimeout = max(HostToolShim.DEFAULT_CALL_TIMEOUT, config.execTimeout());
        for (Language language : config.languages()) {
            switch (language) {
                case PYTHON -> shims.put(language, HostToolShim.python(registry.names(), callTimeout));
                case JAVASCRIPT -> shims.put(language, HostToolShim.javascript(registry.names(), callTimeout));
                default -> throw new IllegalArgumentException(language.wire() + " programs have no host-tool shim");
            }
        }
    }

    /** Bytes the shim adds to a call's inbound transfer. */
    long shimBytes(Language language) {
        return shims.get(language).getBytes(StandardCharsets.UTF_8).length;
    }

    ExecResult run(ToolCall call, Sandbox sandbox, String callDir, Language language, byte[] program) {
        GuestRunLayout layout = GuestRunLayout.of(callDir, language.programFileName(), shimFileName(language));
        HostToolRun run = new HostToolRun(registry, call.logger());
        try {
            return HostToolSupervisor.run(sandbox, run, layout, config.execTimeout(),
                    HostToolSupervisor.DEFAULT_POLL_INTERVAL, language.interpreter(), shims.get(language), program);
        } catch (SandboxProgramTimeout timeout) {
            call.logger().log(Level.INFO, () -> call.toolName() + ": " + timeout.getMessage());
            String output = timeout.outputSoFar();
            throw new ToolRefusal("Error: the program timed out after " + config.execTimeout().toSeconds()
                    + " s and was stopped." + (output.isEmpty() ? "" : "\nOutput so far:\n" + output), timeout);
        } catch (SandboxInterrupted cancelled) {
            throw cancelled;
        } catch (RuntimeException failure) {
            throw call.refusal("the host-tool run", failure, CodeActBody.COULD_NOT_RUN);
        }
    }

    private static String shimFileName(Language language) {
        return language == Language.JAVASCRIPT ? GuestRunLayout.JAVASCRIPT_SHIM : GuestRunLayout.PYTHON_SHIM;
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }
}
