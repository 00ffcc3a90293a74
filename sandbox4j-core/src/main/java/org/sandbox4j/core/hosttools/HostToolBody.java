package org.sandbox4j.core.hosttools;

import java.util.Map;

/** The host code a {@link HostTool} runs when guest code dispatches it. */
@FunctionalInterface
public interface HostToolBody {

    /**
     * Runs the tool once.
     *
     * @param arguments the bound keyword arguments: every required parameter is present, no
     *                  undeclared one is; an optional parameter the guest did not send is absent (use
     *                  {@link Map#getOrDefault}). Values are as decoded from JSON and may be
     *                  {@code null}. The map is unmodifiable.
     * @return the result, carried back to the guest as strict JSON: {@code null}, {@link Boolean},
     *         finite numbers, {@link String}, {@link Character}, enums, {@link Map}s with string keys,
     *         collections, arrays (not {@code byte[]}), {@link java.util.Optional} and records,
     *         nested at most {@value StrictJson#MAX_NESTING_DEPTH} deep
     * @throws Exception any failure; the guest sees a fixed sentence and the detail goes to the
     *                   host's log. An {@link InterruptedException} (or any failure while the thread
     *                   is interrupted) is cancellation and propagates.
     */
    Object call(Map<String, Object> arguments) throws Exception;
}
