package org.sandbox4j.testkit;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ProcessOptions;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxProcess;

/**
 * A {@link Sandbox} that forwards every call to another one, in the style of Guava's
 * {@code Forwarding*} classes. It is for test doubles that break or record one behaviour and pass
 * everything else through: subclass it and override only the method concerned. Overriding one
 * method changes only that behaviour; every other call, the optional file and code methods
 * included, still reaches {@link #delegate()} unchanged; an optional method the delegate does not
 * implement refuses with the delegate's own refusal.
 *
 * <p>Only the primary methods are forwarded. The conveniences {@code writeFile(String, String,
 * String)} and {@code exec(List, String, Duration)} are left to the interface, which implements
 * them through {@link #writeFile(String, byte[], String)} and {@link #exec(Command, ExecOptions)}:
 * an override of a primary method therefore also governs its convenience, with one path for each.
 */
public abstract class ForwardingSandbox implements Sandbox {

    private final Sandbox delegate;

    protected ForwardingSandbox(Sandbox delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** The sandbox every call not overridden goes to. */
    protected Sandbox delegate() {
        return delegate;
    }

    @Override
    public void writeFile(String path, byte[] content, String workingDirectory) {
        delegate.writeFile(path, content, workingDirectory);
    }

    @Override
    public ExecResult exec(Command command, ExecOptions options) {
        return delegate.exec(command, options);
    }

    @Override
    public SandboxProcess start(Command command, ProcessOptions options) {
        return delegate.start(command, options);
    }

    @Override
    public Optional<String> relocatedWorkDir() {
        return delegate.relocatedWorkDir();
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
    public List<SandboxEntry> listDir(String path, String workingDirectory, int depth) {
        return delegate.listDir(path, workingDirectory, depth);
    }

    @Override
    public void mkdir(String path, String workingDirectory) {
        delegate.mkdir(path, workingDirectory);
    }

    @Override
    public void remove(String path, String workingDirectory, boolean recursive) {
        delegate.remove(path, workingDirectory, recursive);
    }
}
