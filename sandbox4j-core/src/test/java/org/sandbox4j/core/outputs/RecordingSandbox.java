package org.sandbox4j.core.outputs;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.UnaryOperator;

import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.fakes.ScriptedSandbox;

/**
 * Wraps a {@link ScriptedSandbox} and records every pull-surface call in order, so a test can
 * assert the phase order; every call reaches the wrapped sandbox. Hooks let a test make the
 * sandbox misreport sizes or misbehave on read.
 */
final class RecordingSandbox implements Sandbox {

    private final ScriptedSandbox delegate;
    private final List<String> calls = new ArrayList<>();
    private UnaryOperator<Optional<SandboxEntry>> statHook = UnaryOperator.identity();
    private ReadHook readHook;

    /** Replaces a read: gets the call, returns the bytes (or throws). */
    @FunctionalInterface
    interface ReadHook {
        byte[] read(String path, String workingDirectory, long maxBytes);
    }

    RecordingSandbox(ScriptedSandbox delegate) {
        this.delegate = delegate;
    }

    RecordingSandbox onStat(UnaryOperator<Optional<SandboxEntry>> hook) {
        this.statHook = hook;
        return this;
    }

    RecordingSandbox onRead(ReadHook hook) {
        this.readHook = hook;
        return this;
    }

    List<String> calls() {
        return List.copyOf(calls);
    }

    @Override
    public void writeFile(String path, byte[] content, String workingDirectory) {
        calls.add("write " + path);
        delegate.writeFile(path, content, workingDirectory);
    }

    @Override
    public ExecResult exec(Command command, ExecOptions options) {
        calls.add("exec " + command.toShellLine());
        return delegate.exec(command, options);
    }

    @Override
    public Optional<String> relocatedWorkDir() {
        return delegate.relocatedWorkDir();
    }

    @Override
    public Optional<SandboxEntry> stat(String path, String workingDirectory) {
        calls.add("stat " + path + " in " + workingDirectory);
        return statHook.apply(delegate.stat(path, workingDirectory));
    }

    @Override
    public byte[] readFile(String path, String workingDirectory, long maxBytes) {
        calls.add("read " + path + " in " + workingDirectory + " max " + maxBytes);
        return readHook == null ? delegate.readFile(path, workingDirectory, maxBytes)
                : readHook.read(path, workingDirectory, maxBytes);
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
