package org.sandbox4j.testkit.tck;

import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.GuestPathReclaim;
import org.sandbox4j.core.spi.GuestPaths;

/**
 * RECLAIM: {@link GuestPathReclaim#reclaim}, the per-call clean-up every tool call runs in its
 * {@code finally}, run against a real sandbox. Derived from the reference's unit tests of
 * {@code reclaim_guest_path} (which has no conformance suite): the guards refuse the working
 * directory, anything outside it and paths too close to the root, and nothing is removed; a
 * legitimate call path goes and its prefix-sharing sibling stays; hostile names reach the guest's
 * shell quoted (the right directory goes, nothing else does, no injected command runs); and a
 * guest that refuses the removal is reported as a reason, never thrown.
 *
 * <p>The guards are core's; what this suite proves about the backend is that a fixed shell line
 * with quoted hostile words ({@code Command.shell}) reaches a POSIX shell byte for byte, and that
 * a refusal comes back as an exit code rather than an exception.
 */
public final class ReclaimSuite {

    /** The suite's stable name. */
    public static final String NAME = "RECLAIM";

    /** Owner read and execute only: nothing below can be unlinked by an unprivileged guest user. */
    private static final String LOCKED_MODE = "500";

    private ReclaimSuite() {
    }

    /**
     * One hostile name, what an unquoted shell would remove instead (decoys, planted beside it) and
     * the file an injected command would plant (marker). {@code rm} runs from {@code /}, so any word
     * a lost quoting splits off is a path relative to the guest's root: every such word here
     * ({@code touch}, the markers, the second word) starts with {@code sandbox4j-tck-} or names
     * nothing that exists there, so even a backend that drops the quoting on a guest sharing the
     * host's root can remove nothing outside the working directory. An injected command plants its
     * marker at the guest's root, where the probe looks for it (and removes it).
     */
    private record HostileName(String probe, String why, String name, List<String> decoys, Optional<String> marker) {
    }

    /** Starts every word of a hostile name that could end up relative to the guest's root. */
    private static final String ROOT_WORD_PREFIX = "sandbox4j-tck-";

    public static Suite suite() {
        Suite.Builder suite = Suite.builder(NAME)
                .gate(Capability.EXEC, Capability.FILES_IN)
                .probes(
                        Probe.of("a-call-path-is-removed",
                                "positive control: a call's own path under the working directory must go, tree and "
                                        + "all, and its prefix-sharing sibling must stay; otherwise a later call "
                                        + "reads what this one left",
                                ReclaimSuite::aCallPathIsRemoved),
                        Probe.of("a-missing-path-is-not-a-failure",
                                "a call that asked for a path and wrote nothing must reclaim cleanly, not report a "
                                        + "loss",
                                ReclaimSuite::aMissingPath),
                        Probe.of("an-absent-working-directory-is-not-a-failure",
                                "a call's working directory may be gone, or never made, by clean-up time, so the "
                                        + "removal must not need it to exist (it runs from /)",
                                ReclaimSuite::anAbsentWorkingDirectory),
                        Probe.of("the-working-directory-is-refused",
                                "the working directory itself, however spelled, must never be removed: that wipes "
                                        + "every call's files at once",
                                ReclaimSuite::theWorkingDirectoryIsRefused),
                        Probe.of("a-path-outside-is-refused",
                                "a path outside the working directory (climbing out, absolute, or the prefix-sharing "
                                        + "sibling) must be refused and left intact",
                                ReclaimSuite::aPathOutsideIsRefused),
                        Probe.of("a-path-too-close-to-the-root-is-refused",
                                "a path one component from the root must be refused whatever working directory "
                                        + "admitted it: clean-up must never become an outage",
                                ReclaimSuite::tooCloseToTheRoot));
        for (HostileName hostile : hostileNames()) {
            suite.probe(Probe.of(hostile.probe(), hostile.why(), context -> hostileNameIsQuoted(context, hostile)));
        }
        return suite.probe(Probe.of("a-guest-refusal-is-a-reason",
                        "a removal the guest refuses must come back as a reason for a ReclaimFailure, never as an "
                                + "exception that would replace the call's own outcome",
                        ReclaimSuite::aGuestRefusalIsAReason))
                .build();
    }

    private static void aCallPathIsRemoved(ProbeContext context) {
        ConformancePaths paths = context.paths();
        String call = paths.in("call-1f2e3d");
        String sibling = paths.in("call-1f2e3d-sibling");
        String neighbour = paths.in("next-to-call");
        for (String directory : List.of(call + "/deep/er", sibling + "/kept", neighbour)) {
            context.guest().plantDirectory(directory);
        }
        context.guest().plantFile(call + "/deep/program.py", ConformancePaths.INSIDE);
        Check.that(context.guest().isRegularFile(call + "/deep/program.py"), "positive control: the call's file");

        Optional<String> reason = reclaim(context, call, context.workingDirectory());

        Check.equal(Optional.empty(), reason, "the reason a legitimate call path was left behind");
        Check.that(!context.guest().exists(call), call + " is still there after a reclaim reported success");
        Check.that(context.guest().isDirectory(sibling + "/kept"), "the prefix-sharing sibling " + sibling
                + " went with " + call);
        Check.that(context.guest().isDirectory(neighbour), "the neighbour " + neighbour + " went with " + call);
    }

    private static void aMissingPath(ProbeContext context) {
        String never = context.paths().in("never-written");
        Check.that(!context.guest().exists(never), "positive control: nothing is at " + never);

        Check.equal(Optional.empty(), reclaim(context, "never-written", context.workingDirectory()),
                "the reason a path nobody wrote was 'left behind'");
    }

    private static void anAbsentWorkingDirectory(ProbeContext context) {
        String absent = context.paths().in("never-made");
        Check.that(!context.guest().exists(absent), "positive control: nothing is at " + absent);

        Check.equal(Optional.empty(), reclaim(context, "call", absent),
                "the reason a call path under a working directory that was never made was 'left behind'");
        Check.that(!context.guest().exists(absent), "the reclaim created " + absent);
    }

    private static void theWorkingDirectoryIsRefused(ProbeContext context) {
        String work = context.workingDirectory();
        String control = context.paths().in("ground.txt");
        context.guest().plantFile(control, ConformancePaths.INSIDE);
        Check.that(context.guest().isRegularFile(control), "positive control: " + control);

        for (String spelling : List.of(".", "", work, work + "/", work + "/.", "sub/..")) {
            assertRefused(context, spelling, work, "the working directory spelled " + Check.show(spelling));
            Check.that(context.guest().isRegularFile(control), "reclaiming the working directory spelled "
                    + Check.show(spelling) + " was refused, yet " + control + " is gone");
        }
    }

    private static void aPathOutsideIsRefused(ProbeContext context) {
        ConformancePaths paths = context.paths();
        String victim = paths.outside() + "/victim";
        String kept = victim + "/kept.txt";
        context.guest().plantFile(kept, ConformancePaths.SECRET);
        Check.that(context.guest().isRegularFile(kept), "positive control: " + kept);

        // Only paths beside the working directory: a broken guard must not reach anything of the host's.
        List<String> attempts = List.of(paths.beyond("victim"), victim, "sub/../../" + GuestPaths.fileName(
                paths.outside()) + "/victim", paths.outside());
        for (String attempt : attempts) {
            assertRefused(context, attempt, context.workingDirectory(), "a path outside, " + Check.show(attempt));
            Check.that(context.guest().isRegularFile(kept), "reclaiming " + Check.show(attempt)
                    + " was refused, yet " + kept + " is gone");
        }
    }

    /**
     * A one-component path, reclaimed with {@code /} as the working directory. It names nothing
     * that exists: on a guest that shares the host's root, a broken guard must not be able to remove
     * anything real. The guard is proven by the reason and by no command having been sent at all.
     */
    private static void tooCloseToTheRoot(ProbeContext context) {
        String rooted = "/sandbox4j-tck-too-close-" + GuestPaths.fileName(context.workingDirectory());
        Check.that(!context.guest().exists(rooted), "positive control: nothing is at " + rooted);

        assertRefused(context, rooted, "/", "a path one component from the root, " + Check.show(rooted));
        assertRefused(context, GuestPaths.fileName(rooted), "/", "a one-component relative path, "
                + Check.show(GuestPaths.fileName(rooted)));
        Check.that(!context.guest().exists(rooted), "reclaiming " + rooted + " was refused, yet it now exists");
    }

    private static List<HostileName> hostileNames() {
        return List.of(
                inert("a-name-with-spaces-is-quoted", "a space in a call path must not split it into two removals",
                        "spaced " + ROOT_WORD_PREFIX + "second-word", "spaced"),
                inert("a-glob-in-a-name-is-quoted", "a '*' in a call path must not expand to its siblings",
                        "glob-*", "glob-decoy"),
                injecting("command-substitution-in-a-name-is-quoted", "$(...) in a call path must never run",
                        "sub-", "$(", "substitution", ")"),
                injecting("backticks-in-a-name-are-quoted", "backticks in a call path must never run",
                        "tick-", "`", "backticks", "`"),
                injecting("a-single-quote-in-a-name-is-quoted",
                        "a single quote must not close the quoting and run what follows",
                        "quote-", "'; ", "single-quote", "; '"),
                injecting("a-double-quote-in-a-name-is-quoted",
                        "a double quote must not close the quoting and run what follows",
                        "dquote-", "\"; ", "double-quote", "; \""),
                injecting("a-newline-in-a-name-is-quoted", "a newline must not end the removal and start a command",
                        "line-", "\n", "newline", ""),
                inert("a-leading-dash-in-a-name-is-quoted",
                        "a leading dash must not be read as an option, nor be dropped", "-rf", "rf"));
    }

    /** A hostile name that runs nothing even unquoted; {@code decoy} is what a lost quoting would remove instead. */
    private static HostileName inert(String probe, String why, String name, String decoy) {
        return new HostileName(probe, why, name, List.of(decoy), Optional.empty());
    }

    /**
     * A hostile name {@code decoy + opening + "touch <marker>" + closing}: a lost quoting removes
     * {@code decoy} and runs the {@code touch}, which plants {@code sandbox4j-tck-injected-by-<what>}
     * at the guest's root.
     */
    private static HostileName injecting(String probe, String why, String decoy, String opening, String what,
            String closing) {
        String marker = ROOT_WORD_PREFIX + "injected-by-" + what;
        return new HostileName(probe, why, decoy + opening + "touch " + marker + closing, List.of(decoy),
                Optional.of(marker));
    }

    private static void hostileNameIsQuoted(ProbeContext context, HostileName hostile) {
        String name = hostile.name();
        String target = context.paths().in(name);
        Optional<String> marker = hostile.marker().map(file -> "/" + file);
        try {
            context.guest().plantDirectory(target + "/inner");
            List<String> decoys = hostile.decoys().stream().map(context.paths()::in).collect(Collectors.toList());
            decoys.forEach(context.guest()::plantDirectory);
            Check.that(context.guest().isDirectory(target + "/inner"), "positive control: " + Check.show(target)
                    + " is a directory");
            marker.ifPresent(path -> Check.that(!context.guest().exists(path), "positive control: nothing at "
                    + path));

            Optional<String> reason = reclaim(context, name, context.workingDirectory());

            Check.equal(Optional.empty(), reason, "the reason " + Check.show(name) + " was left behind");
            Check.that(!context.guest().exists(target), "reclaiming " + Check.show(name)
                    + " reported success, yet it is still there: the name was altered on its way to the guest");
            for (String decoy : decoys) {
                Check.that(context.guest().isDirectory(decoy), "reclaiming " + Check.show(name) + " removed "
                        + decoy + ": the name was not quoted");
            }
            marker.ifPresent(path -> Check.that(!context.guest().exists(path), "reclaiming " + Check.show(name)
                    + " ran the command it names: " + path + " was planted"));
        } finally {
            marker.ifPresent(path -> removeQuietly(context, path));
        }
    }

    /** Removes a marker an injection may have planted; clean-up never replaces the verdict. */
    private static void removeQuietly(ProbeContext context, String path) {
        try {
            context.exec("rm", "-f", "--", path);
        } catch (RuntimeException cleanupFailure) {
            // The suite's disposal removes the sandbox anyway.
        }
    }

    /**
     * A tree whose inner directory is read-only to its owner. Whether that refuses anything depends
     * on the guest user: root (or a user holding CAP_DAC_OVERRIDE) removes it anyway, and then
     * nothing in the guest can refuse, so the probe is skipped, and listed with that reason.
     */
    private static void aGuestRefusalIsAReason(ProbeContext context) {
        String locked = context.paths().in("locked");
        String held = locked + "/inner/held.txt";
        String canary = context.paths().in("canary");
        try {
            context.guest().plantFile(held, ConformancePaths.INSIDE);
            context.guest().plantFile(canary + "/held.txt", ConformancePaths.INSIDE);
            succeed(context, "chmod " + LOCKED_MODE + " \"$1\" \"$2\"", locked + "/inner", canary);
            ExecResult attempt = context.shell("rm -f \"$1/held.txt\" 2>/dev/null; test -e \"$1/held.txt\"", canary);
            if (attempt.exitCode() != 0) {
                Assumptions.abort("nothing in this guest can refuse a removal: its user (uid "
                        + context.exec("id", "-u").stdoutText().strip() + ") deletes from a directory of mode "
                        + LOCKED_MODE + " (root, or CAP_DAC_OVERRIDE), so a guest refusal cannot be provoked");
            }

            Optional<String> reason = reclaim(context, "locked", context.workingDirectory());

            Check.that(reason.isPresent(), "reclaiming a tree the guest cannot delete reported success");
            Check.that(reason.get().contains("refused"), "the reason does not say the guest refused: "
                    + Check.show(reason.get()));
            Check.that(context.guest().isRegularFile(held), "the guest refused the removal, yet " + held
                    + " is gone");
        } finally {
            try {
                context.shell("chmod -R u+rwx \"$1\" \"$2\" 2>/dev/null; true", locked, canary);
            } catch (RuntimeException cleanupFailure) {
                // The suite's disposal removes the sandbox anyway; clean-up must not replace the verdict.
            }
        }
    }

    private static void succeed(ProbeContext context, String script, String... arguments) {
        ExecResult result = context.shell(script, arguments);
        Check.that(result.exitCode() == 0, "set-up command failed (exit " + result.exitCode() + "): "
                + result.stderrText().strip());
    }

    /** Refused means a reason and no command sent at all: the check is the point, not the message. */
    private static void assertRefused(ProbeContext context, String path, String workingDirectory, String what) {
        ExecCountingSandbox counting = new ExecCountingSandbox(context.sandbox());
        Optional<String> reason = GuestPathReclaim.reclaim(counting, path, workingDirectory, context.execTimeout());
        Check.that(reason.isPresent(), "reclaiming " + what + " with working directory " + workingDirectory
                + " was not refused");
        Check.equal(0, counting.execs(), "commands sent to the guest while refusing to reclaim " + what);
    }

    private static Optional<String> reclaim(ProbeContext context, String path, String workingDirectory) {
        return GuestPathReclaim.reclaim(context.sandbox(), path, workingDirectory, context.execTimeout());
    }
}
