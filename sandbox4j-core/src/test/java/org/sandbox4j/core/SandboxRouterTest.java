package org.sandbox4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.fakes.ScriptedBackend;
import org.sandbox4j.core.fakes.ScriptedBackend.Purge;

class SandboxRouterTest {

    private static final SandboxKey KEY = new SandboxKey("tenant", "thread-1", "agent");
    private static final SandboxSpec SPEC = SandboxSpec.builder("execute_code").build();

    private static ScriptedBackend backend(String name, Isolation isolation) {
        return ScriptedBackend.builder().name(name).isolation(isolation).build();
    }

    private static SandboxRouter routerAtNone(SandboxBackend... backends) {
        return SandboxRouter.builder().backends(List.of(backends)).minIsolation(Isolation.NONE).build();
    }

    @Nested
    class Construction {

        @Test
        void theDefaultFloorIsMicrovm() {
            assertThat(SandboxRouter.builder().build().floor()).isEqualTo(Isolation.MICROVM);
        }

        @Test
        void aBackendBelowTheDefaultFloorFailsConstruction() {
            ScriptedBackend container = backend("bwrap", Isolation.CONTAINER);
            assertThatThrownBy(() -> SandboxRouter.builder().backend(container).build())
                    .isInstanceOf(SandboxBackendNotPermitted.class)
                    .hasMessageContaining("minimum-isolation floor")
                    .hasMessageContaining("'bwrap'")
                    .hasMessageContaining(Isolation.ladder());
        }

        @Test
        void aBackendAtTheFloorIsAdmitted() {
            SandboxRouter router = SandboxRouter.builder().backend(backend("vm", Isolation.MICROVM)).build();
            assertThat(router.enabled()).isTrue();
        }

        @Test
        void aBackendOneRungBelowAnExplicitFloorIsRefusedAndAtItAdmitted() {
            assertThatThrownBy(() -> SandboxRouter.builder().backend(backend("p", Isolation.OS_PROCESS))
                    .minIsolation(Isolation.CONTAINER).build()).isInstanceOf(SandboxBackendNotPermitted.class);
            assertThat(SandboxRouter.builder().backend(backend("c", Isolation.CONTAINER))
                    .minIsolation(Isolation.CONTAINER).build().enabled()).isTrue();
        }

        @Test
        void deployedForbidsAFloorBelowMicrovm() {
            assertThatThrownBy(() -> SandboxRouter.builder().deployed(true).minIsolation(Isolation.HARDENED_CONTAINER)
                    .build())
                    .isInstanceOf(SandboxFloorNotPermitted.class)
                    .hasMessageContaining("deployed")
                    .hasMessageContaining("microvm");
        }

        @Test
        void deployedAdmitsMicrovmAndAbove() {
            assertThat(SandboxRouter.builder().deployed(true).minIsolation(Isolation.MICROVM).build().floor())
                    .isEqualTo(Isolation.MICROVM);
            assertThat(SandboxRouter.builder().deployed(true).minIsolation(Isolation.VM).build().floor())
                    .isEqualTo(Isolation.VM);
            assertThat(SandboxRouter.builder().deployed(false).minIsolation(Isolation.CONTAINER).build().floor())
                    .isEqualTo(Isolation.CONTAINER);
        }

        @Test
        void aFloorFromTextIsReParsed() {
            assertThat(SandboxRouter.builder().minIsolation("os_process").build().floor())
                    .isEqualTo(Isolation.OS_PROCESS);
            for (String invalid : List.of("MICROVM", "micro-vm", "process", "")) {
                assertThatThrownBy(() -> SandboxRouter.builder().minIsolation(invalid))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("valid values");
            }
        }

        @Test
        void denialsFromTextAreReParsed() {
            assertThatThrownBy(() -> SandboxRouter.builder().denyCapabilities(List.of("network")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("files_delete");
            assertThatThrownBy(() -> SandboxRouter.builder().denyIdentities(List.of("admin")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("user");
            SandboxRouter router = SandboxRouter.builder().backend(backend("a", Isolation.NONE))
                    .minIsolation(Isolation.NONE).denyCapabilities(List.of("exec")).build();
            assertThatThrownBy(() -> router.ensureCanServe(SPEC)).isInstanceOf(SandboxCapabilityDenied.class);
        }

        @Test
        void noBackendMeansDisabledAndNothingToServe() {
            SandboxRouter router = SandboxRouter.builder().build();
            assertThat(router.enabled()).isFalse();
            assertThat(router.ensureCanServe(SPEC)).isEmpty();
            assertThatThrownBy(() -> router.acquire(KEY, SPEC))
                    .isInstanceOf(NoSandboxBackend.class)
                    .hasMessageContaining("no sandbox backend is configured");
        }

        @Test
        void oneBackendIsEnoughToAcquire() {
            ScriptedBackend only = backend("only", Isolation.NONE);
            assertThat(routerAtNone(only).acquire(KEY, SPEC)).isSameAs(only.sandbox());
            assertThat(only.keys()).containsExactly(KEY);
            assertThat(only.specs()).containsExactly(SPEC);
        }

        @Test
        void selectingAnUnregisteredNameListsTheRegisteredOnesSorted() {
            assertThatThrownBy(() -> SandboxRouter.builder().backend(backend("zeta", Isolation.NONE))
                    .backend(backend("alpha", Isolation.NONE)).minIsolation(Isolation.NONE).select("beta").build())
                    .isInstanceOf(NoSandboxBackend.class)
                    .hasMessageContaining("registered: alpha, zeta");
        }

        @Test
        void anUnselectedWeakBackendIsIrrelevantToTheFloor() {
            ScriptedBackend weak = backend("weak", Isolation.OS_PROCESS);
            ScriptedBackend strong = backend("strong", Isolation.MICROVM);
            SandboxRouter router = SandboxRouter.builder().backend(weak).backend(strong).select("strong").build();
            assertThat(router.acquire(KEY, SPEC)).isSameAs(strong.sandbox());
            assertThat(weak.keys()).isEmpty();
            assertThat(router.servingBackends()).containsExactly(strong);
            assertThat(router.backends()).containsExactly(weak, strong);
        }

        @Test
        void aSelectedBackendBelowTheFloorFailsConstruction() {
            assertThatThrownBy(() -> SandboxRouter.builder().backend(backend("weak", Isolation.OS_PROCESS))
                    .backend(backend("strong", Isolation.MICROVM)).select("weak").build())
                    .isInstanceOf(SandboxBackendNotPermitted.class);
        }

        @Test
        void duplicateNamesAreRefused() {
            assertThatThrownBy(() -> routerAtNone(backend("same", Isolation.NONE), backend("same", Isolation.VM)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'same'");
        }

        @Test
        void aBackendWithoutDeclarationsIsRefused() {
            SandboxBackend silent = new ForwardingBackend(backend("silent", Isolation.VM)) {
                @Override
                public BackendDeclarations declarations() {
                    return null;
                }
            };
            SandboxBackend broken = new ForwardingBackend(backend("broken", Isolation.VM)) {
                @Override
                public BackendDeclarations declarations() {
                    throw new IllegalStateException("boom");
                }
            };
            assertThatThrownBy(() -> routerAtNone(silent)).isInstanceOf(SandboxBackendNotPermitted.class)
                    .hasMessageContaining("'silent'");
            assertThatThrownBy(() -> routerAtNone(broken)).isInstanceOf(SandboxBackendNotPermitted.class)
                    .hasRootCauseMessage("boom");
        }
    }

    @Nested
    class Checks {

        @Test
        void aSpecMayRaiseTheFloor() {
            ScriptedBackend container = backend("c", Isolation.CONTAINER);
            SandboxRouter router = SandboxRouter.builder().backend(container).minIsolation(Isolation.CONTAINER).build();
            SandboxSpec raised = SandboxSpec.builder("k").minIsolation(Isolation.MICROVM).build();
            assertThatThrownBy(() -> router.acquire(KEY, raised))
                    .isInstanceOf(SandboxBackendNotPermitted.class)
                    .hasMessageContaining("requires at least 'microvm'");
            assertThat(container.keys()).as("nothing acquired after a refusal").isEmpty();
            SandboxSpec atBackend = SandboxSpec.builder("k").minIsolation(Isolation.CONTAINER).build();
            assertThat(router.acquire(KEY, atBackend)).isSameAs(container.sandbox());
        }

        @Test
        void aSpecCannotLowerTheFloor() {
            ScriptedBackend container = backend("c", Isolation.CONTAINER);
            ScriptedBackend vm = backend("vm", Isolation.MICROVM);
            SandboxRouter router = SandboxRouter.builder().backend(vm).minIsolation(Isolation.MICROVM).build();
            SandboxSpec lowered = SandboxSpec.builder("k").minIsolation(Isolation.NONE).build();
            assertThat(router.ensureCanServe(lowered)).contains(vm);
            // A router whose floor is container still refuses a process backend whatever the spec says.
            assertThatThrownBy(() -> SandboxRouter.builder().backend(backend("p", Isolation.OS_PROCESS))
                    .minIsolation(Isolation.CONTAINER).build()).isInstanceOf(SandboxBackendNotPermitted.class);
            assertThat(container.keys()).isEmpty();
        }

        @Test
        void deniedCapabilitiesFireEvenWhenTheBackendHasThem() {
            ScriptedBackend full = ScriptedBackend.builder().capabilities(Capability.values()).build();
            SandboxRouter router = SandboxRouter.builder().backend(full).minIsolation(Isolation.NONE)
                    .deny(Capability.FILES_DELETE, Capability.SNAPSHOT).build();
            SandboxSpec deleting = SandboxSpec.builder("k").alsoRequires(Capability.FILES_DELETE).build();
            assertThatThrownBy(() -> router.acquire(KEY, deleting))
                    .isInstanceOf(SandboxCapabilityDenied.class)
                    .hasMessageContaining("files_delete")
                    .hasMessageNotContaining("snapshot");
            assertThat(full.keys()).isEmpty();
            assertThat(router.acquire(KEY, SPEC)).isSameAs(full.sandbox());
        }

        @Test
        void deniedIdentitiesFire() {
            SandboxRouter router = SandboxRouter.builder().backend(backend("a", Isolation.NONE))
                    .minIsolation(Isolation.NONE).deny(Identity.USER).build();
            SandboxSpec user = SandboxSpec.builder("k").identities(Set.of(Identity.USER, Identity.APP)).build();
            assertThatThrownBy(() -> router.ensureCanServe(user))
                    .isInstanceOf(SandboxIdentityDenied.class)
                    .hasMessageContaining("user")
                    .hasMessageNotContaining("app");
            SandboxSpec app = SandboxSpec.builder("k").identities(Set.of(Identity.APP)).build();
            assertThat(router.ensureCanServe(app)).isPresent();
        }

        @Test
        void aMissingCapabilityIsNamedWithWhatTheBackendDeclares() {
            SandboxRouter router = routerAtNone(backend("plain", Isolation.NONE));
            SandboxSpec pulling = SandboxSpec.builder("k").alsoRequires(Capability.FILES_OUT).build();
            assertThatThrownBy(() -> router.ensureCanServe(pulling))
                    .isInstanceOf(SandboxCapabilityNotSupported.class)
                    .hasMessageContaining("does not support files_out")
                    .hasMessageContaining("it declares exec, files_in");
            SandboxRouter able = routerAtNone(ScriptedBackend.builder()
                    .capabilities(Capability.EXEC, Capability.FILES_IN, Capability.FILES_OUT).build());
            assertThat(able.ensureCanServe(pulling)).isPresent();
        }

        @Test
        void aBackendDeclaringNoCapabilitiesIsSaidToDeclareNothing() {
            SandboxRouter router = routerAtNone(ScriptedBackend.builder().capabilities().build());
            assertThatThrownBy(() -> router.ensureCanServe(SPEC))
                    .isInstanceOf(SandboxCapabilityNotSupported.class)
                    .hasMessageContaining("it declares nothing");
        }

        @Test
        void theOsFamilyIsCheckedOnlyWhenTheSpecAsks() {
            SandboxRouter silent = routerAtNone(backend("silent", Isolation.NONE));
            SandboxSpec windows = SandboxSpec.builder("k").requiresOsFamily(OsFamily.WINDOWS).build();
            assertThat(silent.ensureCanServe(SPEC)).isPresent();
            assertThatThrownBy(() -> silent.ensureCanServe(windows))
                    .isInstanceOf(SandboxOsFamilyNotSupported.class)
                    .hasMessageContaining("states no guest shape");
            SandboxRouter posix = routerAtNone(ScriptedBackend.builder().osFamilies(OsFamily.POSIX).build());
            assertThatThrownBy(() -> posix.ensureCanServe(windows))
                    .isInstanceOf(SandboxOsFamilyNotSupported.class)
                    .hasMessageContaining("it serves posix");
            SandboxSpec wantsPosix = SandboxSpec.builder("k").requiresOsFamily(OsFamily.POSIX).build();
            assertThat(posix.ensureCanServe(wantsPosix)).isPresent();
        }

        @Test
        void transferLimitsBeyondTheCeilingAreRefusedNeverClamped() {
            TransferLimits ceiling = new TransferLimits(100, 1000, 10);
            ScriptedBackend small = ScriptedBackend.builder().limits(new SandboxLimits(ceiling, ceiling)).build();
            SandboxRouter router = routerAtNone(small);
            SandboxSpec bigIn = SandboxSpec.builder("k").filesIn(new TransferLimits(101, 1000, 10))
                    .filesOut(new TransferLimits(100, 1001, 10)).build();
            assertThatThrownBy(() -> router.ensureCanServe(bigIn))
                    .isInstanceOf(SandboxTransferLimitsNotPermitted.class)
                    .hasMessageContaining("files_in")
                    .hasMessageContaining("101 bytes per file");
            SandboxSpec bigOut = SandboxSpec.builder("k").filesIn(ceiling).filesOut(new TransferLimits(100, 1000, 11))
                    .build();
            assertThatThrownBy(() -> router.ensureCanServe(bigOut))
                    .isInstanceOf(SandboxTransferLimitsNotPermitted.class)
                    .hasMessageContaining("files_out")
                    .hasMessageContaining("11 files");
            SandboxSpec atCeiling = SandboxSpec.builder("k").filesIn(ceiling).filesOut(ceiling).build();
            assertThat(router.ensureCanServe(atCeiling)).isPresent();
            assertThatThrownBy(() -> router.ensureCanServe(SPEC)).as("the defaults exceed this small ceiling")
                    .isInstanceOf(SandboxTransferLimitsNotPermitted.class);
        }

        @Test
        void theDefaultsFitTheDefaultCeiling() {
            assertThat(routerAtNone(backend("a", Isolation.NONE)).ensureCanServe(SPEC)).isPresent();
        }

        @Test
        void egressIsNeverSubstituted() {
            SandboxRouter closedOnly = routerAtNone(ScriptedBackend.builder().egressModes(Egress.CLOSED).build());
            SandboxSpec allowlist = SandboxSpec.builder("k").egress(Egress.ALLOWLIST).egressAllow("pypi.org").build();
            assertThatThrownBy(() -> closedOnly.ensureCanServe(allowlist))
                    .isInstanceOf(SandboxEgressNotEnforced.class)
                    .hasMessageContaining("cannot enforce the 'allowlist'")
                    .hasMessageContaining("it enforces closed");
            assertThat(closedOnly.ensureCanServe(SPEC)).isPresent();

            SandboxRouter openOnly = routerAtNone(ScriptedBackend.builder().egressModes(Egress.UNRESTRICTED).build());
            assertThatThrownBy(() -> openOnly.ensureCanServe(SPEC))
                    .as("a more open mode never stands in for closed")
                    .isInstanceOf(SandboxEgressNotEnforced.class);
        }

        @Test
        void aBackendEnforcingNothingRefusesEveryModeClosedIncluded() {
            SandboxRouter router = routerAtNone(ScriptedBackend.builder().egressModes().build());
            for (Egress mode : Egress.values()) {
                SandboxSpec spec = SandboxSpec.builder("k").egress(mode).build();
                assertThatThrownBy(() -> router.ensureCanServe(spec))
                        .isInstanceOf(SandboxEgressNotEnforced.class)
                        .hasMessageContaining("it enforces nothing");
            }
        }

        @Test
        void theChecksRunInTheDocumentedOrder() {
            // A backend that fails every per-backend check at once: below the spec's floor, no
            // files_out, no windows, tiny limits, no egress.
            TransferLimits tiny = new TransferLimits(1, 1, 1);
            ScriptedBackend poor = ScriptedBackend.builder().isolation(Isolation.NONE)
                    .capabilities(Capability.EXEC, Capability.FILES_IN).osFamilies(OsFamily.POSIX)
                    .limits(new SandboxLimits(tiny, tiny)).egressModes().build();
            SandboxRouter router = SandboxRouter.builder().backend(poor).minIsolation(Isolation.NONE)
                    .deny(Capability.SNAPSHOT).build();
            SandboxSpec.Builder spec = SandboxSpec.builder("k").alsoRequires(Capability.SNAPSHOT, Capability.FILES_OUT)
                    .minIsolation(Isolation.CONTAINER).requiresOsFamily(OsFamily.WINDOWS);
            assertThatThrownBy(() -> router.ensureCanServe(spec.build())).isInstanceOf(SandboxCapabilityDenied.class);
            spec.requires(Capability.EXEC, Capability.FILES_IN, Capability.FILES_OUT);
            assertThatThrownBy(() -> router.ensureCanServe(spec.build())).isInstanceOf(SandboxBackendNotPermitted.class);
            spec.minIsolation(Isolation.NONE);
            assertThatThrownBy(() -> router.ensureCanServe(spec.build()))
                    .isInstanceOf(SandboxCapabilityNotSupported.class);
            spec.requires(Capability.EXEC, Capability.FILES_IN);
            assertThatThrownBy(() -> router.ensureCanServe(spec.build())).isInstanceOf(SandboxOsFamilyNotSupported.class);
            spec.requiresOsFamily(OsFamily.POSIX);
            assertThatThrownBy(() -> router.ensureCanServe(spec.build()))
                    .isInstanceOf(SandboxTransferLimitsNotPermitted.class);
            spec.filesIn(tiny).filesOut(tiny);
            assertThatThrownBy(() -> router.ensureCanServe(spec.build())).isInstanceOf(SandboxEgressNotEnforced.class);
            assertThat(poor.keys()).isEmpty();
        }

        @Test
        void aBackendFailureAtAcquirePropagatesAfterTheChecksPass() {
            ScriptedBackend failing = ScriptedBackend.builder().acquireError(new SandboxException("provider down"))
                    .build();
            assertThatThrownBy(() -> routerAtNone(failing).acquire(KEY, SPEC)).hasMessage("provider down");
            assertThat(failing.keys()).containsExactly(KEY);
            assertThat(failing.specs()).isEmpty();
        }
    }

    @Nested
    class SeveralBackends {

        @Test
        void theFirstBackendThatPassesEveryCheckServes() {
            ScriptedBackend closedOnly = ScriptedBackend.builder().name("closed-only").egressModes(Egress.CLOSED)
                    .build();
            ScriptedBackend allowlisting = ScriptedBackend.builder().name("allowlisting")
                    .egressModes(Egress.CLOSED, Egress.ALLOWLIST).build();
            SandboxRouter router = routerAtNone(closedOnly, allowlisting);
            SandboxSpec allowlist = SandboxSpec.builder("k").egress(Egress.ALLOWLIST).egressAllow("pypi.org").build();
            assertThat(router.acquire(KEY, SPEC)).isSameAs(closedOnly.sandbox());
            assertThat(router.acquire(KEY, allowlist)).isSameAs(allowlisting.sandbox());
            assertThat(closedOnly.specs()).containsExactly(SPEC);
            assertThat(allowlisting.specs()).containsExactly(allowlist);
        }

        @Test
        void aRaisedFloorMovesTheSpecToAStrongerBackend() {
            ScriptedBackend container = backend("container", Isolation.CONTAINER);
            ScriptedBackend vm = backend("vm", Isolation.MICROVM);
            SandboxRouter router = SandboxRouter.builder().backend(container).backend(vm)
                    .minIsolation(Isolation.CONTAINER).build();
            assertThat(router.ensureCanServe(SPEC)).contains(container);
            assertThat(router.ensureCanServe(SandboxSpec.builder("k").minIsolation(Isolation.MICROVM).build()))
                    .contains(vm);
        }

        @Test
        void whenNoneCanServeEveryBackendIsListedWithItsOwnReason() {
            ScriptedBackend closedOnly = ScriptedBackend.builder().name("closed-only").egressModes(Egress.CLOSED)
                    .build();
            ScriptedBackend noPull = ScriptedBackend.builder().name("no-pull").egressModes(Egress.ALLOWLIST).build();
            SandboxRouter router = routerAtNone(closedOnly, noPull);
            SandboxSpec spec = SandboxSpec.builder("k").alsoRequires(Capability.FILES_OUT).egress(Egress.ALLOWLIST)
                    .build();
            assertThatThrownBy(() -> router.acquire(KEY, spec))
                    .isInstanceOfSatisfying(SandboxNoBackendCanServe.class, refusal -> {
                        assertThat(refusal.refusals()).containsOnlyKeys("closed-only", "no-pull");
                        assertThat(List.copyOf(refusal.refusals().keySet())).containsExactly("closed-only", "no-pull");
                        assertThat(refusal.refusals().get("closed-only"))
                                .isInstanceOf(SandboxCapabilityNotSupported.class);
                        assertThat(refusal.refusals().get("no-pull")).isInstanceOf(SandboxCapabilityNotSupported.class);
                        assertThat(refusal.getSuppressed()).hasSize(2);
                        assertThat(refusal.getMessage()).contains("closed-only (SandboxCapabilityNotSupported)")
                                .contains("no-pull (SandboxCapabilityNotSupported)");
                    });
            assertThat(closedOnly.keys()).isEmpty();
            assertThat(noPull.keys()).isEmpty();
        }

        @Test
        void eachBackendKeepsItsOwnKindOfRefusal() {
            ScriptedBackend noEgress = ScriptedBackend.builder().name("no-egress").egressModes().build();
            ScriptedBackend tiny = ScriptedBackend.builder().name("tiny")
                    .limits(new SandboxLimits(new TransferLimits(1, 1, 1), TransferLimits.DEFAULT)).build();
            SandboxRouter router = routerAtNone(noEgress, tiny);
            assertThatThrownBy(() -> router.ensureCanServe(SPEC))
                    .isInstanceOfSatisfying(SandboxNoBackendCanServe.class, refusal -> {
                        assertThat(refusal.refusals().get("no-egress")).isInstanceOf(SandboxEgressNotEnforced.class);
                        assertThat(refusal.refusals().get("tiny"))
                                .isInstanceOf(SandboxTransferLimitsNotPermitted.class);
                    });
        }

        @Test
        void hostDenialsAreRaisedOnceNotPerBackend() {
            SandboxRouter router = SandboxRouter.builder().backend(backend("a", Isolation.NONE))
                    .backend(backend("b", Isolation.NONE)).minIsolation(Isolation.NONE).deny(Capability.EXEC).build();
            assertThatThrownBy(() -> router.ensureCanServe(SPEC)).isInstanceOf(SandboxCapabilityDenied.class);
        }

        @Test
        void theNamedBackendServesAlone() {
            ScriptedBackend first = backend("first", Isolation.NONE);
            ScriptedBackend named = ScriptedBackend.builder().name("named").egressModes(Egress.ALLOWLIST).build();
            SandboxRouter router = SandboxRouter.builder().backend(first).backend(named).minIsolation(Isolation.NONE)
                    .select("named").build();
            assertThatThrownBy(() -> router.acquire(KEY, SPEC))
                    .as("the named backend's own refusal, never a fallback to another backend")
                    .isInstanceOf(SandboxEgressNotEnforced.class);
            assertThat(first.keys()).isEmpty();
        }
    }

    @Nested
    class Disposal {

        @Test
        void disposeAsksEveryBackendAndSwallowsFailures() {
            ScriptedBackend a = backend("a", Isolation.NONE);
            ScriptedBackend c = backend("c", Isolation.NONE);
            SandboxRouter router = routerAtNone(a, new FailingDisposal(backend("b", Isolation.NONE)), c);
            router.dispose(KEY);
            assertThat(a.disposed()).containsExactly(KEY);
            assertThat(c.disposed()).containsExactly(KEY);
        }

        @Test
        void disposeScopeSumsCountsAndAFailingBackendCountsZero() {
            ScriptedBackend a = ScriptedBackend.builder().name("a").purgeCount(2).build();
            ScriptedBackend c = ScriptedBackend.builder().name("c").purgeCount(3).build();
            SandboxRouter router = routerAtNone(a, new FailingDisposal(backend("b", Isolation.NONE)), c);
            assertThat(router.disposeScope("tenant", "thread-1")).isEqualTo(5);
            assertThat(a.purged()).containsExactly(new Purge("tenant", "thread-1"));
            assertThat(c.purged()).containsExactly(new Purge("tenant", "thread-1"));
        }

        @Test
        void disposeScopeRefusesANullScopeOrThreadRatherThanDisposingNothing() {
            ScriptedBackend a = ScriptedBackend.builder().purgeCount(2).build();
            SandboxRouter router = routerAtNone(a);
            assertThatThrownBy(() -> router.disposeScope("tenant", null))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("thread (none)")
                    .hasMessageContaining("SandboxQuery.scope");
            assertThatThrownBy(() -> router.disposeScope(null, "t")).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> router.scope("tenant", null)).isInstanceOf(IllegalArgumentException.class);
            assertThat(a.purged()).isEmpty();
        }

        @Test
        void unselectedBackendsAreStillAskedToDispose() {
            ScriptedBackend old = ScriptedBackend.builder().name("old").purgeCount(4).build();
            ScriptedBackend current = ScriptedBackend.builder().name("current").purgeCount(1).build();
            SandboxRouter router = SandboxRouter.builder().backend(old).backend(current).minIsolation(Isolation.NONE)
                    .select("current").build();
            assertThat(router.disposeScope("s", "t")).isEqualTo(5);
            router.dispose(KEY);
            assertThat(old.disposed()).containsExactly(KEY);
        }

        @Test
        void aScopeDisposesWhenTheBlockEndsNormally() {
            ScriptedBackend a = ScriptedBackend.builder().purgeCount(2).build();
            SandboxRouter router = routerAtNone(a);
            ScopeDisposal disposal;
            try (ScopeDisposal block = router.scope("tenant", "thread-1")) {
                disposal = block;
                assertThat(block.disposed()).isZero();
                assertThat(a.purged()).isEmpty();
            }
            assertThat(disposal.disposed()).isEqualTo(2);
            assertThat(a.purged()).containsExactly(new Purge("tenant", "thread-1"));
        }

        @Test
        void aScopeDisposesWhenTheBlockThrowsAndNeverMasksTheException() {
            ScriptedBackend a = ScriptedBackend.builder().purgeCount(1).build();
            SandboxRouter router = routerAtNone(a, new FailingDisposal(backend("b", Isolation.NONE)));
            ScopeDisposal[] seen = new ScopeDisposal[1];
            assertThatThrownBy(() -> {
                try (ScopeDisposal block = router.scope("tenant", "thread-9")) {
                    seen[0] = block;
                    throw new IllegalStateException("the block's own failure");
                }
            }).isInstanceOf(IllegalStateException.class).hasMessage("the block's own failure").hasNoSuppressedExceptions();
            assertThat(seen[0].disposed()).isEqualTo(1);
            assertThat(a.purged()).containsExactly(new Purge("tenant", "thread-9"));
        }

        @Test
        void closingTwiceDisposesOnce() {
            ScriptedBackend a = ScriptedBackend.builder().purgeCount(1).build();
            ScopeDisposal disposal = routerAtNone(a).scope("s", "t");
            disposal.close();
            disposal.close();
            assertThat(a.purged()).hasSize(1);
        }

        @Test
        void thePurgerDisposesTheConversationEverywhere() {
            ScriptedBackend a = ScriptedBackend.builder().name("a").purgeCount(2).build();
            ScriptedBackend b = ScriptedBackend.builder().name("b").purgeCount(0).build();
            SandboxPurger purger = new SandboxPurger(routerAtNone(a, b, new FailingDisposal(backend("c", Isolation.NONE))));
            assertThat(purger.purgeScopedThread("tenant", "gone")).isEqualTo(2);
            assertThat(b.purged()).containsExactly(new Purge("tenant", "gone"));
        }
    }

    /** A backend that passes every call to another: a test overrides only the behaviour it breaks. */
    private abstract static class ForwardingBackend implements SandboxBackend {

        private final SandboxBackend delegate;

        ForwardingBackend(SandboxBackend delegate) {
            this.delegate = delegate;
        }

        @Override
        public String name() {
            return delegate.name();
        }

        @Override
        public BackendDeclarations declarations() {
            return delegate.declarations();
        }

        @Override
        public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
            return delegate.acquire(key, spec);
        }

        @Override
        public void dispose(SandboxKey key) {
            delegate.dispose(key);
        }

        @Override
        public int disposeScope(String scope, String threadId) {
            return delegate.disposeScope(scope, threadId);
        }
    }

    /** A backend whose provider fails every disposal (a contract breach the router must contain). */
    private static final class FailingDisposal extends ForwardingBackend {
        FailingDisposal(ScriptedBackend delegate) {
            super(delegate);
        }

        @Override
        public void dispose(SandboxKey key) {
            throw new IllegalStateException("provider unreachable");
        }

        @Override
        public int disposeScope(String scope, String threadId) {
            throw new IllegalStateException("provider unreachable");
        }
    }
}
