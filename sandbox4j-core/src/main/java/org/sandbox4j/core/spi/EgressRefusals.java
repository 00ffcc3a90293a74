package org.sandbox4j.core.spi;

import java.util.Collection;
import java.util.stream.Collectors;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.SandboxEgressNotEnforced;

/**
 * The refusals of an egress mode a backend cannot deliver, worded once for every backend. A mode
 * is never substituted by a more open or a more closed one: the caller is told which it may ask for.
 */
public final class EgressRefusals {

    private EgressRefusals() {
    }

    /**
     * The spec asks for a mode the backend does not enforce.
     *
     * @param why      what about the backend's guests rules the mode out, e.g. "its containers have no
     *                 network device but loopback"
     * @param enforced the modes it does enforce
     */
    public static SandboxEgressNotEnforced modeNotEnforced(String backendName, Egress mode, String why,
            Collection<Egress> enforced) {
        String modes = enforced.stream().map(each -> "'" + each.wire() + "'").collect(Collectors.joining(" or "));
        return new SandboxEgressNotEnforced("backend '" + backendName + "' cannot enforce the '" + mode.wire()
                + "' egress mode: " + why + "; ask for " + (enforced.isEmpty() ? "another backend" : modes));
    }

    /**
     * An allowlist needs a bridge from the guest's loopback to the host's proxy, and the guest has
     * no program to run one.
     *
     * @param guest      whose programs were looked for, e.g. "the image"
     * @param installFix where to install one, e.g. "in the image"
     */
    public static SandboxEgressNotEnforced noBridge(String backendName, String guest, int guestPort,
            String installFix) {
        return new SandboxEgressNotEnforced("backend '" + backendName + "' cannot enforce the allowlist: " + guest
                + " has neither socat nor python3 to bridge 127.0.0.1:" + guestPort + " to the egress proxy; install "
                + "socat (or python3) " + installFix);
    }
}
