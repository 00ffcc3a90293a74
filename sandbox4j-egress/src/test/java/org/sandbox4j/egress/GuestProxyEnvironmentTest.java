package org.sandbox4j.egress;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class GuestProxyEnvironmentTest {

    @Test
    void everyClientIsPointedAtTheBridge() {
        Map<String, String> env = GuestProxyEnvironment.variables();
        String url = "http://127.0.0.1:3128";
        assertThat(env).containsEntry("HTTP_PROXY", url).containsEntry("HTTPS_PROXY", url)
                .containsEntry("http_proxy", url).containsEntry("https_proxy", url)
                .containsEntry("ALL_PROXY", url).containsEntry("all_proxy", url)
                .containsEntry("PIP_PROXY", url)
                .containsEntry("npm_config_proxy", url).containsEntry("npm_config_https_proxy", url)
                .containsEntry("NO_PROXY", "localhost,127.0.0.1,::1").containsEntry("no_proxy", "localhost,127.0.0.1,::1")
                .containsEntry("JAVA_TOOL_OPTIONS", "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128"
                        + " -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128"
                        + " -Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]")
                .hasSize(12);
        assertThat(GuestProxyEnvironment.GUEST_BRIDGE_HOST).isEqualTo("127.0.0.1");
        assertThat(GuestProxyEnvironment.GUEST_BRIDGE_PORT).isEqualTo(3128);
    }
}
