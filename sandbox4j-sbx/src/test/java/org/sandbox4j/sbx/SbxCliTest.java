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

    /** The shape the reference backend and a third-party client read from {@code sbx ls --json}. */
    static final String LS_SAMPLE = "{\"sandboxes\":[{\"name\":\"sandbox4j-x\",\"id\":\"a1\","
            + "\"workspaces\":[\"/w/sandbox4j-x/ws-1\"],\"status\":\"stopped\",\"agent\":\"shell\","
            + "\"extra\":[1,2.5e3,true,null,{\"k\":\"\\u00e9\\n\"}]},"
            + "{\"name\":\"other\",\"id\":\"b2\",\"workspaces\":[\"/a\",\"/b:ro\"]}]}";

    @Test
    void lsJsonIsReadByTheSourcedFieldsOnly() {
        assertThat(cli(SbxReply.ok(LS_SAMPLE)).ls()).containsExactly(
                new SbxListing("a1", "sandbox4j-x", List.of("/w/sandbox4j-x/ws-1")),
                new SbxListing("b2", "other", List.of("/a", "/b:ro")));
        assertThat(cli(SbxReply.ok(" {\"sandboxes\": [ ]} \n")).ls()).isEmpty();
        // Status and template have no sourced field name: rows without them, or with any spelling, read alike.
        assertThat(cli(SbxReply.ok("{\"sandboxes\":[{\"name\":\"n\",\"id\":\"i\",\"workspaces\":[],"
                + "\"state\":\"running\",\"template\":\"img\"}]}")).ls())
                .containsExactly(new SbxListing("i", "n", List.of()));
    }

    @Test
    void malformedJsonIsRefusedNotGuessed() {
        for (String bad : List.of("", "[", "[]", "[{}]", "{}", "{\"sandboxes\":null}", "{\"sandboxes\":{}}",
                "{\"sandboxes\":[1]}", "{\"sandboxes\":[{\"name\":\"n\",\"id\":\"i\"}]}",
                "{\"sandboxes\":[{\"name\":\"n\",\"id\":1,\"workspaces\":[]}]}",
                "{\"sandboxes\":[{\"name\":\"n\",\"id\":\"i\",\"workspace\":\"/w\"}]}",
                "{\"sandboxes\":[{\"name\":\"n\",\"id\":\"i\",\"workspaces\":[1]}]}",
                "{\"sandboxes\":[],\"sandboxes\":[]}", "{\"sandboxes\":[]},", "null")) {
            assertThatThrownBy(() -> cli(SbxReply.ok(bad)).ls()).as(bad).isInstanceOf(SandboxException.class)
                    .hasMessageContaining("sbx ls");
        }
    }

    @Test
    void mcpServersAreReadFromTheServersListAndAnythingElseIsRefused() {
        assertThat(cli(SbxReply.ok("{\"servers\":[]}")).mcpServers()).isEmpty();
        assertThat(cli(SbxReply.ok("{\"servers\":[{\"name\":\"github\",\"url\":\"https://x\"},{\"url\":\"u\"}]}"))
                .mcpServers()).containsExactly("'github'", "an object");
        for (String bad : List.of("[]", "{}", "{\"servers\":null}", "{\"servers\":{}}", "")) {
            assertThatThrownBy(() -> cli(SbxReply.ok(bad)).mcpServers()).as(bad).isInstanceOf(SandboxException.class)
                    .hasMessageContaining("sbx mcp ls");
        }
    }

    @Test
    void theAgentForwardingSettingIsReadStrictly() {
        assertThat(cli(SbxReply.ok("false\n")).agentForwardingEnabled()).isFalse();
        assertThat(cli(SbxReply.ok("true\n")).agentForwardingEnabled()).isTrue();
        assertThatThrownBy(() -> cli(SbxReply.ok("maybe")).agentForwardingEnabled())
                .isInstanceOf(SandboxException.class);
    }

    @Test
    void sharedFailuresAreReadFromTheWholeStderrCaseInsensitively() {
        // As real sbx v0.39 answered a lapsed login, with and without an ERROR: prefix.
        for (String said : List.of("401 Unauthorized: no valid user session found\n",
                "ERROR: 401 Unauthorized: no valid user session found\n", "Error: not logged in\n",
                "please run `sbx login`\n", "You must LOG IN first\n", "unauthenticated\n")) {
            assertThatThrownBy(() -> cli(new SbxReply(1, "", said, false)).ls()).as(said)
                    .isInstanceOf(SbxLoginRequired.class).hasMessageContaining("sbx login");
        }
        assertThatThrownBy(() -> cli(new SbxReply(1, "", "sandboxd: Backend Unavailable\n", false)).rm("n"))
                .isInstanceOf(SbxDaemonFault.class).hasMessageContaining("sbx daemon restart");
        assertThatThrownBy(() -> cli(new SbxReply(1, "", "ERROR: kit startup exited with code 127\n", false))
                .create("n", Optional.of("alpine"), Optional.empty(), Optional.empty(), "/w"))
                .isInstanceOf(SandboxException.class).isNotInstanceOfAny(SbxLoginRequired.class, SbxDaemonFault.class)
                .hasMessageContaining("a template needs /bin/sh and /bin/bash");
        assertThatThrownBy(() -> cli(new SbxReply(-1, "", "", true)).ls()).isInstanceOf(SandboxException.class)
                .hasMessageContaining("did not answer");
        assertThatThrownBy(() -> cli(SbxReply.error("template nope not found")).create("n", Optional.of("nope"),
                Optional.empty(), Optional.empty(), "/w")).isInstanceOf(SandboxException.class)
                .hasMessageContaining("template nope");
        // Control characters sbx (or a guest) put in a line never reach a message raw.
        assertThatThrownBy(() -> cli(SbxReply.error("bad\u001b[31m thing")).rm("n"))
                .isInstanceOf(SandboxException.class).message().doesNotContain("\u001b");
        assertThat(SbxReply.errorLineIn("warning: x\nERROR: sandbox n not found\n")).contains("sandbox n not found");
    }

    @Test
    void createAndRmReadTheirOwnOutcomes() {
        // Progress on stdout is not read: the id comes from ls.
        assertThat(cli(SbxReply.ok("Creating sandbox n...\n")).create("n", Optional.empty(), Optional.empty(),
                Optional.empty(), "/w")).isEqualTo(SbxCli.Created.MADE);
        assertThat(cli(SbxReply.error("a sandbox named n already exists")).create("n", Optional.empty(),
                Optional.empty(), Optional.empty(), "/w")).isEqualTo(SbxCli.Created.NAME_TAKEN);
        assertThat(cli(SbxReply.ok("")).rm("n")).isTrue();
        assertThat(cli(SbxReply.error("sandbox n not found")).rm("n")).isFalse();
    }

    @Test
    void theArgvOfEachCommandIsPinned() {
        Canned runner = new Canned(SbxReply.ok("{\"sandboxes\":[]}"));
        SbxCli cli = new SbxCli(runner, "sbx", Duration.ofSeconds(5));
        cli.ls();
        runner.reply = SbxReply.ok("{\"servers\":[]}");
        cli.mcpServers();
        runner.reply = SbxReply.ok("false");
        cli.agentForwardingEnabled();
        runner.reply = SbxReply.ok("");
        cli.rm("n");
        cli.create("n", Optional.of("img:1"), Optional.of(4), Optional.of("8g"), "/w/n/ws-1");
        cli.create("n", Optional.empty(), Optional.empty(), Optional.empty(), "/w/n/ws-2");
        cli.exec("n", true, List.of("sh", "-c", "x"), Duration.ofSeconds(1));
        assertThat(runner.calls).containsExactly(
                List.of("ls", "--json"),
                List.of("mcp", "ls", "--json"),
                List.of("settings", "get", "ssh.agentForwardingEnabled"),
                List.of("rm", "--force", "n"),
                List.of("create", "shell", "--name", "n", "--cpus", "4", "--memory", "8g", "--skills", "off",
                        "--deny-network", "**", "--quiet", "--template", "img:1", "/w/n/ws-1"),
                // No image named: no --template, so sbx uses the shell agent's own image.
                List.of("create", "shell", "--name", "n", "--skills", "off", "--deny-network", "**", "--quiet",
                        "/w/n/ws-2"),
                // No "--" after the name: sbx exec would hand it to the guest as the command.
                List.of("exec", "-u", "root", "n", "sh", "-c", "x"));
        assertThat(SbxCli.execArgs("n", false, true, List.of("cat"))).containsExactly("exec", "-i", "n", "cat");
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
        assertThat(name).isEqualTo("sandbox4j-" + org.sandbox4j.core.spi.KeyDigest.ofParts(List.of("s", "t")).substring(0, 12)
                + "-" + org.sandbox4j.core.spi.KeyDigest.ofParts(List.of("s", "t", "a")).substring(0, 12) + "-"
                + org.sandbox4j.core.spi.KeyDigest.ofParts(List.of("k")).substring(0, 8));
    }

    @Test
    void theConfigRefusesWhatSbxWouldRefuse() {
        assertThatThrownBy(() -> SbxConfig.builder().namePrefix("Upper-").build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SbxConfig.builder().cpus(0).build()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SbxConfig.builder().execCleanupTimeout(Duration.ZERO).build())
                .isInstanceOf(IllegalArgumentException.class);
    }

    // ---------------------------------------------------------------- sbx policy and sbx secret

    /** The rule shape the reference reads from {@code sbx policy ls [NAME] --json}. */
    static final String POLICY_SAMPLE = "{\"rules\":[{\"id\":\"r1\",\"scope\":\"global\",\"decision\":\"allow\","
            + "\"status\":\"active\",\"resource_type\":\"network\",\"resources\":[\"pypi.org:443\",\"**.npmjs.org\"]},"
            + "{\"id\":\"r2\",\"scope\":\"global\",\"decision\":\"allow\",\"status\":\"active\","
            + "\"resource_type\":\"http\",\"http_targets\":[{\"host\":\"api.example.com\",\"methods\":[\"GET\"]}]},"
            + "{\"id\":\"r3\",\"scope\":\"global\",\"decision\":\"allow\",\"status\":\"inactive\","
            + "\"resource_type\":\"network\",\"resources\":[\"old.example.com\"]},"
            + "{\"resources\":[\"**\"],\"id\":\"r4\",\"scope\":\"sandbox:box\",\"decision\":\"deny\","
            + "\"status\":\"active\",\"resource_type\":\"network\"}]}";

    @Test
    void policyLsJsonIsReadAsRulesWithEveryActiveGlobalAllowAndTheSandboxsOwn() {
        Canned runner = new Canned(SbxReply.ok(POLICY_SAMPLE));
        SbxCli cli = new SbxCli(runner, "sbx", Duration.ofSeconds(5));
        List<SbxEgress.Rule> rules = cli.policyRules(Optional.of("box"));
        assertThat(runner.calls).containsExactly(List.of("policy", "ls", "box", "--json"));
        cli.policyRules(Optional.empty());
        assertThat(runner.calls.get(1)).containsExactly("policy", "ls", "--json");
        // HTTP rules count by their targets' hosts; an inactive rule is no active allow.
        assertThat(SbxEgress.globalAllows(rules)).containsExactly("**.npmjs.org", "api.example.com", "pypi.org:443");
        // Canonical JSON of what the rule admits (no id): keys sorted, so a listing that orders fields differently
        // compares equal.
        assertThat(SbxEgress.ownRules(rules, "box")).containsExactly("{\"decision\":\"deny\","
                + "\"resource_type\":\"network\",\"resources\":[\"**\"],\"scope\":\"sandbox:box\",\"status\":\"active\"}");
        assertThatThrownBy(() -> cli(SbxReply.ok("{\"policies\":[]}")).policyRules(Optional.empty()))
                .isInstanceOf(SandboxException.class).hasMessageContaining("policy ls");
        assertThatThrownBy(() -> cli(SbxReply.ok("{\"rules\":[{\"scope\":\"global\"}]}")).policyRules(Optional.empty()))
                .isInstanceOf(SandboxException.class).hasMessageContaining("decision");
    }

    @Test
    void theRuleCommandsArePinned() {
        Canned runner = new Canned(SbxReply.ok(""));
        SbxCli cli = new SbxCli(runner, "sbx", Duration.ofSeconds(5));
        cli.allow("box", List.of("pypi.org", "**.docs.io"));
        cli.deny("box", List.of("npmjs.org", "docs.io"));
        cli.removeRule("box", "**");
        assertThat(runner.calls).containsExactly(
                List.of("policy", "allow", "network", "--sandbox", "box", "pypi.org,**.docs.io"),
                List.of("policy", "deny", "network", "--sandbox", "box", "--protocol", "tcp,udp", "npmjs.org,docs.io"),
                List.of("policy", "rm", "network", "--sandbox", "box", "--resource", "**", "--force"));
    }

    @Test
    void policyCheckSaysWhetherGovernanceIsActiveAndNothingElseIsReadAsAnAnswer() {
        Canned runner = new Canned(new SbxReply(1, "{\"allowed\":false,\"governance\":{\"active\":true}}", "", false));
        SbxCli cli = new SbxCli(runner, "sbx", Duration.ofSeconds(5));
        assertThat(cli.governed("pypi.org")).isTrue();
        assertThat(runner.calls).containsExactly(List.of("policy", "check", "network", "--json", "pypi.org"));
        runner.reply = SbxReply.ok("{\"allowed\":true,\"governance\":{\"active\":false}}");
        assertThat(cli.governed("pypi.org")).isFalse();
        // A denial exits 1; an "allowed" verdict with exit 1, or no verdict, is no answer.
        runner.reply = new SbxReply(1, "{\"allowed\":true,\"governance\":{\"active\":false}}", "", false);
        assertThatThrownBy(() -> cli.governed("x.io")).isInstanceOf(SandboxException.class)
                .hasMessageContaining("policy check");
        runner.reply = new SbxReply(2, "", "ERROR: unknown command \"check\"\n", false);
        assertThatThrownBy(() -> cli.governed("x.io")).isInstanceOf(SandboxException.class)
                .hasMessageContaining("policy check");
        runner.reply = SbxReply.ok("{\"allowed\":true}");
        assertThatThrownBy(() -> cli.governed("x.io")).isInstanceOf(SandboxException.class)
                .hasMessageContaining("governance");
    }

    @Test
    void secretLsJsonRefusesEveryStoredSecretThatCouldReachTheAllowlist() {
        List<String> hosts = List.of("pypi.org");
        String none = "{\"secrets\":[],\"custom_secrets\":[],\"env_only_count\":0}";
        assertThat(SbxEgress.postureRefusal(hosts, none, "box", false)).isEmpty();
        assertThat(SbxEgress.postureRefusal(hosts, none, "box", true)).get().asString().contains("governance");
        assertThat(SbxEgress.postureRefusal(hosts, "{\"secrets\":[{\"name\":\"github\",\"scope\":\"global\"}]}",
                "box", false)).get().asString().contains("'github'").contains("sbx secret rm");
        assertThat(SbxEgress.postureRefusal(hosts, "{\"secrets\":[{\"name\":\"github\",\"scope\":\"sandbox:box\"}]}",
                "box", false)).isPresent();
        // Scoped to another sandbox: it cannot reach this one.
        assertThat(SbxEgress.postureRefusal(hosts, "{\"secrets\":[{\"name\":\"github\",\"scope\":\"sandbox:other\"}]}",
                "box", false)).isEmpty();
        assertThat(SbxEgress.postureRefusal(hosts, "{\"env_only_count\":2}", "box", false)).get().asString()
                .contains("environment");
        assertThat(SbxEgress.postureRefusal(hosts, "{\"custom_secrets\":[{\"env\":\"TOKEN\",\"scope\":\"global\","
                + "\"targets\":[\"**.pypi.org\"]}]}", "box", false)).get().asString().contains("'TOKEN'");
        assertThat(SbxEgress.postureRefusal(hosts, "{\"custom_secrets\":[{\"env\":\"TOKEN\",\"scope\":\"global\","
                + "\"targets\":[\"api.other.com\"]}]}", "box", false)).isEmpty();
        SbxCli cli = cli(SbxReply.ok("{\"secrets\":{}}"));
        assertThatThrownBy(() -> cli.postureRefusal(hosts, "box")).isInstanceOf(SandboxException.class);
    }
}
