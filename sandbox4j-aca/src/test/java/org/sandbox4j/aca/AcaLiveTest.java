package org.sandbox4j.aca;

import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.Suites;

/**
 * The live suite: every TCK suite {@link AcaBackend} declares, against the real Azure Container
 * Apps Sandboxes data plane. Enabled only by {@code SANDBOX4J_ACA_E2E=1}; the rest comes from
 * {@code SANDBOX4J_ACA_*} variables (see the module README):
 * <ul>
 *   <li>{@code SANDBOX4J_ACA_ENDPOINT} — {@code https://management.<region>.azuredevcompute.io};</li>
 *   <li>{@code SANDBOX4J_ACA_SUBSCRIPTION}, {@code SANDBOX4J_ACA_RESOURCE_GROUP},
 *       {@code SANDBOX4J_ACA_SANDBOX_GROUP} — where the sandboxes are made;</li>
 *   <li>{@code SANDBOX4J_ACA_IMAGE} — the image every spec uses (a catalogue name such as
 *       {@code ubuntu}, from {@code aca sandboxgroup disk list-public}, or an imported image's base reference);</li>
 *   <li>{@code SANDBOX4J_ACA_TOKEN} — a bearer token for {@value AcaTokenSupplier#DEFAULT_SCOPE}
 *       (for example {@code az account get-access-token --scope https://dynamicsessions.io/.default
 *       --query accessToken -o tsv}); the caller needs the "Container Apps SandboxGroup Data Owner"
 *       role on the group.</li>
 * </ul>
 * Every sandbox the suite makes is labelled with the TCK's scopes and removed by its disposal
 * probes; the lifecycle suite's second backend instance purges what the first made.
 */
@EnabledIfEnvironmentVariable(named = AcaLiveTest.ENABLE, matches = "1")
class AcaLiveTest {

    static final String ENABLE = "SANDBOX4J_ACA_E2E";
    static final String ENDPOINT = "SANDBOX4J_ACA_ENDPOINT";
    static final String SUBSCRIPTION = "SANDBOX4J_ACA_SUBSCRIPTION";
    static final String RESOURCE_GROUP = "SANDBOX4J_ACA_RESOURCE_GROUP";
    static final String SANDBOX_GROUP = "SANDBOX4J_ACA_SANDBOX_GROUP";
    static final String IMAGE = "SANDBOX4J_ACA_IMAGE";
    static final String TOKEN = "SANDBOX4J_ACA_TOKEN";

    private static String required(String variable) {
        String value = System.getenv(variable);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException(ENABLE + "=1 needs " + variable + " (see sandbox4j-aca/README.md)");
        }
        return value.strip();
    }

    static AcaConfig config() {
        return AcaConfig.builder().endpoint(required(ENDPOINT)).subscription(required(SUBSCRIPTION))
                .resourceGroup(required(RESOURCE_GROUP)).sandboxGroup(required(SANDBOX_GROUP)).build();
    }

    @TestFactory
    Stream<DynamicNode> everySuiteTheBackendDeclares() {
        AcaConfig config = config();
        String token = required(TOKEN);
        String image = required(IMAGE);
        ConformanceTarget target = new ConformanceTarget() {
            @Override
            public SandboxBackend newBackend() {
                return new AcaBackend(config, scope -> token);
            }

            @Override
            public SandboxSpec spec(SandboxSpec.Builder builder) {
                return AcaConformanceTest.denyAllUnlessNamed(builder.image(image).build());
            }

            /** A microVM keeps its disk between commands and across suspend and resume. */
            @Override
            public boolean persistentRoot() {
                return true;
            }
        };
        return Conformance.declaredTests(target, Suites.all());
    }
}
