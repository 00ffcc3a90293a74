package org.sandbox4j.core.hosttools;

import java.lang.System.Logger;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import org.sandbox4j.core.HostToolIdentityNotAllowed;
import org.sandbox4j.core.HostToolNotDeclared;
import org.sandbox4j.core.Identity;
import org.sandbox4j.core.SourceIntegrity;
import org.sandbox4j.core.TransferLimits;

/**
 * The host tools guest code may dispatch, with the rules every run follows. Registration is
 * checked in a fixed order and a tool's declaration is captured once, then never re-read.
 * {@link #aggregate()} derives the policy facts a sandbox spec needs and seals the registry, so
 * the policy cannot drift from the tools afterwards. Thread-safe.
 *
 * <p>{@link #resolve(String)} is the only way to reach a registered tool.
 */
public final class HostToolRegistry {

    /** Dispatches per run by default: deliberately fewer than the 64-file transfer default so it bites first. */
    public static final int DEFAULT_MAX_DISPATCHES_PER_RUN = 16;

    /** Identities a registry allows by default: the application's own. */
    public static final Set<Identity> DEFAULT_ALLOWED_IDENTITIES = Set.of(Identity.APP);

    private static final Logger LOG = System.getLogger(HostToolRegistry.class.getName());

    private final boolean requireDeclared;
    private final Set<Identity> allowedIdentities;
    private final int maxDispatchesPerRun;
    private final TransferLimits responseLimits;
    private final Optional<DispatchObserver> dispatchObserver;

    private final Object lock = new Object();
    private final Map<String, HostTool> tools = new LinkedHashMap<>();
    private boolean sealed;

    private HostToolRegistry(Builder builder) {
        this.requireDeclared = builder.requireDeclared;
        this.allowedIdentities = Set.copyOf(builder.allowedIdentities);
        this.maxDispatchesPerRun = builder.maxDispatchesPerRun;
        this.responseLimits = builder.responseLimits;
        this.dispatchObserver = builder.dispatchObserver;
    }

    /**
     * Defaults: declarations not required, identities {@link #DEFAULT_ALLOWED_IDENTITIES},
     * {@value #DEFAULT_MAX_DISPATCHES_PER_RUN} dispatches per run, response limits
     * {@link TransferLimits#DEFAULT} (per response, all responses, number of responses), no observer.
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Registers a tool under {@code name}. Checked in this order: the registry is not sealed
     * ({@link IllegalStateException}); the name is non-empty and not already taken, since a tool is
     * never replaced ({@link IllegalArgumentException}); an undeclared tool is refused when
     * declarations are required ({@link HostToolNotDeclared}); the tool's identity
     * ({@link Identity#APP} when undeclared, else the declared one; a declared empty identity is
     * always allowed) must be allowed ({@link HostToolIdentityNotAllowed}).
     */
    public void register(String name, HostTool tool) {
        synchronized (lock) {
            if (sealed) {
                throw new IllegalStateException("this host tool registry is sealed: aggregate() derived the sandbox"
                        + " policy from it, so " + describe(name) + " cannot be added; register every tool before"
                        + " calling aggregate()");
            }
            Objects.requireNonNull(tool, "tool");
            if (name == null || name.isEmpty()) {
                throw new IllegalArgumentException("a host tool needs a non-empty name: guest code calls it by name");
            }
            if (tools.containsKey(name)) {
                throw new IllegalArgumentException("a host tool named '" + name + "' is already registered and"
                        + " registration never replaces a tool; choose another name");
            }
            if (requireDeclared && tool.declaration().isEmpty()) {
                throw new HostToolNotDeclared("host tool '" + name + "' has no declaration and this registry"
                        + " requires one; give it a HostToolDeclaration (source, sink, identity)");
            }
            Optional<Identity> identity = effectiveIdentity(tool);
            if (identity.isPresent() && !allowedIdentities.contains(identity.get())) {
                throw new HostToolIdentityNotAllowed("host tool '" + name + "' acts with identity '"
                        + identity.get().wire() + "', which this registry does not allow (allowed: "
                        + wires(allowedIdentities) + "); declare an allowed identity or allow '"
                        + identity.get().wire() + "' with allowedIdentities(...)");
            }
            HostAuthorityNotice.PROCESS.emitOnce(LOG);
            tools.put(name, tool);
        }
    }

    /** The registered names, in registration order. */
    public List<String> names() {
        synchronized (lock) {
            return List.copyOf(tools.keySet());
        }
    }

    public int size() {
        synchronized (lock) {
            return tools.size();
        }
    }

    /** The tool registered under {@code name}: the only way to reach one. */
    public Optional<HostTool> resolve(String name) {
        synchronized (lock) {
            return Optional.ofNullable(tools.get(name));
        }
    }

    /**
     * The declaration captured when {@code name} was registered; empty for an undeclared tool.
     *
     * @throws IllegalArgumentException when no tool has that name
     */
    public Optional<HostToolDeclaration> declarationFor(String name) {
        return resolve(name).map(HostTool::declaration).orElseThrow(() -> new IllegalArgumentException(
                describe(name) + " is not a registered host tool; registered: " + String.join(", ", names())));
    }

    /**
     * Adds up every tool's declaration and seals the registry: later registrations are refused, so
     * a spec derived from this aggregate keeps describing the tools a run can reach.
     */
    public HostToolAggregate aggregate() {
        synchronized (lock) {
            sealed = true;
            Optional<SourceIntegrity> integrity = Optional.empty();
            Set<String> sinks = new LinkedHashSet<>();
            Set<Identity> identities = EnumSet.noneOf(Identity.class);
            boolean undeclared = false;
            for (HostTool tool : tools.values()) {
                Optional<HostToolDeclaration> declaration = tool.declaration();
                // An undeclared tool is read as the weakest source acting with the application's identity.
                Optional<SourceIntegrity> source = declaration.isEmpty()
                        ? Optional.of(SourceIntegrity.UNTRUSTED) : declaration.get().source();
                if (source.isPresent()) {
                    integrity = Optional.of(integrity.map(held -> SourceIntegrity.weakest(held, source.get()))
                            .orElse(source.get()));
                }
                declaration.flatMap(HostToolDeclaration::sink).ifPresent(sinks::add);
                effectiveIdentity(tool).ifPresent(identities::add);
                undeclared |= declaration.isEmpty();
            }
            return new HostToolAggregate(integrity, sinks, identities, undeclared);
        }
    }

    /** Whether {@link #aggregate()} has sealed this registry. */
    public boolean sealed() {
        synchronized (lock) {
            return sealed;
        }
    }

    public boolean requireDeclared() {
        return requireDeclared;
    }

    public Set<Identity> allowedIdentities() {
        return allowedIdentities;
    }

    public int maxDispatchesPerRun() {
        return maxDispatchesPerRun;
    }

    /** Per response, all responses of a run together, and the number of responses. */
    public TransferLimits responseLimits() {
        return responseLimits;
    }

    public Optional<DispatchObserver> dispatchObserver() {
        return dispatchObserver;
    }

    /** The identity a tool acts with: the application's for an undeclared tool, else the declared one. */
    private static Optional<Identity> effectiveIdentity(HostTool tool) {
        return tool.declaration().isEmpty() ? Optional.of(Identity.APP) : tool.declaration().get().identity();
    }

    private static String describe(String name) {
        return name == null ? "a tool with no name" : "'" + name + "'";
    }

    private static String wires(Set<Identity> identities) {
        return identities.isEmpty() ? "none"
                : identities.stream().map(Identity::wire).sorted().collect(Collectors.joining(", "));
    }

    /** Collects a registry's rules. */
    public static final class Builder {

        private boolean requireDeclared;
        private Set<Identity> allowedIdentities = DEFAULT_ALLOWED_IDENTITIES;
        private int maxDispatchesPerRun = DEFAULT_MAX_DISPATCHES_PER_RUN;
        private TransferLimits responseLimits = TransferLimits.DEFAULT;
        private Optional<DispatchObserver> dispatchObserver = Optional.empty();

        private Builder() {
        }

        /** Whether an undeclared tool is refused at registration. */
        public Builder requireDeclared(boolean requireDeclared) {
            this.requireDeclared = requireDeclared;
            return this;
        }

        /** The identities a registered tool may act with; an empty set allows only identity-less tools. */
        public Builder allowedIdentities(Set<Identity> allowedIdentities) {
            this.allowedIdentities = Set.copyOf(allowedIdentities);
            return this;
        }

        /**
         * How many dispatches one run may attempt, refused ones included.
         *
         * @throws IllegalArgumentException below 1
         */
        public Builder maxDispatchesPerRun(int maxDispatchesPerRun) {
            if (maxDispatchesPerRun < 1) {
                throw new IllegalArgumentException("maxDispatchesPerRun must be at least 1, not "
                        + maxDispatchesPerRun + "; a host wanting zero dispatches wants an empty registry");
            }
            this.maxDispatchesPerRun = maxDispatchesPerRun;
            return this;
        }

        /**
         * Caps on the responses of one run: bytes per response (JSON plus transport framing), bytes
         * of all responses together, and the number of responses.
         *
         * @throws IllegalArgumentException when any leg is below 1
         */
        public Builder responseLimits(TransferLimits responseLimits) {
            Objects.requireNonNull(responseLimits, "responseLimits");
            if (responseLimits.maxBytesPerFile() < 1 || responseLimits.maxTotalBytes() < 1
                    || responseLimits.maxFiles() < 1) {
                throw new IllegalArgumentException("every leg of responseLimits must be at least 1, not "
                        + responseLimits + "; a host wanting no responses wants an empty registry");
            }
            this.responseLimits = responseLimits;
            return this;
        }

        /** Watches every dispatch; see {@link DispatchObserver}. */
        public Builder dispatchObserver(DispatchObserver dispatchObserver) {
            this.dispatchObserver = Optional.of(dispatchObserver);
            return this;
        }

        public HostToolRegistry build() {
            return new HostToolRegistry(this);
        }
    }
}
