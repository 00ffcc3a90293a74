package org.sandbox4j.testkit.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The egress suites' helpers, run directly on the host (whose network is not confined, so every
 * request here must reach; all traffic goes to listeners on 127.0.0.1 that these tests start).
 * The environment is cleared for every command, so no proxy setting of the machine takes part.
 */
class EgressHelpersTest {

    private static final long CLIENT_TIMEOUT_SECONDS = 10;
    private static final long COMMAND_BOUND_SECONDS = 30;
    private static final int OUTPUT_CAP = 64 * 1024;
    private static final String PATH = "/usr/local/bin:/usr/bin:/bin";

    @Test
    void theLoopbackServerAnswersNamesItselfAndCounts() throws Exception {
        try (LoopbackHttpServer server = LoopbackHttpServer.start("allowed")) {
            assertThat(server.url().getHost()).isEqualTo("127.0.0.1");
            assertThat(server.requests()).isZero();
            HttpClient client = HttpClient.newBuilder().proxy(HttpClient.Builder.NO_PROXY).build();
            HttpResponse<String> response = client.send(HttpRequest.newBuilder(server.url()).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(LoopbackHttpServer.STATUS);
            assertThat(response.body()).isEqualTo(server.body()).contains("allowed");
            assertThat(server.requests()).isEqualTo(1);
            assertThat(server.url("allowed.localhost")).hasHost("allowed.localhost").hasPort(server.port());
        }
    }

    @Test
    void theWitnessKnowsItsServersByPortAndNothingElse() {
        try (LoopbackHttpServer one = LoopbackHttpServer.start("one");
                LoopbackHttpServer two = LoopbackHttpServer.start("two")) {
            EgressFixture.RequestWitness witness = LoopbackHttpServer.witness(List.of(one, two));
            assertThat(witness.requestsSeen(one.url("one.localhost"))).isEqualTo(OptionalLong.of(0));
            assertThat(witness.requestsSeen(URI.create("http://127.0.0.1:1/"))).isEmpty();
            assertThat(EgressFixture.RequestWitness.NONE.requestsSeen(one.url())).isEmpty();
        }
    }

    @Test
    void aFixtureWithoutAWitnessCannotTell() {
        EgressFixture fixture = new EgressFixture(List.of("a.localhost"), URI.create("http://a.localhost:1/"),
                URI.create("http://b.localhost:2/"), URI.create("http://127.0.0.1:3/"), List.of(),
                java.util.Optional.empty());
        assertThat(fixture.witness()).isSameAs(EgressFixture.RequestWitness.NONE);
        assertThat(fixture.withWitness(url -> OptionalLong.of(7)).witness().requestsSeen(fixture.allowedUrl()))
                .hasValue(7);
    }

    @ParameterizedTest
    @EnumSource(GuestHttpClient.class)
    void eachClientPrintsTheStatusOfAReachedServer(GuestHttpClient client) throws Exception {
        try (LoopbackHttpServer server = LoopbackHttpServer.start("reached")) {
            assertThat(run(client.argv(HttpAttempt.get(server.url()), CLIENT_TIMEOUT_SECONDS)).strip())
                    .isEqualTo("200");
            assertThat(server.requests()).isEqualTo(1);
        }
    }

    @ParameterizedTest
    @EnumSource(GuestHttpClient.class)
    void eachClientPrintsNoStatusWhenNothingAnswers(GuestHttpClient client) throws Exception {
        int closedPort;
        try (LoopbackHttpServer gone = LoopbackHttpServer.start("gone")) {
            closedPort = gone.port();
        }
        String printed = run(client.argv(HttpAttempt.get(URI.create("http://127.0.0.1:" + closedPort + "/"))
                .ignoringTheProxy(), CLIENT_TIMEOUT_SECONDS)).strip();
        assertThat(printed).isEqualTo("000");
    }

    @ParameterizedTest
    @EnumSource(GuestHttpClient.class)
    void eachClientSendsTheSmuggledHostHeaderToTheUrlsServer(GuestHttpClient client) throws Exception {
        try (LoopbackHttpServer allowed = LoopbackHttpServer.start("allowed");
                LoopbackHttpServer unlisted = LoopbackHttpServer.start("unlisted")) {
            HttpAttempt smuggled = HttpAttempt.get(allowed.url())
                    .withHostHeader(unlisted.url("unlisted.localhost").getRawAuthority());
            assertThat(run(client.argv(smuggled, CLIENT_TIMEOUT_SECONDS)).strip()).isEqualTo("200");
            assertThat(allowed.requests()).isEqualTo(1);
            assertThat(unlisted.requests()).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(GuestHttpClient.class)
    void aHostileUrlIsAnArgumentNeverShellText(GuestHttpClient client, @TempDir Path dir) throws Exception {
        Path planted = dir.resolve("planted");
        String hostile = "http://127.0.0.1:1/$(touch " + planted + ")`touch " + planted + "`;touch " + planted;
        String printed = run(client.argv(HttpAttempt.get(URI.create("http://127.0.0.1:1/x"))
                .withHostHeader("h$(touch " + planted + ")"), CLIENT_TIMEOUT_SECONDS)).strip();
        assertThat(printed).isEqualTo("000");
        List<String> argv = new java.util.ArrayList<>(client.argv(HttpAttempt.get(URI.create("http://127.0.0.1:1/")),
                CLIENT_TIMEOUT_SECONDS));
        argv.set(argv.size() - 4, hostile);
        run(argv);
        assertThat(planted).doesNotExist();
    }

    @Test
    void theSearchOrderAndNamesAreTheDocumentedOnes() {
        assertThat(GuestHttpClient.SEARCH_ORDER).extracting(GuestHttpClient::command)
                .containsExactly("curl", "wget", "python3");
        assertThat(GuestHttpClient.named(" CURL ")).contains(GuestHttpClient.CURL);
        assertThat(GuestHttpClient.named("nc")).isEmpty();
        assertThat(GuestHttpClient.WGET.tunnels()).isFalse();
    }

    @Test
    void theDnsListenerAnswersTheHostAndItsFenceCountsEverythingBefore() throws Exception {
        byte[] query = EgressClosedSuite.dnsQuery("probe.sandbox4j-tck.invalid");
        try (LoopbackDnsListener listener = LoopbackDnsListener.start()) {
            byte[] answer = listener.askFromTheHost(query);
            assertThat(answer).hasSize(query.length);
            assertThat(answer[2] & 0x80).as("QR bit").isNotZero();
            listener.awaitFence();
            assertThat(listener.queries()).isEqualTo(1);
        }
    }

    @Test
    void aDnsQueryInNetworkFormatNamesItsLabels() {
        byte[] query = EgressClosedSuite.dnsQuery("ab.invalid");
        String hex = HexFormat.of().formatHex(query);
        assertThat(hex).startsWith("5a4b0100000100000000000002616207696e76616c696400").endsWith("00010001");
        assertThat(EgressClosedSuite.printfEscapes(new byte[] {0, (byte) 0xff, 'A'})).isEqualTo("\\0000\\0377\\0101");
    }

    @Test
    void bashDeliversTheQueryByteExactAndAnUnconfinedSenderIsSeen() throws Exception {
        // What the DNS probe would see from a guest on the host's network: proof it can fail.
        byte[] query = EgressClosedSuite.dnsQuery("leak.sandbox4j-tck.invalid");
        try (LoopbackDnsListener listener = LoopbackDnsListener.start()) {
            String sent = run(List.of("bash", "-c",
                    "{ printf '%b' \"$2\" > \"/dev/udp/127.0.0.1/$1\"; } 2>/dev/null && echo sent || echo send-failed",
                    "probe", Integer.toString(listener.port()), EgressClosedSuite.printfEscapes(query)));
            assertThat(sent.strip()).isEqualTo("sent");
            listener.awaitFence();
            assertThat(listener.queries()).isEqualTo(1);
        }
    }

    /** Runs argv on the host with a cleared environment; returns stdout (bounded). */
    private static String run(List<String> argv) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(argv).redirectErrorStream(false)
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        Map<String, String> environment = builder.environment();
        environment.clear();
        environment.put("PATH", PATH);
        Process process = builder.start();
        process.getOutputStream().close();
        byte[] stdout;
        try (InputStream in = process.getInputStream()) {
            stdout = in.readNBytes(OUTPUT_CAP);
        }
        if (!process.waitFor(COMMAND_BOUND_SECONDS, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("the command did not end: " + argv);
        }
        return new String(stdout, StandardCharsets.UTF_8);
    }
}
