package org.sandbox4j.egress;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DecisionRecordTest {

    @TempDir
    Path dir;

    @Test
    void jsonEscapesQuotesBackslashesAndControlCharacters() {
        assertThat(Json.string("plain")).isEqualTo("\"plain\"");
        assertThat(Json.string("a\"b\\c")).isEqualTo("\"a\\\"b\\\\c\"");
        assertThat(Json.string("line\nbreak\r\ttab\b\f")).isEqualTo("\"line\\nbreak\\r\\ttab\\b\\f\"");
        assertThat(Json.string("\u0000\u0001\u001f\u007f")).isEqualTo("\"\\u0000\\u0001\\u001f\\u007f\"");
        assertThat(Json.string("\u2028\u2029")).isEqualTo("\"\\u2028\\u2029\"");
        assertThat(Json.string("caf\u00e9 \u20ac")).isEqualTo("\"caf\u00e9 \u20ac\"");
        assertThat(Json.string("\ud800")).isEqualTo("\"\\ud800\"");
    }

    @Property
    void anEscapedStringIsOneLineWithOnlyEscapedQuotes(@ForAll String text) {
        String json = Json.string(text);
        assertThat(json).startsWith("\"").endsWith("\"").doesNotContain("\n", "\r");
        String inner = json.substring(1, json.length() - 1);
        // Every quote inside is preceded by an odd run of backslashes, i.e. escaped.
        for (int i = inner.indexOf('"'); i >= 0; i = inner.indexOf('"', i + 1)) {
            int slashes = 0;
            for (int j = i - 1; j >= 0 && inner.charAt(j) == '\\'; j--) {
                slashes++;
            }
            assertThat(slashes % 2).isEqualTo(1);
        }
        assertThat(inner.chars()).allMatch(c -> c >= 0x20 && c != 0x7f);
    }

    @Test
    void aDecisionIsOneJsonLine() {
        EgressDecision decision = new EgressDecision(Instant.parse("2026-01-02T03:04:05Z"), "CONNECT", "a.test", 443,
                EgressDecision.Verdict.ALLOWED, "allowed by rule 'a.test'", 10, 20);
        assertThat(decision.toJson()).isEqualTo("{\"time\":\"2026-01-02T03:04:05Z\",\"method\":\"CONNECT\","
                + "\"host\":\"a.test\",\"port\":443,\"verdict\":\"ALLOWED\",\"reason\":\"allowed by rule 'a.test'\","
                + "\"bytesToServer\":10,\"bytesToClient\":20}");
    }

    @Test
    void theLogKeepsTheLastDecisionsAndCountsTheDropped() throws Exception {
        Path audit = dir.resolve("audit.jsonl");
        Files.writeString(audit, "{\"earlier\":true}\n");
        try (DecisionLog log = new DecisionLog(3, Optional.of(audit))) {
            for (int i = 1; i <= 5; i++) {
                log.record(new EgressDecision(Instant.now(), "GET", "h" + i, 80, EgressDecision.Verdict.REFUSED, "r", 0, 0));
            }
            assertThat(log.snapshot()).extracting(EgressDecision::host).containsExactly("h3", "h4", "h5");
            assertThat(log.dropped()).isEqualTo(2);
            assertThat(log.auditFailures()).isZero();
        }
        List<String> lines = Files.readAllLines(audit);
        assertThat(lines).hasSize(6).first().isEqualTo("{\"earlier\":true}");
        assertThat(lines.get(5)).contains("\"host\":\"h5\"");
    }
}
