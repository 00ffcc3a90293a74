package org.sandbox4j.testkit;

import java.time.Duration;
import java.util.Objects;

/**
 * One {@link InMemorySandbox#runCode} call as the sandbox received it.
 *
 * @param code    the program text exactly as passed
 * @param timeout the caller's bound
 */
public record RecordedProgram(String code, Duration timeout) {

    public RecordedProgram {
        Objects.requireNonNull(code, "code");
        Objects.requireNonNull(timeout, "timeout");
    }
}
