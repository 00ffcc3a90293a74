package org.sandbox4j.codeact;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.FileListing;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxQuery;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.local.BubblewrapBackend;

/**
 * A real bubblewrap backend over a short, fresh state root, a router that admits it, and a caller
 * context whose thread the test sets per call.
 */
final class CodeActFixture implements AutoCloseable {

    static final String SCOPE = "codeact-test";
    static final String AGENT = "agent";

    final Path stateRoot;
    final BubblewrapBackend backend;
    final SandboxRouter router;
    final AtomicReference<String> thread = new AtomicReference<>(newThread());
    final CallerContext context = CallerContext.of(() -> SCOPE, thread::get, FileListing.ALL);

    CodeActFixture() {
        try {
            stateRoot = Files.createTempDirectory("s4jk");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        backend = BubblewrapBackend.builder().stateRoot(stateRoot).build();
        router = SandboxRouter.builder().backend(backend).minIsolation(Isolation.CONTAINER).build();
    }

    static String newThread() {
        return "t-" + UUID.randomUUID();
    }

    SandboxKey key() {
        return new SandboxKey(SCOPE, thread.get(), AGENT);
    }

    static Map<String, Object> code(String program) {
        return Map.of("code", program);
    }

    static Map<String, Object> args(Object... keyValues) {
        java.util.LinkedHashMap<String, Object> map = new java.util.LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            map.put((String) keyValues[i], keyValues[i + 1]);
        }
        return map;
    }

    static List<Path> filesUnder(Path root) {
        try (Stream<Path> walk = Files.walk(root)) {
            return walk.filter(Files::isRegularFile).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        // Every conversation a test opened, not only the current one.
        backend.dispose(SandboxQuery.scope(SCOPE));
        backend.close();
        try (Stream<Path> walk = Files.walk(stateRoot)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // best effort: a temp directory
        }
    }
}
