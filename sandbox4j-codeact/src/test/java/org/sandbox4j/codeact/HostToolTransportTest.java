package org.sandbox4j.codeact;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.sandbox4j.core.Capability.EXEC;
import static org.sandbox4j.core.Capability.FILES_IN;
import static org.sandbox4j.core.Capability.FILES_OUT;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.TransferLimits;
import org.sandbox4j.core.hosttools.HostTool;
import org.sandbox4j.core.hosttools.HostToolRegistry;
import org.sandbox4j.core.hosttools.HostToolRun;
import org.sandbox4j.local.BubblewrapBackend;

/**
 * The transport end to end against a real bubblewrap guest, for Python and JavaScript programs:
 * real interpreters, real files, real processes. Every test checks that {@code T} is gone after.
 */
class HostToolTransportTest {

    private static final SandboxKey KEY = new SandboxKey("s", "t", "a");
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration SHORT_TIMEOUT = Duration.ofSeconds(4);
    private static final Duration POLL = Duration.ofMillis(50);

    private static Path stateRoot;
    private static BubblewrapBackend backend;
    private static SandboxRouter router;
    private static Sandbox sandbox;
    private static String workDir;

    /** A guest language: its file names, interpreter and the test programs written in it. */
    enum Language {
        PYTHON("program.py", GuestRunLayout.PYTHON_SHIM, List.of("python3")),
        JAVASCRIPT("program.js", GuestRunLayout.JAVASCRIPT_SHIM, List.of("node"));

        final String program;
        final String shim;
        final List<String> interpreter;

        Language(String program, String shim, List<String> interpreter) {
            this.program = program;
            this.shim = shim;
            this.interpreter = interpreter;
        }

        String shimSource(List<String> names) {
            return this == PYTHON ? HostToolShim.python(names, HostToolShim.DEFAULT_CALL_TIMEOUT)
                    : HostToolShim.javascript(names, HostToolShim.DEFAULT_CALL_TIMEOUT);
        }
    }

    @BeforeAll
    static void acquire() throws IOException {
        stateRoot = Files.createTempDirectory("s4jc");
        backend = BubblewrapBackend.builder().stateRoot(stateRoot).build();
        router = SandboxRouter.builder().backend(backend).minIsolation(Isolation.CONTAINER).build();
        SandboxSpec spec = SandboxSpec.builder("codeact").requires(EXEC, FILES_IN, FILES_OUT).build();
        sandbox = router.acquire(KEY, spec);
        workDir = spec.workDirIn(sandbox);
    }

    @AfterAll
    static void dispose() throws IOException {
        try {
            if (router != null) {
                router.dispose(KEY);
            }
        } finally {
            if (backend != null) {
                backend.close();
            }
            if (stateRoot != null) {
                try (Stream<Path> paths = Files.walk(stateRoot)) {
                    paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
                }
            }
        }
    }

    // ---------------------------------------------------------------- calls

    @ParameterizedTest
    @EnumSource(Language.class)
    void aProgramCallsARegisteredHostToolAndPrintsTheAnswer(Language language) {
        AtomicInteger calls = new AtomicInteger();
        HostToolRegistry registry = HostToolRegistry.builder().build();
        registry.register("lookup", HostTool.builder().required("city").body(arguments -> {
            calls.incrementAndGet();
            Map<String, Object> answer = new TreeMap<>();
            answer.put("city", arguments.get("city"));
            answer.put("degrees", 7);
            return answer;
        }).build());
        String program = language == Language.PYTHON ? """
                import json
                import sandbox4j_host_tools as tools
                from sandbox4j_host_tools import call
                print(json.dumps(call("lookup", city="Oslo"), separators=(",", ":")))
                print(json.dumps(tools.lookup(city="Bergen"), separators=(",", ":")))
                print(json.dumps(call("lookup", {"city": "Tromsø"}), separators=(",", ":"), ensure_ascii=False))
                """ : """
                const tools = require('sandbox4j_host_tools');
                console.log(JSON.stringify(tools.call('lookup', { city: 'Oslo' })));
                console.log(JSON.stringify(tools.lookup({ city: 'Bergen' })));
                console.log(JSON.stringify(tools.call('lookup', { city: 'Tromsø' })));
                """;

        Run run = run(language, registry, program, RUN_TIMEOUT);

        assertThat(run.result.exitCode()).as(run.result.stdoutText()).isZero();
        assertThat(run.result.stdoutText()).isEqualTo("""
                {"city":"Oslo","degrees":7}
                {"city":"Bergen","degrees":7}
                {"city":"Tromsø","degrees":7}
                """);
        assertThat(run.result.stderrText()).isEmpty();
        assertThat(calls).hasValue(3);
        assertTransportReclaimed(run.layout);
        assertThat(HostToolSupervisor.reclaimRun(sandbox, run.layout)).isTrue();
        assertThat(sandbox.stat(run.layout.directory(), workDir)).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(Language.class)
    void anUnregisteredNameGetsTheRefusalAndTheExitCodeComesBack(Language language) {
        HostToolRegistry registry = registryWithLookup(new AtomicInteger());
        String program = language == Language.PYTHON ? """
                import sys
                from sandbox4j_host_tools import call, HostToolError
                try:
                    call("delete_everything", path="/")
                except HostToolError as refused:
                    print("refused:", refused)
                sys.exit(3)
                """ : """
                const { call, HostToolError } = require('sandbox4j_host_tools');
                try {
                  call('delete_everything', { path: '/' });
                } catch (refused) {
                  console.log('refused:', refused instanceof HostToolError, refused.message);
                }
                process.exit(3);
                """;

        Run run = run(language, registry, program, RUN_TIMEOUT);

        assertThat(run.result.exitCode()).isEqualTo(3);
        assertThat(run.result.stdoutText()).contains("refused:")
                .contains("Error: 'delete_everything' is not a registered host tool.");
        if (language == Language.JAVASCRIPT) {
            assertThat(run.result.stdoutText()).contains("refused: true");
        }
        assertTransportReclaimed(run.layout);
    }

    @ParameterizedTest
    @EnumSource(Language.class)
    void aProgramLoopingOnDispatchIsStoppedAtTheDispatchCap(Language language) {
        AtomicInteger calls = new AtomicInteger();
        HostToolRegistry registry = HostToolRegistry.builder().maxDispatchesPerRun(3).build();
        registry.register("count", HostTool.builder().body(arguments -> calls.incrementAndGet()).build());
        // It ignores every refusal and keeps calling: after the cap's refusal the host reads no more requests.
        String program = language == Language.PYTHON ? """
                from sandbox4j_host_tools import call, HostToolError
                for attempt in range(1000):
                    try:
                        print("got", call("count"))
                    except HostToolError as refused:
                        print("refused:", refused)
                """ : """
                const { call } = require('sandbox4j_host_tools');
                for (let attempt = 0; attempt < 1000; attempt++) {
                  try {
                    console.log('got', call('count'));
                  } catch (refused) {
                    console.log('refused:', refused.message);
                  }
                }
                """;
        GuestRunLayout layout = freshLayout(language);

        assertThatThrownBy(() -> supervise(language, registry, layout, program, SHORT_TIMEOUT))
                .isInstanceOfSatisfying(SandboxProgramTimeout.class, timeout -> {
                    assertThat(timeout.outputSoFar()).contains("got 1", "got 2", "got 3")
                            .contains("refused: Error: the host-tool dispatch cap (3) is exhausted")
                            .doesNotContain("got 4");
                    assertThat(timeout.getMessage()).contains("did not finish within 4 seconds")
                            .contains("Output so far:");
                });
        assertThat(calls).hasValue(3);
        assertTransportReclaimed(layout);
    }

    // ---------------------------------------------------------------- timeouts

    @ParameterizedTest
    @EnumSource(Language.class)
    void aProgramIgnoringItsTimeoutIsKilledWithItsChildren(Language language) throws InterruptedException {
        // Two children that leave the program's process group: one through setsid, one double-forked.
        String children = "setsid sh -c 'while :; do echo beat >> heartbeat-setsid; sleep 0.1; done' &"
                + " (sh -c 'while :; do echo beat >> heartbeat-orphan; sleep 0.1; done' &) ; exit 0";
        String program = language == Language.PYTHON ? """
                import subprocess, time
                subprocess.run(["sh", "-c", %s], check=True)
                print("children started", flush=True)
                while True:
                    time.sleep(1)
                """.formatted(pythonString(children)) : """
                const { execFileSync } = require('child_process');
                execFileSync('sh', ['-c', %s], { stdio: 'ignore' });
                console.log('children started');
                setInterval(() => {}, 1000);
                """.formatted(pythonString(children));
        GuestRunLayout layout = freshLayout(language);

        assertThatThrownBy(() -> supervise(language, registryWithLookup(new AtomicInteger()), layout, program,
                SHORT_TIMEOUT))
                .isInstanceOfSatisfying(SandboxProgramTimeout.class, timeout -> {
                    assertThat(timeout.outputSoFar()).contains("children started");
                    // Each bubblewrap command has its own PID namespace: a kill sent from a fresh command
                    // cannot reach the program, and ending the launcher's command ends it and its children.
                    assertThat(timeout.outcome()).isEqualTo(SandboxProgramTimeout.Outcome.REFUSED);
                    assertThat(timeout.reach()).isEmpty();
                    assertThat(timeout.launcherEnded()).isTrue();
                    assertThat(timeout.getMessage()).contains("the command that launched it was ended");
                    assertThat(timeout.getMessage()).contains("did not finish within 4 seconds");
                });

        long setsidBeats = Heartbeat.settled(() -> size(layout.work() + "/heartbeat-setsid"));
        long orphanBeats = Heartbeat.settled(() -> size(layout.work() + "/heartbeat-orphan"));
        assertThat(setsidBeats).isPositive();
        assertThat(orphanBeats).isPositive();
        Thread.sleep(1000);
        assertThat(size(layout.work() + "/heartbeat-setsid")).isEqualTo(setsidBeats);
        assertThat(size(layout.work() + "/heartbeat-orphan")).isEqualTo(orphanBeats);
        ExecResult processes = sandbox.exec(Command.shell("ps -e -o pid=,args= ; ls /proc | grep -c '^[0-9]'"),
                ExecOptions.in(workDir, Duration.ofSeconds(30)));
        assertThat(processes.stdoutText()).doesNotContain("heartbeat").doesNotContain("sleep")
                .doesNotContain(language.program);
        assertTransportReclaimed(layout);
        HostToolSupervisor.reclaimRun(sandbox, layout);
    }

    // ---------------------------------------------------------------- distrusted requests

    @ParameterizedTest
    @EnumSource(Language.class)
    void anOversizeRequestAndInvalidJsonGetRefusalsAndTheRunGoesOn(Language language) {
        AtomicInteger calls = new AtomicInteger();
        HostToolRegistry registry = HostToolRegistry.builder()
                .responseLimits(new TransferLimits(1024, 64 * 1024, 16)).build();
        registerLookup(registry, calls);
        // The program plays a hostile guest for ids 1 to 3, writing request files itself, then calls normally.
        String program = language == Language.PYTHON ? """
                import os, time
                import sandbox4j_host_tools as tools
                calls = os.path.join(os.path.dirname(tools.__file__), "host_tool_calls")
                os.makedirs(calls, exist_ok=True)
                def send(number, data):
                    stem = os.path.join(calls, "%04d" % number)
                    open(stem + ".claim", "x").close()
                    with open(stem + ".request.json.part", "wb") as handle:
                        handle.write(data)
                    os.replace(stem + ".request.json.part", stem + ".request.json")
                    while not os.path.exists(stem + ".response.json"):
                        time.sleep(0.05)
                    with open(stem + ".response.json", encoding="utf-8") as handle:
                        print(number, handle.read())
                send(1, b'{"id": 1, "name": "lookup", "arguments": {')
                send(2, b'{"id": 2, "name": "lookup", "arguments": {"city": "' + b"x" * 2000 + b'"}}')
                send(3, b'["lookup", {"city": "Oslo"}]')
                send(4, b'{"id": 4, "name": "lookup", "arguments": {"city": "' + bytes([0xff]) + b'"}}')
                print("then", tools.call("lookup", city="Oslo"))
                """ : """
                const fs = require('fs');
                const path = require('path');
                const tools = require('sandbox4j_host_tools');
                const calls = path.join(path.dirname(require.resolve('sandbox4j_host_tools')), 'host_tool_calls');
                fs.mkdirSync(calls, { recursive: true });
                const pause = new Int32Array(new SharedArrayBuffer(4));
                function send(number, data) {
                  const stem = path.join(calls, String(number).padStart(4, '0'));
                  fs.closeSync(fs.openSync(stem + '.claim', 'wx'));
                  fs.writeFileSync(stem + '.request.json.part', data);
                  fs.renameSync(stem + '.request.json.part', stem + '.request.json');
                  while (!fs.existsSync(stem + '.response.json')) Atomics.wait(pause, 0, 0, 50);
                  console.log(number, fs.readFileSync(stem + '.response.json', 'utf8'));
                }
                send(1, '{"id": 1, "name": "lookup", "arguments": {');
                send(2, '{"id": 2, "name": "lookup", "arguments": {"city": "' + 'x'.repeat(2000) + '"}}');
                send(3, '["lookup", {"city": "Oslo"}]');
                send(4, Buffer.concat([Buffer.from('{"id": 4, "name": "lookup", "arguments": {"city": "'),
                    Buffer.from([0xff]), Buffer.from('"}}')]));
                console.log('then', JSON.stringify(tools.call('lookup', { city: 'Oslo' })));
                """;

        Run run = run(language, registry, program, RUN_TIMEOUT);

        assertThat(run.result.exitCode()).as(run.result.stdoutText()).isZero();
        String output = run.result.stdoutText();
        assertThat(output).contains("1 {\"refusal\": \"Error: this host-tool request is not valid JSON.\"}")
                .contains("2 {\"refusal\": \"Error: this host-tool request is larger than the 1024-byte cap")
                .contains("3 {\"refusal\": \"Error: a host-tool request must be a JSON object.\"}")
                .contains("4 {\"refusal\": \"Error: this host-tool request is not valid JSON.\"}")
                .contains("then");
        assertThat(calls).hasValue(1);
        assertTransportReclaimed(run.layout);
    }

    @ParameterizedTest
    @EnumSource(Language.class)
    void abandonedIdsAreSteppedOver(Language language) {
        AtomicInteger calls = new AtomicInteger();
        HostToolRegistry registry = registryWithLookup(calls);
        // Id 1: the shim itself abandons a request it cannot serialise. Id 2: a hand-written abandonment.
        String program = language == Language.PYTHON ? """
                import os
                import sandbox4j_host_tools as tools
                try:
                    tools.call("lookup", city=float("nan"))
                except ValueError as failure:
                    print("abandoned:", type(failure).__name__)
                calls = os.path.join(os.path.dirname(tools.__file__), "host_tool_calls")
                open(os.path.join(calls, "0002.claim"), "x").close()
                with open(os.path.join(calls, "0002.request.json"), "w") as handle:
                    handle.write('{"id": 2, "abandoned": true}')
                print("answer:", tools.lookup(city="Oslo")["city"])
                print(sorted(name for name in os.listdir(calls) if name.endswith(".response.json")))
                """ : """
                const fs = require('fs');
                const path = require('path');
                const tools = require('sandbox4j_host_tools');
                try {
                  tools.call('lookup', { city: 10n });
                } catch (failure) {
                  console.log('abandoned:', failure.name);
                }
                const calls = path.join(path.dirname(require.resolve('sandbox4j_host_tools')), 'host_tool_calls');
                fs.closeSync(fs.openSync(path.join(calls, '0002.claim'), 'wx'));
                fs.writeFileSync(path.join(calls, '0002.request.json'), '{"id": 2, "abandoned": true}');
                console.log('answer:', tools.lookup({ city: 'Oslo' }).city);
                console.log(JSON.stringify(fs.readdirSync(calls).filter(name => name.endsWith('.response.json')).sort()));
                """;

        Run run = run(language, registry, program, RUN_TIMEOUT);

        assertThat(run.result.exitCode()).as(run.result.stdoutText()).isZero();
        assertThat(run.result.stdoutText())
                .contains(language == Language.PYTHON ? "abandoned: ValueError" : "abandoned: TypeError")
                .contains("answer: Oslo")
                .contains(language == Language.PYTHON ? "['0003.response.json']" : "[\"0003.response.json\"]");
        assertThat(calls).hasValue(1);
        assertTransportReclaimed(run.layout);
    }

    // ---------------------------------------------------------------- names and quoting

    @ParameterizedTest
    @EnumSource(Language.class)
    void awkwardToolNamesStayDataAndGetWrappersOnlyWhereTheyAreIdentifiers(Language language) {
        HostToolRegistry registry = HostToolRegistry.builder().build();
        List<String> names = List.of("ﬁnd", "class", "call", "quote\"'\n$(touch pwned)", "weather");
        for (String name : names) {
            registry.register(name, HostTool.builder().body(arguments -> name).build());
        }
        String program = language == Language.PYTHON ? """
                import json
                import sandbox4j_host_tools as tools
                print(tools.find())
                print(tools.weather())
                print(hasattr(tools, "class"), tools.call is not None)
                print(json.dumps(tools.call("quote\\"'\\n$(touch pwned)")))
                print(tools.call("class"))
                """ : """
                const tools = require('sandbox4j_host_tools');
                console.log(tools['ﬁnd']());
                console.log(tools.weather());
                console.log(typeof tools.class, tools.call.length);
                console.log(JSON.stringify(tools.call("quote\\"'\\n$(touch pwned)")));
                """;

        Run run = run(language, registry, program, RUN_TIMEOUT, names);

        assertThat(run.result.exitCode()).as(run.result.stdoutText()).isZero();
        if (language == Language.PYTHON) {
            assertThat(run.result.stdoutText()).isEqualTo("ﬁnd\nweather\nFalse True\n\"quote\\\"'\\n$(touch pwned)\"\nclass\n");
        } else {
            assertThat(run.result.stdoutText()).isEqualTo("ﬁnd\nweather\nfunction 2\n\"quote\\\"'\\n$(touch pwned)\"\n");
        }
        assertThat(sandbox.stat(run.layout.work() + "/pwned", workDir)).isEmpty();
        assertTransportReclaimed(run.layout);
    }

    @Test
    void aRunDirectoryHoldingQuotesAndCommandSubstitutionStaysInert() {
        String runDirectory = workDir + "/it's $(touch pwned) `touch pwned2` " + UUID.randomUUID();
        GuestRunLayout layout = GuestRunLayout.of(runDirectory, "program.py", GuestRunLayout.PYTHON_SHIM);
        HostToolRegistry registry = registryWithLookup(new AtomicInteger());
        String program = """
                import os, sys
                print(os.getcwd() == %s)
                print(sys.path[1] == %s)
                print(os.environ["PYTHONPATH"].split(":")[0] == %s)
                print(os.environ["PYTHONUNBUFFERED"], os.environ["PYTHONNOUSERSITE"])
                """.formatted(pythonString(layout.work()), pythonString(layout.transport()),
                pythonString(layout.transport()));

        ExecResult result = supervise(Language.PYTHON, registry, layout, program, RUN_TIMEOUT);

        assertThat(result.stdoutText()).isEqualTo("True\nTrue\nTrue\n1 1\n");
        for (String directory : List.of(workDir, runDirectory, layout.work())) {
            assertThat(sandbox.stat(directory + "/pwned", workDir)).isEmpty();
            assertThat(sandbox.stat(directory + "/pwned2", workDir)).isEmpty();
        }
        assertTransportReclaimed(layout);
        assertThat(HostToolSupervisor.reclaimRun(sandbox, layout)).isTrue();
    }

    @Test
    void inheritedImportPathEntriesInsideTheRunAreDropped() {
        GuestRunLayout layout = freshLayout(Language.PYTHON);
        // The launcher runs with an inherited PYTHONPATH the backend's environment would carry.
        String program = """
                import os
                print(os.environ["PYTHONPATH"])
                print(os.environ["NODE_PATH"])
                """;
        String inherited = String.join(":", "/usr/lib/kept", "relative/dropped", layout.directory(),
                layout.work() + "/dropped", "/usr/./dropped", "/usr//dropped", "/usr/lib/..", "", "/opt/kept");
        HostToolRegistry registry = registryWithLookup(new AtomicInteger());
        sandbox.writeFile(layout.program(), program, layout.directory());
        sandbox.writeFile(layout.shim(), Language.PYTHON.shimSource(registry.names()), layout.directory());
        sandbox.writeFile(layout.launcher(), Launcher.script(layout, List.of("python3")), layout.directory());

        ExecResult launched = sandbox.exec(Command.shell("sh " + org.sandbox4j.core.spi.PosixShell.quote(layout.launcher())),
                ExecOptions.in(layout.directory(), Duration.ofSeconds(30))
                        .withEnvironment(Map.of("PYTHONPATH", inherited, "NODE_PATH", inherited)));

        assertThat(launched.exitCode()).isZero();
        assertThat(launched.stdoutText()).isEqualTo(Launcher.SESSION_MARKER + "\n");
        String output = new String(sandbox.readFile(layout.output(), layout.directory(), 4096), StandardCharsets.UTF_8);
        String expected = layout.transport() + ":/usr/lib/kept:/opt/kept";
        assertThat(output).isEqualTo(expected + "\n" + expected + "\n");
        assertThat(new String(sandbox.readFile(layout.exitCode(), layout.directory(), 32), StandardCharsets.UTF_8))
                .isEqualTo("0\n");
        assertThat(HostToolSupervisor.reclaimRun(sandbox, layout)).isTrue();
    }

    @Test
    void timeoutsAreValidatedBeforeAnythingRuns() {
        GuestRunLayout layout = freshLayout(Language.PYTHON);
        HostToolRun run = new HostToolRun(registryWithLookup(new AtomicInteger()));
        for (Duration bad : List.of(Duration.ZERO, Duration.ofSeconds(-1))) {
            assertThatThrownBy(() -> HostToolSupervisor.run(sandbox, run, layout, bad, POLL, List.of("python3"),
                    "", new byte[0])).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("timeout");
            assertThatThrownBy(() -> HostToolSupervisor.run(sandbox, run, layout, RUN_TIMEOUT, bad,
                    List.of("python3"), "", new byte[0])).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("pollInterval");
            assertThatThrownBy(() -> HostToolSupervisor.reclaimRun(sandbox, layout, bad))
                    .isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(sandbox.stat(layout.directory(), workDir)).isEmpty();
    }

    @Test
    void aLauncherThatCannotStartTheProgramIsReturnedWithoutSupervision() {
        GuestRunLayout layout = freshLayout(Language.PYTHON);
        // A file where the work directory must go: mkdir fails, so the launcher exits before starting anything.
        sandbox.writeFile(layout.work(), "in the way", layout.directory());

        ExecResult result = supervise(Language.PYTHON, registryWithLookup(new AtomicInteger()), layout,
                "print('never')", RUN_TIMEOUT);

        assertThat(result.exitCode()).isNotZero();
        assertThat(result.stdoutText()).doesNotContain("never");
        assertTransportReclaimed(layout);
        assertThat(HostToolSupervisor.reclaimRun(sandbox, layout)).isTrue();
    }

    @Test
    void aRunWhoseUploadCannotFinishBeforeTheDeadlineNeverStartsALauncher() {
        GuestRunLayout layout = freshLayout(Language.PYTHON);

        assertThatThrownBy(() -> supervise(Language.PYTHON, registryWithLookup(new AtomicInteger()), layout,
                "print('never')", Duration.ofNanos(1)))
                .isInstanceOfSatisfying(SandboxProgramTimeout.class, timeout -> {
                    assertThat(timeout.outcome()).isEqualTo(SandboxProgramTimeout.Outcome.ABSENT);
                    assertThat(timeout.launcherEnded()).isFalse();
                    assertThat(timeout.getMessage()).contains("did not start").contains("no launcher ran")
                            .contains("No output was read");
                });
        assertTransportReclaimed(layout);
    }

    @Test
    void nonUtf8OutputIsRepairedAndTheExitCodeComesBack() {
        Run run = run(Language.PYTHON, registryWithLookup(new AtomicInteger()), """
                import sys
                sys.stdout.buffer.write(b"caf\\xc3\\xa9 \\xff\\n")
                sys.stdout.flush()
                print("to stderr", file=sys.stderr)
                sys.exit(42)
                """, RUN_TIMEOUT);

        assertThat(run.result.exitCode()).isEqualTo(42);
        assertThat(run.result.stdoutText()).isEqualTo("café \uFFFD\nto stderr\n");
        assertThat(run.result.stderrText()).isEmpty();
        assertTransportReclaimed(run.layout);
    }

    @Test
    void aGuestThatTurnsTheCallsDirectoryIntoALinkEndsTheRunAndIsStillCleanedUp() {
        GuestRunLayout layout = freshLayout(Language.PYTHON);
        String program = """
                import os, time
                import sandbox4j_host_tools as tools
                os.symlink("/etc", os.path.join(os.path.dirname(tools.__file__), "host_tool_calls"))
                while True:
                    with open("heartbeat", "a") as beat:
                        beat.write("beat\\n")
                    time.sleep(0.1)
                """;
        long started = System.nanoTime();

        assertThatThrownBy(() -> supervise(Language.PYTHON, registryWithLookup(new AtomicInteger()), layout, program,
                RUN_TIMEOUT)).isInstanceOf(org.sandbox4j.core.SandboxPathNotConfined.class);

        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(RUN_TIMEOUT);
        assertTransportReclaimed(layout);
        long beats = size(layout.work() + "/heartbeat");
        assertThat(beats).isPositive();
        try {
            Thread.sleep(600);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        assertThat(size(layout.work() + "/heartbeat")).as("the program was stopped").isEqualTo(beats);
        assertThat(sandbox.exec(Command.argv("test", "-d", "/etc"), ExecOptions.in(workDir, Duration.ofSeconds(30)))
                .exitCode()).isZero();
        assertThat(HostToolSupervisor.reclaimRun(sandbox, layout)).isTrue();
    }

    // ---------------------------------------------------------------- helpers

    private record Run(GuestRunLayout layout, ExecResult result) {
    }

    private static Run run(Language language, HostToolRegistry registry, String program, Duration timeout) {
        return run(language, registry, program, timeout, registry.names());
    }

    private static Run run(Language language, HostToolRegistry registry, String program, Duration timeout,
            List<String> names) {
        GuestRunLayout layout = freshLayout(language);
        return new Run(layout, supervise(language, registry, layout, program, timeout, names));
    }

    private static ExecResult supervise(Language language, HostToolRegistry registry, GuestRunLayout layout,
            String program, Duration timeout) {
        return supervise(language, registry, layout, program, timeout, registry.names());
    }

    private static ExecResult supervise(Language language, HostToolRegistry registry, GuestRunLayout layout,
            String program, Duration timeout, List<String> names) {
        return HostToolSupervisor.run(sandbox, new HostToolRun(registry), layout, timeout, POLL, language.interpreter,
                language.shimSource(names), program.getBytes(StandardCharsets.UTF_8));
    }

    private static GuestRunLayout freshLayout(Language language) {
        String runDirectory = workDir + "/" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        return GuestRunLayout.of(runDirectory, language.program, language.shim);
    }

    private static HostToolRegistry registryWithLookup(AtomicInteger calls) {
        HostToolRegistry registry = HostToolRegistry.builder().build();
        registerLookup(registry, calls);
        return registry;
    }

    private static void registerLookup(HostToolRegistry registry, AtomicInteger calls) {
        registry.register("lookup", HostTool.builder().required("city").body(arguments -> {
            calls.incrementAndGet();
            return Map.of("city", arguments.get("city"));
        }).build());
    }

    private static void assertTransportReclaimed(GuestRunLayout layout) {
        assertThat(sandbox.stat(layout.transport(), workDir)).as("the transport directory after the run").isEmpty();
    }

    private static long size(String path) {
        OptionalLong size = sandbox.stat(path, workDir).map(SandboxEntry::sizeBytes).orElse(OptionalLong.empty());
        return size.orElse(-1);
    }

    /** A Python (and JavaScript) double-quoted string literal for {@code text}. */
    private static String pythonString(String text) {
        return org.sandbox4j.core.spi.Json.quote(text);
    }
}
