package org.sandbox4j.bench;

import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.Identity;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.OsFamily;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.testkit.InMemoryBackend;

/**
 * The cost of the router's policy check ({@link SandboxRouter#ensureCanServe}), the path every
 * acquire runs. The target is under 5 µs per check.
 *
 * <p>Run: {@code ./mvnw -B -q -pl sandbox4j-bench -am package -DskipTests && java -jar
 * sandbox4j-bench/target/benchmarks.jar RouterPolicy}
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class RouterPolicyBenchmark {

    private SandboxRouter oneBackend;
    private SandboxRouter thirdBackendServes;
    private SandboxSpec spec;

    @Setup
    public void setUp() {
        InMemoryBackend serving = InMemoryBackend.builder().name("serving").isolation(Isolation.MICROVM)
                .capabilities(Capability.EXEC, Capability.FILES_IN, Capability.FILES_OUT)
                .egressModes(Egress.CLOSED, Egress.ALLOWLIST).osFamilies(OsFamily.POSIX).build();
        oneBackend = SandboxRouter.builder().backend(serving).deny(Capability.SNAPSHOT).deny(Identity.USER).build();
        InMemoryBackend closedOnly = InMemoryBackend.builder().name("closed-only").isolation(Isolation.MICROVM)
                .egressModes(Egress.CLOSED).build();
        InMemoryBackend noPull = InMemoryBackend.builder().name("no-pull").isolation(Isolation.VM)
                .egressModes(Egress.CLOSED, Egress.ALLOWLIST).build();
        thirdBackendServes = SandboxRouter.builder().backend(closedOnly).backend(noPull).backend(serving)
                .deny(Capability.SNAPSHOT).build();
        spec = SandboxSpec.builder("execute_code").alsoRequires(Capability.FILES_OUT).egress(Egress.ALLOWLIST)
                .egressAllow("pypi.org").requiresOsFamily(OsFamily.POSIX).minIsolation(Isolation.MICROVM).build();
    }

    /** One backend that passes every check. */
    @Benchmark
    public Optional<SandboxBackend> oneBackendAdmits() {
        return oneBackend.ensureCanServe(spec);
    }

    /** Three backends; the first two refuse (each refusal builds its exception), the third serves. */
    @Benchmark
    public Optional<SandboxBackend> thirdOfThreeAdmits() {
        return thirdBackendServes.ensureCanServe(spec);
    }
}
