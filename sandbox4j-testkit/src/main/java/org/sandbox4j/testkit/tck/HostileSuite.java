package org.sandbox4j.testkit.tck;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.opentest4j.TestAbortedException;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.HostCeilings;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxPathNotConfined;
import org.sandbox4j.core.SandboxTransferCapExceeded;
import org.sandbox4j.core.TransferLimits;

/**
 * HOSTILE: a guest that attacks the host while the host works. Every probe here comes from a
 * finding against a real backend (issue 17): a disposal that followed a link the still-running
 * guest swapped in and deleted host files outside the workspace; host file calls blocked forever
 * on a FIFO swapped in for a file; a listing of a directory with hundreds of thousands of entries
 * exhausting the host's heap; transfers past the spec's caps accepted; a tree too deep for any
 * path left behind. Nothing here may touch the host: the decoy a guest points at lives in a fresh
 * host temp directory, and every wait is bounded.
 */
public final class HostileSuite {

    /** The suite's stable name. */
    public static final String NAME = "HOSTILE";

    /** The per-file cap of the suite's spec, both ways: small, so oversize transfers cost nothing. */
    public static final long FILE_CAP = 64 * 1024;
    /** Files in the decoy directory a swapping guest points its links at. */
    static final int DECOY_FILES = 50;
    /** Levels of the deep tree: deeper than any path can name (PATH_MAX is 4096 bytes). */
    static final int DEEP_LEVELS = 2500;
    private static final long MIB = 1L << 20;
    /** How far past the bound a disk bomb tries to write. */
    private static final long BOMB_SLACK_MIB = 16;
    /** How long the FIFO probe keeps calling while the guest swaps. */
    private static final Duration SWAPPING = Duration.ofSeconds(3);
    /** The fewest rounds of host calls the FIFO probe makes while the guest swaps, whatever they cost. */
    private static final int MIN_ROUNDS = 3;
    /**
     * A host call that takes longer than this is blocked, not slow: above any backend's own
     * deadline on one file call (a typed timeout is an answer), far below "forever".
     */
    private static final Duration CALL_BOUND = Duration.ofSeconds(45);
    /** How long a disposed exec may take to end. */
    private static final Duration ENDING_BOUND = Duration.ofSeconds(60);
    private static final byte[] KEPT = "a decoy file: a disposal must never reach it\n".getBytes(StandardCharsets.UTF_8);

    /**
     * Makes, in directory {@code $1}, a chain of directories {@code 2 × $2 + 2} levels deep with a
     * file at the bottom. No path may pass PATH_MAX (about 2000 levels of {@code d/}), so two
     * chains of {@code $2} levels are made apart, each by one {@code mkdir -p} of a relative path
     * (a process per level took over a minute under gVisor), and the second is moved to the bottom
     * of the first. Fixed text.
     */
    public static final String DEEP_TREE = String.join("\n",
            "cd \"$1\" || exit 1",
            "chain() { ( cd \"$1\" || exit 1; p=d; i=1; while [ \"$i\" -lt \"$2\" ]; do p=\"$p/d\"; i=$((i+1)); "
                    + "done; mkdir -p \"$p\" && : > \"$p/bottom\" ); }",
            "mkdir -p deep deep-second && chain deep \"$2\" && chain deep-second \"$2\" || exit 1",
            "bottom=deep; i=0; while [ \"$i\" -lt \"$2\" ]; do bottom=\"$bottom/d\"; i=$((i+1)); done",
            "mv deep-second \"$bottom/deep-second\"");

    /**
     * Swaps {@code swap} in {@code $1} for {@code $2} seconds at most: with python3 ({@code $3}) at
     * syscall speed, else with a shell loop. Fixed text.
     */
    private static final String FIFO_SWAPPER = String.join("\n",
            "if command -v python3 >/dev/null 2>&1; then exec python3 -c \"$3\" \"$1\" \"$2\"; fi",
            "cd \"$1\" || exit 1",
            "end=$(( $(date +%s) + $2 ))",
            "while [ ! -e swap-stop ] && [ \"$(date +%s)\" -le \"$end\" ]; do",
            "  rm -rf swap; mkfifo swap 2>/dev/null || : > swap",
            "  rm -rf swap; mkdir swap; mkfifo swap/inner 2>/dev/null || : > swap/inner",
            "  rm -rf swap; printf x > swap",
            "done");
    /**
     * The swapper a racing guest really runs: a regular file at {@code swap} is replaced at once
     * (one rename) by a FIFO, so a host that checked "a regular file" opens a FIFO; then the same
     * inside a directory. A guest that may not make FIFOs swaps files. Fixed text.
     */
    private static final String FAST_FIFO_SWAPPER = String.join("\n",
            "import os, shutil, sys, time",
            "os.chdir(sys.argv[1]); end = time.time() + int(sys.argv[2])",
            "def clear(name):",
            "    try:",
            "        if os.path.isdir(name) and not os.path.islink(name): shutil.rmtree(name)",
            "        else: os.unlink(name)",
            "    except OSError: pass",
            "def fifo(name):",
            "    try: os.mkfifo(name)",
            "    except OSError: open(name, 'w').close()",
            "while not os.path.exists('swap-stop') and time.time() < end:",
            "    try:",
            "        for name in ('swap', 'swap.file', 'swap.fifo', 'swap.dir'): clear(name)",
            "        open('swap.file', 'w').write('x'); fifo('swap.fifo')",
            "        os.rename('swap.file', 'swap'); os.rename('swap.fifo', 'swap')",
            "        clear('swap'); os.mkdir('swap.dir'); open('swap.dir/inner', 'w').write('x')",
            "        fifo('swap.dir/inner.fifo'); os.rename('swap.dir', 'swap'); os.rename('swap/inner.fifo', 'swap/inner')",
            "    except OSError: pass");

    private HostileSuite() {
    }

    public static Suite suite() {
        return Suite.builder(NAME)
                .gate(Capability.EXEC, Capability.FILES_IN)
                .shape((spec, target) -> spec.filesIn(new TransferLimits(FILE_CAP, 4 * FILE_CAP, 8))
                        .filesOut(new TransferLimits(FILE_CAP, 4 * FILE_CAP, 8)))
                .probes(
                        Probe.of("an-oversize-write-is-refused-whole",
                                "a write larger than the spec's files_in per-file cap must be refused before any byte "
                                        + "moves, and one exactly at the cap must land; otherwise a caller fills the "
                                        + "host's disk whatever the spec says",
                                HostileSuite::anOversizeWriteIsRefusedWhole),
                        Probe.of("an-oversize-read-is-refused-whatever-the-caller-allows",
                                "a read of a file larger than the spec's files_out per-file cap must be refused whole "
                                        + "even when the caller's maxBytes is Long.MAX_VALUE; otherwise a guest's big "
                                        + "file exhausts the host's heap",
                                Set.of(Capability.FILES_OUT),
                                HostileSuite::anOversizeReadIsRefusedWhateverTheCallerAllows),
                        Probe.of("a-huge-directory-is-refused-whole",
                                "listing a directory with more entries than one listing may hold (HostCeilings) must "
                                        + "be refused whole with SandboxTransferCapExceeded; otherwise a guest "
                                        + "exhausts the host's heap with empty files",
                                Set.of(Capability.FILES_LIST),
                                HostileSuite::aHugeDirectoryIsRefusedWhole),
                        Probe.of("a-fifo-swapped-in-never-blocks-the-host",
                                "while the guest swaps a FIFO in for a file and a directory, every host stat, read, "
                                        + "list and write of those names must return (a result or a typed refusal) "
                                        + "within " + CALL_BOUND.toSeconds() + " s; otherwise a guest hangs host "
                                        + "threads for good",
                                Set.of(Capability.FILES_OUT, Capability.FILES_LIST),
                                HostileSuite::aFifoSwappedInNeverBlocksTheHost),
                        Probe.of("a-disposal-during-an-exec-stops-it-and-follows-no-link",
                                "disposing of a sandbox whose guest keeps swapping a directory for a link to a host "
                                        + "decoy must stop the guest, end the exec with SandboxDisposed (not an exit "
                                        + "code), leave every decoy file and its mode alone, and leave nothing for a "
                                        + "re-acquire",
                                HostileSuite::aDisposalDuringAnExecStopsItAndFollowsNoLink),
                        Probe.of("a-disk-bomb-is-stopped-at-the-bound",
                                "a guest writing past the backend's storage bound, in its working directory and in "
                                        + "/tmp, must be stopped at the bound (a write fails), and the sandbox must "
                                        + "work afterwards; otherwise a guest fills the host's disk or memory",
                                HostileSuite::aDiskBombIsStoppedAtTheBound),
                        Probe.of("bad-input-gets-a-documented-type-and-guest-names-are-escaped",
                                "a null, lone-surrogate or NUL path or working directory must be refused as "
                                        + "SandboxPathNotConfined, null content and a negative maxBytes as "
                                        + "IllegalArgumentException, by every file method; a refusal naming a "
                                        + "guest-made name must carry no control, separator or bidi character; "
                                        + "otherwise a caller gets an untyped crash, and a guest forges log lines",
                                HostileSuite::badInputGetsADocumentedTypeAndGuestNamesAreEscaped),
                        Probe.of("a-tree-deeper-than-any-path-is-disposed-of",
                                "a sandbox holding a directory chain " + DEEP_LEVELS + " levels deep must be disposed "
                                        + "of whole: a re-acquire starts empty; otherwise path-based clean-up leaves "
                                        + "it behind",
                                HostileSuite::aTreeDeeperThanAnyPathIsDisposedOf))
                .build();
    }

    private static void anOversizeWriteIsRefusedWhole(ProbeContext context) {
        String over = context.paths().in("over-the-cap.bin");
        String at = context.paths().in("at-the-cap.bin");
        Check.refusedWith(SandboxTransferCapExceeded.class, "a write of the cap plus one byte",
                () -> context.sandbox().writeFile(over, new byte[(int) FILE_CAP + 1], context.workingDirectory()));
        Check.that(!context.guest().exists(over), "the refused write left a file at " + over);
        context.sandbox().writeFile(at, new byte[(int) FILE_CAP], context.workingDirectory());
        Check.that(context.guest().isRegularFile(at), "positive control: a write of exactly the cap landed nothing");
    }

    private static void anOversizeReadIsRefusedWhateverTheCallerAllows(ProbeContext context) {
        String over = context.paths().in("guest-made-over.bin");
        String at = context.paths().in("guest-made-at.bin");
        ExecResult made = context.shell("head -c \"$1\" /dev/zero > \"$3\" && head -c \"$2\" /dev/zero > \"$4\"",
                Long.toString(FILE_CAP + 1), Long.toString(FILE_CAP), over, at);
        Check.that(made.exitCode() == 0, "positive control: the guest could not make its files: " + made.stderrText());
        Check.refusedWith(SandboxTransferCapExceeded.class, "a read of the cap plus one byte with maxBytes "
                + "Long.MAX_VALUE", () -> context.sandbox().readFile(over, context.workingDirectory(), Long.MAX_VALUE));
        byte[] whole = context.sandbox().readFile(at, context.workingDirectory(), Long.MAX_VALUE);
        Check.equal((long) FILE_CAP, (long) whole.length, "the length of a file of exactly the cap, read whole");
    }

    private static void aHugeDirectoryIsRefusedWhole(ProbeContext context) {
        String huge = context.paths().in("huge");
        String small = context.paths().in("small");
        int entries = HostCeilings.MAX_LISTED_ENTRIES + 1;
        ExecResult made = context.shell("mkdir -p \"$1\" \"$3\" && cd \"$1\" && i=0; while [ \"$i\" -lt \"$2\" ]; do "
                + ": > \"$i\"; i=$((i+1)); done; : > \"$3/a\"; : > \"$3/b\"", huge, Integer.toString(entries), small);
        Check.that(made.exitCode() == 0, "positive control: the guest could not make " + entries + " entries: "
                + made.stderrText());
        Check.refusedWith(SandboxTransferCapExceeded.class, "a listing of " + entries + " entries",
                () -> context.sandbox().listDir(huge, context.workingDirectory()));
        Check.equal(2, context.sandbox().listDir(small, context.workingDirectory()).size(),
                "positive control: the entries of a two-entry directory");
        context.shell("rm -rf \"$1\"", huge);
    }

    /**
     * The guest swaps {@code swap} between a regular file, a FIFO and a directory holding a FIFO
     * as fast as it can; the host calls every file method on those names meanwhile, each on a
     * worker bounded by {@link #CALL_BOUND}. A guest that cannot make a FIFO at all (the backend
     * forbids it) still swaps files and directories, and the probe still runs.
     */
    private static void aFifoSwappedInNeverBlocksTheHost(ProbeContext context) throws Exception {
        requireIsolation(context, "an os_process guest is the host's own user: it can block or signal this JVM "
                + "directly, so host file calls cannot be defended from it");
        String swap = context.paths().in("swap");
        String inner = context.paths().in("swap/inner");
        String stop = context.paths().in("swap-stop");
        CompletableFuture<ExecResult> swapping = CompletableFuture.supplyAsync(() -> context.shell(FIFO_SWAPPER,
                context.workingDirectory(), Long.toString(SWAPPING.toSeconds() * 4 + 30), FAST_FIFO_SWAPPER));
        ExecutorService calls = Executors.newCachedThreadPool(daemons("hostile-call"));
        List<String> blocked = new ArrayList<>();
        try {
            long end = System.nanoTime() + SWAPPING.toNanos();
            int made = 0;
            int rounds = 0;
            // At least MIN_ROUNDS rounds however slow each call is (a backend whose file calls are execs, on a loaded
            // host): the guest swaps for far longer than that takes, so every call races it all the same.
            while ((System.nanoTime() < end || rounds < MIN_ROUNDS) && blocked.isEmpty()) {
                rounds++;
                for (HostCall call : List.<HostCall>of(
                        sandbox -> sandbox.stat(swap, context.workingDirectory()),
                        sandbox -> sandbox.readFile(swap, context.workingDirectory(), FILE_CAP),
                        sandbox -> sandbox.readFile(inner, context.workingDirectory(), FILE_CAP),
                        sandbox -> sandbox.listDir(swap, context.workingDirectory()),
                        sandbox -> {
                            sandbox.writeFile(inner, KEPT, context.workingDirectory());
                            return null;
                        })) {
                    Future<?> pending = calls.submit(() -> {
                        try {
                            return call.on(context.sandbox());
                        } catch (SandboxException refused) {
                            // A typed refusal (not a directory, not found, not a regular file) is an answer.
                            return refused;
                        }
                    });
                    made++;
                    try {
                        pending.get(CALL_BOUND.toSeconds(), TimeUnit.SECONDS);
                    } catch (TimeoutException stuck) {
                        blocked.add("call " + made + " did not return within " + CALL_BOUND.toSeconds() + " s");
                        break;
                    } catch (ExecutionException untyped) {
                        blocked.add("call " + made + " failed with an untyped error: " + ErrorDetail.of(
                                untyped.getCause()));
                        break;
                    }
                }
            }
            Check.that(blocked.isEmpty(), "host file calls on names the guest swaps a FIFO in for: " + blocked);
            Check.that(!swapping.isDone(), "positive control: the guest's swapper had ended before the last of the "
                    + made + " host calls returned, so they did not all race it: " + swapperEnding(swapping));
        } finally {
            calls.shutdownNow();
            try {
                context.sandbox().writeFile(stop, KEPT, context.workingDirectory());
            } catch (RuntimeException ignored) {
                // The swapper also ends on its own clock.
            }
            try {
                swapping.get(ENDING_BOUND.toSeconds(), TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException ignored) {
                // Its verdict is the calls', not its own.
            }
        }
    }

    /** What an ended swapper left, for the positive control's message. */
    private static String swapperEnding(CompletableFuture<ExecResult> swapping) {
        try {
            ExecResult ended = swapping.getNow(null);
            return ended == null ? "still running" : "exit " + ended.exitCode() + ", stderr "
                    + GuestText.quote(ended.stderrText().strip());
        } catch (RuntimeException failed) {
            return ErrorDetail.of(failed);
        }
    }

    @FunctionalInterface
    private interface HostCall {
        Object on(Sandbox sandbox);
    }

    /**
     * The guest swaps {@code victim} (a directory of files) for a link to a decoy directory on the
     * host, over and over, and never stops on its own; the host disposes of the sandbox meanwhile.
     */
    private static void aDisposalDuringAnExecStopsItAndFollowsNoLink(ProbeContext context) throws Exception {
        Path decoy = decoy();
        try (ProbeSandboxes.FreshKey fresh = ProbeSandboxes.fresh(context, "hostile-dispose")) {
            SandboxKey key = fresh.key();
            ProbeSandboxes.Placed placed = fresh.acquire(context);
            String swapper = String.join("\n",
                    "cd \"$1\" || exit 1",
                    "mkdir victim && i=0; while [ \"$i\" -lt 50 ]; do : > \"victim/f$i\"; i=$((i+1)); done",
                    ": > swapping",
                    "while :; do",
                    "  mv victim aside 2>/dev/null; ln -s \"$2\" victim 2>/dev/null",
                    "  rm -f victim 2>/dev/null; mv aside victim 2>/dev/null",
                    "done");
            CompletableFuture<ExecResult> running = CompletableFuture.supplyAsync(() -> placed.sandbox().exec(
                    org.sandbox4j.core.Command.argv(List.of("sh", "-c", swapper, "swapper", placed.workingDirectory(),
                            decoy.toString())), org.sandbox4j.core.ExecOptions.in(placed.workingDirectory(),
                            ENDING_BOUND.multipliedBy(2))));
            awaitGuestFile(context, placed, "swapping", running);

            context.backend().dispose(key);

            Throwable ended;
            try {
                ExecResult result = running.get(ENDING_BOUND.toSeconds(), TimeUnit.SECONDS);
                throw new AssertionError("the exec in flight ended as if the command had said so: exit "
                        + result.exitCode() + "; it must end with SandboxDisposed");
            } catch (ExecutionException failed) {
                ended = failed.getCause();
            } catch (TimeoutException stillRunning) {
                throw new AssertionError("the guest still ran " + ENDING_BOUND.toSeconds() + " s after its sandbox "
                        + "was disposed of");
            }
            Check.that(ended instanceof SandboxDisposed, "the exec in flight ended with " + ErrorDetail.of(ended)
                    + ", not SandboxDisposed");
            assertDecoyIntact(decoy);
            ProbeSandboxes.Placed again = fresh.acquire(context);
            Check.that(!context.target().guestSide(again.sandbox()).exists(again.in("victim"))
                    && !context.target().guestSide(again.sandbox()).exists(again.in("aside")),
                    "a re-acquire after the disposal still holds the disposed sandbox's files");
        } finally {
            deleteDecoy(decoy);
        }
    }

    /**
     * Bounded itself: the guest writes at most the bound plus {@value #BOMB_SLACK_MIB} MiB in each
     * area, so a backend without a bound costs the host no more than that, and removes it after.
     */
    private static void aDiskBombIsStoppedAtTheBound(ProbeContext context) {
        long bound = context.target().storageBound().orElseThrow(() -> new TestAbortedException("the target names "
                + "no storage bound for this backend (ConformanceTarget.storageBound), so there is nothing to hold "
                + "it to; a backend that writes guest data to host storage should bound it"));
        long attempt = bound + BOMB_SLACK_MIB * MIB;
        for (String area : List.of(context.workingDirectory(), "/tmp")) {
            String bomb = area + "/sandbox4j-tck-disk-bomb";
            ExecResult result = context.shell("head -c \"$1\" /dev/zero > \"$2\"; status=$?; wc -c < \"$2\"; "
                    + "rm -f \"$2\"; exit $status", Long.toString(attempt), bomb);
            String written = result.stdoutText().strip();
            Check.that(written.matches("[0-9]+"), "positive control: the guest could not write in " + area + ": "
                    + result.stderrText());
            long bytes = Long.parseLong(written);
            Check.that(result.exitCode() != 0 && bytes <= bound, "the guest wrote " + bytes + " bytes in " + area
                    + (result.exitCode() == 0 ? " and its write succeeded" : "") + ", past the storage bound of "
                    + bound + " bytes");
            Check.that(bytes > 0, "positive control: the guest wrote nothing at all in " + area);
        }
        ExecResult after = context.shell("printf ok > after.txt && cat after.txt && rm -f after.txt");
        Check.equal("ok", after.stdoutText(), "a write in the working directory after the bombs");
    }

    private static void badInputGetsADocumentedTypeAndGuestNamesAreEscaped(ProbeContext context) {
        Sandbox sandbox = context.sandbox();
        String work = context.workingDirectory();
        Set<Capability> declared = context.capabilities();
        String fine = context.paths().in("fine.txt");
        for (String bad : java.util.Arrays.asList(null, context.paths().in("lone-\ud800-surrogate"),
                context.paths().in("nul-\0-byte"))) {
            String shown = bad == null ? "a null path" : "the path " + GuestText.quote(bad);
            Check.refusedWith(SandboxPathNotConfined.class, "writeFile of " + shown,
                    () -> sandbox.writeFile(bad, KEPT, work));
            Check.refusedWith(SandboxPathNotConfined.class, "writeFile of a file in " + shown + " as the working "
                    + "directory", () -> sandbox.writeFile("fine.txt", KEPT, bad));
            if (declared.contains(Capability.FILES_OUT)) {
                Check.refusedWith(SandboxPathNotConfined.class, "stat of " + shown, () -> sandbox.stat(bad, work));
                Check.refusedWith(SandboxPathNotConfined.class, "readFile of " + shown,
                        () -> sandbox.readFile(bad, work, FILE_CAP));
            }
            if (declared.contains(Capability.FILES_LIST)) {
                Check.refusedWith(SandboxPathNotConfined.class, "listDir of " + shown, () -> sandbox.listDir(bad, work));
            }
            if (declared.contains(Capability.FILES_DELETE)) {
                Check.refusedWith(SandboxPathNotConfined.class, "remove of " + shown,
                        () -> sandbox.remove(bad, work, true));
            }
        }
        Check.refusedWith(IllegalArgumentException.class, "writeFile of null content",
                () -> sandbox.writeFile(fine, (byte[]) null, work));
        Check.refusedWith(IllegalArgumentException.class, "writeFile of null text",
                () -> sandbox.writeFile(fine, (String) null, work));
        Check.that(!context.guest().exists(fine), "a refused write of null content left a file at " + fine);
        if (declared.contains(Capability.FILES_OUT)) {
            sandbox.writeFile(fine, KEPT, work);
            Check.refusedWith(IllegalArgumentException.class, "readFile with maxBytes -1",
                    () -> sandbox.readFile(fine, work, -1));
        }

        String forged = "forged\n[ERROR] host compromised\r\u001b[2J\u0007\u0085\u2028\u202egnp.exe";
        // Relative to the working directory: the refusal quotes the path as given, short enough to be shown whole.
        ExecResult made = context.shell("mkdir -- \"$1\"", context.paths().in(forged));
        Check.that(made.exitCode() == 0, "positive control: the guest could not make a directory named with control "
                + "characters: " + made.stderrText());
        SandboxException refused = Check.refusedWith(SandboxException.class, "a write onto a guest-made directory",
                () -> sandbox.writeFile(forged, KEPT, work));
        String message = String.valueOf(refused.getMessage());
        Check.that(message.contains("forged"), "positive control: the refusal does not name the guest's directory: "
                + message);
        for (int i = 0; i < message.length(); i++) {
            char c = message.charAt(i);
            int type = Character.getType(c);
            boolean unsafe = Character.isISOControl(c) || type == Character.FORMAT
                    || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR;
            Check.that(!unsafe, String.format("the refusal of a write onto a guest-made name carries the raw "
                    + "character U+%04X at %d: %s", (int) c, i, GuestText.quote(message)));
        }
        if (declared.contains(Capability.FILES_LIST)) {
            boolean listedWhole = sandbox.listDir(work, work).stream()
                    .anyMatch(entry -> entry.path().equals(forged) || entry.path().endsWith("/" + forged));
            Check.that(listedWhole, "positive control: a listing does not return the guest's name as it is");
        }
    }

    private static void aTreeDeeperThanAnyPathIsDisposedOf(ProbeContext context) {
        try (ProbeSandboxes.FreshKey fresh = ProbeSandboxes.fresh(context, "hostile-deep")) {
            ProbeSandboxes.Placed placed = fresh.acquire(context);
            ExecResult made = placed.sandbox().exec(List.of("sh", "-c", DEEP_TREE, "deep", placed.workingDirectory(),
                    Integer.toString(DEEP_LEVELS / 2)), placed.workingDirectory(), context.execTimeout());
            Check.that(made.exitCode() == 0, "positive control: the guest could not make a tree " + DEEP_LEVELS
                    + " levels deep: " + made.stderrText());

            context.backend().dispose(fresh.key());

            ProbeSandboxes.Placed again = fresh.acquire(context);
            Check.that(!context.target().guestSide(again.sandbox()).exists(again.in("deep")),
                    "a re-acquire after disposing of a deep tree still holds it");
        }
    }

    private static void requireIsolation(ProbeContext context, String why) {
        if (context.declarations().isolation().compareTo(Isolation.CONTAINER) < 0) {
            throw new TestAbortedException("the backend declares '" + context.declarations().isolation().wire()
                    + "': " + why);
        }
    }

    private static void awaitGuestFile(ProbeContext context, ProbeSandboxes.Placed placed, String name,
            CompletableFuture<ExecResult> running) throws InterruptedException {
        long deadline = System.nanoTime() + ENDING_BOUND.toNanos();
        GuestSide guest = context.target().guestSide(placed.sandbox());
        while (System.nanoTime() < deadline) {
            if (running.isDone()) {
                throw new AssertionError("positive control: the guest's swapper ended before the disposal: "
                        + running.handle((result, error) -> error != null ? ErrorDetail.of(error)
                                : "exit " + result.exitCode() + ": " + result.stderrText()).join());
            }
            if (guest.exists(placed.in(name))) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("positive control: the guest's swapper never started");
    }

    /** A fresh host directory of {@value #DECOY_FILES} files, mode 0755, that no backend can have mounted. */
    private static Path decoy() throws IOException {
        Path decoy = Files.createTempDirectory("sandbox4j-tck-decoy-");
        for (int i = 0; i < DECOY_FILES; i++) {
            Files.write(decoy.resolve("keep-" + i), KEPT);
        }
        Files.setPosixFilePermissions(decoy, PosixFilePermissions.fromString("rwxr-xr-x"));
        return decoy;
    }

    private static void assertDecoyIntact(Path decoy) throws IOException {
        Check.that(Files.isDirectory(decoy), "the host decoy directory " + decoy + " is gone");
        String mode = PosixFilePermissions.toString(Files.getPosixFilePermissions(decoy));
        Check.equal("rwxr-xr-x", mode, "the host decoy directory's mode");
        int left = 0;
        for (int i = 0; i < DECOY_FILES; i++) {
            if (Files.isRegularFile(decoy.resolve("keep-" + i))) {
                left++;
            }
        }
        Check.equal(DECOY_FILES, left, "decoy files left on the host after the disposal");
    }

    private static void deleteDecoy(Path decoy) {
        try (var files = Files.list(decoy)) {
            for (Path file : files.toList()) {
                Files.deleteIfExists(file);
            }
            Files.deleteIfExists(decoy);
        } catch (IOException ignored) {
            // A temp directory: the host's clean-up takes what is left.
        }
    }

    private static java.util.concurrent.ThreadFactory daemons(String role) {
        return task -> {
            Thread thread = new Thread(task, "sandbox4j-tck-" + role);
            thread.setDaemon(true);
            return thread;
        };
    }
}
