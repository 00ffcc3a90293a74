package org.sandbox4j.egress;

/** A request the proxy answers itself with {@code status} and a one-line reason, connecting nowhere. */
final class ProxyRefusal extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final HttpStatus status;

    ProxyRefusal(HttpStatus status, String reason) {
        super(EgressGate.PREFIX + reason, null, false, false);
        this.status = status;
    }

    HttpStatus status() {
        return status;
    }
}
