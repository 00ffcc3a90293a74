/**
 * A kind as a framework-neutral tool: a {@link org.sandbox4j.core.tool.SandboxTool} (name,
 * model-facing description, JSON schema of its parameters, and a body) that an adapter turns into
 * a LangChain4j, Spring AI or MCP tool without knowing the kind. {@link
 * org.sandbox4j.core.tool.SandboxedTool} builds one: nothing when no backend is configured, a
 * construction error when the router cannot serve the kind's spec, and around every call the
 * conversation key from the host's context, the acquire ladder with fixed sentences for the model,
 * and reclaim of the call's guest path however the body ends. A kind's own builder extends {@link
 * org.sandbox4j.core.tool.KindBuilder} (the router, context, agent dir, output sink, reclaim-failure
 * handler and log every kind takes) and binds its body through it.
 *
 * <p>The adapters' common part is here too, so each adapter keeps only the mapping of its
 * framework's context and types: {@link org.sandbox4j.core.tool.AdapterBuilder} (the scope, tool
 * factory, file listing and approval every adapter's builder takes, and their assembly into
 * tools), {@link org.sandbox4j.core.tool.CurrentConversation} (the
 * conversation of the call in progress, and the {@code CallerContext} that reads it), {@link
 * org.sandbox4j.core.tool.ToolSet} (what a tool factory built, checked once at build: absent tools
 * left out, duplicate names and unapproved tools refused), {@link
 * org.sandbox4j.core.tool.FrameworkCalls} (each call run as its conversation, approval asked,
 * nothing thrown at the framework) and {@link org.sandbox4j.core.tool.CallApproval}.
 */
package org.sandbox4j.core.tool;
