package org.sandbox4j.sbx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;

/** Every parse of sbx's output, every error line, and the naming digests. */
class SbxCliTest {

    /** Answers every command with one canned reply and records the argv. */
    static final class Canned implements SbxRunner {
        final List<List<String>> calls = new ArrayList<>();
        SbxReply reply;

        Canned(SbxReply reply) {
            this.reply = reply;
        }

        @Override
        public SbxReply run(List<String> args, Duration timeout) {
            calls.add(args);
            return reply;
        }

        @Override
        public Process start(List<String> args) {
            throw new UnsupportedOperationException();
        }
    }

    private static SbxCli cli(SbxReply reply) {
        return new SbxCli(new Canned(reply), "sbx", Duration.ofSeconds(5));
    }

    @Test
    void lsJsonIsReadField() {
        String json = "[{\"id\":\"a1\",\"name\":\"sandbox4j-x\",\"status\":\"stopped\",\"template\":\"shell\","
                + "\"workspace\":\"/w/sandbox4j-x/ws-1\",\"extra\":[1,2.5e3,true,null,{\"k\":\"\\u00e9\\n\"}]}]";
        assertThat(cli(SbxReply.ok(json)).ls()).containsExactly(new SbxListing("a1", "sandbox4j-x", "stopped", "shell",
                "/w/sandbox4j-x/ws-1"));
        assertThat(cli(SbxReply.ok(" [ ] \n")).ls()).isEmpty();
    }

    @Test
    void malformedJsonIsRefusedNotGuessed() {
        for (String bad : List.of("", "[", "[{}]", "[{\"id\":1}]", "{}", "[],", "[1,]", "[{\"a\":1,\"a\":2}]",
                "[\"\t\"]", "null")) {
            assertThatThrownBy(() -> cli(SbxReply.ok(bad)).ls()).as(bad).isInstanceOf(SandboxException.class)
                    .hasMessageContaining("sbx ls");
        }
    }

    @Test
    void mcpServersAreTheirNames() {
        assertThat(cli(SbxReply.ok("[]")).mcpServers()).isEmpty();
        assertThat(cli(SbxReply.ok("[{\"name\":\"github\",\"url\":\"https://x\"},{\"name\":\"fs\",\"url\":\"u\"}]"))
                .mcpServers()).containsExactly("github", "fs");
    }

    @Test
    void theAgentForwardingSettingIsReadStrictly() {
        assertThat(cli(SbxReply.ok("false\n")).agentForwardingEnabled()).isFalse();
        assertThat(cli(SbxReply.ok("true\n")).agentForwardingEnabled()).isTrue();
        assertThatThrownBy(() -> cli(SbxReply.ok("maybe")).agentForwardingEnabled())
                .isInstanceOf(SandboxException.class);
    }

    @Test
    void errorLinesBecomeTheirTypes() {
        assertThatThrownBy(() -> cli(SbxReply.error(FakeSbx.LOGIN)).ls()).isInstanceOf(SbxLoginRequired.class)
                .hasMessageContaining("sbx login");
        assertThatThrownBy(() -> cli(SbxReply.error(FakeSbx.ENGINE)).rm("n")).isInstanceOf(SbxDaemonFault.class)
                .hasMessageContaining("sbx daemon restart");
        assertThatThrownBy(() -> cli(new SbxReply(-1, "", "", true)).ls()).isInstanceOf(SandboxException.class)
                .hasMessageContaining("did not answer");
        assertThatThrownBy(() -> cli(SbxReply.error("template nope not found")).create("n", "nope", Optional.empty(),
                Optional.empty(), "/w")).isInstanceOf(SandboxException.class).hasMessageContaining("template nope");
        assertThat(SbxReply.errorLineIn("warning: x\nERROR: sandbox n not found\n")).contains("sandbox n not found");
    }

    @Test
    void createAndRmReadTheirOwnOutcomes() {
        assertThat(cli(SbxReply.ok("id-9\n")).create("n", "shell", Optional.empty(), Optional.empty(), "/w").id())
                .contains("id-9");
        assertThat(cli(SbxReply.error("a sandbox named n already exists")).create("n", "shell", Optional.empty(),
                Optional.empty(), "/w").nameTaken()).isTrue();
        assertThat(cli(SbxReply.ok("")).rm("n")).isTrue();
        assertThat(cli(SbxReply.error("sandbox n not found")).rm("n")).isFalse();
    }

    @Test
    void theArgvOfEachCommandIsPinned() {
        Canned runner = new Canned(SbxReply.ok("[]"));
        SbxCli cli = new SbxCli(runner, "sbx", Duration.ofSeconds(5));
        cli.ls();
        cli.mcpServers();
        runner.reply = SbxReply.ok("false");
        cli.agentForwardingEnabled();
        runner.reply = SbxReply.ok("");
        cli.rm("n");
        runner.reply = SbxReply.ok("id");
        cli.create("n", "t", Optional.of(4), Optional.of("8g"), "/w/n/ws-1");
        cli.exec("n", true, List.of("sh", "-c", "x"), Duration.ofSeconds(1));
        assertThat(runner.calls).containsExactly(
                List.of("ls", "--format", "json"),
                List.of("mcp", "ls", "--format", "json"),
                List.of("settings", "get", "ssh.agentForwardingEnabled"),
                List.of("rm", "--force", "n"),
                List.of("create", "--name", "n", "--template", "t", "--deny-network", "**", "--cpus", "4", "--memory",
                        "8g", "/w/n/ws-1"),
                List.of("exec", "--user", "root", "n", "--", "sh", "-c", "x"));
        assertThat(SbxCli.execArgs("n", false, true, List.of("cat"))).containsExactly("exec", "-i", "n", "--", "cat");
    }

    @Test
    void namesAreStableAndDistinctPerScopeThreadAgentAndKind() {
        SbxNames names = new SbxNames("sandbox4j-");
        SandboxKey key = new SandboxKey("s", "t", "a");
        String name = names.name(key, "k");
        assertThat(name).matches("sandbox4j-[0-9a-f]{12}-[0-9a-f]{12}-[0-9a-f]{8}");
        assertThat(names.name(new SandboxKey("s", "t", "a"), "k")).isEqualTo(name);
        assertThat(name).startsWith(names.keyPrefix(key)).startsWith(names.conversationPrefix("s", "t"));
        List<String> others = List.of(names.name(new SandboxKey("s2", "t", "a"), "k"),
                names.name(new SandboxKey("s", "t2", "a"), "k"), names.name(new SandboxKey("s", "t", "a2"), "k"),
                names.name(key, "k2"), names.name(new SandboxKey("s|t", "", "a"), "k"));
        assertThat(others).doesNotContain(name).doesNotHaveDuplicates();
        assertThat(names.name(new SandboxKey("s", "t", "a2"), "k")).startsWith(names.conversationPrefix("s", "t"))
                .doesNotStartWith(names.keyPrefix(key));
        assertThat(names.name(new SandboxKey("s2", "t", "a"), "k")).doesNotStartWith(names.conversationPrefix("s", "t"));
        // Pinned: the same mapping in every process and release, or disposal misses what an older one made.
        assertThat(name).isEqualTo("sandbox4j-" + org.sandbox4j.core.KeyDigest.ofParts(List.of("s", "t")).substring(0, 12)
                + "-" + org.sandbox4j.core.KeyDigest.ofParts(List.of("s", "t", "a")).substring(0, 12) + "-"
                + org.sandbox4j.core.KeyDigest.ofParts(List.of("k")).substring(0, 8));
    }

    @Test
    void theConfigRefusesWhatSbxWouldRefuse() {
        assertThatThrownBy(() -> SbxConfig.builder().namePrefix("Upper-").build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SbxConfig.builder().cpus(0).build()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SbxConfig.builder().execCleanupTimeout(Duration.ZERO).build())
                .isInstanceOf(IllegalArgumentException.class);
    }
}
