package org.sandbox4j.aca;

import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import org.sandbox4j.core.spi.BackendNames;

/**
 * Where {@link AcaBackend} finds its sandbox group and how it configures each sandbox. Build one
 * with {@link #builder()}; only the endpoint and the three names of the group are required.
 * Image, egress and work dir come from each spec, never from here: a deployment that could widen
 * a kind's egress could undo the containment the kind was designed with.
 *
 * @param name          the backend's name for the router and messages
 * @param endpoint      the data plane, {@code https://management.<region>.azuredevcompute.io};
 *                      plain {@code http} only on a loopback host (an emulator)
 * @param subscription  the Azure subscription id
 * @param resourceGroup the resource group holding the sandbox group
 * @param sandboxGroup  the sandbox group
 * @param registry      the registry login server a bare image reference is qualified with (e.g.
 *                      {@code myacr.azurecr.io}); empty for none
 * @param autoSuspend   idle time before the service suspends a sandbox (memory kept)
 * @param autoDelete    time before the service deletes a sandbox this process forgot
 * @param readTimeout   the bound on each file transfer and each management request
 * @param tokenScope    the OAuth scope tokens are requested for
 */
public record AcaConfig(
        String name,
        URI endpoint,
        String subscription,
        String resourceGroup,
        String sandboxGroup,
        String registry,
        Duration autoSuspend,
        Duration autoDelete,
        Duration readTimeout,
        String tokenScope) {

    /** The backend's name unless the builder gives another. */
    public static final String DEFAULT_NAME = "aca";
    /** The reference's auto-suspend interval. */
    public static final Duration DEFAULT_AUTO_SUSPEND = Duration.ofSeconds(60);
    /** The reference's auto-delete interval. */
    public static final Duration DEFAULT_AUTO_DELETE = Duration.ofSeconds(600);
    /** The reference's read timeout. */
    public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(120);

    private static final Set<String> LOOPBACK_HOSTS = Set.of("localhost", "127.0.0.1", "[::1]", "::1");

    public AcaConfig {
        BackendNames.require(name);
        Objects.requireNonNull(endpoint, "endpoint: the data plane, https://management.<region>.azuredevcompute.io");
        String scheme = endpoint.getScheme() == null ? "" : endpoint.getScheme().toLowerCase(Locale.ROOT);
        String host = endpoint.getHost() == null ? "" : endpoint.getHost().toLowerCase(Locale.ROOT);
        if (host.isEmpty() || !(scheme.equals("https") || scheme.equals("http") && LOOPBACK_HOSTS.contains(host))) {
            throw new IllegalArgumentException("the endpoint " + endpoint + " must be an https URL such as "
                    + "https://management.<region>.azuredevcompute.io (plain http only on a loopback host): a bearer "
                    + "token travels with every request");
        }
        if (endpoint.getRawQuery() != null || endpoint.getRawFragment() != null) {
            throw new IllegalArgumentException("the endpoint " + endpoint + " must not carry a query or fragment");
        }
        requireSegment(subscription, "subscription");
        requireSegment(resourceGroup, "resourceGroup");
        requireSegment(sandboxGroup, "sandboxGroup");
        Objects.requireNonNull(registry, "registry");
        registry = registry.strip();
        while (registry.endsWith("/")) {
            registry = registry.substring(0, registry.length() - 1);
        }
        requireWholeSeconds(autoSuspend, "autoSuspend");
        requireWholeSeconds(autoDelete, "autoDelete");
        requirePositive(readTimeout, "readTimeout");
        requireNonBlank(tokenScope, "tokenScope");
    }

    public static Builder builder() {
        return new Builder();
    }

    private static void requireNonBlank(String value, String what) {
        Objects.requireNonNull(value, what);
        if (value.isBlank()) {
            throw new IllegalArgumentException(what + " cannot be blank");
        }
    }

    /** A path segment of the group's URL: refused when it could change the path. */
    static void requireSegment(String value, String what) {
        requireNonBlank(value, what);
        if (value.contains("/") || value.contains("\\") || value.contains("..") || value.indexOf('\0') >= 0
                || !value.equals(value.strip())) {
            throw new IllegalArgumentException(what + " '" + value + "' cannot contain '/', '\\', '..', NUL or "
                    + "surrounding spaces: it is a segment of the sandbox group's URL");
        }
    }

    private static void requirePositive(Duration value, String what) {
        Objects.requireNonNull(value, what);
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, not " + value);
        }
    }

    private static void requireWholeSeconds(Duration value, String what) {
        requirePositive(value, what);
        if (value.toMillis() % 1000 != 0) {
            throw new IllegalArgumentException(what + " is sent in whole seconds; " + value + " is not");
        }
    }

    /** Mutable, single-use builder; {@link #build()} validates. */
    public static final class Builder {
        private String name = DEFAULT_NAME;
        private URI endpoint;
        private String subscription;
        private String resourceGroup;
        private String sandboxGroup;
        private String registry = "";
        private Duration autoSuspend = DEFAULT_AUTO_SUSPEND;
        private Duration autoDelete = DEFAULT_AUTO_DELETE;
        private Duration readTimeout = DEFAULT_READ_TIMEOUT;
        private String tokenScope = AcaTokenSupplier.DEFAULT_SCOPE;

        private Builder() {
        }

        public Builder name(String value) {
            this.name = value;
            return this;
        }

        public Builder endpoint(URI value) {
            this.endpoint = value;
            return this;
        }

        public Builder endpoint(String value) {
            return endpoint(URI.create(value));
        }

        public Builder subscription(String value) {
            this.subscription = value;
            return this;
        }

        public Builder resourceGroup(String value) {
            this.resourceGroup = value;
            return this;
        }

        public Builder sandboxGroup(String value) {
            this.sandboxGroup = value;
            return this;
        }

        public Builder registry(String value) {
            this.registry = value;
            return this;
        }

        public Builder autoSuspend(Duration value) {
            this.autoSuspend = value;
            return this;
        }

        public Builder autoDelete(Duration value) {
            this.autoDelete = value;
            return this;
        }

        public Builder readTimeout(Duration value) {
            this.readTimeout = value;
            return this;
        }

        public Builder tokenScope(String value) {
            this.tokenScope = value;
            return this;
        }

        public AcaConfig build() {
            return new AcaConfig(name, endpoint, subscription, resourceGroup, sandboxGroup, registry, autoSuspend,
                    autoDelete, readTimeout, tokenScope);
        }
    }
}
