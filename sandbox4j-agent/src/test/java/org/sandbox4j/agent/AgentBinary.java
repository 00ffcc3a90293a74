package org.sandbox4j.agent;

import java.nio.file.Path;

/** The agent the tests run: the one the build packaged into this module's classes ({@link AgentBinaries}). */
final class AgentBinary {

    private AgentBinary() {
    }

    static Path path() {
        return AgentBinaries.packaged().orElseThrow(() -> new IllegalStateException(AgentBinaries.missingReason()));
    }
}
