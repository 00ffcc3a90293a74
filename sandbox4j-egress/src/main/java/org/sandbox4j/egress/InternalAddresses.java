package org.sandbox4j.egress;

import java.net.InetAddress;
import java.util.List;
import java.util.Optional;

/**
 * Which destinations are internal: the host itself, its networks, and its cloud's metadata
 * service. A sandbox reaches one only when a rule names that address; an allowlisted name that
 * resolves to one is refused, so DNS cannot turn an allowlist entry into a path to the host.
 *
 * <p>IPv6 forms that carry an IPv4 address (IPv4-mapped {@code ::ffff:0:0/96}, IPv4-compatible
 * {@code ::/96}, 6to4 {@code 2002::/16}, NAT64 {@code 64:ff9b::/96}) are judged by the IPv4 address
 * they carry, because the host's stack may deliver them there.
 */
final class InternalAddresses {

    private static final int IPV4_BYTES = 4;
    private static final int IPV6_BYTES = 16;
    private static final int BITS_PER_BYTE = 8;

    /** A named prefix; the first range that contains an address names it. */
    record Range(String name, byte[] prefix, int bits) {

        boolean contains(byte[] address) {
            if (address.length != prefix.length) {
                return false;
            }
            int full = bits / BITS_PER_BYTE;
            for (int i = 0; i < full; i++) {
                if (address[i] != prefix[i]) {
                    return false;
                }
            }
            int rest = bits % BITS_PER_BYTE;
            if (rest == 0) {
                return true;
            }
            int mask = (0xFF << (BITS_PER_BYTE - rest)) & 0xFF;
            return (address[full] & mask) == (prefix[full] & mask);
        }
    }

    /** Most specific first: the metadata address is named before the link-local range holding it. */
    static final List<Range> IPV4_RANGES = List.of(
            internal("cloud metadata", "169.254.169.254"),
            internal("unspecified", "0.0.0.0/8"),
            internal("private", "10.0.0.0/8"),
            internal("shared address space (CGNAT)", "100.64.0.0/10"),
            internal("loopback", "127.0.0.0/8"),
            internal("link-local", "169.254.0.0/16"),
            internal("private", "172.16.0.0/12"),
            internal("IETF protocol assignments", "192.0.0.0/24"),
            internal("private", "192.168.0.0/16"),
            internal("benchmarking", "198.18.0.0/15"),
            internal("multicast", "224.0.0.0/4"),
            internal("broadcast", "255.255.255.255"),
            internal("reserved", "240.0.0.0/4"));

    static final List<Range> IPV6_RANGES = List.of(
            internal("unspecified", "::"),
            internal("loopback", "::1"),
            internal("cloud metadata", "fd00:ec2::254"),
            internal("unique-local", "fc00::/7"),
            internal("link-local", "fe80::/10"),
            internal("site-local", "fec0::/10"),
            internal("multicast", "ff00::/8"),
            internal("local-use NAT64", "64:ff9b:1::/48"));

    private static final Range IPV4_MAPPED = range("IPv4-mapped", "::ffff:0:0/96");
    private static final Range IPV4_COMPATIBLE = range("IPv4-compatible", "::/96");
    private static final Range NAT64 = range("NAT64", "64:ff9b::/96");
    private static final Range SIX_TO_FOUR = range("6to4", "2002::/16");
    private static final int SIX_TO_FOUR_OFFSET = 2;
    private static final int EMBEDDED_TAIL_OFFSET = 12;
    /** Where {@code ::ffff:a.b.c.d} has its two {@code ff} bytes, just before the IPv4 address. */
    private static final int MAPPED_MARKER_OFFSET = 10;

    private InternalAddresses() {
    }

    /** The internal range {@code address} falls in, by name, or empty for a public address. */
    static Optional<String> classify(InetAddress address) {
        return classify(address.getAddress());
    }

    /** Whether {@code address} is internal. */
    static boolean isInternal(InetAddress address) {
        return classify(address).isPresent();
    }

    static Optional<String> classify(byte[] raw) {
        if (raw.length == IPV4_BYTES) {
            return first(IPV4_RANGES, raw);
        }
        if (raw.length != IPV6_BYTES) {
            throw new IllegalArgumentException("an IP address has 4 or 16 bytes, not " + raw.length);
        }
        Optional<String> own = first(IPV6_RANGES, raw);
        if (own.isPresent()) {
            return own;
        }
        if (IPV4_MAPPED.contains(raw)) {
            return embedded(IPV4_MAPPED, raw, EMBEDDED_TAIL_OFFSET);
        }
        if (IPV4_COMPATIBLE.contains(raw)) {
            return embedded(IPV4_COMPATIBLE, raw, EMBEDDED_TAIL_OFFSET);
        }
        if (NAT64.contains(raw)) {
            return embedded(NAT64, raw, EMBEDDED_TAIL_OFFSET);
        }
        if (SIX_TO_FOUR.contains(raw)) {
            return embedded(SIX_TO_FOUR, raw, SIX_TO_FOUR_OFFSET);
        }
        return Optional.empty();
    }

    private static Optional<String> embedded(Range carrier, byte[] raw, int offset) {
        byte[] v4 = new byte[IPV4_BYTES];
        System.arraycopy(raw, offset, v4, 0, IPV4_BYTES);
        return first(IPV4_RANGES, v4).map(name -> name + " (" + carrier.name() + ")");
    }

    private static Optional<String> first(List<Range> ranges, byte[] raw) {
        return ranges.stream().filter(r -> r.contains(raw)).map(Range::name).findFirst();
    }

    /** An internal range, named by what it is for and then its CIDR: {@code private 10.0.0.0/8}. */
    private static Range internal(String use, String cidr) {
        return range(use + " " + cidr, cidr);
    }

    /** {@code ADDRESS/BITS}, or {@code ADDRESS} alone for that one address. */
    private static Range range(String name, String cidr) {
        int slash = cidr.indexOf('/');
        String literal = slash < 0 ? cidr : cidr.substring(0, slash);
        byte[] prefix = HostSyntax.parseIpv4(literal).or(() -> HostSyntax.parseIpv6(literal))
                .orElseThrow(() -> new IllegalArgumentException("not an IP address: " + cidr)).getAddress();
        if (prefix.length == IPV4_BYTES && literal.indexOf(':') >= 0) {
            // The JDK hands an IPv4-mapped IPv6 literal back as its IPv4 address: map it again.
            byte[] mapped = new byte[IPV6_BYTES];
            mapped[MAPPED_MARKER_OFFSET] = (byte) 0xff;
            mapped[MAPPED_MARKER_OFFSET + 1] = (byte) 0xff;
            System.arraycopy(prefix, 0, mapped, EMBEDDED_TAIL_OFFSET, IPV4_BYTES);
            prefix = mapped;
        }
        int bits = slash < 0 ? prefix.length * BITS_PER_BYTE : Integer.parseInt(cidr.substring(slash + 1));
        return new Range(name, prefix, bits);
    }
}
