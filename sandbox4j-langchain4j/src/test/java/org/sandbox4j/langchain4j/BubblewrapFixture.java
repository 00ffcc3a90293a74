package org.sandbox4j.langchain4j;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.SandboxListing;
import org.sandbox4j.core.SandboxQuery;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.local.BubblewrapBackend;

/** A real bubblewrap backend over a fresh state root, and execute_code offered on it. */
final class BubblewrapFixture implements AutoCloseable {

    static final String SCOPE = "lc4j-test";
    static final String AGENT = "agent";

    final Path stateRoot;
    final BubblewrapBackend backend;
    final SandboxRouter router;

    BubblewrapFixture() {
        try {
            this.stateRoot = Files.createTempDirectory("s4jl");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.backend = BubblewrapBackend.builder().stateRoot(stateRoot).build();
        this.router = SandboxRouter.builder().backend(backend).minIsolation(Isolation.CONTAINER).build();
    }

    /** A provider offering execute_code on this backend. */
    SandboxToolProvider provider() {
        return SandboxToolProvider.builder().scope(SCOPE)
                .tools(context -> List.of(CodeAct.builder(router, AGENT, context).build()))
                .build();
    }

    /** The sandboxes the backend's own record holds for one conversation of {@link #SCOPE}. */
    List<SandboxListing> sandboxesOf(String thread) {
        return backend.list(SandboxQuery.conversation(SCOPE, thread));
    }

    @Override
    public void close() {
        backend.dispose(SandboxQuery.scope(SCOPE));
        backend.close();
        try (Stream<Path> walk = Files.walk(stateRoot)) {
            walk.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException ignored) {
            // best effort: a temporary directory
        }
    }
}
