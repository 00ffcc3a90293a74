package org.sandbox4j.microvm;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.spi.TreeRemoval;
import org.sandbox4j.egress.EgressProxy;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.ConformanceTestSuite;
import org.sandbox4j.testkit.tck.EgressFixture;
import org.sandbox4j.testkit.tck.LoopbackEgressServers;

/**
 * The whole TCK against real QEMU guests on this host (TCG here; KVM where the host has it). Every
 * backend instance shares one state root, as replicas of one deployment do.
 */
class MicroVmConformanceTest extends ConformanceTestSuite {

    private static final Path STATE_ROOT = TestGuest.stateRoot();
    private static final List<MicroVmBackend> MADE = new ArrayList<>();
    private static final int OVERLAY_MIB = 128;
    private static final LoopbackEgressServers SERVERS = LoopbackEgressServers.start();

    @Override
    protected ConformanceTarget target() {
        return new ConformanceTarget() {
            @Override
            public SandboxBackend newBackend() {
                MicroVmBackend backend = MicroVmBackend.builder().guest(TestGuest.image()).stateRoot(STATE_ROOT)
                        .overlayMib(OVERLAY_MIB)
                        .egressSettings(EgressProxy.Settings.defaults().withResolver(LoopbackEgressServers::resolve))
                        .build();
                synchronized (MADE) {
                    MADE.add(backend);
                }
                return backend;
            }

            /** The guest's curl, through the tunnel and the host's proxy, to the host's loopback servers. */
            @Override
            public Optional<EgressFixture> egressFixture() {
                return Optional.of(SERVERS.fixture(Optional.of("curl")));
            }

            /** Everything a guest writes lands in its root overlay, bounded by the backend's overlay size. */
            @Override
            public Optional<Long> storageBound() {
                return Optional.of(OVERLAY_MIB * 1024L * 1024L);
            }

            /** The guest's whole root is an overlay that lives as long as the guest: writes persist. */
            @Override
            public boolean persistentRoot() {
                return true;
            }
        };
    }

    @AfterAll
    static void endEveryGuest() throws IOException {
        synchronized (MADE) {
            MADE.forEach(MicroVmBackend::close);
        }
        SERVERS.close();
        TreeRemoval.remove(STATE_ROOT, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
    }
}
