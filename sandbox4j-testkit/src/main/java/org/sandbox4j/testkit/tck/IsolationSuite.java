package org.sandbox4j.testkit.tck;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;
import org.opentest4j.TestAbortedException;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.SandboxException;

/**
 * ISOLATION: what a backend declaring {@link Isolation#CONTAINER} or above must hold, checked from
 * inside the guest. A file the probe creates on the host, outside anything the backend mounts,
 * cannot be read; a host process is not visible in the guest's {@code /proc}; the guest holds no
 * capabilities and cannot gain any ({@code no_new_privs}); writes outside the workspace do not
 * persist into the next exec unless the target declares a persistent root; and a bounded fork
 * bomb hits the backend's process limit, after which the sandbox still works.
 *
 * <p><b>No backend passes this suite yet.</b> The in-memory backend declares {@link Isolation#NONE}
 * and is refused; the TCK's own namespace reference backend shares the host's file system and is
 * used only to prove that these probes fail on a backend that claims a rung it does not have. The bubblewrap backend (the next issue) is the first that must pass it.
 *
 * <p>Capabilities in a user namespace: a guest may report uid 0 only when that uid is mapped in a
 * user namespace (its {@code uid_map} is not the host's identity map), and even then its effective,
 * permitted and ambient sets must be empty. Namespaced capabilities never reach host objects, but
 * they still open kernel surfaces (mounts, netlink, new namespaces) a guest does not need; bwrap
 * with {@code --cap-drop ALL} delivers an empty set, so nothing weaker is accepted.
 */
public final class IsolationSuite {

    /** The suite's stable name. */
    public static final String NAME = "ISOLATION";

    /** How many processes the fork bomb tries to start; the backend's limit must stop it first. */
    public static final int FORK_BOMB_PROCESSES = 4096;

    /** How long each of the fork bomb's processes lives, unless the bomb's shell kills them first. */
    public static final Duration FORK_BOMB_PAUSE = Duration.ofSeconds(30);

    /** Position of the effective uid in the status file's {@code Uid:} line (real, effective, saved, fs). */
    private static final int EFFECTIVE = 1;
    private static final String NO_CAPABILITIES = "0000000000000000";
    private static final String HOST_IDENTITY_UID_MAP = "0 0 4294967295";
    private static final Duration SENTINEL_START_BOUND = Duration.ofSeconds(10);
    private static final Duration POLL = Duration.ofMillis(100);
    private static final List<String> SCRATCH_OUTSIDE_THE_WORKSPACE = List.of("/tmp", "/var/tmp");
    private static final String POSIX_VIEW = "posix";
    /** A fresh random id per kernel boot, which every Linux kernel shows here. */
    private static final String BOOT_ID = "/proc/sys/kernel/random/boot_id";
    /** Anyone may list and enter the sentinel's directory: only a boundary may hide it. */
    private static final String SENTINEL_DIRECTORY_MODE = "rwxr-xr-x";
    /** Anyone may read the sentinel: only a boundary may hide it. */
    private static final String SENTINEL_FILE_MODE = "rw-r--r--";

    private IsolationSuite() {
    }

    public static Suite suite() {
        return Suite.builder(NAME)
                .gate(Capability.EXEC)
                .minimumRung(Isolation.CONTAINER)
                .probes(
                        Probe.of("a-host-file-is-unreadable",
                                "a file on the host, outside anything the backend mounts, must not be readable from "
                                        + "the guest; a container that sees the host's file system is no boundary",
                                IsolationSuite::aHostFileIsUnreadable),
                        Probe.of("a-host-process-is-invisible",
                                "a host process must not be visible in the guest's /proc (its command line carries "
                                        + "secrets, and a visible process can be signalled or traced)",
                                IsolationSuite::aHostProcessIsInvisible),
                        Probe.of("the-guest-holds-no-capabilities",
                                "the guest's effective, permitted and ambient capability sets must be empty, and a "
                                        + "uid 0 guest must be mapped in a user namespace",
                                IsolationSuite::theGuestHoldsNoCapabilities),
                        Probe.of("the-guest-cannot-gain-privileges",
                                "no_new_privs must be set, so no setuid binary or file capability raises the guest's "
                                        + "privileges",
                                IsolationSuite::theGuestCannotGainPrivileges),
                        Probe.of("writes-outside-the-workspace-do-not-persist",
                                "a write outside the workspace must not survive into the next exec (unless the target "
                                        + "declares a persistent root); otherwise one call plants what the next one "
                                        + "runs",
                                IsolationSuite::writesOutsideTheWorkspaceDoNotPersist),
                        Probe.of("a-hypervisor-guest-runs-its-own-kernel",
                                "a backend declaring " + Isolation.MICROVM + " or " + Isolation.VM + " must run "
                                        + "its guest on a kernel of its own (another boot id than the host's); one "
                                        + "that shares the host's kernel is a container, whatever it declares",
                                IsolationSuite::aHypervisorGuestRunsItsOwnKernel),
                        Probe.of("a-fork-bomb-is-contained",
                                "a guest starting " + FORK_BOMB_PROCESSES + " processes must hit the backend's "
                                        + "process limit first, and the sandbox must work afterwards; otherwise one "
                                        + "guest exhausts the host's process table",
                                IsolationSuite::aForkBombIsContained))
                .build();
    }

    /**
     * The sentinel lives in a fresh host temp directory, which no backend can have mounted in
     * advance. Directory and file are world-readable, and the path to them searchable by anyone,
     * so only a boundary (a mount namespace without the host's file system) hides the sentinel: a
     * backend that merely runs its guest as another user still reads it, and fails.
     */
    private static void aHostFileIsUnreadable(ProbeContext context) throws IOException {
        Path directory = Files.createTempDirectory("sandbox4j-tck-sentinel-");
        Path sentinel = directory.resolve("sentinel.txt");
        String secret = "sandbox4j TCK host sentinel " + UUID.randomUUID();
        try {
            Files.writeString(sentinel, secret, StandardCharsets.UTF_8);
            worldReadable(directory, sentinel);
            String own = context.paths().in("own-file.txt");
            context.guest().plantFile(own, ConformancePaths.INSIDE);
            ExecResult control = context.shell("cat -- \"$1\"", own);
            Check.equal(new String(ConformancePaths.INSIDE, StandardCharsets.UTF_8), control.stdoutText(),
                    "positive control: the guest reads a file of its own with cat");

            ExecResult attempt = context.shell("cat -- \"$1\" 2>/dev/null; if test -e \"$2\"; then echo VISIBLE; fi",
                    sentinel.toString(), directory.toString());

            Check.that(!attempt.stdoutText().contains(secret), "the guest read the host file " + sentinel);
            Check.that(!attempt.stdoutText().contains("VISIBLE"), "the guest sees the host directory " + directory);
        } finally {
            Files.deleteIfExists(sentinel);
            Files.deleteIfExists(directory);
        }
    }

    /**
     * Every boot of a Linux kernel gets a fresh random boot id; a guest that reads the host's own
     * runs on the host's kernel. Only the hypervisor rungs promise a kernel of their own, so the
     * probe is skipped, and listed, below them.
     */
    private static void aHypervisorGuestRunsItsOwnKernel(ProbeContext context) throws IOException {
        Isolation declared = context.declarations().isolation();
        if (declared.compareTo(Isolation.MICROVM) < 0) {
            throw new TestAbortedException("the backend declares " + declared + ", which shares the host's kernel; "
                    + "only " + Isolation.MICROVM + " and " + Isolation.VM + " promise a kernel of their own");
        }
        Optional<String> emulated = context.target().emulatedHypervisor();
        if (emulated.isPresent()) {
            throw new TestAbortedException("the target emulates its hypervisor on this host's kernel: "
                    + emulated.get());
        }
        String host = Files.readString(Path.of(BOOT_ID)).strip();
        ExecResult guest = context.exec("cat", BOOT_ID);
        String guestBoot = guest.stdoutText().strip();
        Check.that(guest.exitCode() == 0 && guestBoot.matches("[0-9a-f-]{36}"), "positive control: the guest "
                + "could not read its kernel's boot id from " + BOOT_ID + ": " + Check.show(guest.stderrText()));
        Check.that(!guestBoot.equals(host), "the guest runs on the host's own kernel (boot id " + host + ")");
    }

    /**
     * Sets the sentinel's modes explicitly (the host's umask is not trusted) and proves the path to
     * it is searchable by other users. A host whose file system has no POSIX permissions (Windows)
     * has no uid a guest could be denied by, so there is nothing to set.
     */
    private static void worldReadable(Path directory, Path sentinel) throws IOException {
        if (!FileSystems.getDefault().supportedFileAttributeViews().contains(POSIX_VIEW)) {
            return;
        }
        Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString(SENTINEL_DIRECTORY_MODE));
        Files.setPosixFilePermissions(sentinel, PosixFilePermissions.fromString(SENTINEL_FILE_MODE));
        for (Path above = directory.toRealPath().getParent(); above != null; above = above.getParent()) {
            if (!Files.getPosixFilePermissions(above).contains(PosixFilePermission.OTHERS_EXECUTE)) {
                Assumptions.abort("the host's temp directory sits under " + above + ", which other users cannot "
                        + "search: file permissions alone could hide the sentinel from a guest running as another "
                        + "user, so an unreadable sentinel would prove no boundary (point java.io.tmpdir at a "
                        + "directory every user can reach)");
            }
        }
    }

    /**
     * The sentinel is a lone {@code sh} blocked reading its stdin, with the marker as its {@code $0}:
     * one process, no children to leak. The guest gets the marker in two halves, so no guest
     * process carries it whole in its own command line.
     */
    private static void aHostProcessIsInvisible(ProbeContext context) throws Exception {
        String half = UUID.randomUUID().toString().replace("-", "");
        String first = "sandbox4j-tck-sentinel-" + half.substring(0, half.length() / 2);
        String second = half.substring(half.length() / 2);
        String marker = first + second;
        Process sentinel = new ProcessBuilder("sh", "-c", "read line", marker).redirectErrorStream(true).start();
        try {
            awaitOnHost(sentinel, marker);
            ExecResult look = context.shell(String.join("\n",
                    "m=\"$1$2\"; seen=0; found=''",
                    "for f in /proc/[0-9]*/cmdline; do",
                    "  c=$(tr '\\000' ' ' < \"$f\" 2>/dev/null) || continue",
                    "  seen=$((seen+1))",
                    "  case \"$c\" in *\"$m\"*) found=\"$found ${f#/proc/}\" ;; esac",
                    "done",
                    "echo \"seen=$seen found=$found\""), first, second);
            String answer = look.stdoutText().strip();
            if (answer.startsWith("seen=0")) {
                Assumptions.abort("the guest has no readable /proc (" + answer + "); there is nothing to look for "
                        + "host processes through");
            }
            Check.that(answer.endsWith("found="), "the guest sees the host's sentinel process (pid/cmdline "
                    + "entries: " + answer + ")");
        } finally {
            sentinel.destroyForcibly();
            sentinel.waitFor();
        }
    }

    /** Positive control: the sentinel really runs, and (on a Linux host) carries its marker. */
    private static void awaitOnHost(Process sentinel, String marker) throws InterruptedException, IOException {
        Path cmdline = Path.of("/proc", Long.toString(sentinel.pid()), "cmdline");
        long deadline = System.nanoTime() + SENTINEL_START_BOUND.toNanos();
        while (System.nanoTime() < deadline) {
            Check.that(sentinel.isAlive(), "positive control: the host sentinel process exited early");
            if (!Files.isReadable(cmdline)) {
                return; // Not a Linux host: isAlive is all the host can tell.
            }
            if (new String(Files.readAllBytes(cmdline), StandardCharsets.UTF_8).contains(marker)) {
                return;
            }
            Thread.sleep(POLL.toMillis());
        }
        throw new AssertionError("positive control: the host sentinel never showed its marker in " + cmdline);
    }

    private static void theGuestHoldsNoCapabilities(ProbeContext context) {
        Map<String, String> status = status(context);
        List<String> held = new ArrayList<>();
        for (String set : List.of("CapEff", "CapPrm", "CapAmb")) {
            String value = status.get(set);
            if (value != null && !value.equals(NO_CAPABILITIES)) {
                held.add(set + "=" + value);
            }
        }
        Check.that(held.isEmpty(), "the guest holds capabilities: " + String.join(", ", held));
        String[] uids = status.getOrDefault("Uid", "").split("\\s+");
        Check.that(uids.length > EFFECTIVE, "positive control: the guest's status names its uids, not "
                + Check.show(status.get("Uid")));
        if (uids[EFFECTIVE].equals("0")) {
            String uidMap = status.getOrDefault("uid_map", "").trim().replaceAll("\\s+", " ");
            Check.that(!uidMap.isEmpty() && !uidMap.equals(HOST_IDENTITY_UID_MAP), "the guest runs as uid 0 of the "
                    + "host itself (uid_map " + Check.show(uidMap) + "), not in a user namespace: it owns every "
                    + "root-owned host file it can reach");
        }
    }

    /**
     * Linux shows the flag as the status file's NoNewPrivs line. gVisor's kernel never prints that
     * line (20221219 and 20240729 alike) though it keeps the flag, so where the line is absent the
     * probe asks the kernel itself, prctl(PR_GET_NO_NEW_PRIVS), through the guest's python3: the
     * same bit, read at its source. Either way the flag must be shown set; a guest that can show
     * neither fails.
     */
    private static void theGuestCannotGainPrivileges(ProbeContext context) {
        Map<String, String> status = status(context);
        Optional<ExecResult> prctl = status.containsKey("NoNewPrivs") ? Optional.empty()
                : Optional.of(context.shell(PRCTL_NO_NEW_PRIVS));
        noNewPrivsShownSet(status, prctl);
    }

    /** prctl(PR_GET_NO_NEW_PRIVS = 39); 127 when the guest has no python3 to ask with. */
    static final String PRCTL_NO_NEW_PRIVS = "command -v python3 >/dev/null 2>&1 || exit 127; "
            + "exec python3 -c 'import ctypes; print(ctypes.CDLL(None, use_errno=True).prctl(39, 0, 0, 0, 0))'";

    /** The verdict on the status fields and, when they have no NoNewPrivs line, the prctl answer. */
    static void noNewPrivsShownSet(Map<String, String> status, Optional<ExecResult> prctl) {
        if (status.containsKey("NoNewPrivs")) {
            Check.equal("1", status.get("NoNewPrivs"), "the guest's NoNewPrivs");
            return;
        }
        Check.that(prctl.isPresent(), "the guest's /proc/self/status has no NoNewPrivs line and prctl was not "
                + "asked, so no_new_privs cannot be shown to be set");
        ExecResult answer = prctl.get();
        Check.that(answer.exitCode() != 127, "the guest's /proc/self/status has no NoNewPrivs line and the guest "
                + "has no python3 to ask prctl(PR_GET_NO_NEW_PRIVS), so no_new_privs cannot be shown to be set");
        Check.that(answer.exitCode() == 0, "the guest's /proc/self/status has no NoNewPrivs line and "
                + "prctl(PR_GET_NO_NEW_PRIVS) could not be asked (exit " + answer.exitCode() + ": "
                + answer.stderrText().strip() + ")");
        Check.equal("1", answer.stdoutText().strip(), "the guest's prctl(PR_GET_NO_NEW_PRIVS), its status having "
                + "no NoNewPrivs line");
    }

    /** The guest's own status lines by name, plus its {@code uid_map} under the key {@code uid_map}. */
    private static Map<String, String> status(ProbeContext context) {
        ExecResult result = context.shell("cat /proc/self/status && printf 'uid_map:\\t' && cat /proc/self/uid_map");
        Check.that(result.exitCode() == 0, "positive control: the guest reads its own /proc/self/status (exit "
                + result.exitCode() + ": " + result.stderrText().strip() + ")");
        Map<String, String> fields = new HashMap<>();
        for (String line : result.stdoutText().split("\n")) {
            int colon = line.indexOf(':');
            if (colon > 0) {
                fields.putIfAbsent(line.substring(0, colon), line.substring(colon + 1).strip());
            }
        }
        Check.that(fields.containsKey("CapEff"), "positive control: the guest's status names CapEff");
        return fields;
    }

    private static void writesOutsideTheWorkspaceDoNotPersist(ProbeContext context) {
        if (context.target().persistentRoot()) {
            Assumptions.abort("the target declares a persistent root: writes outside the workspace are meant to "
                    + "persist from one exec to the next");
        }
        String name = "sandbox4j-tck-persist-" + UUID.randomUUID().toString().replace("-", "");
        List<String> outside = new ArrayList<>();
        SCRATCH_OUTSIDE_THE_WORKSPACE.forEach(directory -> outside.add(directory + "/" + name));
        String control = context.paths().in("persist-control.txt");
        List<String> arguments = new ArrayList<>();
        arguments.add(control);
        arguments.addAll(outside);
        try {
            ExecResult write = context.shell("control=$1; shift; printf kept > \"$control\" || exit 1; "
                    + "for f; do if printf planted > \"$f\" 2>/dev/null; then echo \"$f\"; fi; done",
                    arguments.toArray(String[]::new));
            Check.that(write.exitCode() == 0, "positive control: the guest writes " + control + " (exit "
                    + write.exitCode() + ")");
            String written = write.stdoutText().strip();
            if (written.isEmpty()) {
                // Nothing written proves nothing: a guest denied the scratch directories by file
                // permissions alone (another uid on the host's /tmp) would pass without a boundary.
                Assumptions.abort("the guest could write in none of " + SCRATCH_OUTSIDE_THE_WORKSPACE + ", so "
                        + "nothing shows whether writes outside the workspace persist");
            }

            ExecResult next = context.shell("for f; do if test -e \"$f\"; then echo \"$f\"; fi; done",
                    arguments.toArray(String[]::new));

            List<String> survived = List.of(next.stdoutText().strip().split("\n"));
            Check.that(survived.contains(control), "positive control: " + control
                    + " (in the workspace) did not survive into the next exec");
            List<String> leaked = new ArrayList<>(survived);
            leaked.remove(control);
            leaked.removeIf(String::isEmpty);
            Check.that(leaked.isEmpty(), "writes outside the workspace persisted into the next exec: " + leaked
                    + " (written in the first exec: " + Check.show(written) + ")");
        } finally {
            try {
                context.shell("rm -f -- \"$@\"", outside.toArray(String[]::new));
            } catch (RuntimeException cleanupFailure) {
                // Best effort: the probe's verdict stands whatever clean-up does.
            }
        }
    }

    /**
     * Bounded: at most {@value #FORK_BOMB_PROCESSES} {@code sleep}s, each ending on its own, killed
     * by the bomb's shell when it exits, and bounded by the exec timeout. The count is written after
     * each start, so it survives the shell dying of a failed fork.
     */
    private static void aForkBombIsContained(ProbeContext context) throws InterruptedException {
        String count = context.paths().in("fork-bomb-count");
        context.guest().plantFile(count, "0\n".getBytes(StandardCharsets.UTF_8));
        Check.that(context.guest().isRegularFile(count), "positive control: the count file exists");
        String bomb = String.join("\n",
                "limit=$1; pause=$2; count=$3; i=0; pids=''",
                "trap 'kill $pids 2>/dev/null' EXIT",
                "while [ \"$i\" -lt \"$limit\" ]; do",
                "  sleep \"$pause\" 2>/dev/null &",
                "  pids=\"$pids $!\"; i=$((i+1))",
                "  echo \"$i\" > \"$count\"",
                "done");
        String outcome;
        try {
            ExecResult result = context.shell(bomb, Integer.toString(FORK_BOMB_PROCESSES),
                    Long.toString(FORK_BOMB_PAUSE.toSeconds()), count);
            outcome = "the bomb's shell exited " + result.exitCode();
        } catch (SandboxException stopped) {
            outcome = "the bomb's exec ended with " + ErrorDetail.of(stopped);
        }

        awaitUsable(context);
        String started = new String(context.guest().read(count), StandardCharsets.UTF_8).strip();
        int processes = Integer.parseInt(started);
        Check.that(processes > 0, "positive control: the fork bomb started no process at all (" + outcome + ")");
        Check.that(processes < FORK_BOMB_PROCESSES, "the guest started all " + FORK_BOMB_PROCESSES
                + " processes: no process limit contains a fork bomb (" + outcome + ")");
    }

    /**
     * A fresh exec must succeed. The bomb's processes may hold the limit until they end, so this
     * retries until {@link #FORK_BOMB_PAUSE} plus one exec timeout have passed.
     */
    private static void awaitUsable(ProbeContext context) throws InterruptedException {
        long deadline = System.nanoTime() + FORK_BOMB_PAUSE.plus(context.execTimeout()).toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            try {
                ExecResult fresh = context.exec("true");
                if (fresh.exitCode() == 0) {
                    return;
                }
                last = "exit " + fresh.exitCode() + ": " + fresh.stderrText().strip();
            } catch (SandboxException failed) {
                last = ErrorDetail.of(failed);
            }
            Thread.sleep(POLL.toMillis());
        }
        throw new AssertionError("the sandbox was not usable after the fork bomb: a fresh exec still fails ("
                + last + ")");
    }
}
