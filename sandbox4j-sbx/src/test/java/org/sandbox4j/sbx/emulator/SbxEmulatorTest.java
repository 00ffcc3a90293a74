package org.sandbox4j.sbx.emulator;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.testkit.tck.LoopbackHttpServer;

/**
 * The sbx emulator ({@code src/test/resources/sbx-emulator/sbx}) driven as the backend drives it:
 * real processes, a temporary {@code SBX_EMULATOR_HOME}. Needs host root (the emulator maps the
 * guest's ids to a host range and builds namespaces); skipped elsewhere.
 */
class SbxEmulatorTest {

    static final Path EMULATOR = Path.of("src/test/resources/sbx-emulator/sbx").toAbsolutePath();
    static final String HOST_SENTINEL = "sbx-emulator-host-variable-7d1f";

    @TempDir
    Path tmp;
    Path home;
    Path ws;
    final Map<String, String> extraEnv = new HashMap<>();

    record Result(int exit, byte[] out, String err) {
        String stdout() {
            return new String(out, UTF_8);
        }
    }

    @BeforeEach
    void setUp() throws IOException {
        Assumptions.assumeTrue(Files.isExecutable(EMULATOR), "the sbx emulator is not there");
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "the sbx emulator needs host root");
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/nsenter")), "no nsenter");
        home = Files.createDirectories(tmp.resolve("home"));
        ws = Files.createDirectories(tmp.resolve("ws"));
    }

    @AfterEach
    void removeEverySandbox() throws Exception {
        if (home == null) {
            return;
        }
        extraEnv.clear();
        for (String f : List.of("logged-out", "engine-lost", "governed")) {
            Files.deleteIfExists(home.resolve(f));
        }
        Path boxes = home.resolve("sandboxes");
        if (Files.isDirectory(boxes)) {
            try (Stream<Path> s = Files.list(boxes)) {
                for (Path p : s.toList()) {
                    if (!p.getFileName().toString().startsWith(".")) {
                        sbx("rm", "--force", p.getFileName().toString());
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------

    Result sbx(String... args) throws Exception {
        return sbxIn(null, args);
    }

    Process start(String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(EMULATOR.toString());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("SBX_EMULATOR_HOME", home.toString());
        pb.environment().put("SBX_TEST_HOST_VARIABLE", HOST_SENTINEL);
        pb.environment().putAll(extraEnv);
        return pb.start();
    }

    Result sbxIn(byte[] stdin, String... args) throws Exception {
        Process p = start(args);
        CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> readAll(p.getInputStream()));
        CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> readAll(p.getErrorStream()));
        if (stdin != null) {
            p.getOutputStream().write(stdin);
        }
        p.getOutputStream().close();
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("sbx " + String.join(" ", args) + " did not finish");
        }
        return new Result(p.exitValue(), out.get(), new String(err.get(), UTF_8));
    }

    static byte[] readAll(InputStream in) {
        try (in) {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            in.transferTo(b);
            return b.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    String create(String name) throws Exception {
        return create(name, "shell");
    }

    /** As the backend creates: the shell agent, --template only for an image other than its own. */
    String create(String name, String template) throws Exception {
        List<String> a = new ArrayList<>(List.of("create", "shell", "--name", name, "--cpus", "1", "--memory", "512m",
                "--skills", "off", "--deny-network", "**", "--quiet"));
        if (!template.equals("shell")) {
            a.addAll(List.of("--template", template));
        }
        a.add(ws.toString());
        Result r = sbx(a.toArray(String[]::new));
        assertThat(r.err()).isEmpty();
        assertThat(r.exit()).isZero();
        assertThat(r.stdout()).isEmpty();
        return id(name);
    }

    /** The id {@code sbx ls --json} gives the sandbox (create prints none). */
    String id(String name) throws Exception {
        Matcher m = Pattern.compile("\"name\": \"" + Pattern.quote(name) + "\", \"id\": \"([^\"]+)\"")
                .matcher(sbx("ls", "--json").stdout());
        return m.find() ? m.group(1) : null;
    }

    Result exec(String name, String... command) throws Exception {
        List<String> a = new ArrayList<>(List.of("exec", name));
        a.addAll(List.of(command));
        return sbx(a.toArray(String[]::new));
    }

    Result sh(String name, String script) throws Exception {
        return exec(name, "sh", "-c", script);
    }

    Map<String, Object> runRecord(String name) throws IOException {
        Path run = home.resolve("sandboxes").resolve(name).resolve("run.json");
        if (!Files.exists(run)) {
            return null;
        }
        String json = Files.readString(run);
        Map<String, Object> m = new HashMap<>();
        Matcher pidns = Pattern.compile("\"pidns\": \"([^\"]+)\"").matcher(json);
        Matcher init = Pattern.compile("\"init_pid\": (\\d+)").matcher(json);
        if (pidns.find() && init.find()) {
            m.put("pidns", pidns.group(1));
            m.put("init", Long.parseLong(init.group(1)));
        }
        return m;
    }

    /** Host processes whose pid namespace is the given one (read from the host's /proc). */
    static List<Long> processesIn(String pidns) throws IOException {
        List<Long> found = new ArrayList<>();
        try (Stream<Path> s = Files.list(Path.of("/proc"))) {
            for (Path p : s.toList()) {
                String n = p.getFileName().toString();
                if (!n.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                try {
                    if (Files.readSymbolicLink(p.resolve("ns/pid")).toString().equals(pidns)) {
                        String stat = Files.readString(p.resolve("stat"));
                        if (!stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z")) {
                            found.add(Long.parseLong(n));
                        }
                    }
                } catch (IOException gone) {
                    // exited meanwhile
                }
            }
        }
        return found;
    }

    /** A process killed by the stop may take a moment to exit on a loaded host; none may outlive the bound. */
    static void awaitNoProcessesIn(String pidns, long millis) throws Exception {
        long end = System.currentTimeMillis() + millis;
        while (!processesIn(pidns).isEmpty() && System.currentTimeMillis() < end) {
            Thread.sleep(100);
        }
        assertThat(processesIn(pidns)).isEmpty();
    }

    String status(String name) throws Exception {
        String ls = sbx("ls", "--json").stdout();
        Matcher m = Pattern.compile("\"name\": \"" + Pattern.quote(name)
                + "\", \"id\": \"[^\"]*\", \"workspaces\": \\[[^\\]]*\\], \"status\": \"(\\w+)\"").matcher(ls);
        return m.find() ? m.group(1) : null;
    }

    void awaitStatus(String name, String status, long millis) throws Exception {
        long end = System.currentTimeMillis() + millis;
        while (!status.equals(status(name)) && System.currentTimeMillis() < end) {
            Thread.sleep(200);
        }
        assertThat(status(name)).isEqualTo(status);
    }

    // ------------------------------------------------------------------------------------------

    @Test
    void createListExecRemoveRoundTrip() throws Exception {
        String id = create("rt");
        assertThat(id).matches("sbx_[0-9a-f]{12}");
        String ls = sbx("ls", "--json").stdout();
        assertThat(ls).startsWith("{\"sandboxes\": [").contains("\"id\": \"" + id + "\"", "\"name\": \"rt\"",
                "\"status\": \"stopped\"", "\"workspaces\": [\"" + ws + "\"]");

        Result r = exec("rt", "sh", "-c", "echo made > " + ws + "/inside.txt && echo ok");
        assertThat(r.exit()).isZero();
        assertThat(r.stdout()).isEqualTo("ok\n");
        assertThat(Files.readString(ws.resolve("inside.txt"))).isEqualTo("made\n");
        assertThat(status("rt")).isEqualTo("running");

        // the host's root keeps working on the workspace, and the guest sees what it writes
        Files.writeString(ws.resolve("from-host.txt"), "host");
        assertThat(exec("rt", "cat", ws + "/from-host.txt").stdout()).isEqualTo("host");
        // what the host's root made is the agent's inside (it may change and remove it), and what
        // the agent makes is the host root's outside
        Files.createDirectories(ws.resolve("host-dir/deeper"));
        Files.writeString(ws.resolve("host-dir/deeper/f"), "x");
        Result own = sh("rt", "stat -c %U " + ws + "/from-host.txt && echo more >> " + ws + "/from-host.txt"
                + " && rm -rf " + ws + "/host-dir && mkdir " + ws + "/agent-dir");
        assertThat(own.err()).isEmpty();
        assertThat(own.stdout()).isEqualTo("agent\n");
        assertThat(ws.resolve("host-dir")).doesNotExist();
        assertThat(Files.readString(ws.resolve("from-host.txt"))).isEqualTo("hostmore\n");
        assertThat(Files.getAttribute(ws.resolve("agent-dir"), "unix:uid")).isEqualTo(0);
        assertThat(Files.getAttribute(ws.resolve("inside.txt"), "unix:uid")).isEqualTo(0);

        String second = create("rt2");
        assertThat(second).isNotEqualTo(id);

        Map<String, Object> run = runRecord("rt");
        Result rm = sbx("rm", "--force", "rt");
        assertThat(rm.exit()).isZero();
        assertThat(rm.stdout()).isEmpty();
        assertThat(rm.err()).isEmpty();
        assertThat(sbx("ls", "--json").stdout()).doesNotContain("\"rt\"").contains("\"rt2\"");
        assertThat(home.resolve("sandboxes/rt")).doesNotExist();
        assertThat(ws.resolve("inside.txt")).exists();
        assertThat(ws.resolve("from-host.txt")).exists();
        assertThat(processesIn((String) run.get("pidns"))).isEmpty();
        assertThat(sbx("rm", "--force", "rt").err()).isEqualTo("ERROR: sandbox rt not found\n");
    }

    @Test
    void streamsAreSeparateAndByteExactAndExitStatusIsTheCommands() throws Exception {
        create("streams");
        Result r = sh("streams", "printf 'a\\000b\\377\\n'; printf 'to-err' >&2; exit 7");
        assertThat(r.exit()).isEqualTo(7);
        assertThat(r.out()).containsExactly('a', 0, 'b', 0xff, '\n');
        assertThat(r.err()).isEqualTo("to-err");

        assertThat(sh("streams", "kill -9 $$").exit()).isEqualTo(137);
        assertThat(sh("streams", "kill -TERM $$").exit()).isEqualTo(143);
        Result missing = exec("streams", "no-such-command-here");
        assertThat(missing.exit()).isEqualTo(127);

        byte[] big = sh("streams", "head -c 3000000 /dev/zero").out();
        assertThat(big).hasSize(3_000_000);
    }

    @Test
    void stdinOnlyWithDashI() throws Exception {
        create("stdin");
        byte[] in = {1, 2, 0, (byte) 0xfe, '\n'};
        Result with = sbxIn(in, "exec", "-i", "stdin", "cat");
        assertThat(with.exit()).isZero();
        assertThat(with.out()).containsExactly(in);
        Result without = sbxIn(in, "exec", "stdin", "cat");
        assertThat(without.exit()).isZero();
        assertThat(without.out()).isEmpty();
    }

    @Test
    void refusesAnEmptyArgumentAndAMissingSandbox() throws Exception {
        create("empty");
        Result r = exec("empty", "echo", "");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.stdout()).isEmpty();
        assertThat(r.err()).isEqualTo("ERROR: empty argument at position 4\n");

        Result missing = exec("nope", "true");
        assertThat(missing.exit()).isEqualTo(1);
        assertThat(missing.err()).isEqualTo("ERROR: sandbox nope not found\n");
        assertThat(sbx("stop", "nope").err()).isEqualTo("ERROR: sandbox nope not found\n");
    }

    /** As docker exec: flags end at SANDBOX, so a "--" after it is the command (none such in the guest). */
    @Test
    void aDoubleDashAfterTheNameIsTheCommand() throws Exception {
        create("dash");
        Result r = sbx("exec", "dash", "--", "true");
        assertThat(r.exit()).isEqualTo(127);
        assertThat(r.err()).contains("--");
        assertThat(sbx("exec", "-u", "root", "dash", "id", "-u").stdout()).isEqualTo("0\n");
    }

    @Test
    void workingDirectoryIsRootAndEnvironmentIsClean() throws Exception {
        create("env");
        assertThat(exec("env", "pwd").stdout()).isEqualTo("/\n");
        String env = exec("env", "env").stdout();
        assertThat(env).doesNotContain(HOST_SENTINEL).doesNotContain("SBX_EMULATOR_HOME")
                .contains("LANG=C.UTF-8", "HOME=/home/agent", "USER=agent", "PATH=")
                .doesNotContain("SSH_AUTH_SOCK");
        assertThat(exec("env", "hostname").stdout()).isEqualTo("sbx\n");
    }

    @Test
    void agentAndRootIdentitiesAndSudo() throws Exception {
        create("who");
        assertThat(exec("who", "id", "-u").stdout()).isEqualTo("1000\n");
        assertThat(exec("who", "id", "-un").stdout()).isEqualTo("agent\n");
        assertThat(sbx("exec", "--user", "root", "who", "id", "-u").stdout()).isEqualTo("0\n");
        Result sudo = exec("who", "sudo", "-n", "id", "-u");
        assertThat(sudo.err()).isEmpty();
        assertThat(sudo.stdout()).isEqualTo("0\n");
        assertThat(sudo.exit()).isZero();
        assertThat(exec("who", "sudo", "sh", "-c", "exit 5").exit()).isEqualTo(5);

        Result mount = exec("who", "mount", "--bind", ws.toString(), "/mnt");
        assertThat(mount.exit()).isNotZero();
        assertThat(sh("who", "grep ' /mnt ' /proc/mounts").exit()).isNotZero();
        assertThat(sh("who", "touch /etc/x").exit()).isNotZero();
        assertThat(sh("who", "sudo touch /etc/x && ls /etc/x").exit()).isZero();

        // Docker's own template: its root may mount.
        assertThat(sbx("exec", "-u", "root", "who", "sh", "-c", "mkdir -p /m1 && mount --bind /tmp /m1").exit())
                .isZero();

        create("rooted", "root");
        assertThat(exec("rooted", "id", "-u").stdout()).isEqualTo("0\n");
        // Not Docker's template: its root has no mount capability, but a user namespace of its own grants it there.
        Result rootBind = sh("rooted", "mkdir -p /m2 && mount --bind /tmp /m2");
        assertThat(rootBind.exit()).isNotZero();
        assertThat(rootBind.err()).contains("mount");
        assertThat(sbx("exec", "-u", "root", "rooted", "sh", "-c", "mount --bind /tmp /m2").exit()).isNotZero();
        assertThat(sh("rooted", "unshare --user --mount --map-root-user sh -c 'mount --bind \"$0\" /m2 && echo bound'"
                + " " + ws).stdout()).isEqualTo("bound\n");
        assertThat(sbx("create", "shell", "--name", "bad", "--template", "nonesuch", "--deny-network", "**",
                ws.toString()).err()).isEqualTo("ERROR: template nonesuch not found\n");
    }

    @Test
    void guestDiskPersistsAcrossStopsButMountsAndProcessesDoNot() throws Exception {
        create("life");
        Files.writeString(ws.resolve("marker"), "here");
        Result bind = sh("life", "sudo mkdir -p /sandbox4j && sudo mount --bind " + ws + " /sandbox4j"
                + " && echo keep > /home/agent/kept && sudo sh -c 'echo disk > /srv/kept'");
        assertThat(bind.err()).isEmpty();
        assertThat(bind.exit()).isZero();
        assertThat(exec("life", "cat", "/sandbox4j/marker").stdout()).isEqualTo("here");

        Result stop = sbx("stop", "life");
        assertThat(stop.exit()).isZero();
        assertThat(status("life")).isEqualTo("stopped");
        assertThat(sh("life", "test -e /sandbox4j/marker").exit()).isEqualTo(1);
        assertThat(sh("life", "test -d /sandbox4j && cat /home/agent/kept /srv/kept").stdout())
                .isEqualTo("keep\ndisk\n");
        assertThat(ws.resolve("marker")).exists();
    }

    @Test
    void idleStopKillsEveryProcessAndDropsMounts() throws Exception {
        extraEnv.put("SBX_EMULATOR_IDLE_SECONDS", "2");
        create("idle");
        Files.writeString(ws.resolve("marker"), "here");
        Result r = sh("idle", "sudo mkdir -p /sandbox4j && sudo mount --bind " + ws + " /sandbox4j"
                + " && setsid sleep 1000 > /dev/null 2>&1 < /dev/null & echo started");
        assertThat(r.stdout()).isEqualTo("started\n");
        // still running between execs (less than the idle time apart)
        Result ps = sh("idle", "for p in /proc/[0-9]*; do cat $p/cmdline 2>/dev/null | tr '\\0' ' '; echo; done");
        assertThat(ps.stdout()).contains("sleep 1000");
        assertThat(exec("idle", "cat", "/sandbox4j/marker").stdout()).isEqualTo("here");
        String pidns = (String) runRecord("idle").get("pidns");
        assertThat(processesIn(pidns)).hasSizeGreaterThanOrEqualTo(2);

        awaitStatus("idle", "stopped", 10_000);
        awaitNoProcessesIn(pidns, 10_000);
        Result after = sh("idle", "test -e /sandbox4j/marker; echo $?; "
                + "for p in /proc/[0-9]*; do cat $p/cmdline 2>/dev/null | tr '\\0' ' '; echo; done");
        assertThat(after.stdout()).startsWith("1\n").doesNotContain("sleep 1000");
    }

    @Test
    void aKilledClientCountsAsAnEndedSession() throws Exception {
        extraEnv.put("SBX_EMULATOR_IDLE_SECONDS", "2");
        create("killed");
        Process client = start("exec", "killed", "sleep", "1000");
        awaitStatus("killed", "running", 10_000);
        String pidns = (String) runRecord("killed").get("pidns");
        Thread.sleep(3000);
        assertThat(status("killed")).isEqualTo("running"); // an open session keeps it up
        client.destroyForcibly().waitFor();
        awaitStatus("killed", "stopped", 10_000);
        awaitNoProcessesIn(pidns, 10_000);
    }

    @Test
    void aKilledSupervisorTakesTheSandboxWithIt() throws Exception {
        create("orphan");
        assertThat(sh("orphan", "setsid sleep 1000 > /dev/null 2>&1 < /dev/null & echo ok").stdout()).isEqualTo("ok\n");
        Map<String, Object> run = runRecord("orphan");
        String json = Files.readString(home.resolve("sandboxes/orphan/run.json"));
        Matcher m = Pattern.compile("\"supervisor_pid\": (\\d+)").matcher(json);
        assertThat(m.find()).isTrue();
        ProcessHandle.of(Long.parseLong(m.group(1))).orElseThrow().destroyForcibly();
        long end = System.currentTimeMillis() + 10_000;
        while (!processesIn((String) run.get("pidns")).isEmpty() && System.currentTimeMillis() < end) {
            Thread.sleep(100);
        }
        assertThat(processesIn((String) run.get("pidns"))).isEmpty();
        assertThat(status("orphan")).isEqualTo("stopped");
        assertThat(exec("orphan", "echo", "again").stdout()).isEqualTo("again\n");
    }

    @Test
    void memoryLimitAppliesToCommandsAndCgroupsGoWithTheSandbox() throws Exception {
        Assumptions.assumeTrue(Files.exists(Path.of("/sys/fs/cgroup/memory/cgroup.procs")), "no cgroup v1 memory");
        Result r = sbx("create", "shell", "--name", "mem", "--cpus", "1", "--memory", "64m", "--skills", "off",
                "--deny-network", "**", "--quiet", ws.toString());
        assertThat(r.exit()).isZero();
        assertThat(exec("mem", "python3", "-c", "b = bytearray(8 * 1024 * 1024); print('small')").stdout())
                .isEqualTo("small\n");
        assertThat(exec("mem", "python3", "-c", "b = bytearray(200 * 1024 * 1024); print('big')").exit())
                .isEqualTo(137);
        String cgroups = exec("mem", "cat", "/proc/self/cgroup").stdout();
        Matcher m = Pattern.compile("memory:(/sbx-emulator-[^\\n]+)").matcher(cgroups);
        assertThat(m.find()).isTrue();
        Path cg = Path.of("/sys/fs/cgroup/memory" + m.group(1));
        assertThat(Files.readString(cg.resolve("memory.limit_in_bytes")).trim()).isEqualTo(String.valueOf(64 << 20));
        assertThat(sbx("rm", "--force", "mem").exit()).isZero();
        assertThat(cg).doesNotExist();
    }

    @Test
    void guestEtcIsSynthesisedAndUsrProgramsRun() throws Exception {
        create("etc");
        String passwd = exec("etc", "cat", "/etc/passwd").stdout();
        assertThat(passwd).contains("root:x:0:0:", "agent:x:1000:1000:agent:/home/agent:");
        assertThat(passwd.lines().count()).isLessThanOrEqualTo(3);
        assertThat(sh("etc", "echo a b | awk '{print $2}'").stdout()).isEqualTo("b\n");
        assertThat(sh("etc", "echo aGk= | base64 -d").stdout()).isEqualTo("hi");
        assertThat(sh("etc", "cd ~ && pwd && touch mine && ls -ln mine | awk '{print $3}'").stdout())
                .isEqualTo("/home/agent\n1000\n");
    }

    @Test
    void twoExecsAtOnceBothRun() throws Exception {
        create("par");
        CompletableFuture<Result> a = CompletableFuture.supplyAsync(() -> quiet("par", "sleep 1; echo a"));
        CompletableFuture<Result> b = CompletableFuture.supplyAsync(() -> quiet("par", "sleep 1; echo b"));
        assertThat(a.get().stdout()).isEqualTo("a\n");
        assertThat(b.get().stdout()).isEqualTo("b\n");
        assertThat(a.get().exit()).isZero();
        assertThat(b.get().exit()).isZero();
    }

    private Result quiet(String name, String script) {
        try {
            return sh(name, script);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void hostFileSystemIsInvisible() throws Exception {
        create("walls");
        Path secret = Files.createTempFile("sbx-emulator-host-secret", ".txt");
        try {
            Files.writeString(secret, "secret");
            Result r = exec("walls", "sudo", "cat", secret.toString());
            assertThat(r.exit()).isNotZero();
            assertThat(r.stdout()).doesNotContain("secret");
            assertThat(sh("walls", "ls " + home).exit()).isNotZero();
            assertThat(sh("walls", "ls /work /root/.m2 2>/dev/null").stdout()).isEmpty();
        } finally {
            Files.deleteIfExists(secret);
        }
        assertThat(sh("walls", "sudo touch /usr/x").exit()).isNotZero();
    }

    /**
     * As the docs say of a real guest: traffic leaves only through the host's proxy. The guest has
     * a device and a default route; a TCP connection anywhere is accepted by the host-side filter,
     * which answers an HTTP request with a 403 saying it is blocked and sends nothing on any other
     * stream; a UDP datagram goes nowhere; the guest's root cannot change any of it.
     */
    @Test
    void theNetworkEndsAtTheHostsFilter() throws Exception {
        create("net");
        String dev = exec("net", "cat", "/proc/net/dev").stdout();
        List<String> ifaces = dev.lines().skip(2).map(l -> l.split(":")[0].trim()).toList();
        assertThat(ifaces).containsExactlyInAnyOrder("lo", "eth0", "eth0-peer");
        assertThat(exec("net", "cat", "/proc/net/route").stdout()).containsPattern("eth0\\s+00000000\\s+01006064");
        Result probe = exec("net", "python3", "-c", String.join("\n",
                "import socket",
                "def talk(host, port, send):",
                "    s = socket.create_connection((host, port), timeout=20)",
                "    s.sendall(send)",
                "    s.settimeout(20)",
                "    got = b''",
                "    while True:",
                "        chunk = s.recv(4096)",
                "        if not chunk:",
                "            return got",
                "        got += chunk",
                "print(repr(talk('203.0.113.7', 80, b'GET / HTTP/1.1\\r\\nHost: example.com\\r\\n\\r\\n')))",
                "print(repr(talk('203.0.113.7', 443, b'\\x16\\x03\\x01\\x00\\x05hello')))",
                "print(repr(talk('127.0.0.1', 3128, b'CONNECT example.com:443 HTTP/1.1\\r\\n\\r\\n')))",
                "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
                "try:",
                "    u.sendto(b'x', ('203.0.113.7', 53))",
                "    u.settimeout(2)",
                "    print(repr(u.recv(100)))",
                "except OSError as e:",
                "    print('udp', type(e).__name__)"));
        assertThat(probe.err()).isEmpty();
        List<String> lines = probe.stdout().lines().toList();
        assertThat(lines).hasSize(4);
        assertThat(lines.get(0)).startsWith("b'HTTP/1.1 403 Forbidden").contains("Blocked by network policy");
        assertThat(lines.get(1)).isEqualTo("b''");
        assertThat(lines.get(2)).startsWith("b'HTTP/1.1 403 Forbidden");
        assertThat(lines.get(3)).startsWith("udp ");
        // The filter is outside the guest's authority: its network namespace belongs to the host.
        assertThat(sh("net", "sudo iptables -t nat -F 2>&1; sudo ip link set eth0 down 2>&1").exit()).isNotZero();
        assertThat(exec("net", "python3", "-c", "import socket; s = socket.create_connection(('203.0.113.7', 80), "
                + "timeout=20); s.sendall(b'GET / HTTP/1.0\\r\\n\\r\\n'); print(s.recv(12))").stdout())
                .isEqualTo("b'HTTP/1.1 403'\n");
    }

    /** {@code sbx policy ls [NAME] --json}'s rules of one scope and decision, by their resources. */
    List<String> resources(String listing, String scope, String decision) {
        List<String> found = new ArrayList<>();
        Matcher rule = Pattern.compile("\\{\"id\": \"[^\"]+\", \"scope\": \"" + Pattern.quote(scope)
                + "\", \"decision\": \"" + decision + "\", \"status\": \"active\", \"resource_type\": \"network\", "
                + "\"resources\": \\[([^\\]]*)\\]\\}").matcher(listing);
        while (rule.find()) {
            for (String resource : rule.group(1).split(", ")) {
                found.add(resource.replace("\"", ""));
            }
        }
        return found;
    }

    @Test
    void policyRulesAreGlobalOrOneSandboxsAndADenyBeatsAnAllow() throws Exception {
        create("pa");
        create("pb");
        // The create's --deny-network is a rule of the sandbox's own, listed by sbx policy ls NAME.
        String pa = sbx("policy", "ls", "pa", "--json").stdout();
        assertThat(resources(pa, "sandbox:pa", "deny")).containsExactly("**");
        assertThat(pa).doesNotContain("sandbox:pb");
        assertThat(sbx("policy", "allow", "network", "--sandbox", "pa", "one.sbx.test,*.two.sbx.test").exit()).isZero();
        Result check = sbx("policy", "check", "network", "--sandbox", "pa", "--json", "one.sbx.test");
        assertThat(check.exit()).isEqualTo(1);
        assertThat(check.stdout()).contains("\"allowed\": false").contains("\"governance\": {\"active\": false}");
        assertThat(sbx("policy", "rm", "network", "--sandbox", "pa", "--resource", "**", "--force").exit()).isZero();
        assertThat(sbx("policy", "check", "network", "--sandbox", "pa", "--json", "one.sbx.test").exit()).isZero();
        assertThat(sbx("policy", "check", "network", "--sandbox", "pa", "--json", "a.two.sbx.test").exit()).isZero();
        assertThat(sbx("policy", "check", "network", "--sandbox", "pa", "--json", "two.sbx.test").exit()).isEqualTo(1);
        assertThat(sbx("policy", "check", "network", "--sandbox", "pb", "--json", "one.sbx.test").exit()).isEqualTo(1);
        // A global allow applies to every sandbox, but a sandbox's own deny-all beats it.
        assertThat(sbx("policy", "allow", "network", "g.sbx.test").exit()).isZero();
        assertThat(sbx("policy", "check", "network", "--json", "g.sbx.test").exit()).isZero();
        assertThat(sbx("policy", "check", "network", "--sandbox", "pb", "--json", "g.sbx.test").exit()).isEqualTo(1);
        assertThat(sbx("policy", "check", "network", "--sandbox", "pa", "--json", "g.sbx.test").exit()).isZero();
        assertThat(sbx("policy", "deny", "network", "--sandbox", "pa", "--protocol", "tcp,udp", "g.sbx.test").exit())
                .isZero();
        assertThat(sbx("policy", "check", "network", "--sandbox", "pa", "--json", "g.sbx.test").exit()).isEqualTo(1);
        String all = sbx("policy", "ls", "--json").stdout();
        assertThat(resources(all, "global", "allow")).containsExactly("g.sbx.test");
        assertThat(resources(all, "sandbox:pb", "deny")).containsExactly("**");
        assertThat(resources(sbx("policy", "ls", "pb", "--json").stdout(), "sandbox:pa", "allow")).isEmpty();
        assertThat(sbx("policy", "rm", "network", "--sandbox", "pb", "--resource", "nothing.sbx.test").exit())
                .isEqualTo(1);
        // Governance makes every local rule inactive, and says so.
        Files.writeString(home.resolve("governed"), "");
        assertThat(sbx("policy", "ls", "--json").stdout().strip()).isEqualTo("{\"rules\": []}");
        assertThat(sbx("policy", "ls", "--json", "--include-inactive").stdout()).contains("\"status\": \"inactive\"");
        check = sbx("policy", "check", "network", "--json", "g.sbx.test");
        assertThat(check.exit()).isEqualTo(1);
        assertThat(check.stdout()).contains("\"governance\": {\"active\": true}");
        assertThat(sbx("policy", "allow", "network", "x.sbx.test").exit()).isEqualTo(1);
        assertThat(sbx("secret", "ls", "--json").stdout().strip())
                .isEqualTo("{\"secrets\": [], \"custom_secrets\": [], \"env_only_count\": 0}");
        assertThat(sbx("policy", "allow", "network", "--sandbox", "pa", "a b").exit()).isEqualTo(1);
    }

    @Test
    void aSandboxsAllowReachesOnlyTheMappedServerAndWidensNoOtherSandbox() throws Exception {
        try (LoopbackHttpServer server = LoopbackHttpServer.start("mapped")) {
            Files.writeString(home.resolve("hosts.json"), "{\"one.sbx.test\": \"127.0.0.1:" + server.port()
                    + "\", \"two.sbx.test\": \"127.0.0.1:" + server.port() + "\"}");
            create("pa");
            create("pb");
            sbx("policy", "allow", "network", "--sandbox", "pa", "one.sbx.test,nomap.sbx.test");
            sbx("policy", "rm", "network", "--sandbox", "pa", "--resource", "**", "--force");
            String curl = "curl -s -o /dev/null -w '%{http_code}' --max-time 10 \"$@\"";
            String url = "http://one.sbx.test:" + server.port() + "/";
            assertThat(exec("pa", "sh", "-c", curl, "c", url).stdout()).isEqualTo("200");
            assertThat(server.requests()).isEqualTo(1);
            // Through the filter as a proxy, by absolute URI and by CONNECT, alike.
            assertThat(exec("pa", "sh", "-c", curl, "c", "-x", "http://127.0.0.1:3128", url).stdout()).isEqualTo("200");
            assertThat(exec("pa", "sh", "-c", curl, "c", "-p", "-x", "http://127.0.0.1:3128", url).stdout())
                    .isEqualTo("200");
            assertThat(server.requests()).isEqualTo(3);
            // Another sandbox, another name for the same server, a smuggled Host, a mismatched
            // absolute URI: each refused, and the server sees none of them.
            assertThat(exec("pb", "sh", "-c", curl, "c", url).stdout()).isEqualTo("403");
            assertThat(exec("pa", "sh", "-c", curl, "c", "http://two.sbx.test:" + server.port() + "/").stdout())
                    .isEqualTo("403");
            assertThat(exec("pa", "sh", "-c", curl, "c", "-H", "Host: two.sbx.test:" + server.port(), url).stdout())
                    .isEqualTo("403");
            assertThat(exec("pa", "sh", "-c", curl, "c", "-x", "http://127.0.0.1:3128", "-H",
                    "Host: two.sbx.test:" + server.port(), url).stdout()).isEqualTo("403");
            // Allowed, but on another port than the mapping names, or not mapped at all: never connected.
            assertThat(exec("pa", "sh", "-c", curl, "c", "-x", "http://127.0.0.1:3128",
                    "http://one.sbx.test:" + (server.port() + 1) + "/").stdout()).isEqualTo("502");
            assertThat(exec("pa", "sh", "-c", curl, "c", "-x", "http://127.0.0.1:3128", "http://nomap.sbx.test/")
                    .stdout()).isEqualTo("502");
            assertThat(server.requests()).isEqualTo(3);
        }
    }

    @Test
    void aTlsStreamIsJudgedByItsServerNameAndRelayedOnlyForAnAllowedMappedOne() throws Exception {
        try (java.net.ServerSocket server = new java.net.ServerSocket(0, 4, java.net.InetAddress.getLoopbackAddress())) {
            java.util.concurrent.atomic.AtomicInteger accepted = new java.util.concurrent.atomic.AtomicInteger();
            Thread answering = new Thread(() -> {
                while (!server.isClosed()) {
                    try (java.net.Socket client = server.accept()) {
                        accepted.incrementAndGet();
                        client.setSoTimeout(10_000);
                        client.getInputStream().read(new byte[512]);
                        client.getOutputStream().write("relayed".getBytes(UTF_8));
                    } catch (IOException closed) {
                        return;
                    }
                }
            });
            answering.setDaemon(true);
            answering.start();
            Files.writeString(home.resolve("hosts.json"), "{\"one.sbx.test\": \"127.0.0.1:" + server.getLocalPort()
                    + "\", \"two.sbx.test\": \"127.0.0.1:" + server.getLocalPort() + "\"}");
            create("pa");
            create("pb");
            sbx("policy", "allow", "network", "--sandbox", "pa", "one.sbx.test");
            sbx("policy", "rm", "network", "--sandbox", "pa", "--resource", "**", "--force");
            String hello = String.join("\n",
                    "import socket, struct, sys",
                    "name = sys.argv[1].encode()",
                    "sni = struct.pack('!HBH', len(name) + 3, 0, len(name)) + name",
                    "ext = struct.pack('!HH', 0, len(sni)) + sni",
                    "body = b'\\x03\\x03' + bytes(32) + b'\\x00' + b'\\x00\\x02\\x13\\x01' + b'\\x01\\x00'"
                            + " + struct.pack('!H', len(ext)) + ext",
                    "shake = b'\\x01' + struct.pack('!I', len(body))[1:] + body",
                    "s = socket.create_connection(('198.51.100.7', int(sys.argv[2])), timeout=20)",
                    "s.sendall(b'\\x16\\x03\\x01' + struct.pack('!H', len(shake)) + shake)",
                    "s.settimeout(20)",
                    "print(repr(s.recv(100)))");
            String port = Integer.toString(server.getLocalPort());
            assertThat(exec("pa", "python3", "-c", hello, "one.sbx.test", port).stdout()).isEqualTo("b'relayed'\n");
            assertThat(accepted.get()).isEqualTo(1);
            // Another name the rules do not admit, and the same name from a deny-all sandbox: no byte, no connection.
            assertThat(exec("pa", "python3", "-c", hello, "two.sbx.test", port).stdout()).isEqualTo("b''\n");
            assertThat(exec("pb", "python3", "-c", hello, "one.sbx.test", port).stdout()).isEqualTo("b''\n");
            assertThat(accepted.get()).isEqualTo(1);
        }
    }

    /** Without --skills off a sandbox mounts the shared skills store (at an assumed path); with it, not. */
    @Test
    void theSkillsStoreIsMountedUnlessTurnedOff() throws Exception {
        assertThat(sbx("create", "shell", "--name", "skilled", "--deny-network", "**", "--quiet", ws.toString()).exit())
                .isZero();
        assertThat(exec("skilled", "cat", "/proc/self/mounts").stdout()).contains(" /run/sbx/skills ");
        assertThat(sh("skilled", "echo shared > /run/sbx/skills/note").exit()).isZero();
        create("unskilled");
        assertThat(exec("unskilled", "cat", "/proc/self/mounts").stdout()).doesNotContain("skills");
    }

    @Test
    void racingCreatesOfOneNameMakeOneSandbox() throws Exception {
        for (int round = 0; round < 3; round++) {
            String name = "race" + round;
            List<Process> ps = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                ps.add(start("create", "shell", "--name", name, "--skills", "off", "--deny-network", "**", "--quiet",
                        ws.toString()));
            }
            int ok = 0;
            List<String> errors = new ArrayList<>();
            for (Process p : ps) {
                assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
                if (p.exitValue() == 0) {
                    ok++;
                } else {
                    errors.add(new String(p.getErrorStream().readAllBytes(), UTF_8));
                }
            }
            assertThat(ok).isEqualTo(1);
            assertThat(errors).containsExactly("ERROR: a sandbox named " + name + " already exists\n");
        }
    }

    @Test
    void createRefusals() throws Exception {
        Result net = sbx("create", "shell", "--name", "n", "--deny-network", "example.com", ws.toString());
        assertThat(net.exit()).isEqualTo(1);
        assertThat(net.err()).startsWith("ERROR: ");
        Result nows = sbx("create", "shell", "--name", "n", "--deny-network", "**", tmp.resolve("absent").toString());
        assertThat(nows.exit()).isEqualTo(1);
        assertThat(nows.err()).startsWith("ERROR: ");
        // The agent is a subcommand: none, or one the emulator does not model, is refused.
        assertThat(sbx("create", "--name", "n", "--deny-network", "**", ws.toString()).err()).startsWith("ERROR: ");
        assertThat(sbx("create", "devin", "--name", "n", "--deny-network", "**", ws.toString()).err())
                .isEqualTo("ERROR: unknown agent: devin\n");
        assertThat(sbx("ls", "--json").stdout().trim()).isEqualTo("{\"sandboxes\": []}");
        create("taken");
        assertThat(sbx("create", "shell", "--name", "taken", "--deny-network", "**", ws.toString()).err())
                .isEqualTo("ERROR: a sandbox named taken already exists\n");
        // Without --quiet, create speaks, but never prints the id.
        Result loud = sbx("create", "shell", "--name", "loud", "--skills", "off", "--deny-network", "**", ws.toString());
        assertThat(loud.exit()).isZero();
        assertThat(loud.stdout()).isNotEmpty().doesNotContain(id("loud"));
    }

    @Test
    void failureSwitches() throws Exception {
        assertThat(sbx("version").stdout()).isEqualTo("sbx version v0.45.1\n");
        assertThat(sbx("settings", "get", "ssh.agentForwardingEnabled").stdout()).isEqualTo("true\n");
        Files.writeString(home.resolve("settings.json"), "{\"ssh.agentForwardingEnabled\": false}");
        assertThat(sbx("settings", "get", "ssh.agentForwardingEnabled").stdout()).isEqualTo("false\n");
        assertThat(sbx("mcp", "ls", "--json").stdout().trim()).isEqualTo("{\"servers\": []}");
        Files.writeString(home.resolve("mcp.json"), "[{\"name\": \"gw\", \"url\": \"http://127.0.0.1:1/\"}]");
        assertThat(sbx("mcp", "ls", "--json").stdout()).startsWith("{\"servers\": [").contains("\"name\": \"gw\"");
        assertThat(sbx("mcp", "ls", "--format", "json").exit()).isEqualTo(1);
        Files.delete(home.resolve("mcp.json"));

        create("sw");
        Files.createFile(home.resolve("logged-out"));
        String login = "ERROR: 401 Unauthorized: no valid user session found\n";
        for (String[] argv : List.of(new String[] {"ls", "--json"}, new String[] {"exec", "sw", "true"},
                new String[] {"rm", "--force", "sw"}, new String[] {"settings", "get", "ssh.agentForwardingEnabled"})) {
            Result r = sbx(argv);
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.err()).isEqualTo(login);
        }
        assertThat(sbx("version").exit()).isZero();
        Files.delete(home.resolve("logged-out"));

        Files.createFile(home.resolve("engine-lost"));
        assertThat(sbx("ls", "--json").stdout().trim()).isEqualTo("{\"sandboxes\": []}");
        String engine = "ERROR: sandboxd: backend unavailable\n";
        assertThat(exec("sw", "true").err()).isEqualTo(engine);
        assertThat(sbx("rm", "--force", "sw").err()).isEqualTo(engine);
        assertThat(sbx("create", "shell", "--name", "sw2", "--deny-network", "**", ws.toString()).err())
                .isEqualTo(engine);
        Files.delete(home.resolve("engine-lost"));
        assertThat(status("sw")).isEqualTo("stopped");

        Files.createFile(home.resolve("forward-ssh-agent"));
        create("ssh");
        Result sock = sh("ssh", "test -S \"$SSH_AUTH_SOCK\" && echo \"$SSH_AUTH_SOCK\"");
        assertThat(sock.stdout()).isEqualTo("/run/host-services/ssh-auth.sock\n");
        assertThat(sh("sw", "echo ${SSH_AUTH_SOCK:-none}; test -e /run/host-services/ssh-auth.sock").stdout())
                .isEqualTo("none\n");
    }
}
