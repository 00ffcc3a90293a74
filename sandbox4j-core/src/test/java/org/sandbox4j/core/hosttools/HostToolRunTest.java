package org.sandbox4j.core.hosttools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.sandbox4j.core.hosttools.Tools.declaration;
import static org.sandbox4j.core.hosttools.Tools.echo;
import static org.sandbox4j.core.hosttools.Tools.returning;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.Identity;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.TransferLimits;

/** The refusal sequence, step by step: each step fires, and one step on the safe side is admitted. */
class HostToolRunTest {

    private final RecordingLogger log = new RecordingLogger();
    private final AtomicInteger bodyCalls = new AtomicInteger();

    /** An undeclared tool answering the one-byte JSON {@code 7}, counting its calls. */
    private final HostTool seven = HostTool.builder().body(arguments -> {
        bodyCalls.incrementAndGet();
        return 7;
    }).build();

    @AfterEach
    void clearInterrupt() {
        Thread.interrupted();
    }

    private HostToolRun run(Consumer<HostToolRegistry.Builder> rules, Map<String, HostTool> tools) {
        HostToolRegistry.Builder builder = HostToolRegistry.builder();
        rules.accept(builder);
        HostToolRegistry registry = builder.build();
        tools.forEach(registry::register);
        return new HostToolRun(registry, log);
    }

    private HostToolRun run(Map<String, HostTool> tools) {
        return run(rules -> { }, tools);
    }

    private static TransferLimits limits(long perResponse, long total, int responses) {
        return new TransferLimits(perResponse, total, responses);
    }

    @Test
    void aDeliveredDispatchCarriesJsonAndCounts() {
        HostToolRun run = run(Map.of("echo", echo()));

        DispatchResult result = run.dispatch("echo", Map.of("text", "hi"), 3);

        assertThat(result.ok()).isTrue();
        assertThat(result.valueJson()).isEqualTo("\"hi\"");
        assertThat(run.dispatched()).isEqualTo(1);
        assertThat(run.delivered()).isEqualTo(1);
        assertThat(run.deliveredBytes()).isEqualTo(4 + 3);
    }

    @Test
    void negativeFramingIsAProgrammingErrorRaisedBeforeAnything() {
        AtomicInteger observed = new AtomicInteger();
        HostToolRun run = run(rules -> rules.dispatchObserver((r, n) -> {
            observed.incrementAndGet();
            return null;
        }), Map.of("seven", seven));

        assertThatThrownBy(() -> run.dispatch("seven", null, -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("framingBytes");
        assertThat(run.dispatched()).isZero();
        assertThat(observed).hasValue(0);
        assertThat(run.dispatch("seven", null, 0).ok()).isTrue();
    }

    @Nested
    class Step1DispatchCap {

        @Test
        void theDispatchBeyondTheCapIsRefused() {
            HostToolRun run = run(rules -> rules.maxDispatchesPerRun(2), Map.of("seven", seven));

            assertThat(run.dispatch("seven", null, 0).ok()).isTrue();
            assertThat(run.dispatch("seven", null, 0).ok()).isTrue();
            DispatchResult third = run.dispatch("seven", null, 0);

            assertThat(third.refusal()).isEqualTo(
                    "Error: the host-tool dispatch cap (2) is exhausted — finish with the results already delivered.");
            assertThat(bodyCalls).hasValue(2);
            assertThat(run.dispatched()).isEqualTo(3);
        }

        @Test
        void refusedAttemptsSpendTheCapToo() {
            HostToolRun run = run(rules -> rules.maxDispatchesPerRun(2), Map.of("seven", seven));

            run.dispatch("nope", null, 0);
            run.dispatch(42, null, 0);

            assertThat(run.dispatch("seven", null, 0).refusal()).contains("dispatch cap (2)");
            assertThat(bodyCalls).hasValue(0);
        }

        @Test
        void theCapComesBeforeTheNameCheck() {
            HostToolRun run = run(rules -> rules.maxDispatchesPerRun(1), Map.of("seven", seven));
            run.dispatch("seven", null, 0);

            assertThat(run.dispatch(42, null, 0).refusal()).contains("dispatch cap");
        }
    }

    @Nested
    class Step2NameType {

        @Test
        void aNonStringNameIsRefusedByItsJsonType() {
            HostToolRun run = run(Map.of("seven", seven));

            assertThat(run.dispatch(42, null, 0).refusal())
                    .isEqualTo("Error: a host tool name must be a string, not a number.");
            assertThat(run.dispatch(null, null, 0).refusal()).endsWith("not null.");
            assertThat(run.dispatch(List.of("seven"), null, 0).refusal()).endsWith("not an array.");
            assertThat(bodyCalls).hasValue(0);
        }

        @Test
        void aStringNameIsAdmitted() {
            assertThat(run(Map.of("seven", seven)).dispatch("seven", null, 0).ok()).isTrue();
        }
    }

    @Nested
    class Step3Registered {

        @Test
        void anUnregisteredNameIsRefusedQuoted() {
            HostToolRun run = run(Map.of("seven", seven));

            assertThat(run.dispatch("Seven", null, 0).refusal())
                    .isEqualTo("Error: 'Seven' is not a registered host tool.");
        }

        @Test
        void aGuestSizedNameIsCut() {
            String hostile = "x".repeat(10_000);

            String refusal = run(Map.of("seven", seven)).dispatch(hostile, null, 0).refusal();

            assertThat(refusal).isEqualTo("Error: " + GuestText.quote(hostile) + " is not a registered host tool.");
            assertThat(refusal).contains("(truncated)").hasSizeLessThan(GuestText.MAX_QUOTED_CHARS + 60);
        }

        @Test
        void aRegisteredNameIsAdmitted() {
            assertThat(run(Map.of("seven", seven)).dispatch("seven", null, 0).ok()).isTrue();
        }
    }

    @Nested
    class Step5UserIdentity {

        private final HostTool actsAsUser = HostTool.builder().required("x")
                .declaration(declaration(null, null, Identity.USER)).body(arguments -> {
                    bodyCalls.incrementAndGet();
                    return "done";
                }).build();

        private HostToolRun userRun() {
            return run(rules -> rules.allowedIdentities(Set.of(Identity.APP, Identity.USER)),
                    Map.of("as-user", actsAsUser));
        }

        @Test
        void aToolActingAsTheUserIsRefusedNamingThePrerequisites() {
            HostToolRun run = userRun();

            String refusal = run.dispatch("as-user", Map.of("x", 1), 0).refusal();

            assertThat(refusal).startsWith("Error: host tool 'as-user' acts with the user's delegated identity")
                    .contains("per-run token minting").contains("audience is within the sandbox's egress")
                    .contains("ephemeral channel into the exec environment");
            assertThat(bodyCalls).hasValue(0);
            assertThat(run.delivered()).isZero();
        }

        @Test
        void theIdentityCheckComesBeforeTheArgumentsCheck() {
            assertThat(userRun().dispatch("as-user", "not a map", 0).refusal()).contains("delegated identity");
        }

        @Test
        void aToolActingAsTheAppIsAdmitted() {
            HostTool actsAsApp = HostTool.builder().declaration(declaration(null, null, Identity.APP))
                    .body(arguments -> "done").build();

            assertThat(run(Map.of("as-app", actsAsApp)).dispatch("as-app", null, 0).ok()).isTrue();
        }

        @Test
        void aToolActingWithNoIdentityIsAdmitted() {
            HostTool noIdentity = HostTool.builder().declaration(declaration(null, null, null))
                    .body(arguments -> "done").build();

            assertThat(run(Map.of("plain", noIdentity)).dispatch("plain", null, 0).ok()).isTrue();
        }
    }

    @Nested
    class Step6ArgumentsShape {

        @Test
        void argumentsThatAreNotAnObjectAreRefused() {
            HostToolRun run = run(Map.of("seven", seven));

            assertThat(run.dispatch("seven", "text", 0).refusal()).isEqualTo(
                    "Error: the arguments to host tool 'seven' must be a JSON object of keyword arguments, not a string.");
            assertThat(run.dispatch("seven", List.of(1), 0).refusal()).endsWith("not an array.");
            assertThat(run.dispatch("seven", 3, 0).refusal()).endsWith("not a number.");
            assertThat(bodyCalls).hasValue(0);
        }

        @Test
        void theShapeCheckComesBeforeTheResponseCap() {
            HostToolRun run = run(rules -> rules.responseLimits(limits(100, 100, 1)), Map.of("seven", seven));
            run.dispatch("seven", null, 0);

            assertThat(run.dispatch("seven", "text", 0).refusal()).contains("JSON object");
        }

        @Test
        void noArgumentsAndAnEmptyObjectAreAdmitted() {
            HostToolRun run = run(Map.of("seven", seven));

            assertThat(run.dispatch("seven", null, 0).ok()).isTrue();
            assertThat(run.dispatch("seven", Map.of(), 0).ok()).isTrue();
        }
    }

    @Nested
    class Step7ResponseCap {

        @Test
        void aResponseBeyondTheCapIsRefusedBeforeTheBody() {
            HostToolRun run = run(rules -> rules.responseLimits(limits(100, 100, 1)), Map.of("seven", seven));
            run.dispatch("seven", null, 0);

            assertThat(run.dispatch("seven", null, 0).refusal()).isEqualTo(
                    "Error: the host-tool response cap (1) is exhausted — finish with the results already delivered.");
            assertThat(bodyCalls).hasValue(1);
            assertThat(run.delivered()).isEqualTo(1);
        }

        @Test
        void theLastResponseUnderTheCapIsAdmitted() {
            HostToolRun run = run(rules -> rules.responseLimits(limits(100, 100, 2)), Map.of("seven", seven));
            run.dispatch("seven", null, 0);

            assertThat(run.dispatch("seven", null, 0).ok()).isTrue();
        }

        @Test
        void theResponseCapComesBeforeTheByteBudget() {
            HostToolRun run = run(rules -> rules.responseLimits(limits(1, 1, 1)), Map.of("seven", seven));
            run.dispatch("seven", null, 0);

            assertThat(run.dispatch("seven", null, 0).refusal()).contains("response cap (1)");
        }

        @Test
        void refusedDispatchesDoNotSpendResponses() {
            HostToolRun run = run(rules -> rules.responseLimits(limits(100, 100, 1)), Map.of("seven", seven));
            run.dispatch("seven", Map.of("unknown", 1), 0);

            assertThat(run.delivered()).isZero();
            assertThat(run.dispatch("seven", null, 0).ok()).isTrue();
        }
    }

    @Nested
    class Step8ByteBudget {

        @Test
        void framingThatLeavesNoRoomInTheBudgetIsRefusedBeforeTheBody() {
            HostToolRun run = run(rules -> rules.responseLimits(limits(100, 10, 10)), Map.of("seven", seven));

            assertThat(run.dispatch("seven", null, 10).refusal()).isEqualTo(
                    "Error: the host-tool response byte budget (10 bytes) is exhausted"
                            + " — finish with the results already delivered.");
            assertThat(bodyCalls).hasValue(0);
        }

        @Test
        void whatWasDeliveredCountsAgainstTheBudget() {
            HostToolRun run = run(rules -> rules.responseLimits(limits(100, 10, 10)), Map.of("seven", seven));
            run.dispatch("seven", null, 4);

            assertThat(run.deliveredBytes()).isEqualTo(5);
            assertThat(run.dispatch("seven", null, 5).refusal()).contains("byte budget (10 bytes)");
            assertThat(run.dispatch("seven", null, 4).ok()).isTrue();
            assertThat(run.deliveredBytes()).isEqualTo(10);
        }

        @Test
        void framingThatLeavesRoomForOneByteIsAdmitted() {
            HostToolRun run = run(rules -> rules.responseLimits(limits(100, 10, 10)), Map.of("seven", seven));

            assertThat(run.dispatch("seven", null, 9).ok()).isTrue();
        }

        @Test
        void hugeFramingIsRefusedNotOverflowed() {
            HostToolRun run = run(Map.of("seven", seven));

            assertThat(run.dispatch("seven", null, Long.MAX_VALUE).refusal()).contains("byte budget");
        }

        @Test
        void theByteBudgetComesBeforeThePerResponseCap() {
            HostToolRun run = run(rules -> rules.responseLimits(limits(5, 10, 10)), Map.of("seven", seven));

            assertThat(run.dispatch("seven", null, 10).refusal()).contains("byte budget");
        }
    }

    @Nested
    class Step9PerResponseRoom {

        @Test
        void framingThatFillsThePerResponseCapIsRefusedAndLogged() {
            HostToolRun run = run(rules -> rules.responseLimits(limits(5, 100, 10)), Map.of("seven", seven));

            assertThat(run.dispatch("seven", null, 5).refusal())
                    .isEqualTo("Error: no host-tool response can fit this run's per-response cap (5 bytes).");
            assertThat(bodyCalls).hasValue(0);
            assertThat(log.text()).contains("framing of 5 bytes").contains("raise responseLimits");
        }

        @Test
        void framingThatLeavesOneByteIsAdmitted() {
            HostToolRun run = run(rules -> rules.responseLimits(limits(5, 100, 10)), Map.of("seven", seven));

            assertThat(run.dispatch("seven", null, 4).ok()).isTrue();
            assertThat(log.lines).isEmpty();
        }
    }

    @Nested
    class Step10Reservation {

        @Test
        void aSlotIsHeldWhileTheBodyRuns() {
            AtomicInteger seenInside = new AtomicInteger(-1);
            HostToolRun[] holder = new HostToolRun[1];
            HostTool peek = HostTool.builder().body(arguments -> {
                seenInside.set(holder[0].delivered());
                return 1;
            }).build();
            holder[0] = run(Map.of("peek", peek));

            holder[0].dispatch("peek", null, 0);

            assertThat(seenInside).hasValue(1);
        }

        @Test
        void aSlotIsReleasedWhenTheDispatchIsRefusedAfterReserving() {
            HostTool failing = HostTool.builder().body(arguments -> {
                throw new IOException("disk");
            }).build();
            HostToolRun run = run(rules -> rules.responseLimits(limits(100, 100, 1)),
                    Map.of("failing", failing, "nan", returning(Double.NaN), "seven", seven));

            run.dispatch("failing", null, 0);
            run.dispatch("nan", null, 0);
            run.dispatch("seven", Map.of("extra", 1), 0);

            assertThat(run.delivered()).isZero();
            assertThat(run.dispatch("seven", null, 0).ok()).isTrue();
            assertThat(run.delivered()).isEqualTo(1);
        }
    }

    @Nested
    class Step11Binding {

        @Test
        void argumentsThatDoNotBindAreRefusedQuotingTheReason() {
            AtomicInteger calls = new AtomicInteger();
            HostTool tool = HostTool.builder().required("text").body(arguments -> calls.incrementAndGet()).build();
            HostToolRun run = run(Map.of("tool", tool));

            assertThat(run.dispatch("tool", Map.of(), 0).refusal()).isEqualTo(
                    "Error: the arguments do not bind to host tool 'tool': 'missing required argument(s): text'.");
            assertThat(run.dispatch("tool", Map.of("text", "a", "more", 1), 0).refusal())
                    .endsWith("'unexpected keyword argument(s): more'.");
            assertThat(calls).hasValue(0);
        }

        @Test
        void aGuestSizedKeywordIsCut() {
            String refusal = run(Map.of("seven", seven)).dispatch("seven", Map.of("k".repeat(5_000), 1), 0).refusal();

            assertThat(refusal).contains("(truncated)").hasSizeLessThan(GuestText.MAX_QUOTED_CHARS + 100);
        }

        @Test
        void boundArgumentsReachTheBody() {
            DispatchResult result = run(Map.of("echo", echo())).dispatch("echo", Map.of("text", "hello"), 0);

            assertThat(result.valueJson()).isEqualTo("\"hello\"");
        }
    }

    @Nested
    class Step12Call {

        @Test
        void aFailingBodyGetsAFixedSentenceAndTheDetailGoesToTheLog() {
            HostTool leaky = HostTool.builder().body(arguments -> {
                throw new IllegalStateException("password=hunter2 at db.internal:5432");
            }).build();
            HostToolRun run = run(Map.of("leaky", leaky));

            DispatchResult result = run.dispatch("leaky", null, 0);

            assertThat(result.refusal()).isEqualTo("Error: host tool 'leaky' failed — the reason is in the host's log.");
            assertThat(result.refusal()).doesNotContain("hunter2");
            assertThat(log.text()).contains("IllegalStateException: password=hunter2 at db.internal:5432");
            assertThat(log.lines.get(0).level()).isEqualTo(System.Logger.Level.WARNING);
        }

        @Test
        void aCheckedExceptionIsAFailureToo() {
            HostTool failing = HostTool.builder().body(arguments -> {
                throw new IOException("unreachable");
            }).build();

            assertThat(run(Map.of("failing", failing)).dispatch("failing", null, 0).refusal()).contains("failed");
            assertThat(log.text()).contains("IOException: unreachable");
        }

        @Test
        void anInterruptedBodyPropagatesAndReleasesItsSlot() {
            HostTool waits = HostTool.builder().body(arguments -> {
                throw new InterruptedException("cancelled");
            }).build();
            HostToolRun run = run(Map.of("waits", waits));

            assertThatThrownBy(() -> run.dispatch("waits", null, 0)).isInstanceOf(SandboxInterrupted.class);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
            assertThat(run.delivered()).isZero();
        }

        @Test
        void aFailureOnAnInterruptedThreadIsTheInterruption() {
            HostTool failsInterrupted = HostTool.builder().body(arguments -> {
                Thread.currentThread().interrupt();
                throw new IOException("closed by interrupt");
            }).build();

            assertThatThrownBy(() -> run(Map.of("t", failsInterrupted)).dispatch("t", null, 0))
                    .isInstanceOf(SandboxInterrupted.class).hasCauseInstanceOf(IOException.class);
        }

        @Test
        void anAlreadyInterruptedThreadNeverRunsTheBody() {
            HostToolRun run = run(Map.of("seven", seven));
            Thread.currentThread().interrupt();

            assertThatThrownBy(() -> run.dispatch("seven", null, 0)).isInstanceOf(SandboxInterrupted.class);
            assertThat(bodyCalls).hasValue(0);
            assertThat(run.delivered()).isZero();
        }
    }

    @Nested
    class Step13Json {

        @Test
        void aValueWithNoStrictJsonFormIsRefusedAndTheReasonLogged() {
            HostToolRun run = run(Map.of("nan", returning(Double.NaN), "object", returning(new Object())));

            assertThat(run.dispatch("nan", null, 0).refusal())
                    .isEqualTo("Error: host tool 'nan' returned a value that cannot be carried as JSON.");
            assertThat(run.dispatch("object", null, 0).refusal()).contains("cannot be carried as JSON");
            assertThat(log.text()).contains("NaN is not a JSON number").contains("java.lang.Object is not JSON");
            assertThat(run.deliveredBytes()).isZero();
        }

        @Test
        void tooDeepANestingIsRefused() {
            List<Object> deep = new ArrayList<>();
            List<Object> cursor = deep;
            for (int depth = 0; depth < StrictJson.MAX_NESTING_DEPTH; depth++) {
                List<Object> inner = new ArrayList<>();
                cursor.add(inner);
                cursor = inner;
            }

            assertThat(run(Map.of("deep", returning(deep))).dispatch("deep", null, 0).refusal())
                    .contains("cannot be carried as JSON");
        }

        @Test
        void nonAsciiIsCarriedAsIs() {
            DispatchResult result = run(Map.of("text", returning("naïve ✓ 😀"))).dispatch("text", null, 0);

            assertThat(result.valueJson()).isEqualTo("\"naïve ✓ 😀\"");
        }
    }

    @Nested
    class Step14Crossing {

        @Test
        void aResponseOverThePerResponseCapIsRefusedWithBothNumbers() {
            // "ab" is 4 bytes of JSON; with 2 bytes of framing it crosses 6.
            HostToolRun run = run(rules -> rules.responseLimits(limits(5, 100, 10)), Map.of("ab", returning("ab")));

            assertThat(run.dispatch("ab", null, 2).refusal()).isEqualTo(
                    "Error: host tool 'ab' returned 6 bytes with framing, over this run's per-response cap of 5 bytes.");
            assertThat(run.deliveredBytes()).isZero();
            assertThat(run.delivered()).isZero();
        }

        @Test
        void aResponseExactlyAtThePerResponseCapIsAdmitted() {
            HostToolRun run = run(rules -> rules.responseLimits(limits(6, 100, 10)), Map.of("ab", returning("ab")));

            assertThat(run.dispatch("ab", null, 2).ok()).isTrue();
            assertThat(run.deliveredBytes()).isEqualTo(6);
        }

        @Test
        void bytesAreCountedInUtf8() {
            // "é" is one char but two UTF-8 bytes: the JSON "é" (quotes included) is 4 bytes.
            HostToolRun run = run(rules -> rules.responseLimits(limits(3, 100, 10)), Map.of("e", returning("é")));

            assertThat(run.dispatch("e", null, 0).refusal()).contains("returned 4 bytes");
        }

        @Test
        void anOversizedValueIsRefusedWithoutWritingItAll() {
            HostToolRun run = run(rules -> rules.responseLimits(limits(1_000, 10_000, 10)),
                    Map.of("big", returning("x".repeat(1_000_000))));

            assertThat(run.dispatch("big", null, 10).refusal()).isEqualTo("Error: host tool 'big' returned more than"
                    + " 1000 bytes, over this run's per-response cap of 1000 bytes.");
        }

        @Test
        void aResponseOverWhatIsLeftOfTheBudgetIsRefused() {
            HostToolRun run = run(rules -> rules.responseLimits(limits(100, 10, 10)), Map.of("ab", returning("ab")));
            run.dispatch("ab", null, 2);

            assertThat(run.dispatch("ab", null, 1).refusal()).isEqualTo("Error: host tool 'ab' returned 5 bytes with"
                    + " framing, more than the 4 bytes left of this run's host-tool byte budget.");
            assertThat(run.deliveredBytes()).isEqualTo(6);
            assertThat(run.delivered()).isEqualTo(1);
        }

        @Test
        void aResponseThatExactlyExhaustsTheBudgetIsAdmitted() {
            HostToolRun run = run(rules -> rules.responseLimits(limits(100, 10, 10)), Map.of("ab", returning("ab")));
            run.dispatch("ab", null, 2);

            assertThat(run.dispatch("ab", null, 0).ok()).isTrue();
            assertThat(run.deliveredBytes()).isEqualTo(10);
        }
    }

    @Nested
    class Observer {

        @Test
        void theObserverOpensBeforeTheCountAndClosesAfter() {
            List<String> events = new ArrayList<>();
            HostToolRun run = run(rules -> rules.dispatchObserver((r, name) -> {
                events.add("open " + name + " dispatched=" + r.dispatched());
                return () -> events.add("close dispatched=" + r.dispatched() + " delivered=" + r.delivered());
            }), Map.of("seven", seven));

            run.dispatch("seven", null, 0);

            assertThat(events).containsExactly("open seven dispatched=0", "close dispatched=1 delivered=1");
        }

        @Test
        void theObserverSeesTheRawName() {
            List<Object> names = new ArrayList<>();
            HostToolRun run = run(rules -> rules.dispatchObserver((r, name) -> {
                names.add(name);
                return null;
            }), Map.of("seven", seven));

            run.dispatch(42, null, 0);

            assertThat(names).containsExactly(42);
        }

        @Test
        void aFailingObserverFactoryIsLoggedAndContained() {
            HostToolRun run = run(rules -> rules.dispatchObserver((r, name) -> {
                throw new IllegalStateException("tracer down");
            }), Map.of("seven", seven));

            assertThat(run.dispatch("seven", null, 0).ok()).isTrue();
            assertThat(log.text()).contains("observer failed to open").contains("tracer down");
        }

        @Test
        void aFailingObserverCloseIsLoggedAndContained() {
            HostToolRun run = run(rules -> rules.dispatchObserver((r, name) -> () -> {
                throw new IOException("flush failed");
            }), Map.of("seven", seven));

            DispatchResult result = run.dispatch("seven", null, 0);

            assertThat(result.valueJson()).isEqualTo("7");
            assertThat(log.text()).contains("observer failed to close").contains("flush failed");
        }

        @Test
        void anInterruptedObserverCloseKeepsTheInterruptFlag() {
            HostToolRun run = run(rules -> rules.dispatchObserver((r, name) -> () -> {
                throw new InterruptedException("stop");
            }), Map.of("seven", seven));

            assertThat(run.dispatch("seven", null, 0).ok()).isTrue();
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        }

        @Test
        void theObserverClosesWhenTheDispatchIsInterrupted() {
            AtomicInteger closed = new AtomicInteger();
            HostTool waits = HostTool.builder().body(arguments -> {
                throw new InterruptedException("cancelled");
            }).build();
            HostToolRun run = run(rules -> rules.dispatchObserver((r, name) -> closed::incrementAndGet),
                    Map.of("waits", waits));

            assertThatThrownBy(() -> run.dispatch("waits", null, 0)).isInstanceOf(SandboxInterrupted.class);
            assertThat(closed).hasValue(1);
        }
    }
}
