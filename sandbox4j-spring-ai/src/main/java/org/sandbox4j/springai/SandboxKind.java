package org.sandbox4j.springai;

import java.util.Optional;

import org.sandbox4j.core.tool.SandboxTool;

/**
 * How a Spring application names a kind for the auto-configuration: a bean of this type builds
 * the kind's tool from what the auto-configuration holds (the router, the per-call
 * {@link org.sandbox4j.core.CallerContext}, the configured egress allowlist and landing sink).
 * This module cannot depend on any kind, so the application, which can, supplies them:
 *
 * <pre>{@code
 * @Bean
 * SandboxKind executeCode() {
 *     return kind -> CodeAct.builder(kind.router(), kind.agentDir(), kind.caller())
 *             .egressAllow(kind.egressAllow())
 *             .build();
 * }
 * }</pre>
 *
 * Called once, when the tool callbacks are built; a kind the router cannot serve throws there,
 * and application start-up fails.
 */
@FunctionalInterface
public interface SandboxKind {

    /**
     * @return the tool, or empty when the router has no backend (attach nothing)
     * @throws org.sandbox4j.core.SandboxPolicyRefusal the router cannot serve the kind's spec
     */
    Optional<SandboxTool> create(SandboxKindContext context);
}
