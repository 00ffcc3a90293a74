package org.sandbox4j.sbx;

import org.sandbox4j.core.SandboxException;

/** The host's sbx settings would let a sandbox reach host credentials or tools (SSH agent forwarding on, an MCP server registered, or a sandbox given a forwarded agent socket), or more than its egress allowlist (organization governance, a stored secret, a global allow rule that overlaps a requested host, or rules changed after the sandbox opened). The message names the setting and the fix; the backend only reads these settings, never writes them. */
public final class SbxHostNotConfined extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SbxHostNotConfined(String message) {
        super(message);
    }
}
