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
