package org.sandbox4j.sbx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The allowlist as sbx rules: the spec's hosts, what each global allow is to them, the plan, drift. */
class SbxEgressTest {

    @ParameterizedTest(name = "{0} against {1} is {2}")
    @CsvSource({
        "pypi.org:443, pypi.org, COVERED",
        "files.pythonhosted.org, pypi.org, DISJOINT",
        "**.openai.com:443, *.openai.com, COVERED",
        "**.openai.com, *.com, COVERED",
        "*.example.com, *.example.com, COVERED",
        "*.openai.com, api.openai.com, OVERLAP",
        "**.github.com, *.api.github.com, OVERLAP",
        "api?.example.com, api1.example.com, OVERLAP",
        "api[!1].example.com, api2.example.com, OVERLAP",
        "*.example.com, *.other.com, DISJOINT",
        "example.com, *.example.com, DISJOINT",
        "sub.example.com, *.example.com, COVERED",
        "10.0.0.0/8, example.com, DISJOINT",
        "[2001:db8::1]:443, example.com, DISJOINT",
        "**, example.com, OVERLAP",
        "**:443, example.com, OVERLAP",
        "*, example.com, DISJOINT",
        "*.com, example.com, OVERLAP",
    })
    void aGlobalAllowIsCoveredOverlappingOrDisjoint(String resource, String host, SbxEgress.Verdict verdict) {
        assertThat(SbxEgress.classify(resource, List.of(host))).isEqualTo(verdict);
    }

    @Test
    void thePlanDeniesEveryDisjointGlobalAllowAndTheBareNameUnderAWildcard() {
        List<String> hosts = SbxEgress.hosts(List.of("pypi.org", "*.example.com", "*.test.io", "Test.IO"));
        assertThat(hosts).containsExactly("*.example.com", "*.test.io", "pypi.org", "test.io");
        SbxEgress.Plan plan = SbxEgress.plan(hosts, Set.of("pypi.org:443", "npmjs.org", "**.example.com"));
        assertThat(plan.denies()).containsExactly("npmjs.org", "example.com");
        assertThat(plan.allows()).containsExactly("**.example.com", "**.test.io", "pypi.org", "test.io");
        assertThat(plan.globals()).containsExactlyInAnyOrder("pypi.org:443", "npmjs.org", "**.example.com");
    }

    @Test
    void anOverlappingGlobalAllowRefusesThePlanNamingIt() {
        assertThatThrownBy(() -> SbxEgress.plan(List.of("api.github.com"), Set.of("**.github.com")))
                .isInstanceOf(SbxEgress.Refused.class).hasMessageContaining("'**.github.com'")
                .hasMessageContaining("sbx policy rm network");
        assertThatThrownBy(() -> SbxEgress.plan(List.of("api.github.com"), Set.of("**")))
                .isInstanceOf(SbxEgress.Refused.class);
    }

    @Test
    void aGlobalAllowThatCouldBeReadAsAFlagOrAListIsNeverPassedBack() {
        assertThatThrownBy(() -> SbxEgress.plan(List.of("pypi.org"), Set.of("--sandbox=x")))
                .isInstanceOf(SbxEgress.Refused.class);
        assertThatThrownBy(() -> SbxEgress.plan(List.of("pypi.org"), Set.of("a.com,b.com")))
                .isInstanceOf(SbxEgress.Refused.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"pypi.org:443", "10.1.2.3", "[::1]", "pypi.org/simple", "**.pypi.org", "*.*.pypi.org",
        "py*.org", "pypi.org.", "", "-pypi.org", "a..b", "http://pypi.org", "pypi.org,evil.com", "pypi\u0000.org",
        "localhost", "a.localhost", "*.localhost", "host.docker.internal", "*.docker.internal"})
    void anEntrySbxCannotHoldExactlyIsRefused(String entry) {
        assertThatThrownBy(() -> SbxEgress.hosts(List.of(entry))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("api.example.com");
    }

    @Test
    void driftIsANewGlobalAllowThatAddsAHostOrAnyChangeToTheSandboxsOwnRules() {
        List<String> hosts = List.of("pypi.org");
        SbxEgress.Plan plan = SbxEgress.plan(hosts, Set.of("npmjs.org"));
        String own = "{\"rules\":[{\"id\":\"a\",\"scope\":\"sandbox:box\",\"decision\":\"allow\",\"status\":\"active\","
                + "\"resource_type\":\"network\",\"resources\":[\"pypi.org\"]}";
        String global = "{\"id\":\"g\",\"scope\":\"global\",\"decision\":\"allow\",\"status\":\"active\","
                + "\"resource_type\":\"network\",\"resources\":[\"npmjs.org\"]}";
        List<String> recorded = SbxEgress.ownRules(SbxEgress.rules(own + "," + global + "]}"), "box");
        assertThat(SbxEgress.drift(plan, recorded, SbxEgress.rules(own + "," + global + "]}"), "box")).isEmpty();
        // A new global allow the allowlist already covers adds nothing.
        String covered = ",{\"id\":\"h\",\"scope\":\"global\",\"decision\":\"allow\",\"status\":\"active\","
                + "\"resource_type\":\"network\",\"resources\":[\"pypi.org:443\"]}";
        assertThat(SbxEgress.drift(plan, recorded, SbxEgress.rules(own + "," + global + covered + "]}"), "box"))
                .isEmpty();
        String added = ",{\"id\":\"h\",\"scope\":\"global\",\"decision\":\"allow\",\"status\":\"active\","
                + "\"resource_type\":\"network\",\"resources\":[\"evil.com\"]}";
        assertThat(SbxEgress.drift(plan, recorded, SbxEgress.rules(own + "," + global + added + "]}"), "box"))
                .get().asString().contains("'evil.com'");
        String inactive = own.replace("\"active\"", "\"inactive\"");
        assertThat(SbxEgress.drift(plan, recorded, SbxEgress.rules(inactive + "," + global + "]}"), "box"))
                .get().asString().contains("own rules were changed");
        // Fields that say nothing about what a rule admits (an id, a counter) may change freely...
        String recounted = own.replace("\"id\":\"a\",", "\"id\":\"a2\",\"hits\":7,");
        assertThat(SbxEgress.drift(plan, recorded, SbxEgress.rules(recounted + "," + global + "]}"), "box")).isEmpty();
        // ...but what it admits may not.
        String widened = own.replace("[\"pypi.org\"]", "[\"pypi.org\",\"evil.com\"]");
        assertThat(SbxEgress.drift(plan, recorded, SbxEgress.rules(widened + "," + global + "]}"), "box"))
                .get().asString().contains("own rules were changed");
        // Another sandbox's rules are not this one's.
        String other = ",{\"id\":\"o\",\"scope\":\"sandbox:other\",\"decision\":\"allow\",\"status\":\"active\","
                + "\"resource_type\":\"network\",\"resources\":[\"**\"]}";
        assertThat(SbxEgress.drift(plan, recorded, SbxEgress.rules(own + "," + global + other + "]}"), "box"))
                .isEmpty();
    }
}
