package org.sandbox4j.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class EgressPolicyTest {

    @Test
    void exactNamesIgnoreCaseAndTrailingDotOnDefaultPorts() {
        EgressPolicy policy = EgressPolicy.parse(List.of("PyPI.org"));
        assertThat(policy.admits("pypi.org", 443).admitted()).isTrue();
        assertThat(policy.admits("PYPI.ORG.", 80).admitted()).isTrue();
        assertThat(policy.admits("pypi.org", 8080).admitted()).isFalse();
        assertThat(policy.admits("files.pypi.org", 443).admitted()).isFalse();
        assertThat(policy.admits("pypi.org", 443).rule()).map(EgressRule::entry).contains("PyPI.org");
        assertThat(policy.admits("pypi.org", 443).reason()).isEqualTo("allowed by rule 'PyPI.org'");
    }

    @Test
    void refusalNamesTheDestination() {
        EgressPolicy.Admission refused = EgressPolicy.parse(List.of("pypi.org")).admits("Unlisted.Example", 80);
        assertThat(refused.admitted()).isFalse();
        assertThat(refused.rule()).isEmpty();
        assertThat(refused.target()).isEqualTo("unlisted.example:80");
        assertThat(refused.reason()).isEqualTo("unlisted.example:80 is not on this sandbox's allowlist");
    }

    @Test
    void literalsMatchOnlyAddressRules() {
        EgressPolicy policy = EgressPolicy.parse(List.of("203.0.113.7", "[2001:db8::1]:*", "*.example.com"));
        assertThat(policy.admits("203.0.113.7", 443).admitted()).isTrue();
        assertThat(policy.admits("203.0.113.8", 443).admitted()).isFalse();
        assertThat(policy.admits("[2001:db8:0:0::1]", 9).admitted()).isTrue();
        assertThat(policy.admits("2001:db8::1", 9).admitted()).isTrue();
        assertThat(policy.admits("[2001:db8::2]", 9).reason()).contains("[2001:db8:0:0:0:0:0:2]:9 is not on");
        // An IPv4-mapped spelling of a listed address is the same address.
        assertThat(policy.admits("[::ffff:203.0.113.7]", 80).admitted()).isTrue();
        // A literal is never matched against name rules.
        assertThat(policy.admits("127.0.0.1", 80).admitted()).isFalse();
    }

    @Test
    void exactRulesWinOverWildcardsSoAPinApplies() {
        EgressPolicy policy = EgressPolicy.parse(List.of("*.example.com:*", "a.example.com:*=127.0.0.1"));
        assertThat(policy.admits("a.example.com", 80).rule().flatMap(EgressRule::pin)).isPresent();
        assertThat(policy.admits("b.example.com", 80).rule().flatMap(EgressRule::pin)).isEmpty();
    }

    @Test
    void nonNamesAreRefusedNotMatched() {
        EgressPolicy policy = EgressPolicy.parse(List.of("*.example.com:*"));
        assertThat(policy.admits("a b.example.com", 80).reason()).contains("is not a DNS name or an IP address");
        assertThat(policy.admits("999.1.1.1", 80).admitted()).isFalse();
        assertThat(policy.admits("", 80).admitted()).isFalse();
    }

    @Test
    void emptyPolicyAdmitsNothingAndParseNamesTheBadEntry() {
        assertThat(EgressPolicy.NONE.admits("example.com", 443).admitted()).isFalse();
        assertThatThrownBy(() -> EgressPolicy.parse(List.of("ok.example", "http://bad.example")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'http://bad.example'");
    }

    @Provide
    Arbitrary<String> names() {
        Arbitrary<String> label = Arbitraries.strings().withChars("abcdefghijklmnopqrstuvwxyz0123456789-")
                .ofMinLength(1).ofMaxLength(12)
                .filter(l -> !l.startsWith("-") && !l.endsWith("-"));
        Arbitrary<String> tld = Arbitraries.strings().withChars("abcdefghijklmnopqrstuvwxyz").ofMinLength(2).ofMaxLength(6);
        return Combinators.combine(label.list().ofMinSize(0).ofMaxSize(3), tld)
                .as((labels, last) -> String.join(".", labels) + (labels.isEmpty() ? "" : ".") + last);
    }

    @Property
    void anExactRuleAdmitsItsNameInAnyCaseWithOrWithoutTheTrailingDot(
            @ForAll("names") String name, @ForAll boolean upper, @ForAll boolean dot) {
        EgressPolicy policy = EgressPolicy.parse(List.of(name));
        String asked = (upper ? name.toUpperCase(java.util.Locale.ROOT) : name) + (dot ? "." : "");
        assertThat(policy.admits(asked, 443).admitted()).isTrue();
        assertThat(policy.admits(asked, 80).admitted()).isTrue();
        assertThat(policy.admits("x" + name, 443).admitted()).isFalse();
        assertThat(policy.admits("sub." + name, 443).admitted()).isFalse();
    }

    @Property
    void aWildcardAdmitsEveryNameStrictlyBelowAndNeverTheSuffix(
            @ForAll("names") String suffix, @ForAll("names") String prefix, @ForAll @IntRange(min = 1, max = 65535) int port) {
        EgressPolicy policy = EgressPolicy.parse(List.of("*." + suffix + ":*"));
        assertThat(policy.admits(prefix + "." + suffix, port).admitted()).isTrue();
        assertThat(policy.admits(suffix, port).admitted()).isFalse();
        assertThat(policy.admits(prefix + suffix, port).admitted()).isEqualTo(
                (prefix + suffix).endsWith("." + suffix));
    }

    @Property
    void aPortRuleAdmitsOnlyItsPort(@ForAll("names") String name,
                                    @ForAll @IntRange(min = 1, max = 65535) int port,
                                    @ForAll @IntRange(min = 1, max = 65535) int other) {
        EgressPolicy policy = EgressPolicy.parse(List.of(name + ":" + port));
        assertThat(policy.admits(name, port).admitted()).isTrue();
        assertThat(policy.admits(name, other).admitted()).isEqualTo(port == other);
    }

    @Property
    void parsingNeverThrowsAnythingButIllegalArgument(@ForAll String entry) {
        try {
            EgressRule rule = EgressRule.parse(entry);
            assertThat(rule.entry()).isEqualTo(entry);
        } catch (IllegalArgumentException refused) {
            assertThat(refused.getMessage()).contains(EgressRule.GRAMMAR);
        }
    }

    @Property
    void admitsNeverThrows(@ForAll String host, @ForAll @IntRange(min = 1, max = 65535) int port) {
        EgressPolicy policy = EgressPolicy.parse(List.of("*.example.com:*", "203.0.113.7:*", "x.test=127.0.0.1"));
        assertThat(policy.admits(host, port)).isNotNull();
    }
}
