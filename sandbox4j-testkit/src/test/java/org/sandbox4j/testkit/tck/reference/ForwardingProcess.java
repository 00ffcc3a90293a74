package org.sandbox4j.testkit.tck.reference;

import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** A {@link Process} that forwards every call to a launcher; subclasses change one behaviour. */
abstract class ForwardingProcess extends Process {

    private final Process launcher;

    ForwardingProcess(Process launcher) {
        this.launcher = launcher;
    }

    Process launcher() {
        return launcher;
    }

    @Override
    public OutputStream getOutputStream() {
        return launcher.getOutputStream();
    }

    @Override
    public InputStream getInputStream() {
        return launcher.getInputStream();
    }

    @Override
    public InputStream getErrorStream() {
        return launcher.getErrorStream();
    }

    @Override
    public int waitFor() throws InterruptedException {
        return launcher.waitFor();
    }

    @Override
    public boolean waitFor(long timeout, TimeUnit unit) throws InterruptedException {
        return launcher.waitFor(timeout, unit);
    }

    @Override
    public int exitValue() {
        return launcher.exitValue();
    }

    @Override
    public void destroy() {
        launcher.destroy();
    }

    @Override
    public Process destroyForcibly() {
        launcher.destroyForcibly();
        return this;
    }

    @Override
    public boolean isAlive() {
        return launcher.isAlive();
    }

    @Override
    public long pid() {
        return launcher.pid();
    }

    @Override
    public ProcessHandle toHandle() {
        return launcher.toHandle();
    }

    @Override
    public CompletableFuture<Process> onExit() {
        return launcher.onExit().thenApply(ended -> this);
    }
}
