package org.sandbox4j.egress;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * An immutable allowlist: the parsed {@code egressAllow} entries of one spec. The grammar of an
 * entry is on {@link EgressRule}. An empty policy admits nothing.
 *
 * <p>{@link #admits} decides on the host and port the guest asked for, before any DNS: a name is
 * matched against exact rules first (so a pin wins over a wildcard that also covers the name),
 * then against wildcard rules; an IP literal is matched only against address rules, so a guest
 * cannot reach an unlisted address by writing it instead of a name. Whether the address a name
 * resolves to is acceptable is the proxy's second check.
 *
 * @param rules the rules, in the order they were written
 */
public record EgressPolicy(List<EgressRule> rules) {

    /** Admits nothing. */
    public static final EgressPolicy NONE = new EgressPolicy(List.of());

    public EgressPolicy {
        rules = List.copyOf(rules);
    }

    /**
     * Parses every entry.
     *
     * @throws IllegalArgumentException naming the first entry that does not parse, and the grammar
     */
    public static EgressPolicy parse(List<String> entries) {
        Objects.requireNonNull(entries, "entries");
        List<EgressRule> rules = new ArrayList<>(entries.size());
        for (String entry : entries) {
            rules.add(EgressRule.parse(entry));
        }
        return new EgressPolicy(rules);
    }

    /**
     * Whether a guest may ask for {@code host:port}, and by which rule.
     *
     * @param host a DNS name (any case, trailing dot ignored), an IPv4 literal, or an IPv6 literal
     *             with or without brackets
     * @param port the destination port
     */
    public Admission admits(String host, int port) {
        Objects.requireNonNull(host, "host");
        String authority = host + ":" + port;
        Optional<InetAddress> literal = asLiteral(host);
        if (literal.isPresent()) {
            InetAddress address = literal.get();
            String shown = HostSyntax.literal(address) + ":" + port;
            for (EgressRule rule : rules) {
                if (rule.kind() == EgressRule.Kind.ADDRESS && rule.address().get().equals(address)
                        && rule.admitsPort(port)) {
                    return Admission.allowed(shown, rule);
                }
            }
            return Admission.refused(shown, shown + " is not on this sandbox's allowlist");
        }
        String name = HostSyntax.normalizeName(host);
        if (!HostSyntax.isDnsName(name)) {
            return Admission.refused(authority, "'" + host + "' is not a DNS name or an IP address");
        }
        String shown = name + ":" + port;
        for (EgressRule rule : rules) {
            if (rule.kind() == EgressRule.Kind.HOST && rule.host().equals(name) && rule.admitsPort(port)) {
                return Admission.allowed(shown, rule);
            }
        }
        for (EgressRule rule : rules) {
            if (rule.kind() == EgressRule.Kind.SUFFIX && name.endsWith("." + rule.host()) && rule.admitsPort(port)) {
                return Admission.allowed(shown, rule);
            }
        }
        return Admission.refused(shown, shown + " is not on this sandbox's allowlist");
    }

    private static Optional<InetAddress> asLiteral(String host) {
        if (host.startsWith("[") && host.endsWith("]")) {
            return HostSyntax.parseIpv6(host.substring(1, host.length() - 1));
        }
        if (host.indexOf(':') >= 0) {
            return HostSyntax.parseIpv6(host);
        }
        return HostSyntax.looksLikeIpv4(host) ? HostSyntax.parseIpv4(host) : Optional.empty();
    }

    /**
     * The answer of {@link #admits}.
     *
     * @param target the destination as checked ({@code name:port}, {@code 203.0.113.7:443}, {@code [::1]:80})
     * @param rule   the rule that admitted it; empty when refused
     * @param reason one line a person can read: which rule admitted it, or why it was refused
     */
    public record Admission(String target, Optional<EgressRule> rule, String reason) {

        public Admission {
            Objects.requireNonNull(target, "target");
            Objects.requireNonNull(rule, "rule");
            Objects.requireNonNull(reason, "reason");
        }

        static Admission allowed(String target, EgressRule rule) {
            return new Admission(target, Optional.of(rule), "allowed by rule '" + rule.entry() + "'");
        }

        static Admission refused(String target, String reason) {
            return new Admission(target, Optional.empty(), reason);
        }

        /** Whether a rule admitted the destination. */
        public boolean admitted() {
            return rule.isPresent();
        }
    }
}
