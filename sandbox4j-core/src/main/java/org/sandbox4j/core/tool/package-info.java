/**
 * A kind as a framework-neutral tool: a {@link org.sandbox4j.core.tool.SandboxTool} (name,
 * model-facing description, JSON schema of its parameters, and a body) that an adapter turns into
 * a LangChain4j, Spring AI or MCP tool without knowing the kind. {@link
 * org.sandbox4j.core.tool.SandboxedTool} builds one: nothing when no backend is configured, a
 * construction error when the router cannot serve the kind's spec, and around every call the
 * conversation key from the host's context, the acquire ladder with fixed sentences for the model,
 * and reclaim of the call's guest path however the body ends.
 */
package org.sandbox4j.core.tool;
