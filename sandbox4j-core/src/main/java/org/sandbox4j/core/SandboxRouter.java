package org.sandbox4j.core;

import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.GuestText;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Chooses where a spec runs, and refuses loudly when no registered place is strong enough or able
 * enough. It is the one rule in sandbox4j that is not a convenience.
 *
 * <h2>The floor</h2>
 * The minimum isolation defaults to {@link Isolation#MICROVM}. A spec may raise it (its
 * {@code minIsolation}), never lower it. {@link Builder#deployed(boolean) deployed(true)} makes any
 * floor below MICROVM a construction error. A backend registered to serve below the floor fails
 * construction: the router refuses at start-up, not at first use.
 *
 * <h2>The checks, in this order</h2>
 * <ol>
 *   <li>host denials of capabilities ({@link SandboxCapabilityDenied}) and of host-tool identities
 *       ({@link SandboxIdentityDenied});</li>
 *   <li>the isolation floor ({@link SandboxBackendNotPermitted});</li>
 *   <li>capabilities ({@link SandboxCapabilityNotSupported});</li>
 *   <li>OS family ({@link SandboxOsFamilyNotSupported});</li>
 *   <li>transfer limits, files in then files out ({@link SandboxTransferLimitsNotPermitted});</li>
 *   <li>egress ({@link SandboxEgressNotEnforced}).</li>
 * </ol>
 * Each refuses with its own exception; nothing is degraded, clamped or substituted.
 *
 * <h2>Several backends</h2>
 * A spec is served by the first backend, in registration order, that passes every check, or by
 * the one backend the host {@linkplain Builder#select(String) selected}. When a single serving
 * backend refuses, its own refusal is thrown; when several do, {@link SandboxNoBackendCanServe}
 * lists each backend with its own reason. Unselected backends serve nothing but are still asked to
 * dispose (a conversation may have been served under an earlier configuration).
 *
 * <p>The router caches nothing and locks nothing: warm reuse and per-key serialisation are the
 * backends' duties. Its policy path allocates nothing on success and logs nothing.
 */
public final class SandboxRouter {

    /** The floor when the host names none. */
    public static final Isolation DEFAULT_FLOOR = Isolation.MICROVM;

    /** The weakest floor a deployed router accepts. */
    public static final Isolation DEPLOYED_FLOOR = Isolation.MICROVM;

    private static final System.Logger LOG = System.getLogger(SandboxRouter.class.getName());

    private final List<Registered> registered;
    private final List<Registered> serving;
    private final Isolation floor;
    private final Set<Capability> deniedCapabilities;
    private final Set<Identity> deniedIdentities;

    private SandboxRouter(Builder builder) {
        this.floor = builder.floor;
        if (builder.deployed && !floor.meetsFloor(DEPLOYED_FLOOR)) {
            throw new SandboxFloorNotPermitted("a deployed router cannot lower the minimum-isolation floor to "
                    + floor.wire() + ": a weaker boundary is never used in a deployed environment; keep the floor at "
                    + DEPLOYED_FLOOR.wire() + " or above (ladder: " + Isolation.ladder()
                    + "), or drop deployed(true) for local development");
        }
        this.deniedCapabilities = Sets.copyOf(Capability.class, builder.deniedCapabilities);
        this.deniedIdentities = Sets.copyOf(Identity.class, builder.deniedIdentities);
        this.registered = register(builder.backends);
        this.serving = selectServing(registered, builder.selected);
        for (Registered backend : serving) {
            if (!backend.isolation().meetsFloor(floor)) {
                throw new SandboxBackendNotPermitted("backend '" + backend.name() + "' declares isolation '"
                        + backend.isolation().wire() + "', below the router's minimum-isolation floor '" + floor.wire()
                        + "' (ladder: " + Isolation.ladder() + "); register a stronger backend, or lower the floor "
                        + "explicitly with minIsolation(...) where the host allows it");
            }
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Whether any backend is registered: with none, a tool attaches nothing and acquire refuses. */
    public boolean enabled() {
        return !serving.isEmpty();
    }

    /** The host's floor; a spec may raise it per acquire. */
    public Isolation floor() {
        return floor;
    }

    /** Every registered backend, in registration order (those that serve and those kept for disposal). */
    public List<SandboxBackend> backends() {
        return registered.stream().map(Registered::backend).collect(Collectors.toUnmodifiableList());
    }

    /** The backends that may serve specs, in the order they are tried. */
    public List<SandboxBackend> servingBackends() {
        return serving.stream().map(Registered::backend).collect(Collectors.toUnmodifiableList());
    }

    /**
     * Runs every check for {@code spec} without acquiring anything: the same code path
     * {@link #acquire} runs. Call it when a tool is built, so a misconfiguration fails at start-up.
     *
     * @return the backend that would serve the spec, or empty when no backend is configured
     * @throws SandboxException the refusal (see the class documentation)
     */
    public Optional<SandboxBackend> ensureCanServe(SandboxSpec spec) {
        Objects.requireNonNull(spec, "spec");
        if (serving.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(choose(spec).backend());
    }

    /**
     * Checks {@code spec} and acquires its sandbox from the first backend that can serve it.
     *
     * @throws NoSandboxBackend no backend is configured
     * @throws SandboxException a refusal, or the backend's own failure
     */
    public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(spec, "spec");
        if (serving.isEmpty()) {
            throw new NoSandboxBackend("no sandbox backend is configured; register one with "
                    + "SandboxRouter.builder().backend(...)");
        }
        return choose(spec).backend().acquire(key, spec);
    }

    /** Asks every registered backend to dispose of {@code key}'s sandboxes. Never throws. */
    public void dispose(SandboxKey key) {
        for (Registered backend : registered) {
            try {
                backend.backend().dispose(key);
            } catch (RuntimeException failure) {
                LOG.log(Level.WARNING, () -> "backend '" + backend.name() + "' failed to dispose a sandbox: "
                        + ErrorDetail.of(failure));
            }
        }
    }

    /**
     * Asks every registered backend to dispose of one conversation's sandboxes, and sums the
     * counts. A failing backend counts 0 and is logged; never throws for a backend's failure.
     *
     * @throws IllegalArgumentException a null scope or thread (a caller's bug, which would
     *         otherwise dispose of nothing and say so only in a log line); {@link #scope} refuses
     *         the same at once
     */
    public int disposeScope(String scope, String threadId) {
        requireConversation(scope, threadId);
        int disposed = 0;
        for (Registered backend : registered) {
            try {
                disposed += backend.backend().disposeScope(scope, threadId);
            } catch (RuntimeException failure) {
                LOG.log(Level.WARNING, () -> "backend '" + backend.name() + "' failed to dispose a conversation's "
                        + "sandboxes: " + ErrorDetail.of(failure));
            }
        }
        return disposed;
    }

    /**
     * A try-with-resources block whose end disposes of the conversation's sandboxes, however the
     * block ends: {@code try (ScopeDisposal d = router.scope(s, t)) { ... }}. The count is in
     * {@link ScopeDisposal#disposed()} after the block.
     */
    public ScopeDisposal scope(String scope, String threadId) {
        requireConversation(scope, threadId);
        return new ScopeDisposal(this, scope, threadId);
    }

    private static void requireConversation(String scope, String threadId) {
        if (scope == null || threadId == null) {
            throw new IllegalArgumentException("a conversation needs a scope and a thread id (got scope "
                    + GuestText.quote(scope) + ", thread " + GuestText.quote(threadId) + "); to dispose of every "
                    + "conversation of a scope, call dispose(SandboxQuery.scope(scope)) on each backend");
        }
    }

    private Registered choose(SandboxSpec spec) {
        refuseHostDenials(spec);
        Isolation effectiveFloor = spec.minIsolation().map(asked -> Isolation.strongest(floor, asked)).orElse(floor);
        if (serving.size() == 1) {
            Registered only = serving.get(0);
            Supplier<SandboxException> refusal = refusal(only, spec, effectiveFloor);
            if (refusal != null) {
                throw refusal.get();
            }
            return only;
        }
        Map<String, Supplier<SandboxException>> refusals = new LinkedHashMap<>();
        for (Registered candidate : serving) {
            Supplier<SandboxException> refusal = refusal(candidate, spec, effectiveFloor);
            if (refusal == null) {
                return candidate;
            }
            refusals.put(candidate.name(), refusal);
        }
        throw noneCanServe(spec, refusals);
    }

    private void refuseHostDenials(SandboxSpec spec) {
        if (!deniedCapabilities.isEmpty()) {
            Set<Capability> denied = intersection(Capability.class, spec.requires(), deniedCapabilities);
            if (!denied.isEmpty()) {
                throw new SandboxCapabilityDenied("the host denies " + Sets.describe(denied, "") + ", which spec '"
                        + spec.kind() + "' requires; narrow the workload's requirements, or run it on a host that "
                        + "allows them");
            }
        }
        if (!deniedIdentities.isEmpty()) {
            Set<Identity> denied = intersection(Identity.class, spec.identities(), deniedIdentities);
            if (!denied.isEmpty()) {
                throw new SandboxIdentityDenied("the host denies the host-tool identity " + Sets.describe(denied, "")
                        + " that spec '" + spec.kind() + "' carries; drop the host tools that act with it");
            }
        }
    }

    /**
     * The backend's refusal of {@code spec}, in the documented order, or null when it can serve it.
     * The exception is built only when thrown: a backend passed over for the next one costs no
     * stack trace.
     */
    private static Supplier<SandboxException> refusal(Registered backend, SandboxSpec spec, Isolation effectiveFloor) {
        BackendDeclarations declared = backend.declarations();
        String name = backend.name();
        if (!declared.isolation().meetsFloor(effectiveFloor)) {
            return () -> new SandboxBackendNotPermitted("backend '" + name + "' declares isolation '"
                    + declared.isolation().wire() + "', but spec '" + spec.kind() + "' requires at least '"
                    + effectiveFloor.wire() + "' (the minimum-isolation floor; ladder: " + Isolation.ladder()
                    + "); use a stronger backend");
        }
        if (!declared.capabilities().containsAll(spec.requires())) {
            Set<Capability> missing = EnumSet.noneOf(Capability.class);
            missing.addAll(spec.requires());
            missing.removeAll(declared.capabilities());
            return () -> new SandboxCapabilityNotSupported("backend '" + name + "' does not support "
                    + Sets.describe(missing, "") + ", which spec '" + spec.kind() + "' requires (it declares "
                    + Sets.describe(declared.capabilities(), "nothing") + "); use a backend that implements them, "
                    + "or require less");
        }
        if (spec.requiresOsFamily().isPresent() && !declared.osFamilies().contains(spec.requiresOsFamily().get())) {
            return () -> new SandboxOsFamilyNotSupported("backend '" + name + "' does not serve '"
                    + spec.requiresOsFamily().get().wire() + "' guests, which spec '" + spec.kind() + "' requires ("
                    + (declared.osFamilies().isEmpty() ? "it states no guest shape"
                            : "it serves " + Sets.describe(declared.osFamilies(), ""))
                    + "); use a backend serving that family");
        }
        Supplier<SandboxException> limits =
                limitsRefusal(name, spec, "files_in", spec.filesIn(), declared.limits().filesIn());
        if (limits == null) {
            limits = limitsRefusal(name, spec, "files_out", spec.filesOut(), declared.limits().filesOut());
        }
        if (limits != null) {
            return limits;
        }
        if (!declared.egressModes().contains(spec.egress())) {
            return () -> new SandboxEgressNotEnforced("backend '" + name + "' cannot enforce the '" + spec.egress().wire()
                    + "' egress mode spec '" + spec.kind() + "' asks for ("
                    + (declared.egressModes().isEmpty() ? "it enforces nothing"
                            : "it enforces " + Sets.describe(declared.egressModes(), ""))
                    + "); give the backend the mechanism, or run the mode it can deliver");
        }
        return null;
    }

    private static Supplier<SandboxException> limitsRefusal(
            String backend, SandboxSpec spec, String direction, TransferLimits asked, TransferLimits ceiling) {
        if (asked.within(ceiling)) {
            return null;
        }
        return () -> new SandboxTransferLimitsNotPermitted("spec '" + spec.kind() + "' asks " + direction + " caps of "
                + asked + ", beyond backend '" + backend + "''s ceiling of " + ceiling
                + "; lower the caps, or declare none to take the defaults");
    }

    private static SandboxNoBackendCanServe noneCanServe(
            SandboxSpec spec, Map<String, Supplier<SandboxException>> deferred) {
        Map<String, SandboxException> refusals = new LinkedHashMap<>();
        deferred.forEach((name, refusal) -> refusals.put(name, refusal.get()));
        StringBuilder message = new StringBuilder("no registered backend can serve spec '" + spec.kind() + "':");
        refusals.forEach((name, refusal) -> message.append("\n  - ").append(name).append(" (")
                .append(refusal.getClass().getSimpleName()).append("): ").append(refusal.getMessage()));
        return new SandboxNoBackendCanServe(message.toString(), refusals);
    }

    private static <E extends Enum<E>> Set<E> intersection(Class<E> type, Set<E> a, Set<E> b) {
        Set<E> both = EnumSet.noneOf(type);
        both.addAll(a);
        both.retainAll(b);
        return both;
    }

    private static List<Registered> register(List<SandboxBackend> backends) {
        List<Registered> result = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (SandboxBackend backend : backends) {
            String name = Objects.requireNonNull(backend.name(), "a backend's name");
            if (!names.add(name)) {
                throw new IllegalArgumentException("two backends are registered as '" + name
                        + "'; give each backend a distinct name");
            }
            BackendDeclarations declarations;
            try {
                declarations = backend.declarations();
            } catch (RuntimeException failure) {
                throw new SandboxBackendNotPermitted("backend '" + name + "' failed to state its declarations, so "
                        + "its isolation cannot be checked against the floor; fix the backend", failure);
            }
            if (declarations == null) {
                throw new SandboxBackendNotPermitted("backend '" + name + "' states no declarations, so its "
                        + "isolation cannot be checked against the floor; return a BackendDeclarations");
            }
            result.add(new Registered(name, backend, declarations));
        }
        return List.copyOf(result);
    }

    private static List<Registered> selectServing(List<Registered> registered, String selected) {
        if (selected == null || registered.isEmpty()) {
            return registered;
        }
        for (Registered backend : registered) {
            if (backend.name().equals(selected)) {
                return List.of(backend);
            }
        }
        throw new NoSandboxBackend("no backend named '" + selected + "' is registered (registered: "
                + registered.stream().map(Registered::name).sorted().collect(Collectors.joining(", "))
                + "); select one of those, or register it");
    }

    /** A backend with the declarations it stated once, at construction. */
    private record Registered(String name, SandboxBackend backend, BackendDeclarations declarations) {
        Isolation isolation() {
            return declarations.isolation();
        }
    }

    /** Mutable, single-use builder. */
    public static final class Builder {
        private final List<SandboxBackend> backends = new ArrayList<>();
        private Isolation floor = DEFAULT_FLOOR;
        private boolean deployed;
        private final Set<Capability> deniedCapabilities = EnumSet.noneOf(Capability.class);
        private final Set<Identity> deniedIdentities = EnumSet.noneOf(Identity.class);
        private String selected;

        private Builder() {
        }

        /** Registers a backend; registration order is the order backends are tried in. */
        public Builder backend(SandboxBackend backend) {
            backends.add(Objects.requireNonNull(backend, "backend"));
            return this;
        }

        public Builder backends(Collection<? extends SandboxBackend> more) {
            more.forEach(this::backend);
            return this;
        }

        /** The host's minimum isolation (default {@link #DEFAULT_FLOOR}). */
        public Builder minIsolation(Isolation minimum) {
            this.floor = Objects.requireNonNull(minimum, "minimum isolation");
            return this;
        }

        /**
         * The floor from configuration text, re-parsed through {@link Isolation#parse}.
         *
         * @throws IllegalArgumentException for anything but a wire value ({@code "MICROVM"}, {@code "process"}...)
         */
        public Builder minIsolation(String minimum) {
            return minIsolation(Isolation.parse(minimum));
        }

        /** In a deployed environment, the floor can never be lowered below {@link #DEPLOYED_FLOOR}. */
        public Builder deployed(boolean isDeployed) {
            this.deployed = isDeployed;
            return this;
        }

        /** Capabilities no spec may require on this host. */
        public Builder deny(Capability... capabilities) {
            deniedCapabilities.addAll(List.of(capabilities));
            return this;
        }

        /** Host-tool identities no spec may carry on this host. */
        public Builder deny(Identity... identities) {
            deniedIdentities.addAll(List.of(identities));
            return this;
        }

        /**
         * Denied capabilities from configuration text, each re-parsed (an entry that never matches
         * would look like protection).
         *
         * @throws IllegalArgumentException for an unknown value
         */
        public Builder denyCapabilities(Collection<String> wireValues) {
            wireValues.forEach(value -> deniedCapabilities.add(Capability.parse(value)));
            return this;
        }

        /** @throws IllegalArgumentException for an unknown value */
        public Builder denyIdentities(Collection<String> wireValues) {
            wireValues.forEach(value -> deniedIdentities.add(Identity.parse(value)));
            return this;
        }

        /** Serve every spec from the backend of this name only; the others are kept for disposal. */
        public Builder select(String backendName) {
            this.selected = Objects.requireNonNull(backendName, "backend name");
            return this;
        }

        /**
         * @throws SandboxFloorNotPermitted   deployed with a floor below microvm
         * @throws SandboxBackendNotPermitted a serving backend below the floor, or without declarations
         * @throws NoSandboxBackend           the selected name is not registered
         */
        public SandboxRouter build() {
            return new SandboxRouter(this);
        }
    }
}
