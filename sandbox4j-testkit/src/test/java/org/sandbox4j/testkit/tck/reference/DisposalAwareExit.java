package org.sandbox4j.testkit.tck.reference;

import java.util.function.BooleanSupplier;

/**
 * A launcher whose failed exit, once its sandbox was disposed of, is a death by SIGKILL: unshare(1)
 * 2.38 reports its init killed from outside (the disposal's kill of the process group) as exit 1,
 * which is the launcher's word, never the command's exit code.
 */
final class DisposalAwareExit extends ForwardingProcess {

    /** 128 + SIGKILL, as a death by that signal is reported. */
    static final int KILLED_EXIT = 128 + 9;

    private final BooleanSupplier disposed;

    DisposalAwareExit(Process launcher, BooleanSupplier disposed) {
        super(launcher);
        this.disposed = disposed;
    }

    @Override
    public int waitFor() throws InterruptedException {
        return reported(super.waitFor());
    }

    @Override
    public int exitValue() {
        return reported(super.exitValue());
    }

    private int reported(int code) {
        return code != 0 && code < KILLED_EXIT && disposed.getAsBoolean() ? KILLED_EXIT : code;
    }
}
