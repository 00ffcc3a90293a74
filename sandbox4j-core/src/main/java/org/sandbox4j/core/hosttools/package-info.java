/**
 * Host tools: host functions that code running inside a sandbox may call back into.
 *
 * <p>A {@link org.sandbox4j.core.hosttools.HostToolRegistry} holds the tools and their
 * {@link org.sandbox4j.core.hosttools.HostToolDeclaration declarations};
 * {@link org.sandbox4j.core.hosttools.HostToolRegistry#aggregate()} derives the policy facts a
 * sandbox spec needs and seals the registry; a {@link org.sandbox4j.core.hosttools.HostToolRun}
 * is the per-run ledger every dispatch goes through. Every gate is host-side: whatever the guest
 * sends is a request, checked and counted here before any tool body runs.
 */
package org.sandbox4j.core.hosttools;
