package org.sandbox4j.egress;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The proxy's two checks, in order, before any connection: is {@code host:port} on the allowlist,
 * and is every address it leads to acceptable. The addresses returned are the only ones the
 * proxy may connect to: it never resolves a name twice.
 */
final class EgressGate {

    static final String PREFIX = "sandbox4j egress: ";

    private EgressGate() {
    }

    /** What to do with a request. */
    sealed interface Outcome permits Connect, Refuse {
    }

    /** Connect to one of {@code addresses}, in order; all of them were checked. */
    record Connect(EgressRule rule, List<InetSocketAddress> addresses) implements Outcome {
        Connect {
            addresses = List.copyOf(addresses);
        }
    }

    /** Answer {@code status} with the one-line {@code reason}; connect to nothing. */
    record Refuse(HttpStatus status, String reason) implements Outcome {
    }

    static Outcome decide(EgressPolicy policy, HostResolver resolver, String host, int port) {
        EgressPolicy.Admission admission = policy.admits(host, port);
        if (!admission.admitted()) {
            return new Refuse(HttpStatus.FORBIDDEN, PREFIX + admission.reason());
        }
        EgressRule rule = admission.rule().get();
        if (rule.address().isPresent()) {
            return connect(rule, List.of(rule.address().get()), port);
        }
        if (rule.pin().isPresent()) {
            return connect(rule, List.of(rule.pin().get()), port);
        }
        String name = HostSyntax.normalizeName(host);
        List<InetAddress> resolved;
        try {
            resolved = resolver.resolve(name);
        } catch (UnknownHostException e) {
            return new Refuse(HttpStatus.BAD_GATEWAY, PREFIX + name + " does not resolve");
        }
        if (resolved == null || resolved.isEmpty()) {
            return new Refuse(HttpStatus.BAD_GATEWAY, PREFIX + name + " does not resolve");
        }
        for (InetAddress address : resolved) {
            Optional<String> range = InternalAddresses.classify(address);
            if (range.isPresent() && !rule.namesAddress(address)) {
                return new Refuse(HttpStatus.FORBIDDEN, PREFIX + admission.target()
                        + " resolves to an internal address (" + range.get() + "); only a rule naming that"
                        + " address, or a pin to it, may reach it");
            }
        }
        return connect(rule, resolved, port);
    }

    private static Connect connect(EgressRule rule, List<InetAddress> addresses, int port) {
        List<InetSocketAddress> targets = new ArrayList<>(addresses.size());
        for (InetAddress address : addresses) {
            targets.add(new InetSocketAddress(address, port));
        }
        return new Connect(rule, targets);
    }
}
