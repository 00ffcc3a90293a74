package org.sandbox4j.testkit.tck;

import java.util.concurrent.atomic.AtomicInteger;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.testkit.ForwardingSandbox;

/** Passes every call through to a real sandbox, counting the commands: "refused" means none was sent. */
final class ExecCountingSandbox extends ForwardingSandbox {

    private final AtomicInteger execs = new AtomicInteger();

    ExecCountingSandbox(Sandbox delegate) {
        super(delegate);
    }

    /** How many commands were passed through so far. */
    int execs() {
        return execs.get();
    }

    @Override
    public ExecResult exec(Command command, ExecOptions options) {
        execs.incrementAndGet();
        return super.exec(command, options);
    }
}
