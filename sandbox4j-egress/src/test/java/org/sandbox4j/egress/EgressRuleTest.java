package org.sandbox4j.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class EgressRuleTest {

    @ParameterizedTest(name = "{0} parses as {1} {2} ports {3}")
    @CsvSource(delimiter = '|', value = {
            "example.com                 | HOST    | example.com    | 80 443",
            "Example.COM.                | HOST    | example.com    | 80 443",
            "pypi.org:443                | HOST    | pypi.org       | 443",
            "pypi.org:*                  | HOST    | pypi.org       | *",
            "a-b.c_d.example             | HOST    | a-b.c_d.example| 80 443",
            "*.example.com               | SUFFIX  | example.com    | 80 443",
            "*.Example.com.:8443         | SUFFIX  | example.com    | 8443",
            "*.com:*                     | SUFFIX  | com            | *",
            "203.0.113.7                 | ADDRESS | 203.0.113.7    | 80 443",
            "203.0.113.7:65535           | ADDRESS | 203.0.113.7    | 65535",
            "0.0.0.0:1                   | ADDRESS | 0.0.0.0        | 1",
            "[2001:db8::1]               | ADDRESS | [2001:db8:0:0:0:0:0:1] | 80 443",
            "[2001:DB8:0::1]:443         | ADDRESS | [2001:db8:0:0:0:0:0:1] | 443",
            "[::1]:*                     | ADDRESS | [0:0:0:0:0:0:0:1] | *",
    })
    void acceptedForms(String entry, EgressRule.Kind kind, String host, String ports) {
        EgressRule rule = EgressRule.parse(entry);
        assertThat(rule.entry()).isEqualTo(entry);
        assertThat(rule.kind()).isEqualTo(kind);
        assertThat(rule.host()).isEqualTo(host);
        assertThat(rule.pin()).isEmpty();
        assertThat(rule.address().isPresent()).isEqualTo(kind == EgressRule.Kind.ADDRESS);
        if (ports.equals("*")) {
            assertThat(rule.ports()).isEmpty();
            assertThat(rule.admitsPort(1)).isTrue();
            assertThat(rule.admitsPort(65535)).isTrue();
        } else {
            Set<Integer> expected = java.util.Arrays.stream(ports.split(" ")).map(Integer::valueOf)
                    .collect(java.util.stream.Collectors.toSet());
            assertThat(rule.ports()).isEqualTo(expected);
        }
    }

    @ParameterizedTest(name = "{0} pins to {1}")
    @CsvSource(delimiter = '|', value = {
            "repo.internal:8080=127.0.0.1 | 127.0.0.1 | 8080",
            "x.test=[::1]                 | ::1       | 443",
            "Mirror.Test.:*=10.1.2.3      | 10.1.2.3  | 1",
    })
    void pinnedHosts(String entry, String pin, int admittedPort) throws Exception {
        EgressRule rule = EgressRule.parse(entry);
        assertThat(rule.kind()).isEqualTo(EgressRule.Kind.HOST);
        assertThat(rule.pin()).contains(InetAddress.getByName(pin));
        assertThat(rule.admitsPort(admittedPort)).isTrue();
        assertThat(rule.namesAddress(InetAddress.getByName(pin))).isTrue();
        assertThat(rule.namesAddress(InetAddress.getByName("127.0.0.2"))).isFalse();
    }

    @ParameterizedTest(name = "''{0}'' is refused: {1}")
    @CsvSource(delimiter = '|', value = {
            "''                        | blank",
            "'   '                     | blank",
            "'exa mple.com'            | whitespace",
            "'example.com '            | whitespace",
            "'a.com,b.com'             | comma",
            "'http://example.com'      | scheme",
            "'example.com/path'        | path",
            "'user@example.com'        | user part",
            "'*'                       | lone *",
            "'*:443'                   | lone *",
            "'*x.com'                  | whole leading label",
            "'a.*.com'                 | whole leading label",
            "'*.*.com'                 | after '*.'",
            "'*.'                      | after '*.'",
            "'-bad.com'                | not a DNS name",
            "'bad-.com'                | not a DNS name",
            "'a..com'                  | not a DNS name",
            "'ex!ample.com'            | not a DNS name",
            "'example.com:0'           | port",
            "'example.com:65536'       | port",
            "'example.com:080'         | port",
            "'example.com:'            | port",
            "'example.com:http'        | port",
            "'example.com:-1'          | port",
            "':443'                    | names no host",
            "'256.1.1.1'               | not an IPv4 address",
            "'1.2.3'                   | not an IPv4 address",
            "'010.0.0.1'               | not an IPv4 address",
            "'1.2.3.4.5'               | not an IPv4 address",
            "'2001:db8::1'             | brackets",
            "'[2001:db8::1'            | closing",
            "'[2001:db8::g]'           | not an IPv6 address",
            "'[fe80::1%eth0]'          | not an IPv6 address",
            "'[::1]x'                  | only :PORT",
            "'*.example.com=127.0.0.1' | wildcard rule",
            "'203.0.113.7=127.0.0.1'   | address rule",
            "'[::1]=127.0.0.1'         | address rule",
            "'x.test=localhost'        | pin",
            "'x.test=::1'              | pin",
            "'x.test=1.2.3.4=5.6.7.8'  | pin",
            "'=127.0.0.1'              | names no host",
    })
    void refusedForms(String entry, String why) {
        assertThatThrownBy(() -> EgressRule.parse(entry))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'" + entry + "'")
                .hasMessageContaining(why)
                .hasMessageContaining(EgressRule.GRAMMAR);
    }

    @org.junit.jupiter.api.Test
    void nullIsRefusedLikeBlank() {
        assertThatThrownBy(() -> EgressRule.parse(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("blank");
    }

    @ParameterizedTest
    @ValueSource(strings = {"a.b.example.com", "a.example.com"})
    void wildcardMatchesStrictlyBelow(String name) {
        EgressPolicy policy = EgressPolicy.parse(java.util.List.of("*.example.com"));
        assertThat(policy.admits(name, 443).admitted()).isTrue();
        assertThat(policy.admits("example.com", 443).admitted()).isFalse();
        assertThat(policy.admits("badexample.com", 443).admitted()).isFalse();
    }

    @org.junit.jupiter.api.Test
    void theConstructorKeepsRulesCanonical() {
        assertThatThrownBy(() -> new EgressRule("X", EgressRule.Kind.HOST, "X.test", Optional.empty(), Set.of(), Optional.empty()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lower-case DNS name");
        assertThatThrownBy(() -> new EgressRule("x", EgressRule.Kind.HOST, "x.test", Optional.empty(), Set.of(0), Optional.empty()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("port 0");
        assertThatThrownBy(() -> new EgressRule("x", EgressRule.Kind.ADDRESS, "x", Optional.empty(), Set.of(), Optional.empty()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("exactly one address");
    }

    @org.junit.jupiter.api.Test
    void toStringIsTheEntry() {
        assertThat(EgressRule.parse("pypi.org:443")).hasToString("pypi.org:443");
        assertThat(EgressRule.parse("pypi.org").pin()).isEqualTo(Optional.empty());
    }
}
