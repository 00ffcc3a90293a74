package org.sandbox4j.springai;

import org.sandbox4j.core.tool.CallApproval;

/**
 * Asks a person whether one call of a tool that {@linkplain SandboxToolCallback#requiresApproval()
 * requires approval} may run: core's {@link CallApproval}, where the thread is the call's
 * conversation id. Spring AI has no approval step of its own, so a provider refuses to offer such
 * a tool unless the host gives one of these (a builder argument, or a bean under the
 * auto-configuration). Called on the thread of the tool call; may block while it asks. A
 * {@code false}, or a throw, gives the model {@link SandboxToolCallback#NOT_APPROVED}.
 */
@FunctionalInterface
public interface ToolCallApproval extends CallApproval {
}
