package org.sandbox4j.microvm;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.sandbox4j.core.spi.TreeRemoval;

/**
 * The backends a test builds over one state root: {@link #closeAll()} after each test ends their
 * guests, {@link #removeStateRoot()} after the last removes the root (a class that keeps one root
 * makes its snapshots once).
 */
final class TestBackends {

    private final Path stateRoot = TestGuest.stateRoot();
    private final List<MicroVmBackend> built = new ArrayList<>();

    Path stateRoot() {
        return stateRoot;
    }

    /** A backend on the test guest and this state root, as {@code settings} make it; closed by {@link #closeAll()}. */
    synchronized MicroVmBackend build(UnaryOperator<MicroVmBackend.Builder> settings) {
        MicroVmBackend backend = settings.apply(MicroVmBackend.builder().guest(TestGuest.image()).stateRoot(stateRoot))
                .build();
        built.add(backend);
        return backend;
    }

    synchronized void closeAll() {
        built.forEach(MicroVmBackend::close);
        built.clear();
    }

    void removeStateRoot() throws IOException {
        closeAll();
        TreeRemoval.remove(stateRoot, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
    }
}
