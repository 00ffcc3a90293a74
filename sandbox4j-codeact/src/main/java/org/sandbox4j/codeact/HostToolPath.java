package org.sandbox4j.codeact;

import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.hosttools.HostToolRegistry;
import org.sandbox4j.core.tool.ToolCall;

/** Runs a program that may call host tools, over the file transport. (Wired to the supervisor next.) */
final class HostToolPath {

    /** Where model-named files live in a host-tool run, beside the transport's own directory. */
    static final String WORK_DIRECTORY = "work";

    private final HostToolRegistry registry;
    private final CodeActConfig config;

    HostToolPath(HostToolRegistry registry, CodeActConfig config) {
        this.registry = registry;
        this.config = config;
    }

    long shimBytes(Language language) {
        return 0;
    }

    ExecResult run(ToolCall call, Sandbox sandbox, String callDir, Language language, byte[] program) {
        throw new UnsupportedOperationException("host tools are not wired yet");
    }
}
