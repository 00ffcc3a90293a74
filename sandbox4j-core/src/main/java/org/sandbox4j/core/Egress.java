package org.sandbox4j.core;

/**
 * A sandbox's network posture. Nothing ranks these: a backend either enforces the mode a spec
 * asks for or the spec is refused; no mode is ever substituted for another.
 */
public enum Egress implements WireValue {
    /** Any destination. */
    UNRESTRICTED("unrestricted"),
    /** Only the hosts the spec names, through an enforcing proxy. */
    ALLOWLIST("allowlist"),
    /**
     * Every destination refused by an enforcing filter outside the guest. Weaker in form than
     * {@link #CLOSED}, not in what leaves: the guest may have a network device and a route (a
     * microVM's NIC), and a TCP connection may be accepted by the filter, but no byte reaches any
     * destination, the host's own loopback included, and no name resolves. What a managed
     * service's deny-all network policy delivers (Docker Sandboxes, Azure Container Apps
     * sandboxes); a spec asks for it by name, because it is not {@code CLOSED}.
     */
    DENY_ALL("deny-all"),
    /** No network device beyond loopback. The default. */
    CLOSED("closed");

    private final String wire;

    Egress(String wire) {
        this.wire = wire;
    }

    @Override
    public String wire() {
        return wire;
    }

    public static Egress parse(String value) {
        return WireValue.parse(Egress.class, value);
    }
}
