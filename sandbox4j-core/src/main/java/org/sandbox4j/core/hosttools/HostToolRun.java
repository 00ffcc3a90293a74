package org.sandbox4j.core.hosttools;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.Identity;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.TransferLimits;

/**
 * The ledger of one run: every dispatch guest code makes during the run goes through
 * {@link #dispatch}, which counts it against the registry's caps and refuses, in a fixed order,
 * anything the run may not do. Every cap is checked, and a response slot reserved, before a tool
 * body runs: a tool's side effect cannot be undone, so it must never run for a response that would
 * then be refused. Thread-safe: concurrent dispatches never oversubscribe a cap.
 *
 * <p>Refusals are fixed sentences starting {@code Error:}; guest-sent text in them is quoted and
 * cut by {@link GuestText}. A tool's own failure detail goes to the log, never to the guest.
 */
public final class HostToolRun {

    /** The smallest JSON response ({@code 0}): a budget without room for it can deliver nothing. */
    private static final long SMALLEST_RESPONSE_BYTES = 1;

    private static final String FINISH = " — finish with the results already delivered";

    private final HostToolRegistry registry;
    private final Logger logger;

    private final Object lock = new Object();
    private long dispatched;
    private int delivered;
    private long deliveredBytes;

    /** A run logging to this class's {@link System#getLogger system logger}. */
    public HostToolRun(HostToolRegistry registry) {
        this(registry, System.getLogger(HostToolRun.class.getName()));
    }

    public HostToolRun(HostToolRegistry registry, Logger logger) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.logger = Objects.requireNonNull(logger, "logger");
    }

    /**
     * Dispatches one guest request. In order: the dispatch is counted and refused beyond the
     * dispatch cap (refused attempts spend the cap too); the name must be a string naming a
     * registered tool; an undeclared tool is refused when declarations are required; a tool acting
     * with the user's identity is refused; the arguments must be a JSON object; the response cap,
     * the byte budget and the per-response cap must each leave room for a response; a response slot
     * is reserved; the arguments must bind; the body runs; its value must be strict JSON; and the
     * bytes crossing back (JSON plus framing) must fit the per-response cap and what is left of the
     * byte budget. A slot not delivered is released.
     *
     * @param name         the tool name as the guest sent it
     * @param arguments    the keyword arguments as the guest sent them: a {@link Map} (a JSON object) or {@code null}
     * @param framingBytes bytes the transport adds around the JSON value, counted against the caps
     * @return the JSON value or a refusal sentence
     * @throws IllegalArgumentException when {@code framingBytes} is negative (a transport programming error)
     * @throws SandboxInterrupted       when the thread is interrupted before or while the body runs
     */
    public DispatchResult dispatch(Object name, Object arguments, long framingBytes) {
        if (framingBytes < 0) {
            throw new IllegalArgumentException("framingBytes cannot be negative: " + framingBytes);
        }
        AutoCloseable observation = openObservation(name);
        try {
            return checkAndCall(name, arguments, framingBytes);
        } finally {
            closeObservation(observation);
        }
    }

    /**
     * The registry this run dispatches into: a transport reads its caps (dispatches per run,
     * response limits) from here, so it bounds what it reads by the same numbers the ledger enforces.
     */
    public HostToolRegistry registry() {
        return registry;
    }

    /** Dispatches attempted so far, refused ones included. */
    public long dispatched() {
        synchronized (lock) {
            return dispatched;
        }
    }

    /** Responses delivered so far, plus slots reserved by dispatches still running. */
    public int delivered() {
        synchronized (lock) {
            return delivered;
        }
    }

    /** Bytes delivered so far: each response's JSON plus its framing. */
    public long deliveredBytes() {
        synchronized (lock) {
            return deliveredBytes;
        }
    }

    private DispatchResult checkAndCall(Object name, Object arguments, long framingBytes) {
        int cap = registry.maxDispatchesPerRun();
        synchronized (lock) {
            dispatched++;
            if (dispatched > cap) {
                return refuse("Error: the host-tool dispatch cap (" + cap + ") is exhausted" + FINISH + ".");
            }
        }
        if (!(name instanceof String)) {
            return refuse("Error: a host tool name must be a string, not " + jsonType(name) + ".");
        }
        String toolName = (String) name;
        Optional<HostTool> resolved = registry.resolve(toolName);
        if (resolved.isEmpty()) {
            return refuse("Error: " + GuestText.quote(toolName) + " is not a registered host tool.");
        }
        HostTool tool = resolved.get();
        String quoted = GuestText.quote(toolName);
        // Registration already refuses this; checked again so a dispatch never depends on that alone.
        if (tool.declaration().isEmpty() && registry.requireDeclared()) {
            return refuse("Error: host tool " + quoted + " has no declaration and this host requires one.");
        }
        if (tool.declaration().flatMap(HostToolDeclaration::identity).filter(Identity.USER::equals).isPresent()) {
            return refuse("Error: host tool " + quoted + " acts with the user's delegated identity, which this host"
                    + " cannot serve yet: that needs per-run token minting, a check that the token's audience is"
                    + " within the sandbox's egress, and an ephemeral channel into the exec environment.");
        }
        if (arguments != null && !(arguments instanceof Map)) {
            return refuse("Error: the arguments to host tool " + quoted + " must be a JSON object of keyword"
                    + " arguments, not " + jsonType(arguments) + ".");
        }
        Optional<NoRoom> noRoom = reserveSlot(framingBytes);
        if (noRoom.isPresent()) {
            return refuse(noRoom.get(), framingBytes);
        }
        boolean committed = false;
        try {
            DispatchResult result = bindCallAndCommit(quoted, tool, (Map<?, ?>) arguments, framingBytes);
            committed = result.ok();
            return result;
        } finally {
            if (!committed) {
                synchronized (lock) {
                    delivered--;
                }
            }
        }
    }

    /** Why no response could be delivered, found before any slot is reserved. */
    private enum NoRoom { RESPONSES, BYTES, PER_RESPONSE }

    /** Steps 7 to 10: finds why no response could be delivered, else reserves a response slot. */
    private Optional<NoRoom> reserveSlot(long framingBytes) {
        TransferLimits limits = registry.responseLimits();
        synchronized (lock) {
            if (delivered + 1L > limits.maxFiles()) {
                return Optional.of(NoRoom.RESPONSES);
            }
            // Written as a subtraction so a huge framingBytes cannot overflow; deliveredBytes <= maxTotalBytes.
            if (framingBytes > limits.maxTotalBytes() - deliveredBytes - SMALLEST_RESPONSE_BYTES) {
                return Optional.of(NoRoom.BYTES);
            }
            if (framingBytes > limits.maxBytesPerFile() - SMALLEST_RESPONSE_BYTES) {
                return Optional.of(NoRoom.PER_RESPONSE);
            }
            delivered++;
            return Optional.empty();
        }
    }

    private DispatchResult refuse(NoRoom noRoom, long framingBytes) {
        TransferLimits limits = registry.responseLimits();
        if (noRoom == NoRoom.PER_RESPONSE) {
            // Framing alone fills the cap: the host's configuration, not the guest, must change.
            logger.log(Level.WARNING, "transport framing of " + framingBytes + " bytes leaves no room in the"
                    + " per-response cap of " + limits.maxBytesPerFile() + " bytes; raise responseLimits");
        }
        return refuse(switch (noRoom) {
            case RESPONSES -> "Error: the host-tool response cap (" + limits.maxFiles() + ") is exhausted" + FINISH + ".";
            case BYTES -> "Error: the host-tool response byte budget (" + limits.maxTotalBytes() + " bytes) is exhausted"
                    + FINISH + ".";
            case PER_RESPONSE -> "Error: no host-tool response can fit this run's per-response cap ("
                    + limits.maxBytesPerFile() + " bytes).";
        });
    }

    /** Steps 11 to 14, with a slot reserved. */
    private DispatchResult bindCallAndCommit(String quoted, HostTool tool, Map<?, ?> arguments, long framingBytes) {
        HostTool.Binding binding = tool.bind(arguments);
        if (binding.problem().isPresent()) {
            return refuse("Error: the arguments do not bind to host tool " + quoted + ": "
                    + GuestText.quote(binding.problem().get()) + ".");
        }
        BodyOutcome outcome = call(quoted, tool, binding.arguments().orElseThrow());
        if (outcome.failed()) {
            return refuse("Error: host tool " + quoted + " failed — the reason is in the host's log.");
        }
        Object value = outcome.value();
        TransferLimits limits = registry.responseLimits();
        String json;
        try {
            // Bounded by the cap itself: memory stays bounded, and the exact size is known whenever it nearly fits.
            json = StrictJson.write(value, limits.maxBytesPerFile());
        } catch (StrictJson.TooLarge e) {
            return refuse("Error: host tool " + quoted + " returned more than " + limits.maxBytesPerFile()
                    + " bytes, over this run's per-response cap of " + limits.maxBytesPerFile() + " bytes.");
        } catch (RuntimeException e) {
            logger.log(Level.WARNING, "host tool " + quoted + " returned a value with no strict JSON form: "
                    + ErrorDetail.of(e));
            return refuse("Error: host tool " + quoted + " returned a value that cannot be carried as JSON.");
        }
        long crossing = StrictJson.utf8Length(json) + framingBytes;
        if (crossing > limits.maxBytesPerFile()) {
            return refuse("Error: host tool " + quoted + " returned " + crossing + " bytes with framing, over this"
                    + " run's per-response cap of " + limits.maxBytesPerFile() + " bytes.");
        }
        synchronized (lock) {
            long left = limits.maxTotalBytes() - deliveredBytes;
            if (crossing > left) {
                return refuse("Error: host tool " + quoted + " returned " + crossing + " bytes with framing, more"
                        + " than the " + left + " bytes left of this run's host-tool byte budget.");
            }
            deliveredBytes += crossing;
        }
        return DispatchResult.delivered(json);
    }

    /** What the body returned, or that it failed (the detail is logged). */
    private record BodyOutcome(Object value, boolean failed) {
    }

    /** Runs the body; interruption propagates as {@link SandboxInterrupted}, any other failure is logged. */
    private BodyOutcome call(String quoted, HostTool tool, Map<String, Object> arguments) {
        if (Thread.currentThread().isInterrupted()) {
            throw new SandboxInterrupted("interrupted before host tool " + quoted + " ran");
        }
        try {
            return new BodyOutcome(tool.body().call(arguments), false);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxInterrupted("interrupted while host tool " + quoted + " ran", e);
        } catch (SandboxInterrupted e) {
            throw e;
        } catch (Exception e) {
            if (Thread.currentThread().isInterrupted()) {
                // A failure on an interrupted thread is the interruption surfacing, not the tool failing.
                throw new SandboxInterrupted("interrupted while host tool " + quoted + " ran", e);
            }
            logger.log(Level.WARNING, "host tool " + quoted + " failed: " + ErrorDetail.of(e), e);
            return new BodyOutcome(null, true);
        }
    }

    private AutoCloseable openObservation(Object name) {
        Optional<DispatchObserver> observer = registry.dispatchObserver();
        if (observer.isEmpty()) {
            return null;
        }
        try {
            return observer.get().observe(this, name);
        } catch (RuntimeException e) {
            logger.log(Level.WARNING, "dispatch observer failed to open; dispatching unobserved: "
                    + ErrorDetail.of(e), e);
            return null;
        }
    }

    private void closeObservation(AutoCloseable observation) {
        if (observation == null) {
            return;
        }
        try {
            observation.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            logger.log(Level.WARNING, "dispatch observer was interrupted while closing: " + ErrorDetail.of(e), e);
        } catch (Exception e) {
            logger.log(Level.WARNING, "dispatch observer failed to close: " + ErrorDetail.of(e), e);
        }
    }

    private static DispatchResult refuse(String sentence) {
        return DispatchResult.refused(sentence);
    }

    /** The JSON type a decoded guest value would have had, for refusals; never the value itself. */
    private static String jsonType(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof Boolean) {
            return "a boolean";
        }
        if (value instanceof Number) {
            return "a number";
        }
        if (value instanceof CharSequence) {
            return "a string";
        }
        if (value instanceof Iterable || value.getClass().isArray()) {
            return "an array";
        }
        if (value instanceof Map) {
            return "an object";
        }
        return "a " + value.getClass().getSimpleName();
    }
}
