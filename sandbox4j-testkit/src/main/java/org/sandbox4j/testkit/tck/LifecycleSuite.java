package org.sandbox4j.testkit.tck;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * LIFECYCLE: what {@link SandboxBackend#acquire}, {@link SandboxBackend#dispose} and
 * {@link SandboxBackend#disposeScope} promise. Warm reuse per (key, kind); another kind or another
 * conversation never shares a sandbox; racing acquires of one key create one sandbox; disposal
 * removes what it names and nothing else; and a second, freshly constructed backend instance
 * (another replica, or the JVM after a restart) finds and removes a conversation's sandboxes from
 * the provider's own record, never from process memory.
 *
 * <p>Each probe acquires its own sandboxes under fresh keys in {@link Conformance#SCOPE} and
 * disposes of them however it ends. Every file is written through one handle and looked for
 * through another handle's {@link GuestSide}, so the probe never trusts the call under test.
 */
public final class LifecycleSuite {

    /** The suite's stable name. */
    public static final String NAME = "LIFECYCLE";

    /** How many threads race to acquire one fresh key. */
    public static final int RACING_ACQUIRES = 16;

    /** The second kind a probe asks for under the same key. */
    static final String OTHER_KIND = Conformance.KIND + "-other";

    /** A hang guard on the racing acquires, not a performance bound. */
    private static final Duration RACE_BOUND = Duration.ofMinutes(5);

    private static final byte[] FIRST = "written through the first handle\n".getBytes(StandardCharsets.UTF_8);
    private static final byte[] OTHER = "written in the other sandbox\n".getBytes(StandardCharsets.UTF_8);

    private LifecycleSuite() {
    }

    public static Suite suite() {
        return Suite.builder(NAME)
                .gate(Capability.EXEC, Capability.FILES_IN)
                .probes(
                        Probe.of("a-second-acquire-reuses-the-sandbox",
                                "a second acquire of the same key and kind must return the warm sandbox; otherwise "
                                        + "every tool call starts cold and loses what the last one wrote",
                                LifecycleSuite::warmReuse),
                        Probe.of("another-kind-gets-another-sandbox",
                                "one key acquired for two kinds must give two sandboxes; sharing one would run a "
                                        + "workload under another kind's image and egress policy",
                                LifecycleSuite::anotherKind),
                        Probe.of("another-conversation-gets-another-sandbox",
                                "another conversation must get its own sandbox and never see this one's files",
                                LifecycleSuite::anotherConversation),
                        Probe.of("racing-acquires-create-one-sandbox",
                                RACING_ACQUIRES + " concurrent acquires of one fresh key must create exactly one "
                                        + "sandbox; tool calls of one assistant message race, and a double create "
                                        + "leaks a sandbox and splits the conversation's files",
                                LifecycleSuite::racingAcquires),
                        Probe.of("dispose-removes-the-sandbox",
                                "dispose(key) must remove every kind's sandbox for the key (a re-acquire starts "
                                        + "empty) and leave other keys' sandboxes alone",
                                LifecycleSuite::disposeRemoves),
                        Probe.of("dispose-scope-from-another-instance",
                                "disposeScope on a freshly constructed backend instance must find and remove the "
                                        + "conversation's sandboxes another instance created, and spare other "
                                        + "conversations; a purge answered from process memory leaks every sandbox "
                                        + "made by another replica or before a restart",
                                LifecycleSuite::disposeScopeFromAnotherInstance))
                .build();
    }

    private static void warmReuse(ProbeContext context) {
        try (ProbeSandboxes.FreshKey warm = ProbeSandboxes.fresh(context, "warm")) {
            ProbeSandboxes.Placed first = warm.acquire(context);
            String path = first.in("warm.txt");
            first.writeFile("warm.txt", FIRST);
            Check.equal(FIRST, context.target().guestSide(first.sandbox()).read(path),
                    "positive control: the file as the first handle's guest side reads it");
            Sandbox second = context.backend().acquire(warm.key(), context.spec());
            GuestSide again = context.target().guestSide(second);
            Check.that(again.isRegularFile(path), "the second acquire of the same key and kind does not see "
                    + path + ", written through the first: it is not the warm sandbox");
            Check.equal(FIRST, again.read(path), "the file as the second acquire sees it");
        }
    }

    private static void anotherKind(ProbeContext context) {
        try (ProbeSandboxes.FreshKey kinds = ProbeSandboxes.fresh(context, "kinds")) {
            assertSeparate(context, kinds.key(), context.spec(), kinds.key(),
                    ProbeSandboxes.ofKind(context, OTHER_KIND), "kind '" + OTHER_KIND + "' of the same key");
        }
    }

    private static void anotherConversation(ProbeContext context) {
        // Closed in reverse: mine is disposed of first.
        try (ProbeSandboxes.FreshKey theirs = ProbeSandboxes.fresh(context, "theirs");
                ProbeSandboxes.FreshKey mine = ProbeSandboxes.fresh(context, "mine")) {
            assertSeparate(context, mine.key(), context.spec(), theirs.key(), context.spec(), "another conversation");
        }
    }

    /**
     * Each sandbox sees its own file and not the other's, checked in both directions, each in its
     * own working directory (the same path unless the backend relocates work dirs).
     */
    private static void assertSeparate(ProbeContext context, SandboxKey firstKey, SandboxSpec firstSpec,
            SandboxKey secondKey, SandboxSpec secondSpec, String second) {
        ProbeSandboxes.Placed first = ProbeSandboxes.acquireWithWorkingDirectory(context, context.backend(), firstKey,
                firstSpec);
        first.writeFile("mine.txt", FIRST);
        GuestSide firstSide = context.target().guestSide(first.sandbox());
        Check.equal(FIRST, firstSide.read(first.in("mine.txt")), "positive control: the first sandbox's own file");

        ProbeSandboxes.Placed other = ProbeSandboxes.acquireWithWorkingDirectory(context, context.backend(), secondKey,
                secondSpec);
        other.writeFile("theirs.txt", OTHER);
        GuestSide otherSide = context.target().guestSide(other.sandbox());
        Check.equal(OTHER, otherSide.read(other.in("theirs.txt")), "positive control: the sandbox of " + second
                + " sees its own file");

        Check.that(!otherSide.exists(other.in("mine.txt")), "the sandbox of " + second + " sees "
                + other.in("mine.txt") + ", written in the first sandbox: they are one sandbox");
        Check.that(!firstSide.exists(first.in("theirs.txt")), "the first sandbox sees " + first.in("theirs.txt")
                + ", written in the sandbox of " + second + ": they are one sandbox");
    }

    private static void racingAcquires(ProbeContext context) throws Exception {
        SandboxKey key = ProbeSandboxes.freshKey("race");
        ExecutorService racers = Executors.newFixedThreadPool(RACING_ACQUIRES);
        try {
            CyclicBarrier start = new CyclicBarrier(RACING_ACQUIRES);
            List<Future<Sandbox>> handles = new ArrayList<>();
            for (int racer = 0; racer < RACING_ACQUIRES; racer++) {
                String name = racerFile(racer);
                byte[] content = racerContent(racer);
                handles.add(racers.submit(() -> {
                    start.await(RACE_BOUND.toMillis(), TimeUnit.MILLISECONDS);
                    Sandbox sandbox = context.backend().acquire(key, context.spec());
                    // writeFile creates the working directory as a parent; no racer plants it first.
                    sandbox.writeFile(name, content, context.spec().workDirIn(sandbox));
                    return sandbox;
                }));
            }
            List<Sandbox> sandboxes = new ArrayList<>();
            for (Future<Sandbox> handle : handles) {
                sandboxes.add(awaitRacer(handle));
            }
            GuestSide one = context.target().guestSide(sandboxes.get(0));
            ConformancePaths firstPaths = ConformancePaths.under(context.spec().workDirIn(sandboxes.get(0)));
            List<String> missing = new ArrayList<>();
            for (int racer = 0; racer < RACING_ACQUIRES; racer++) {
                String path = firstPaths.in(racerFile(racer));
                if (!one.isRegularFile(path) || !Arrays.equals(racerContent(racer), one.read(path))) {
                    missing.add(racerFile(racer));
                }
            }
            Check.that(missing.isEmpty(), RACING_ACQUIRES + " racing acquires of one key did not share one sandbox: "
                    + "the first handle does not see " + missing);
            int disposed = context.backend().disposeScope(key.scope(), key.threadId());
            Check.equal(1, disposed, "how many sandboxes disposeScope removed after " + RACING_ACQUIRES
                    + " racing acquires of one key and kind");
        } finally {
            racers.shutdownNow();
            ProbeSandboxes.disposeQuietly(context.backend(), key);
        }
    }

    private static Sandbox awaitRacer(Future<Sandbox> handle) throws InterruptedException {
        try {
            return handle.get(RACE_BOUND.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException failed) {
            AssertionError failure = new AssertionError("a racing acquire (or its write) failed: "
                    + ErrorDetail.of(failed.getCause()));
            failure.initCause(failed.getCause());
            throw failure;
        } catch (TimeoutException hung) {
            throw new AssertionError("a racing acquire did not return within " + RACE_BOUND
                    + ": concurrent acquires of one key deadlock");
        }
    }

    private static String racerFile(int racer) {
        return "racer-" + racer + ".txt";
    }

    private static byte[] racerContent(int racer) {
        return ("written by racer " + racer + "\n").getBytes(StandardCharsets.UTF_8);
    }

    private static void disposeRemoves(ProbeContext context) {
        SandboxSpec otherKind = ProbeSandboxes.ofKind(context, OTHER_KIND);
        // Closed in reverse: the disposed key goes before the bystander.
        try (ProbeSandboxes.FreshKey bystander = ProbeSandboxes.fresh(context, "bystander");
                ProbeSandboxes.FreshKey disposed = ProbeSandboxes.fresh(context, "dispose")) {
            SandboxKey key = disposed.key();
            ProbeSandboxes.Placed first = disposed.acquire(context);
            first.writeFile("doomed.txt", FIRST);
            ProbeSandboxes.Placed second = ProbeSandboxes.acquireWithWorkingDirectory(context, context.backend(), key,
                    otherKind);
            second.writeFile("doomed.txt", OTHER);
            ProbeSandboxes.Placed spared = bystander.acquire(context);
            spared.writeFile("kept.txt", OTHER);
            Check.that(context.target().guestSide(first.sandbox()).isRegularFile(first.in("doomed.txt"))
                    && context.target().guestSide(second.sandbox()).isRegularFile(second.in("doomed.txt")),
                    "positive control: both kinds see their own doomed.txt before dispose");

            context.backend().dispose(key);

            Sandbox fresh = context.backend().acquire(key, context.spec());
            String doomed = ConformancePaths.under(context.spec().workDirIn(fresh)).in("doomed.txt");
            Check.that(!context.target().guestSide(fresh).exists(doomed), "after dispose(key) a re-acquire still "
                    + "sees " + doomed + ": the sandbox was not removed");
            Sandbox freshOther = context.backend().acquire(key, otherKind);
            String doomedOther = ConformancePaths.under(otherKind.workDirIn(freshOther)).in("doomed.txt");
            Check.that(!context.target().guestSide(freshOther).exists(doomedOther), "after dispose(key) a re-acquire "
                    + "of kind '" + OTHER_KIND + "' still sees " + doomedOther + ": dispose removed only one kind");
            Check.equal(OTHER, context.target().guestSide(spared.sandbox()).read(spared.in("kept.txt")),
                    "another key's file after dispose(key) (it must be spared)");
        }
    }

    /**
     * The first instance creates two sandboxes in one conversation (two agent dirs) and one in
     * another; a second instance purges the first conversation. The re-acquire goes through the
     * second instance too: the first may still hold a handle in memory.
     */
    private static void disposeScopeFromAnotherInstance(ProbeContext context) {
        String thread = ProbeSandboxes.freshThread("purged");
        SandboxKey purgedA = new SandboxKey(Conformance.SCOPE, thread, Conformance.KIND);
        SandboxKey purgedB = new SandboxKey(Conformance.SCOPE, thread, Conformance.KIND + "-second-agent");
        SandboxKey spared = ProbeSandboxes.freshKey("spared");
        List<SandboxKey> created = List.of(purgedA, purgedB);
        SandboxBackend first = context.backend();
        SandboxBackend second = context.target().newBackend();
        try {
            for (SandboxKey key : created) {
                ProbeSandboxes.Placed sandbox = ProbeSandboxes.acquireWithWorkingDirectory(context, first, key,
                        context.spec());
                sandbox.writeFile("doomed.txt", FIRST);
                Check.that(context.target().guestSide(sandbox.sandbox()).isRegularFile(sandbox.in("doomed.txt")),
                        "positive control: the sandbox of agent '" + key.agentDir() + "' sees its own "
                        + sandbox.in("doomed.txt"));
            }
            ProbeSandboxes.Placed placedBystander = ProbeSandboxes.acquireWithWorkingDirectory(context, first, spared,
                    context.spec());
            placedBystander.writeFile("kept.txt", OTHER);
            Sandbox bystander = placedBystander.sandbox();
            String kept = placedBystander.in("kept.txt");

            int disposed = second.disposeScope(Conformance.SCOPE, thread);

            Check.that(disposed >= created.size(), "disposeScope on a second instance removed " + disposed
                    + " sandbox(es) of a conversation the first instance made " + created.size()
                    + " in: it does not answer from the provider's own record");
            for (SandboxKey key : created) {
                Sandbox again = second.acquire(key, context.spec());
                String doomed = ConformancePaths.under(context.spec().workDirIn(again)).in("doomed.txt");
                Check.that(!context.target().guestSide(again).exists(doomed), "after disposeScope on a second "
                        + "instance, agent '" + key.agentDir() + "' re-acquires a sandbox that still holds " + doomed);
            }
            Check.that(context.target().guestSide(bystander).isRegularFile(kept), "disposeScope of one conversation "
                    + "removed another conversation's sandbox (" + kept + " is gone)");
            Check.equal(OTHER, context.target().guestSide(bystander).read(kept),
                    "another conversation's file after disposeScope (it must be spared)");
        } finally {
            for (SandboxKey key : List.of(purgedA, purgedB, spared)) {
                ProbeSandboxes.disposeQuietly(second, key);
                ProbeSandboxes.disposeQuietly(first, key);
            }
        }
    }
}
