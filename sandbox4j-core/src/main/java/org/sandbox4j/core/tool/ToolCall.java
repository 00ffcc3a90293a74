package org.sandbox4j.core.tool;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.ExecListener;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.FileStore;
import org.sandbox4j.core.NoSandboxBackend;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.SandboxThreadContextMissing;

/**
 * One call of a {@link SandboxTool}: the host configuration plus what this call acquired. Every
 * accessor either answers or throws a {@link ToolRefusal} carrying the sentence the model should
 * see. Thread-safe; a new one per call, so concurrent calls never share a guest path.
 */
public final class ToolCall {

    /** Hex digits of the random call id: enough that concurrent calls never meet. */
    static final int CALL_ID_HEX_DIGITS = 12;

    static final String NOT_INSTALLED = "Error: the sandbox backend is not installed — degrading to T0";
    static final String NO_BACKEND = "Error: no sandbox backend is configured — degrading to T0";
    static final String UNAVAILABLE = "Error: sandbox unavailable — degrading to T0 (LLM self-check only)";

    /** The step {@link #acquire} logs a failure of. */
    private static final String ACQUIRE = "acquire";

    private final SandboxedTool tool;
    private final String callId = UUID.randomUUID().toString().replace("-", "").substring(0, CALL_ID_HEX_DIGITS);
    private final Map<SandboxKey, Sandbox> acquired = new LinkedHashMap<>();
    private final Optional<ExecListener> output;
    private boolean closed;

    ToolCall(SandboxedTool tool, Optional<ExecListener> output) {
        this.tool = tool;
        this.output = output;
    }

    /**
     * Who wants the program's output as it arrives ({@link SandboxTool#call(Map, ExecListener)}):
     * a body passes it to the exec that runs the caller's program ({@link ExecOptions#withListener}),
     * and to no other.
     */
    public Optional<ExecListener> output() {
        return output;
    }

    /** The tool's name, for sentences and log records. */
    public String toolName() {
        return tool.name();
    }

    /** The spec every acquire of this tool uses. */
    public SandboxSpec spec() {
        return tool.spec();
    }

    /** The tool's logger: provider detail goes here, never to the model. */
    public Logger logger() {
        return tool.logger();
    }

    /**
     * The conversation key, from the host's context only.
     *
     * @throws ToolRefusal outside a conversation thread
     */
    public SandboxKey key() {
        CallerContext context = tool.context();
        try {
            return context.key(tool.agentDir());
        } catch (SandboxThreadContextMissing missing) {
            tool.logger().log(Level.WARNING, () -> tool.name() + ": " + missing.getMessage());
            throw new ToolRefusal(FrameworkCalls.noConversation(tool.name()), missing);
        }
    }

    /**
     * The names of {@code store} this call may refer to. A failed listing is a refusal, never an
     * empty list: the listing is what pins model-named files.
     *
     * @throws ToolRefusal the listing failed
     */
    public List<String> listFiles(FileStore store) {
        try {
            return tool.context().listFiles(store);
        } catch (SandboxInterrupted cancelled) {
            throw cancelled;
        } catch (RuntimeException failure) {
            throw refusal("listing the file store", failure, "Error: could not list the file store");
        }
    }

    /**
     * The sandbox for {@code key}, recorded so its call directory is reclaimed when the call ends.
     *
     * @throws ToolRefusal       a fixed sentence: not installed, not configured, an
     *                           {@link IllegalArgumentException}'s own message (stack-authored,
     *                           such as an unknown image), or "unavailable" for anything else
     * @throws SandboxInterrupted cancellation propagates
     */
    public Sandbox acquire(SandboxKey key) {
        Objects.requireNonNull(key, "key");
        Sandbox sandbox;
        try {
            sandbox = tool.router().acquire(key, tool.spec());
        } catch (SandboxInterrupted cancelled) {
            throw cancelled;
        } catch (LinkageError missing) {
            throw refusal(ACQUIRE, missing, NOT_INSTALLED);
        } catch (NoSandboxBackend none) {
            throw refusal(ACQUIRE, none, NO_BACKEND);
        } catch (IllegalArgumentException stackAuthored) {
            throw refusal(ACQUIRE, stackAuthored, "Error: " + stackAuthored.getMessage());
        } catch (RuntimeException failure) {
            throw refusal(ACQUIRE, failure, UNAVAILABLE);
        }
        synchronized (this) {
            if (!closed) {
                acquired.put(key, sandbox);
            }
        }
        return sandbox;
    }

    /** This call's id: 12 random hex digits, stable within the call. */
    public String callId() {
        return callId;
    }

    /**
     * This call's own directory in {@code sandbox}: {@code <work dir>/<call id>}, under the work dir
     * as that sandbox holds it ({@link SandboxSpec#workDirIn}). Nothing is created; it is removed
     * when the call ends.
     *
     * @throws IllegalStateException after the call ended
     */
    public String callDirectory(Sandbox sandbox) {
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("call " + callId + " of " + tool.name() + " has ended");
            }
        }
        String workDir = tool.spec().workDirIn(sandbox);
        return (workDir.endsWith("/") ? workDir : workDir + "/") + callId;
    }

    /** Marks the call ended and hands back what it acquired, for reclaim. */
    synchronized Map<SandboxKey, Sandbox> close() {
        closed = true;
        return new LinkedHashMap<>(acquired);
    }

    /**
     * Logs, for the host alone, that {@code step} of this call failed: {@code "<tool>: <step>
     * failed: <detail>"}. The model is told a fixed sentence instead ({@link #refusal}).
     */
    public void logFailure(String step, Throwable failure) {
        // The tool name may hold '%'; the supplier form never formats it.
        tool.logger().log(Level.WARNING, () -> tool.name() + ": " + step + " failed: " + ErrorDetail.of(failure));
    }

    /**
     * {@link #logFailure}, and the refusal that tells the model {@code sentence} in place of the
     * detail; for the body to throw.
     */
    public ToolRefusal refusal(String step, Throwable failure, String sentence) {
        logFailure(step, failure);
        return new ToolRefusal(sentence, failure);
    }
}
