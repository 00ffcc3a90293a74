package org.sandbox4j.egress;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Locale;
import java.util.Optional;

/**
 * The one place host names, IP literals and ports are read, shared by the rule parser and the
 * proxy's request parser so that a rule and a request can never disagree on what a host is.
 * Nothing here touches DNS: literals are parsed by hand (IPv4) or after a character check that
 * keeps the JDK from treating the text as a name (IPv6).
 */
final class HostSyntax {

    /** RFC 1035: a whole name is at most 253 characters without the trailing dot. */
    static final int MAX_NAME_LENGTH = 253;
    /** RFC 1035: one label is at most 63 characters. */
    static final int MAX_LABEL_LENGTH = 63;
    static final int MIN_PORT = 1;
    static final int MAX_PORT = 65_535;
    private static final int MAX_PORT_DIGITS = 5;
    private static final int IPV4_OCTETS = 4;
    private static final int OCTET_MAX = 255;

    private HostSyntax() {
    }

    /** Lower case, one trailing dot dropped: the form names are compared in. */
    static String normalizeName(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        return lower.endsWith(".") ? lower.substring(0, lower.length() - 1) : lower;
    }

    /** Whether {@code name} (already normalised) is a DNS name of letters, digits and inner hyphens. */
    static boolean isDnsName(String name) {
        if (name.isEmpty() || name.length() > MAX_NAME_LENGTH) {
            return false;
        }
        String[] labels = name.split("\\.", -1);
        for (String label : labels) {
            if (!isLabel(label)) {
                return false;
            }
        }
        // A last label of digits only would make "1.2.3.256" a "name": it is a bad address instead.
        return !labels[labels.length - 1].chars().allMatch(HostSyntax::isDigit);
    }

    private static boolean isLabel(String label) {
        if (label.isEmpty() || label.length() > MAX_LABEL_LENGTH
                || label.charAt(0) == '-' || label.charAt(label.length() - 1) == '-') {
            return false;
        }
        return label.chars().allMatch(c -> isDigit(c) || (c >= 'a' && c <= 'z') || c == '-' || c == '_');
    }

    /** Whether the text has the shape of an IPv4 literal (digits and dots), valid or not. */
    static boolean looksLikeIpv4(String text) {
        return !text.isEmpty() && text.chars().allMatch(c -> isDigit(c) || c == '.');
    }

    /**
     * A strict dotted quad: four decimal octets 0-255 without leading zeros (which some resolvers
     * read as octal, so {@code 010.0.0.1} could mean two different hosts).
     */
    static Optional<InetAddress> parseIpv4(String text) {
        String[] parts = text.split("\\.", -1);
        if (parts.length != IPV4_OCTETS) {
            return Optional.empty();
        }
        byte[] bytes = new byte[IPV4_OCTETS];
        for (int i = 0; i < IPV4_OCTETS; i++) {
            String part = parts[i];
            if (part.isEmpty() || part.length() > 3 || !part.chars().allMatch(HostSyntax::isDigit)
                    || (part.length() > 1 && part.charAt(0) == '0')) {
                return Optional.empty();
            }
            int value = Integer.parseInt(part);
            if (value > OCTET_MAX) {
                return Optional.empty();
            }
            bytes[i] = (byte) value;
        }
        return Optional.of(byAddress(bytes));
    }

    /**
     * An IPv6 literal without brackets. Zone ids ({@code %eth0}) are refused: they name an
     * interface of the host, which no guest has any business choosing.
     */
    static Optional<InetAddress> parseIpv6(String text) {
        if (text.isEmpty() || text.indexOf(':') < 0
                || !text.chars().allMatch(c -> isHex(c) || c == ':' || c == '.')) {
            return Optional.empty();
        }
        try {
            // With brackets and only hex digits, colons and dots, the JDK parses a literal or
            // throws; it never asks DNS.
            return Optional.of(InetAddress.getByName("[" + text + "]"));
        } catch (UnknownHostException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** An IPv4 literal, or an IPv6 literal in brackets. */
    static Optional<InetAddress> parseAddressLiteral(String text) {
        if (text.startsWith("[") && text.endsWith("]")) {
            return parseIpv6(text.substring(1, text.length() - 1));
        }
        return looksLikeIpv4(text) ? parseIpv4(text) : Optional.empty();
    }

    /** A decimal port 1-65535 without sign or leading zeros, or -1. */
    static int parsePort(String text) {
        if (text.isEmpty() || text.length() > MAX_PORT_DIGITS || !text.chars().allMatch(HostSyntax::isDigit)
                || text.charAt(0) == '0') {
            return -1;
        }
        int port = Integer.parseInt(text);
        return port >= MIN_PORT && port <= MAX_PORT ? port : -1;
    }

    /** How an address is written inside a URL authority or a rule: IPv6 in brackets. */
    static String literal(InetAddress address) {
        String text = address.getHostAddress();
        return text.indexOf(':') >= 0 ? "[" + text + "]" : text;
    }

    private static InetAddress byAddress(byte[] bytes) {
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("a 4-byte address is always accepted", e);
        }
    }

    private static boolean isDigit(int c) {
        return c >= '0' && c <= '9';
    }

    private static boolean isHex(int c) {
        return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }
}
