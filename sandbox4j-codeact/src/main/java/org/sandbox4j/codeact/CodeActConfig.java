package org.sandbox4j.codeact;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import org.sandbox4j.core.FileStore;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.hosttools.HostToolAggregate;
import org.sandbox4j.core.hosttools.HostToolRegistry;
import org.sandbox4j.core.outputs.OutputSink;

/** One deployment of {@code execute_code}, validated by {@link CodeAct.Builder}. */
record CodeActConfig(
        SandboxSpec spec,
        List<Language> languages,
        Optional<FileStore> fileStore,
        OutputMode outputs,
        Optional<OutputSink> outputSink,
        Optional<HostToolRegistry> hostTools,
        Optional<HostToolAggregate> aggregate,
        Duration execTimeout,
        long maxOutputBytes) {

    CodeActConfig {
        languages = List.copyOf(languages);
    }

    Language defaultLanguage() {
        return languages.get(0);
    }

    boolean offersSeveralLanguages() {
        return languages.size() > 1;
    }

    /** Files every call writes besides the shared ones: the program, plus the shim with host tools. */
    int transportFiles() {
        return hostTools.isPresent() ? 2 : 1;
    }
}
