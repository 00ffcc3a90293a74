package org.sandbox4j.core.hosttools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.sandbox4j.core.hosttools.Tools.declaration;
import static org.sandbox4j.core.hosttools.Tools.declared;
import static org.sandbox4j.core.hosttools.Tools.returning;

import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.HostToolIdentityNotAllowed;
import org.sandbox4j.core.HostToolNotDeclared;
import org.sandbox4j.core.Identity;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.SourceIntegrity;
import org.sandbox4j.core.TransferLimits;

class HostToolRegistryTest {

    @Nested
    class Construction {

        @Test
        void defaultsAreTheReferenceDefaults() {
            HostToolRegistry registry = HostToolRegistry.builder().build();

            assertThat(registry.requireDeclared()).isFalse();
            assertThat(registry.allowedIdentities()).containsExactly(Identity.APP);
            assertThat(registry.maxDispatchesPerRun()).isEqualTo(16);
            assertThat(HostToolRegistry.DEFAULT_MAX_DISPATCHES_PER_RUN).isEqualTo(16);
            assertThat(registry.responseLimits()).isEqualTo(TransferLimits.DEFAULT);
            assertThat(registry.dispatchObserver()).isEmpty();
            assertThat(registry.size()).isZero();
            assertThat(registry.sealed()).isFalse();
        }

        @Test
        void aZeroDispatchCapIsRefused() {
            assertThatThrownBy(() -> HostToolRegistry.builder().maxDispatchesPerRun(0))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("empty registry");
        }

        @Test
        void aDispatchCapOfOneIsAdmitted() {
            assertThat(HostToolRegistry.builder().maxDispatchesPerRun(1).build().maxDispatchesPerRun()).isEqualTo(1);
        }

        @Test
        void eachResponseLimitLegMustBeAtLeastOne() {
            assertThatThrownBy(() -> HostToolRegistry.builder().responseLimits(new TransferLimits(0, 1, 1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1");
            assertThatThrownBy(() -> HostToolRegistry.builder().responseLimits(new TransferLimits(1, 0, 1)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> HostToolRegistry.builder().responseLimits(new TransferLimits(1, 1, 0)))
                    .isInstanceOf(IllegalArgumentException.class);
        }

        @Test
        void responseLimitsOfOneEachAreAdmitted() {
            TransferLimits smallest = new TransferLimits(1, 1, 1);

            assertThat(HostToolRegistry.builder().responseLimits(smallest).build().responseLimits())
                    .isEqualTo(smallest);
        }

        @Test
        void allowedIdentitiesAreCopied() {
            Set<Identity> allowed = EnumSet.of(Identity.APP);
            HostToolRegistry registry = HostToolRegistry.builder().allowedIdentities(allowed).build();
            allowed.add(Identity.USER);

            assertThat(registry.allowedIdentities()).containsExactly(Identity.APP);
        }
    }

    @Nested
    class Registration {

        private final HostToolRegistry registry = HostToolRegistry.builder().build();

        @Test
        void aSealedRegistryRefusesBeforeAnyOtherCheck() {
            registry.aggregate();

            // An empty name would be refused too: the seal is checked first.
            assertThatThrownBy(() -> registry.register("", returning(1)))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("sealed")
                    .hasMessageContaining("before calling aggregate()");
            assertThat(registry.size()).isZero();
        }

        @Test
        void anUnsealedRegistryAdmits() {
            registry.register("tool", returning(1));

            assertThat(registry.names()).containsExactly("tool");
        }

        @Test
        void aNullOrEmptyNameIsRefused() {
            assertThatThrownBy(() -> registry.register(null, returning(1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("non-empty name");
            assertThatThrownBy(() -> registry.register("", returning(1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("non-empty name");
        }

        @Test
        void aOneCharacterNameIsAdmitted() {
            registry.register("x", returning(1));

            assertThat(registry.size()).isEqualTo(1);
        }

        @Test
        void aDuplicateIsRefusedAndNeverReplaces() {
            HostTool first = returning(1);
            registry.register("tool", first);

            assertThatThrownBy(() -> registry.register("tool", returning(2)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("never replaces");
            assertThat(registry.resolve("tool")).containsSame(first);
        }

        @Test
        void aDuplicateIsCheckedBeforeTheDeclaration() {
            HostToolRegistry strict = HostToolRegistry.builder().requireDeclared(true).build();
            strict.register("tool", declared(declaration(null, null, Identity.APP)));

            assertThatThrownBy(() -> strict.register("tool", returning(2)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("already registered");
        }

        @Test
        void aNullToolIsRefused() {
            assertThatThrownBy(() -> registry.register("tool", null)).isInstanceOf(NullPointerException.class);
        }

        @Test
        void anUndeclaredToolIsRefusedWhenDeclarationsAreRequired() {
            HostToolRegistry strict = HostToolRegistry.builder().requireDeclared(true).build();

            assertThatThrownBy(() -> strict.register("tool", returning(1)))
                    .isInstanceOf(HostToolNotDeclared.class).hasMessageContaining("'tool'")
                    .hasMessageContaining("HostToolDeclaration");
            assertThat(strict.size()).isZero();
        }

        @Test
        void aDeclaredToolIsAdmittedWhenDeclarationsAreRequired() {
            HostToolRegistry strict = HostToolRegistry.builder().requireDeclared(true).build();
            strict.register("tool", declared(declaration(null, null, Identity.APP)));

            assertThat(strict.size()).isEqualTo(1);
        }

        @Test
        void anUndeclaredToolIsAdmittedByDefault() {
            registry.register("tool", returning(1));

            assertThat(registry.declarationFor("tool")).isEmpty();
        }

        @Test
        void theUndeclaredCheckComesBeforeTheIdentityCheck() {
            HostToolRegistry strictNoApp = HostToolRegistry.builder().requireDeclared(true)
                    .allowedIdentities(Set.of()).build();

            assertThatThrownBy(() -> strictNoApp.register("tool", returning(1)))
                    .isInstanceOf(HostToolNotDeclared.class);
        }

        @Test
        void aDeclaredIdentityOutsideTheAllowedSetIsRefused() {
            assertThatThrownBy(() -> registry.register("tool", declared(declaration(null, null, Identity.USER))))
                    .isInstanceOf(HostToolIdentityNotAllowed.class).hasMessageContaining("'user'")
                    .hasMessageContaining("allowed: app").hasMessageContaining("allowedIdentities");
            assertThat(registry.size()).isZero();
        }

        @Test
        void anAllowedDeclaredIdentityIsAdmitted() {
            HostToolRegistry withUser = HostToolRegistry.builder()
                    .allowedIdentities(Set.of(Identity.APP, Identity.USER)).build();
            withUser.register("tool", declared(declaration(null, null, Identity.USER)));

            assertThat(withUser.size()).isEqualTo(1);
        }

        @Test
        void anUndeclaredToolActsWithTheAppIdentity() {
            HostToolRegistry userOnly = HostToolRegistry.builder().allowedIdentities(Set.of(Identity.USER)).build();

            assertThatThrownBy(() -> userOnly.register("tool", returning(1)))
                    .isInstanceOf(HostToolIdentityNotAllowed.class).hasMessageContaining("'app'");
        }

        @Test
        void anEmptyDeclaredIdentityIsAlwaysAllowed() {
            HostToolRegistry noneAllowed = HostToolRegistry.builder().allowedIdentities(Set.of()).build();
            noneAllowed.register("tool", declared(declaration(SourceIntegrity.TRUSTED, null, null)));

            assertThat(noneAllowed.size()).isEqualTo(1);
        }

        @Test
        void theDeclarationIsTheOneCapturedAtRegistration() {
            HostToolDeclaration declaration = declaration(SourceIntegrity.TRUSTED, "mail", Identity.APP);
            registry.register("tool", declared(declaration));

            assertThat(registry.declarationFor("tool")).contains(declaration);
        }

        @Test
        void declarationForAnUnknownToolIsRefusedNotEmpty() {
            registry.register("known", returning(1));

            assertThatThrownBy(() -> registry.declarationFor("unknown"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'unknown'")
                    .hasMessageContaining("registered: known");
        }

        @Test
        void namesKeepRegistrationOrderAndResolveIsTheDoor() {
            HostTool b = returning("b");
            registry.register("b", b);
            registry.register("a", returning("a"));

            assertThat(registry.names()).containsExactly("b", "a");
            assertThat(registry.size()).isEqualTo(2);
            assertThat(registry.resolve("b")).containsSame(b);
            assertThat(registry.resolve("c")).isEmpty();
            assertThat(registry.resolve(null)).isEmpty();
        }
    }

    @Nested
    class Aggregate {

        private final HostToolRegistry registry = HostToolRegistry.builder()
                .allowedIdentities(Set.of(Identity.APP, Identity.USER)).build();

        @Test
        void anEmptyRegistryAddsUpToNothing() {
            HostToolAggregate aggregate = registry.aggregate();

            assertThat(aggregate.resultIntegrity()).isEmpty();
            assertThat(aggregate.outboundCaps()).isEmpty();
            assertThat(aggregate.identities()).isEmpty();
            assertThat(aggregate.requiresApproval()).isFalse();
            assertThat(aggregate.hasUndeclared()).isFalse();
        }

        @Test
        void aggregatingSeals() {
            registry.register("before", returning(1));
            registry.aggregate();

            assertThat(registry.sealed()).isTrue();
            assertThatThrownBy(() -> registry.register("after", returning(2)))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("'after'");
            assertThat(registry.names()).containsExactly("before");
        }

        @Test
        void aggregatingTwiceGivesTheSameFacts() {
            registry.register("tool", declared(declaration(SourceIntegrity.TRUSTED, "mail", Identity.APP)));

            assertThat(registry.aggregate()).isEqualTo(registry.aggregate());
        }

        @Test
        void resultIntegrityIsTheWeakestDeclaredSource() {
            registry.register("trusted", declared(declaration(SourceIntegrity.TRUSTED, null, null)));
            registry.register("untrusted", declared(declaration(SourceIntegrity.UNTRUSTED, null, null)));
            registry.register("no-source", declared(declaration(null, null, null)));

            assertThat(registry.aggregate().resultIntegrity()).contains(SourceIntegrity.UNTRUSTED);
        }

        @Test
        void trustedSourcesAloneAreTrusted() {
            registry.register("trusted", declared(declaration(SourceIntegrity.TRUSTED, null, null)));
            registry.register("no-source", declared(declaration(null, null, null)));

            assertThat(registry.aggregate().resultIntegrity()).contains(SourceIntegrity.TRUSTED);
        }

        @Test
        void noDeclaredSourceMeansNoIntegrity() {
            registry.register("no-source", declared(declaration(null, "mail", Identity.APP)));

            assertThat(registry.aggregate().resultIntegrity()).isEmpty();
        }

        @Test
        void anUndeclaredToolIsAnUntrustedAppSource() {
            registry.register("trusted", declared(declaration(SourceIntegrity.TRUSTED, null, null)));
            registry.register("undeclared", returning(1));

            HostToolAggregate aggregate = registry.aggregate();

            assertThat(aggregate.resultIntegrity()).contains(SourceIntegrity.UNTRUSTED);
            assertThat(aggregate.identities()).containsExactly(Identity.APP);
            assertThat(aggregate.hasUndeclared()).isTrue();
        }

        @Test
        void outboundCapsAreTheDeclaredSinksVerbatim() {
            registry.register("mail", declared(declaration(null, "Mail", null)));
            registry.register("mail-again", declared(declaration(null, "mail", null)));
            registry.register("same", declared(declaration(null, "Mail", null)));
            registry.register("silent", declared(declaration(null, null, null)));

            assertThat(registry.aggregate().outboundCaps()).containsExactlyInAnyOrder("Mail", "mail");
        }

        @Test
        void identitiesAreTheDeclaredOnesAndRequireApprovalWithUser() {
            registry.register("app", declared(declaration(null, null, Identity.APP)));
            registry.register("user", declared(declaration(null, null, Identity.USER)));
            registry.register("none", declared(declaration(null, null, null)));

            HostToolAggregate aggregate = registry.aggregate();

            assertThat(aggregate.identities()).containsExactlyInAnyOrder(Identity.APP, Identity.USER);
            assertThat(aggregate.requiresApproval()).isTrue();
            assertThat(aggregate.hasUndeclared()).isFalse();
        }

        @Test
        void appAloneNeedsNoApproval() {
            registry.register("app", declared(declaration(null, null, Identity.APP)));

            assertThat(registry.aggregate().requiresApproval()).isFalse();
        }

        @Test
        void aSpecTakesItsIdentitiesFromTheAggregate() {
            registry.register("user", declared(declaration(null, null, Identity.USER)));

            SandboxSpec spec = SandboxSpec.builder("execute_code").identities(registry.aggregate().identities()).build();

            assertThat(spec.identities()).containsExactly(Identity.USER);
        }

        @Test
        void theAggregateIsImmutable() {
            registry.register("mail", declared(declaration(null, "mail", Identity.APP)));
            HostToolAggregate aggregate = registry.aggregate();

            assertThatThrownBy(() -> aggregate.outboundCaps().add("x")).isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> aggregate.identities().add(Identity.USER))
                    .isInstanceOf(UnsupportedOperationException.class);
            assertThatCode(() -> new HostToolAggregate(Optional.empty(), Set.of(), Set.of(), false))
                    .doesNotThrowAnyException();
        }
    }

    @Nested
    class Notice {

        @Test
        void theHostAuthorityWarningIsLoggedOnce() {
            HostAuthorityNotice notice = new HostAuthorityNotice();
            RecordingLogger log = new RecordingLogger();

            assertThat(notice.emitOnce(log)).isTrue();
            assertThat(notice.emitOnce(log)).isFalse();

            assertThat(log.lines).hasSize(1);
            assertThat(log.lines.get(0).level()).isEqualTo(System.Logger.Level.WARNING);
            assertThat(log.text()).contains("host's full authority").contains("bypass the agent framework's");
        }

        @Test
        void registrationGivesTheProcessWideNotice() {
            HostToolRegistry.builder().build().register("tool", returning(1));

            assertThat(HostAuthorityNotice.PROCESS.emitOnce(new RecordingLogger())).isFalse();
        }
    }
}
