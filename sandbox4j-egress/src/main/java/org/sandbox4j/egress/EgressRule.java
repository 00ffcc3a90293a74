package org.sandbox4j.egress;

import java.net.InetAddress;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * One entry of a spec's {@code egressAllow} list, parsed. The grammar of an entry:
 *
 * <pre>
 * entry   = target [ ":" port ] [ "=" pin ]
 * target  = HOST                  exact DNS name, case-insensitive, trailing dot ignored
 *         | "*." SUFFIX           any name strictly below SUFFIX (not SUFFIX itself)
 *         | IPV4                  dotted quad, e.g. 203.0.113.7 (no leading zeros)
 *         | "[" IPV6 "]"          e.g. [2001:db8::1] (no zone id)
 * port    = 1-65535 | "*"         no port means {80, 443}; "*" means any port
 * pin     = IPV4 | "[" IPV6 "]"   only after an exact HOST: connect there, never ask DNS
 * </pre>
 *
 * <p>One host per entry: blanks, whitespace, commas, schemes and paths ({@code http://x},
 * {@code x/y}), a lone {@code *}, a wildcard anywhere but a leading {@code *.} label, and a pin on a
 * wildcard or address rule are refused with an {@link IllegalArgumentException} that names the
 * entry and this grammar.
 *
 * <p>Internal destinations (loopback, private, link-local, metadata, ...) are reachable only when
 * a rule names the address itself: an address rule for exactly that address, or a pin to it. A
 * name rule never reaches one, whatever DNS says, so an allowlisted name cannot be re-pointed at
 * the host's own network.
 *
 * @param entry   the entry as written, for messages and audit lines
 * @param kind    which of the three target forms it is
 * @param host    the normalised name ({@link Kind#HOST}), the suffix without {@code *.}
 *                ({@link Kind#SUFFIX}), or the address literal ({@link Kind#ADDRESS}, IPv6 in brackets)
 * @param address the address of an {@link Kind#ADDRESS} rule; empty otherwise
 * @param ports   the ports admitted; empty means any port
 * @param pin     where an exact {@link Kind#HOST} rule connects instead of resolving the name
 */
public record EgressRule(
        String entry, Kind kind, String host, Optional<InetAddress> address, Set<Integer> ports,
        Optional<InetAddress> pin) {

    /** The ports an entry without {@code :PORT} admits: plain HTTP and HTTPS. */
    public static final Set<Integer> DEFAULT_PORTS = Set.of(80, 443);

    /** The port written as {@code :*}: any port. */
    public static final String ANY_PORT = "*";

    /** The grammar, quoted in every refusal so the fix is one read away. */
    public static final String GRAMMAR = "an entry is HOST, *.SUFFIX, an IPv4 address or a bracketed IPv6 address"
            + " ([2001:db8::1]), optionally followed by :PORT (1-65535) or :* (no port means 80 and 443),"
            + " and an exact HOST may end with =ADDRESS to pin it; one host per entry, no scheme, path,"
            + " whitespace or comma";

    /** The three forms of a target. */
    public enum Kind {
        /** An exact DNS name. */
        HOST,
        /** Any name strictly below a suffix ({@code *.example.com}). */
        SUFFIX,
        /** One IP address, admitted only when the guest asks for it literally. */
        ADDRESS
    }

    public EgressRule {
        Objects.requireNonNull(entry, "entry");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(address, "address");
        ports = Set.copyOf(ports);
        Objects.requireNonNull(pin, "pin");
        if ((kind == Kind.ADDRESS) != address.isPresent()) {
            throw new IllegalArgumentException("an address rule carries exactly one address: " + entry);
        }
        if (pin.isPresent() && kind != Kind.HOST) {
            throw new IllegalArgumentException("only an exact HOST rule can be pinned: " + entry);
        }
        if (kind != Kind.ADDRESS && !(HostSyntax.isDnsName(host) && host.equals(HostSyntax.normalizeName(host)))) {
            throw new IllegalArgumentException("a " + kind + " rule needs a lower-case DNS name without a trailing dot,"
                    + " not '" + host + "': " + entry);
        }
        for (int port : ports) {
            if (port < HostSyntax.MIN_PORT || port > HostSyntax.MAX_PORT) {
                throw new IllegalArgumentException("port " + port + " is not 1-65535: " + entry);
            }
        }
    }

    /**
     * Parses one entry.
     *
     * @throws IllegalArgumentException naming the entry and {@link #GRAMMAR} when it does not parse
     */
    public static EgressRule parse(String entry) {
        if (entry == null || entry.isBlank()) {
            throw refused(String.valueOf(entry), "it is blank");
        }
        if (entry.chars().anyMatch(Character::isWhitespace)) {
            throw refused(entry, "it contains whitespace");
        }
        if (entry.indexOf(',') >= 0) {
            throw refused(entry, "it contains a comma (write one host per entry)");
        }
        if (entry.contains("://")) {
            throw refused(entry, "it has a scheme (write the host alone)");
        }
        if (entry.indexOf('/') >= 0 || entry.indexOf('?') >= 0 || entry.indexOf('#') >= 0 || entry.indexOf('@') >= 0) {
            throw refused(entry, "it has a path, query or user part (write the host alone)");
        }

        String target = entry;
        Optional<InetAddress> pin = Optional.empty();
        int equals = entry.indexOf('=');
        if (equals >= 0) {
            String pinText = entry.substring(equals + 1);
            target = entry.substring(0, equals);
            pin = Optional.of(HostSyntax.parseAddressLiteral(pinText).orElseThrow(() -> refused(entry,
                    "the pin '" + pinText + "' is not an IPv4 address or a bracketed IPv6 address")));
        }

        String hostText;
        String portText = null;
        if (target.startsWith("[")) {
            int close = target.indexOf(']');
            if (close < 0) {
                throw refused(entry, "the IPv6 address has no closing ']'");
            }
            hostText = target.substring(0, close + 1);
            String rest = target.substring(close + 1);
            if (!rest.isEmpty()) {
                if (!rest.startsWith(":")) {
                    throw refused(entry, "only :PORT may follow a bracketed address");
                }
                portText = rest.substring(1);
            }
        } else {
            int colon = target.lastIndexOf(':');
            if (colon >= 0) {
                hostText = target.substring(0, colon);
                portText = target.substring(colon + 1);
                if (hostText.indexOf(':') >= 0) {
                    throw refused(entry, "an IPv6 address must be in brackets, e.g. [2001:db8::1]:443");
                }
            } else {
                hostText = target;
            }
        }

        Set<Integer> ports = parsePorts(entry, portText);
        if (hostText.isEmpty()) {
            throw refused(entry, "it names no host");
        }

        if (hostText.startsWith("[")) {
            String inner = hostText.substring(1, hostText.length() - 1);
            InetAddress address = HostSyntax.parseIpv6(inner)
                    .orElseThrow(() -> refused(entry, "'" + hostText + "' is not an IPv6 address"));
            requireNoPin(entry, pin, "an address rule");
            return new EgressRule(entry, Kind.ADDRESS, HostSyntax.literal(address), Optional.of(address), ports, pin);
        }
        if (HostSyntax.looksLikeIpv4(hostText)) {
            InetAddress address = HostSyntax.parseIpv4(hostText).orElseThrow(() -> refused(entry,
                    "'" + hostText + "' is not an IPv4 address (four decimal octets 0-255, no leading zeros)"));
            requireNoPin(entry, pin, "an address rule");
            return new EgressRule(entry, Kind.ADDRESS, HostSyntax.literal(address), Optional.of(address), ports, pin);
        }
        if (hostText.startsWith("*.")) {
            String suffix = HostSyntax.normalizeName(hostText.substring(2));
            if (suffix.indexOf('*') >= 0 || !HostSyntax.isDnsName(suffix)) {
                throw refused(entry, "'" + hostText.substring(2) + "' after '*.' is not a DNS name");
            }
            requireNoPin(entry, pin, "a wildcard rule");
            return new EgressRule(entry, Kind.SUFFIX, suffix, Optional.empty(), ports, pin);
        }
        if (hostText.equals("*")) {
            throw refused(entry, "a lone * would admit every host (that is egress UNRESTRICTED, not an allowlist)");
        }
        if (hostText.indexOf('*') >= 0) {
            throw refused(entry, "a wildcard is only allowed as a whole leading label, as in *.example.com");
        }
        String name = HostSyntax.normalizeName(hostText);
        if (!HostSyntax.isDnsName(name)) {
            throw refused(entry, "'" + hostText + "' is not a DNS name (labels of letters, digits and inner hyphens)");
        }
        return new EgressRule(entry, Kind.HOST, name, Optional.empty(), ports, pin);
    }

    /** Whether this rule admits {@code port}. */
    public boolean admitsPort(int port) {
        return ports.isEmpty() || ports.contains(port);
    }

    /**
     * Whether this rule names {@code target} itself, so the target may be internal: it is this
     * rule's address, or this rule's pin.
     */
    public boolean namesAddress(InetAddress target) {
        return address.map(target::equals).orElse(false) || pin.map(target::equals).orElse(false);
    }

    @Override
    public String toString() {
        return entry;
    }

    private static Set<Integer> parsePorts(String entry, String portText) {
        if (portText == null) {
            return DEFAULT_PORTS;
        }
        if (portText.equals(ANY_PORT)) {
            return Set.of();
        }
        int port = HostSyntax.parsePort(portText);
        if (port < 0) {
            throw refused(entry, "the port '" + portText + "' is not 1-65535 or *");
        }
        return Set.of(port);
    }

    private static void requireNoPin(String entry, Optional<InetAddress> pin, String what) {
        if (pin.isPresent()) {
            throw refused(entry, "a pin (=ADDRESS) is only allowed on an exact HOST, not on " + what);
        }
    }

    private static IllegalArgumentException refused(String entry, String why) {
        return new IllegalArgumentException("egress allowlist entry '" + entry + "' is refused: " + why + "; " + GRAMMAR);
    }
}
