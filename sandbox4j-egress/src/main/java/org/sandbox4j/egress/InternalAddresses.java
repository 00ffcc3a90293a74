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
            v4("cloud metadata 169.254.169.254", 32, 169, 254, 169, 254),
            v4("unspecified 0.0.0.0/8", 8, 0, 0, 0, 0),
            v4("private 10.0.0.0/8", 8, 10, 0, 0, 0),
            v4("shared address space (CGNAT) 100.64.0.0/10", 10, 100, 64, 0, 0),
            v4("loopback 127.0.0.0/8", 8, 127, 0, 0, 0),
            v4("link-local 169.254.0.0/16", 16, 169, 254, 0, 0),
            v4("private 172.16.0.0/12", 12, 172, 16, 0, 0),
            v4("IETF protocol assignments 192.0.0.0/24", 24, 192, 0, 0, 0),
            v4("private 192.168.0.0/16", 16, 192, 168, 0, 0),
            v4("benchmarking 198.18.0.0/15", 15, 198, 18, 0, 0),
            v4("multicast 224.0.0.0/4", 4, 224, 0, 0, 0),
            v4("broadcast 255.255.255.255", 32, 255, 255, 255, 255),
            v4("reserved 240.0.0.0/4", 4, 240, 0, 0, 0));

    static final List<Range> IPV6_RANGES = List.of(
            v6("unspecified ::", 128),
            v6("loopback ::1", 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1),
            v6("cloud metadata fd00:ec2::254", 128, 0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54),
            v6("unique-local fc00::/7", 7, 0xfc),
            v6("link-local fe80::/10", 10, 0xfe, 0x80),
            v6("site-local fec0::/10", 10, 0xfe, 0xc0),
            v6("multicast ff00::/8", 8, 0xff),
            v6("local-use NAT64 64:ff9b:1::/48", 48, 0, 0x64, 0xff, 0x9b, 0, 1));

    private static final Range IPV4_MAPPED = v6("IPv4-mapped", 96, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff);
    private static final Range IPV4_COMPATIBLE = v6("IPv4-compatible", 96);
    private static final Range NAT64 = v6("NAT64", 96, 0, 0x64, 0xff, 0x9b);
    private static final Range SIX_TO_FOUR = v6("6to4", 16, 0x20, 0x02);
    private static final int SIX_TO_FOUR_OFFSET = 2;
    private static final int EMBEDDED_TAIL_OFFSET = 12;

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

    private static Range v4(String name, int bits, int a, int b, int c, int d) {
        return new Range(name, new byte[] {(byte) a, (byte) b, (byte) c, (byte) d}, bits);
    }

    private static Range v6(String name, int bits, int... leading) {
        byte[] prefix = new byte[IPV6_BYTES];
        for (int i = 0; i < leading.length; i++) {
            prefix[i] = (byte) leading[i];
        }
        return new Range(name, prefix, bits);
    }
}
