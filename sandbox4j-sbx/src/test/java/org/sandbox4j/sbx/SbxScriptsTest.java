package org.sandbox4j.sbx;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs the guest scripts for real with this host's /bin/sh (the guest's sh is a POSIX sh too). */
class SbxScriptsTest {

    private static final String NONCE = "0123456789abcdef0123456789abcdef";

    @TempDir
    Path temp;

    /** The workspace as the guest mounts it, and the mount point each command binds it at. */
    private Path workspace;
    private String bound;

    @org.junit.jupiter.api.BeforeEach
    void workspaceAndMountPoint() throws Exception {
        workspace = Files.createDirectory(temp.resolve("ws"));
        bound = Files.createDirectory(temp.resolve("mp")).toString();
    }

    record Run(int exit, String stdout, String stderr) {
    }

    private Run run(String script, List<String> parameters, Map<String, String> env) throws Exception {
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", script, "sandbox4j-test"));
        argv.addAll(parameters);
        ProcessBuilder builder = new ProcessBuilder(argv);
        builder.environment().putAll(env);
        Process process = builder.start();
        process.getOutputStream().close();
        byte[] out = process.getInputStream().readAllBytes();
        byte[] err = process.getErrorStream().readAllBytes();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return new Run(process.exitValue(), new String(out, StandardCharsets.UTF_8),
                new String(err, StandardCharsets.UTF_8));
    }

    private Run wrapper(String mountPoint, String workDir, Map<String, String> env, List<String> argv) throws Exception {
        return run(SbxScripts.WRAPPER, SbxScripts.wrapperParameters(NONCE, temp.resolve("call").toString(),
                workspace.toString(), mountPoint, workDir, env, argv), Map.of());
    }

    @Test
    void everyWordIsEncodedAndNeverEmpty() {
        assertThat(SbxScripts.encode("")).isEqualTo("b");
        List<String> parameters = SbxScripts.wrapperParameters(NONCE, "/tmp/x", "/ws", "/m", "/m/w", Map.of("A", ""),
                List.of("", "x"));
        assertThat(parameters).allSatisfy(word -> assertThat(word).isNotEmpty());
        assertThat(parameters).containsExactly(SbxScripts.WRAPPER, SbxScripts.ENTER, NONCE, "/tmp/x", "/ws", "/m",
                "/m/w", "0", "1", SbxScripts.encode("A="), "b", SbxScripts.encode("x"));
    }

    @Test
    void argvRoundTripsByteExactIncludingEmptyWordsQuotesAndNewlines() throws Exception {
        List<String> words = List.of("", "it's", "\"double\"", "line1\nline2\n", "$HOME `id` $(id)", "  spaced  ",
                "ünïcødé", "*", "-n");
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", "for a; do printf '[%s]' \"$a\"; done", "zero"));
        argv.addAll(words);
        Run result = wrapper(bound, temp.toString(), Map.of(), argv);
        StringBuilder expected = new StringBuilder();
        words.forEach(word -> expected.append('[').append(word).append(']'));
        assertThat(result.stdout()).isEqualTo(expected.toString());
        assertThat(result.exit()).isZero();
    }

    @Test
    void theNonceLineSeparatesWhatSbxSaysFromTheCommandsStderr() throws Exception {
        Run result = wrapper(bound, temp.toString(), Map.of(), List.of("/bin/sh", "-c", "echo err >&2; exit 3"));
        assertThat(result.stderr()).isEqualTo(NONCE + "\nerr\n");
        assertThat(result.exit()).isEqualTo(3);
    }

    @Test
    void theEnvironmentIsExportedVerbatim() throws Exception {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("GREETING", "hello world\nwith 'quotes' and $dollar");
        env.put("EMPTY", "");
        Run result = wrapper(bound, temp.toString(), env, List.of("/bin/sh", "-c",
                "printf '%s|%s|%s' \"$GREETING\" \"${EMPTY-unset}\" \"${EMPTY+set}\""));
        assertThat(result.stdout()).isEqualTo("hello world\nwith 'quotes' and $dollar||set");
    }

    @Test
    void aMissingWorkingDirectoryIsTheWrappersMarkerAndNothingRuns() throws Exception {
        Path marker = temp.resolve("ran");
        Run result = wrapper(bound, temp.resolve("absent").toString(), Map.of(), List.of("touch", marker.toString()));
        assertThat(result.stderr()).isEqualTo(NONCE + " " + SbxScripts.WORKING_DIRECTORY_MISSING + "\n");
        assertThat(result.exit()).isEqualTo(SbxScripts.CANNOT_RUN);
        assertThat(result.stdout()).isEmpty();
        assertThat(marker).doesNotExist();
        assertThat(temp.resolve("absent")).doesNotExist();
    }

    @Test
    void aDanglingLinkAsTheWorkingDirectoryIsMissing() throws Exception {
        Path link = Files.createSymbolicLink(temp.resolve("dangling"), temp.resolve("nowhere"));
        Run result = wrapper(bound, link.toString(), Map.of(), List.of("true"));
        assertThat(result.stderr()).isEqualTo(NONCE + " " + SbxScripts.WORKING_DIRECTORY_MISSING + "\n");
    }

    @Test
    void aFileAsTheWorkingDirectoryIsTheWrappersMarkerAndNothingRuns() throws Exception {
        Path file = Files.writeString(temp.resolve("a-file"), "x");
        Path marker = temp.resolve("ran");
        Run result = wrapper(bound, file.toString(), Map.of(), List.of("touch", marker.toString()));
        assertThat(result.stderr()).isEqualTo(NONCE + " " + SbxScripts.WORKING_DIRECTORY_NOT_A_DIRECTORY + "\n");
        assertThat(result.exit()).isEqualTo(SbxScripts.CANNOT_RUN);
        assertThat(marker).doesNotExist();
    }

    @Test
    void aCommandSayingTheMarkersOwnWordsComesAfterTheNonceLine() throws Exception {
        String forged = NONCE + " " + SbxScripts.WORKING_DIRECTORY_MISSING;
        Run result = wrapper(bound, temp.toString(), Map.of(), List.of("/bin/sh", "-c",
                "printf '%s\\n' \"$0\" >&2; exit 125", forged));
        assertThat(result.stderr()).isEqualTo(NONCE + "\n" + forged + "\n");
        assertThat(result.exit()).isEqualTo(125);
    }

    @Test
    void aNonExecutableFileExits126AsAShellSaysIt() throws Exception {
        Path file = Files.writeString(temp.resolve("not-executable"), "");
        for (String program : List.of("/etc/passwd", file.toString())) {
            Run result = wrapper(bound, temp.toString(), Map.of(), List.of(program));
            assertThat(result.exit()).isEqualTo(126);
            assertThat(result.stderr()).startsWith(NONCE + "\n").contains(program).doesNotContain("setpriv");
        }
    }

    @Test
    void aCallersPathIsTheCommandsNotTheWrappers() throws Exception {
        Run result = wrapper(bound, temp.toString(), Map.of("PATH", "/nonexistent"), List.of("/bin/sh", "-c",
                "printf '%s' \"$PATH\""));
        assertThat(result.stdout()).isEqualTo("/nonexistent");
        assertThat(result.exit()).isZero();
    }

    @Test
    void theCommandRunsInItsOwnProcessGroupRecordedInThePgidFile() throws Exception {
        Path state = temp.resolve("call");
        Run result = wrapper(bound, temp.toString(), Map.of(), List.of("/bin/sh", "-c",
                "cat \"$0/pgid\"; cut -d' ' -f5 /proc/$$/stat", state.toString()));
        String[] lines = result.stdout().split("\n");
        assertThat(lines[0]).matches("[0-9]+").isEqualTo(lines[1]);
        assertThat(state).doesNotExist();
    }

    @Test
    void theCommandRunsWithNoNewPrivs() throws Exception {
        Run result = wrapper(bound, temp.toString(), Map.of(), List.of("grep", "NoNewPrivs", "/proc/self/status"));
        assertThat(result.stdout()).matches("NoNewPrivs:\\s+1\\n");
        assertThat(result.exit()).isZero();
    }

    @Test
    void aMissingCommandStillExits127() throws Exception {
        Run result = wrapper(bound, temp.toString(), Map.of(), List.of("sandbox4j-no-such-command"));
        assertThat(result.exit()).isEqualTo(127);
        assertThat(result.stderr()).startsWith(NONCE + "\n").contains("sandbox4j-no-such-command")
                .doesNotContain("setpriv");
    }

    @Test
    void aCancelFileLeftBeforeTheCommandStartsStopsIt() throws Exception {
        Path state = temp.resolve("call");
        Files.createDirectories(state);
        Files.createFile(state.resolve("cancel"));
        Path marker = temp.resolve("ran");
        Run result = wrapper(bound, temp.toString(), Map.of(), List.of("touch", marker.toString()));
        assertThat(marker).doesNotExist();
        assertThat(result.exit()).isEqualTo(137);
    }

    @Test
    void aBindThatFailsIsReportedAfterTheMountsOwnWordsAndNothingRuns() throws Exception {
        Path marker = temp.resolve("ran");
        Run result = wrapper(temp.resolve("no-mount-point").toString(), temp.toString(), Map.of(),
                List.of("touch", marker.toString()));
        assertThat(result.stderr()).endsWith("\n" + NONCE + " " + SbxScripts.UNBOUND + "\n").startsWith("mount");
        assertThat(result.exit()).isEqualTo(SbxScripts.CANNOT_RUN);
        assertThat(marker).doesNotExist();
    }

    /**
     * The command sees the workspace at the mount point, bound in a user and mount namespace of
     * its own (no root step, no capability beyond what a user namespace grants), as its own uid;
     * the bind is gone with the command.
     */
    @Test
    void theCommandSeesTheWorkspaceAtTheMountPointInItsOwnNamespaceAsItsOwnUid() throws Exception {
        Files.writeString(workspace.resolve("from-host"), "hello");
        Run result = wrapper(bound, bound, Map.of(), List.of("/bin/sh", "-c",
                "cat from-host; echo; id -u; id -g; touch from-guest; grep -c \" $0 \" /proc/self/mounts", bound));
        long uid = (Integer) Files.getAttribute(temp, "unix:uid");
        assertThat(result.stdout()).isEqualTo("hello\n" + currentId("-u") + "\n" + currentId("-g") + "\n1\n");
        assertThat(result.exit()).isZero();
        assertThat(workspace.resolve("from-guest")).exists();
        assertThat(Files.getAttribute(workspace.resolve("from-guest"), "unix:uid")).isEqualTo((int) uid);
        assertThat(Files.readString(Path.of("/proc/self/mounts"))).doesNotContain(" " + bound + " ");
        assertThat(Path.of(bound).resolve("from-host")).doesNotExist();
    }

    private static String currentId(String which) throws Exception {
        Process id = new ProcessBuilder("id", which).start();
        String out = new String(id.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(id.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return out;
    }

    @Test
    void theKillScriptKillsTheWholeGroupAndOnlyIt() throws Exception {
        Path state = temp.resolve("call");
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", SbxScripts.WRAPPER, "sandbox4j-exec"));
        argv.addAll(SbxScripts.wrapperParameters(NONCE, state.toString(), workspace.toString(), bound,
                temp.toString(), Map.of(), List.of("/bin/sh", "-c", "sleep 60 & sleep 60; echo survived")));
        Process sibling = new ProcessBuilder("sleep", "60").start();
        Process wrapper = new ProcessBuilder(argv).start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!Files.exists(state.resolve("pgid")) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            Thread.sleep(200);
            Run kill = run(SbxScripts.KILL, List.of(state.toString()), Map.of());
            assertThat(kill.stdout()).contains(SbxScripts.KILL_DONE);
            assertThat(wrapper.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(wrapper.exitValue()).isEqualTo(137);
            assertThat(new String(wrapper.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isEmpty();
            assertThat(sibling.isAlive()).isTrue();
        } finally {
            wrapper.destroyForcibly();
            sibling.destroyForcibly();
        }
    }

    @Test
    void theKillScriptAlsoKillsWhatLeftTheGroupButKeptTheCallsEnvironment() throws Exception {
        Path state = temp.resolve("call");
        Path escapee = temp.resolve("escapee.pid");
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", SbxScripts.WRAPPER, "sandbox4j-exec"));
        argv.addAll(SbxScripts.wrapperParameters(NONCE, state.toString(), workspace.toString(), bound,
                temp.toString(), Map.of(), List.of("/bin/sh", "-c",
                        "setsid sh -c 'echo $$ > \"$0\"; exec sleep 60' \"$0\" & sleep 60", escapee.toString())));
        Process wrapper = new ProcessBuilder(argv).start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!(Files.exists(state.resolve("pgid")) && Files.exists(escapee) && Files.size(escapee) > 0) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            long pid = Long.parseLong(Files.readString(escapee).strip());
            assertThat(ProcessHandle.of(pid)).isPresent();
            Run kill = run(SbxScripts.KILL, List.of(state.toString()), Map.of());
            assertThat(kill.stdout()).contains(SbxScripts.KILL_DONE);
            assertThat(wrapper.waitFor(10, TimeUnit.SECONDS)).isTrue();
            long gone = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) && System.nanoTime() < gone) {
                Thread.sleep(20);
            }
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
        } finally {
            wrapper.destroyForcibly();
        }
    }

    @Test
    void theKillScriptLeavesACancelFileForACommandNotStartedYet() throws Exception {
        Path state = temp.resolve("call");
        Run kill = run(SbxScripts.KILL, List.of(state.toString()), Map.of());
        assertThat(kill.stdout()).contains(SbxScripts.KILL_DONE);
        assertThat(state.resolve("cancel")).exists();
    }

    @Test
    void theKillScriptOfAStartedProcessForgetsItsState() throws Exception {
        Path state = temp.resolve("call");
        Run kill = run(SbxScripts.KILL, List.of(state.toString(), SbxScripts.FORGET), Map.of());
        assertThat(kill.stdout()).contains(SbxScripts.KILL_DONE);
        assertThat(state).doesNotExist();
    }

    /** The wrapper of a started process (a backstop of {@code backstop} s), not yet waited for. */
    private Process startedProcess(Path state, long backstop, String line) throws Exception {
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", SbxScripts.WRAPPER, "sandbox4j-exec"));
        argv.addAll(SbxScripts.wrapperParameters(NONCE, state.toString(), workspace.toString(), bound,
                temp.toString(), backstop, Map.of(), List.of("/bin/sh", "-c", line)));
        return new ProcessBuilder(argv).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
    }

    private static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    @Test
    void aStartedProcessEndsWithWhatStayedInItsGroupWhenItsLeaderExits() throws Exception {
        Path state = temp.resolve("call");
        Path child = temp.resolve("child.pid");
        Process wrapper = startedProcess(state, 60, "sleep 60 & echo $! > '" + child + "'; exit 4");
        try {
            assertThat(wrapper.waitFor(20, TimeUnit.SECONDS)).isTrue();
            assertThat(wrapper.exitValue()).isEqualTo(4);
            long pid = Long.parseLong(Files.readString(child).strip());
            long gone = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (alive(pid) && System.nanoTime() < gone) {
                Thread.sleep(20);
            }
            assertThat(alive(pid)).as("the leader's child").isFalse();
            assertThat(state).doesNotExist();
        } finally {
            wrapper.destroyForcibly();
        }
    }

    @Test
    void anExecLeavesWhatItStartedInTheBackgroundAsBefore() throws Exception {
        Path child = temp.resolve("child.pid");
        Run exec = wrapper(bound, temp.toString(), Map.of(), List.of("/bin/sh", "-c",
                "sleep 60 >/dev/null 2>&1 & echo $! > \"$0\"", child.toString()));
        assertThat(exec.exit()).isZero();
        long pid = Long.parseLong(Files.readString(child).strip());
        try {
            assertThat(alive(pid)).isTrue();
        } finally {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void aStartedProcessIsKilledByItsBackstopWhereTimeoutIsThere() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(new ProcessBuilder("sh", "-c",
                "timeout --foreground -s KILL 1 true").start().waitFor() == 0, "no GNU timeout here");
        Path state = temp.resolve("call");
        long began = System.nanoTime();
        Process wrapper = startedProcess(state, 1, "sleep 60");
        try {
            assertThat(wrapper.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(wrapper.exitValue()).isEqualTo(137);
            assertThat(System.nanoTime() - began).isLessThan(TimeUnit.SECONDS.toNanos(20));
        } finally {
            wrapper.destroyForcibly();
        }
    }

    @Test
    void aSignalToAStartedProcessReachesItsGroupAndItsExitCodeIsItsOwn() throws Exception {
        Path state = temp.resolve("call");
        Path child = temp.resolve("child.got");
        // The leader waits for its child before it exits: its exit would end the child (the group is killed then).
        Process wrapper = startedProcess(state, 60, "trap 'wait; exit 3' TERM; "
                + "sh -c 'trap \"echo got > " + child + "; exit 0\" TERM; while :; do sleep 1; done' & "
                + "while :; do sleep 1; done");
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!Files.exists(state.resolve("pgid")) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            Thread.sleep(300);
            Run signal = run(SbxScripts.SIGNAL, List.of(state.toString(), "TERM"), Map.of());
            assertThat(signal.stdout()).contains(SbxScripts.SIGNAL_DONE);
            assertThat(wrapper.waitFor(20, TimeUnit.SECONDS)).isTrue();
            assertThat(wrapper.exitValue()).isEqualTo(3);
            long got = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!Files.exists(child) && System.nanoTime() < got) {
                Thread.sleep(20);
            }
            assertThat(child).as("the same-group child got the signal too").exists();
        } finally {
            wrapper.destroyForcibly();
        }
    }

    @Test
    void theSignalScriptSendsOnlyTheSignalsACallerMayName() throws Exception {
        Path state = Files.createDirectory(temp.resolve("call"));
        Process sleeper = new ProcessBuilder("setsid", "sleep", "60").start();
        try {
            Files.writeString(state.resolve("pgid"), Long.toString(sleeper.pid()));
            for (String refused : List.of("KILL", "9", "STOP", "TERM -1", "-TERM", "")) {
                Run signal = run(SbxScripts.SIGNAL, List.of(state.toString(), refused), Map.of());
                assertThat(signal.exit()).as(refused).isEqualTo(2);
                assertThat(signal.stdout()).doesNotContain(SbxScripts.SIGNAL_DONE);
            }
            Thread.sleep(200);
            assertThat(sleeper.isAlive()).isTrue();
            Run signal = run(SbxScripts.SIGNAL, List.of(state.toString(), "USR1"), Map.of());
            assertThat(signal.stdout()).contains(SbxScripts.SIGNAL_DONE);
            assertThat(sleeper.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(sleeper.exitValue()).isEqualTo(128 + 10);
        } finally {
            sleeper.destroyForcibly();
        }
    }

    @Test
    void theSignalScriptSendsNothingOnceTheStateIsGone() throws Exception {
        Run signal = run(SbxScripts.SIGNAL, List.of(temp.resolve("gone").toString(), "TERM"), Map.of());
        assertThat(signal.stdout()).contains(SbxScripts.SIGNAL_DONE);
    }

    @Test
    void theProbeNamesMissingCommandsAndAForwardedAgent() throws Exception {
        Run clean = run(SbxScripts.PROBE, List.of(), Map.of());
        assertThat(clean.stdout()).contains(SbxScripts.PROBE_DONE).contains(SbxScripts.MISSING + "\n")
                .doesNotContain(SbxScripts.AGENT_SOCKET);
        Run forwarded = run(SbxScripts.PROBE, List.of(), Map.of("SSH_AUTH_SOCK", "/run/host-services/ssh-auth.sock"));
        assertThat(forwarded.stdout()).contains(SbxScripts.AGENT_SOCKET + " /run/host-services/ssh-auth.sock");
        Run bare = run(SbxScripts.PROBE, List.of(), Map.of("PATH", temp.toString()));
        assertThat(bare.stdout()).contains(SbxScripts.MISSING
                + " sh base64 setsid setpriv unshare mount mkdir cat rm sleep");
        // This host lets its user make a user and mount namespace, as a template must.
        assertThat(clean.stdout()).doesNotContain(SbxScripts.NO_NAMESPACES);
    }

    @Test
    void theMountPointScriptMakesTheMountPointAndRefusesOneTheImageAlreadyHas() throws Exception {
        Path existing = Files.createDirectory(temp.resolve("taken"));
        Run result = run(SbxScripts.MOUNT_POINT, List.of(existing.toString()), Map.of());
        assertThat(result.exit()).isEqualTo(SbxScripts.MOUNT_POINT_TAKEN);
        Path link = Files.createSymbolicLink(temp.resolve("link"), temp.resolve("nowhere"));
        assertThat(run(SbxScripts.MOUNT_POINT, List.of(link.toString()), Map.of()).exit())
                .isEqualTo(SbxScripts.MOUNT_POINT_TAKEN);
        Path fresh = temp.resolve("a/b");
        assertThat(run(SbxScripts.MOUNT_POINT, List.of(fresh.toString()), Map.of()).exit()).isZero();
        assertThat(fresh).isDirectory();
    }

    @Test
    void environmentNamesAShellCannotSetAreRefused() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> SbxScripts.wrapperParameters(NONCE, "/s", "/ws", "/m",
                "/m/w", Map.of("1BAD", "x"), List.of("true"))).isInstanceOf(IllegalArgumentException.class);
    }
}
