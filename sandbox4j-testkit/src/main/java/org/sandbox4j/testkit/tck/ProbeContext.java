package org.sandbox4j.testkit.tck;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * What a probe works with: the suite run's backend instance, its sandbox and key, the spec it was
 * acquired with, the working directory and its layout, and the guest side for planting and checking.
 *
 * @param target           the backend author's target
 * @param backend          the instance this suite run acquired from
 * @param declarations     what that instance declared
 * @param key              the suite run's own key (a fresh thread id per run)
 * @param spec             the spec the sandbox was acquired with
 * @param sandbox          the suite run's sandbox
 * @param workingDirectory the suite run's working directory (exists)
 * @param guest            plants and checks guest-side state
 */
public record ProbeContext(
        ConformanceTarget target,
        SandboxBackend backend,
        BackendDeclarations declarations,
        SandboxKey key,
        SandboxSpec spec,
        Sandbox sandbox,
        String workingDirectory,
        GuestSide guest) {

    public ConformancePaths paths() {
        return ConformancePaths.under(workingDirectory);
    }

    public Set<Capability> capabilities() {
        return declarations.capabilities();
    }

    public Duration execTimeout() {
        return target.execTimeout();
    }

    /** Runs an argv in the working directory with the target's timeout. */
    public ExecResult exec(String... argv) {
        return sandbox.exec(Command.argv(List.of(argv)), ExecOptions.in(workingDirectory, execTimeout()));
    }

    /** Runs a fixed shell template in the working directory; pass variable text as {@code $1}, {@code $2}... */
    public ExecResult shell(String script, String... arguments) {
        String[] argv = new String[arguments.length + 4];
        argv[0] = "sh";
        argv[1] = "-c";
        argv[2] = script;
        argv[3] = "probe";
        System.arraycopy(arguments, 0, argv, 4, arguments.length);
        return exec(argv);
    }
}
