package org.sandbox4j.cli;

import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.security.SecureRandom;

import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.FileListing;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxBackendNotPermitted;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxRouter;

/**
 * One invocation of {@code run} or {@code exec}: the backend, a router with the floor, and the
 * conversation key. A thread the user did not name is this invocation's alone, and its sandbox is
 * disposed of when the invocation ends; a named thread keeps its sandbox warm for the next one.
 *
 * @param scope     the scope every key of this invocation carries
 * @param ownThread whether {@code thread} was made for this invocation (then its sandbox goes with it)
 * @param noNetwork what no network means when {@code allow} is empty: closed, or deny-all
 * @param memoryBytes the memory limit each sandbox gets, where the command knows it (for the exit 137 message)
 * @param maxOutputBytes the output cap {@code --max-output} asked for; empty means the command's default
 * @param interruption disposes of this invocation's own sandbox when a signal ends the JVM mid-command
 */
record Session(SandboxBackend backend, SandboxRouter router, String scope, String thread, boolean ownThread,
        Console console, Duration timeout, List<String> allow, Egress noNetwork, Optional<Long> memoryBytes,
        Optional<Long> maxOutputBytes, Interruption interruption) implements AutoCloseable {

    /** The agent directory every key of the command carries: run and exec share a thread's sandbox. */
    static final String AGENT = "sandbox4j-cli";
    /** Random bytes in a per-invocation thread id. */
    private static final int THREAD_RANDOM_BYTES = 8;
    private static final SecureRandom RANDOM = new SecureRandom();

    /**
     * Resolves the settings, builds the backend and the router.
     *
     * @throws CliFailure usage (2), backend unavailable (4), or below the floor (3) with the fix
     */
    static Session open(Sandbox4jCommand root, SandboxOptions options) {
        Configuration configuration = root.configuration();
        Console console = root.console();
        KnownBackend known = options.backend(configuration);
        Isolation floor = options.floor(configuration);
        List<String> allow = options.allow(configuration);
        Egress noNetwork = options.noNetwork(configuration);
        Duration timeout = options.timeout(configuration);
        String scope = options.conversation.scope(configuration);
        boolean ownThread = options.conversation.thread == null;
        String thread = ownThread ? "cli-" + HexFormat.of().formatHex(randomBytes()) : options.conversation.thread;
        if (thread.isBlank()) {
            throw CliFailure.usage("--thread cannot be blank");
        }
        if (known == KnownBackend.PROCESS) {
            // Before the floor: lowering the floor would not make it serve.
            throw CliFailure.refused(Refusals.processSharesTheNetwork());
        }
        Optional<Isolation> fixed = known.isolation();
        if (fixed.isPresent() && !fixed.get().meetsFloor(floor)) {
            // Refuse before building the backend: the answer does not depend on this host.
            throw CliFailure.refused(Refusals.belowFloor(known, fixed.get(), floor, configuration, options.floor));
        }
        GuestLimits limits = options.limits();
        Optional<Long> maxOutputBytes = options.maxOutputBytes();
        SandboxBackend backend = known.open(root.stateDirectory(), configuration.environment(),
                options.docker.settings(configuration), limits);
        // docker's rung is known only now, from what its engine confirmed.
        Isolation declared = backend.declarations().isolation();
        console.detail("backend " + known.wire() + " (" + declared.wire() + "), floor " + floor.wire()
                + ", scope '" + scope + "', thread '" + thread + "'" + (ownThread ? " (this invocation's own)" : ""));
        SandboxRouter router;
        try {
            router = SandboxRouter.builder().backend(backend).minIsolation(floor).build();
        } catch (SandboxBackendNotPermitted refused) {
            KnownBackend.release(backend);
            throw CliFailure.refused(Refusals.belowFloor(known, declared, floor, configuration, options.floor));
        }
        Interruption interruption = ownThread
                ? Interruption.register(console, () -> router.disposeScope(scope, thread)) : Interruption.none();
        return new Session(backend, router, scope, thread, ownThread, console, timeout, allow, noNetwork,
                known.memoryBytes(limits), maxOutputBytes, interruption);
    }

    private static byte[] randomBytes() {
        byte[] bytes = new byte[THREAD_RANDOM_BYTES];
        RANDOM.nextBytes(bytes);
        return bytes;
    }

    /** Scope and thread for the tool glue, fixed for this invocation; the CLI shares no host files by listing. */
    CallerContext context() {
        return CallerContext.of(() -> scope, () -> thread, FileListing.ALL);
    }

    SandboxKey key() {
        return new SandboxKey(scope, thread, AGENT);
    }

    /** Disposes of this invocation's own sandbox (a named thread's stays warm), then lets the backend go. */
    @Override
    public void close() {
        boolean ours = interruption.close(() -> {
            if (ownThread) {
                int disposed = router.disposeScope(scope, thread);
                console.detail("disposed of " + disposed + " sandbox(es) of this invocation's thread");
            }
        });
        if (ours) {
            KnownBackend.release(backend);
        }
    }
}
