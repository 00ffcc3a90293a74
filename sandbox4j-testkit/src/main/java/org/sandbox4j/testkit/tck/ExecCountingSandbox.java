package org.sandbox4j.testkit.tck;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxEntry;

/** Passes every call through to a real sandbox, counting the commands: "refused" means none was sent. */
final class ExecCountingSandbox implements Sandbox {

    private final Sandbox delegate;
    private final AtomicInteger execs = new AtomicInteger();

    ExecCountingSandbox(Sandbox delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** How many commands were passed through so far. */
    int execs() {
        return execs.get();
    }

    @Override
    public void writeFile(String path, byte[] content, String workingDirectory) {
        delegate.writeFile(path, content, workingDirectory);
    }

    @Override
    public ExecResult exec(Command command, ExecOptions options) {
        execs.incrementAndGet();
        return delegate.exec(command, options);
    }

    @Override
    public ExecResult runCode(String code, Duration timeout) {
        return delegate.runCode(code, timeout);
    }

    @Override
    public Optional<SandboxEntry> stat(String path, String workingDirectory) {
        return delegate.stat(path, workingDirectory);
    }

    @Override
    public byte[] readFile(String path, String workingDirectory, long maxBytes) {
        return delegate.readFile(path, workingDirectory, maxBytes);
    }

    @Override
    public List<SandboxEntry> listDir(String path, String workingDirectory) {
        return delegate.listDir(path, workingDirectory);
    }

    @Override
    public void remove(String path, String workingDirectory, boolean recursive) {
        delegate.remove(path, workingDirectory, recursive);
    }
}
