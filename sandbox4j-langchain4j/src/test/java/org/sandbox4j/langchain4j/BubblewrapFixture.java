package org.sandbox4j.langchain4j;

import java.util.List;

import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.core.SandboxListing;
import org.sandbox4j.core.SandboxQuery;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.local.BubblewrapBackend;
import org.sandbox4j.testkit.TemporaryBackend;

/** A real bubblewrap backend over a fresh state root (testkit's {@link TemporaryBackend}), and execute_code offered on it. */
final class BubblewrapFixture implements AutoCloseable {

    static final String SCOPE = "lc4j-test";
    static final String AGENT = "agent";

    private final TemporaryBackend<BubblewrapBackend> bubblewrap = TemporaryBackend.create("s4jl",
            root -> BubblewrapBackend.builder().stateRoot(root).build());
    final SandboxRouter router = bubblewrap.router();

    /** A provider offering execute_code on this backend. */
    SandboxToolProvider provider() {
        return SandboxToolProvider.builder().scope(SCOPE)
                .tools(context -> List.of(CodeAct.builder(router, AGENT, context).build()))
                .build();
    }

    /** The sandboxes the backend's own record holds for one conversation of {@link #SCOPE}. */
    List<SandboxListing> sandboxesOf(String thread) {
        return bubblewrap.backend().list(SandboxQuery.conversation(SCOPE, thread));
    }

    @Override
    public void close() {
        bubblewrap.backend().dispose(SandboxQuery.scope(SCOPE));
        bubblewrap.close();
    }
}
