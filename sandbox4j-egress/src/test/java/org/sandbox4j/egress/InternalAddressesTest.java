package org.sandbox4j.egress;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.Inet6Address;
import java.net.InetAddress;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Parsing only: every address here is a literal, nothing is resolved or contacted. */
class InternalAddressesTest {

    @ParameterizedTest(name = "{0} is internal: {1}")
    @CsvSource(delimiter = '|', value = {
            "127.0.0.1            | loopback 127.0.0.0/8",
            "127.255.255.254      | loopback 127.0.0.0/8",
            "10.0.0.1             | private 10.0.0.0/8",
            "10.255.255.255       | private 10.0.0.0/8",
            "172.16.0.1           | private 172.16.0.0/12",
            "172.31.255.255       | private 172.16.0.0/12",
            "192.168.0.1          | private 192.168.0.0/16",
            "169.254.0.1          | link-local 169.254.0.0/16",
            "169.254.169.254      | cloud metadata 169.254.169.254",
            "100.64.0.1           | shared address space (CGNAT) 100.64.0.0/10",
            "100.127.255.255      | shared address space (CGNAT) 100.64.0.0/10",
            "0.0.0.0              | unspecified 0.0.0.0/8",
            "0.1.2.3              | unspecified 0.0.0.0/8",
            "224.0.0.1            | multicast 224.0.0.0/4",
            "239.255.255.250      | multicast 224.0.0.0/4",
            "255.255.255.255      | broadcast 255.255.255.255",
            "240.0.0.1            | reserved 240.0.0.0/4",
            "192.0.0.170          | IETF protocol assignments 192.0.0.0/24",
            "198.18.0.1           | benchmarking 198.18.0.0/15",
            "::1                  | loopback ::1",
            "::                   | unspecified ::",
            "fe80::1              | link-local fe80::/10",
            "febf::1              | link-local fe80::/10",
            "fec0::1              | site-local fec0::/10",
            "fc00::1              | unique-local fc00::/7",
            "fdff::1              | unique-local fc00::/7",
            "fd00:ec2::254        | cloud metadata fd00:ec2::254",
            "ff02::1              | multicast ff00::/8",
            "64:ff9b:1::1         | local-use NAT64 64:ff9b:1::/48",
            "::127.0.0.1          | loopback 127.0.0.0/8 (IPv4-compatible)",
            "::10.1.2.3           | private 10.0.0.0/8 (IPv4-compatible)",
            "64:ff9b::a9fe:a9fe   | cloud metadata 169.254.169.254 (NAT64)",
            "64:ff9b::7f00:1      | loopback 127.0.0.0/8 (NAT64)",
            "2002:c0a8:0101::1    | private 192.168.0.0/16 (6to4)",
            "2002:7f00:0001::     | loopback 127.0.0.0/8 (6to4)",
    })
    void internal(String literal, String range) {
        InetAddress address = HostSyntax.parseAddressLiteral(literal.contains(":") ? "[" + literal + "]" : literal)
                .orElseThrow();
        assertThat(InternalAddresses.classify(address)).contains(range);
    }

    @ParameterizedTest(name = "::ffff:{0} is internal like {0}")
    @ValueSource(strings = {"127.0.0.1", "10.0.0.1", "169.254.169.254", "192.168.1.1", "0.0.0.0", "100.64.0.1"})
    void ipv4MappedFormsAreJudgedByTheirIpv4Address(String v4) throws Exception {
        byte[] four = InetAddress.getByName(v4).getAddress();
        byte[] mapped = new byte[16];
        mapped[10] = (byte) 0xff;
        mapped[11] = (byte) 0xff;
        System.arraycopy(four, 0, mapped, 12, 4);
        // Inet6Address.getByAddress keeps the mapped form (InetAddress.getByAddress would unwrap it).
        InetAddress address = Inet6Address.getByAddress(null, mapped, -1);
        assertThat(address).isInstanceOf(Inet6Address.class);
        assertThat(InternalAddresses.classify(address)).hasValueSatisfying(name -> assertThat(name).endsWith("(IPv4-mapped)"));
        // The JDK's own parser unwraps it: judged as the IPv4 address directly.
        assertThat(InternalAddresses.isInternal(HostSyntax.parseAddressLiteral("[::ffff:" + v4 + "]").orElseThrow())).isTrue();
    }

    @ParameterizedTest(name = "{0} is public")
    @ValueSource(strings = {"203.0.113.7", "8.8.8.8", "1.1.1.1", "172.15.255.255", "172.32.0.0", "100.63.255.255",
            "100.128.0.0", "169.253.255.255", "11.0.0.1", "192.169.0.1", "223.255.255.255", "198.20.0.1",
            "2001:db8::1", "2606:4700::1111", "::8.8.8.8", "64:ff9b::808:808", "2002:0808:0808::1", "fe00::1"})
    void publicAddresses(String literal) {
        InetAddress address = HostSyntax.parseAddressLiteral(literal.contains(":") ? "[" + literal + "]" : literal)
                .orElseThrow();
        assertThat(InternalAddresses.classify(address)).isEmpty();
    }

    @Property
    void everyAddressInAPrivateRangeIsInternal(@ForAll @IntRange(min = 0, max = 0xFFFFFF) int low) {
        assertThat(InternalAddresses.classify(v4(10 << 24 | low))).contains("private 10.0.0.0/8");
        assertThat(InternalAddresses.classify(v4(127 << 24 | low))).contains("loopback 127.0.0.0/8");
        assertThat(InternalAddresses.classify(v4(0xAC10_0000 | (low & 0xFFFFF)))).contains("private 172.16.0.0/12");
        assertThat(InternalAddresses.classify(v4(0xC0A8_0000 | (low & 0xFFFF)))).contains("private 192.168.0.0/16");
        assertThat(InternalAddresses.classify(v4(0x6440_0000 | (low & 0x3FFFFF))))
                .contains("shared address space (CGNAT) 100.64.0.0/10");
    }

    @Property
    void embeddedFormsAreJudgedLikeTheIpv4AddressTheyCarry(@ForAll int bits) throws Exception {
        byte[] four = v4(bits).getAddress();
        boolean internal = InternalAddresses.isInternal(v4(bits));
        assertThat(InternalAddresses.isInternal(v6(new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff}, 12, four)))
                .isEqualTo(internal);
        assertThat(InternalAddresses.isInternal(v6(new byte[] {0, 0x64, (byte) 0xff, (byte) 0x9b}, 12, four)))
                .isEqualTo(internal);
        assertThat(InternalAddresses.isInternal(v6(new byte[] {0x20, 0x02}, 2, four))).isEqualTo(internal);
    }

    @Property
    void everyUniqueLocalAndLinkLocalIpv6AddressIsInternal(@ForAll byte[] tail) throws Exception {
        byte[] raw = new byte[16];
        System.arraycopy(tail, 0, raw, 0, Math.min(16, tail.length));
        byte[] ula = raw.clone();
        ula[0] = (byte) (0xfc | (ula[0] & 1));
        assertThat(InternalAddresses.isInternal(Inet6Address.getByAddress(null, ula, -1))).isTrue();
        byte[] linkLocal = raw.clone();
        linkLocal[0] = (byte) 0xfe;
        linkLocal[1] = (byte) (0x80 | (linkLocal[1] & 0x3f));
        assertThat(InternalAddresses.isInternal(Inet6Address.getByAddress(null, linkLocal, -1))).isTrue();
    }

    private static InetAddress v4(int bits) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) (bits >>> 24), (byte) (bits >>> 16), (byte) (bits >>> 8), (byte) bits});
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    private static InetAddress v6(byte[] prefix, int offset, byte[] four) throws Exception {
        byte[] raw = new byte[16];
        System.arraycopy(prefix, 0, raw, 0, prefix.length);
        System.arraycopy(four, 0, raw, offset, 4);
        return Inet6Address.getByAddress(null, raw, -1);
    }
}
