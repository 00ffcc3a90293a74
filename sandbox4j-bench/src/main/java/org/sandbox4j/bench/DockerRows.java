package org.sandbox4j.bench;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.docker.DockerBackend;

/**
 * The rows on {@link DockerBackend}: a warm exec against the Engine API's own three requests and
 * the {@code docker exec} CLI, and file transfers against {@code docker cp}. One runc container
 * for all but {@code runsc-write}, which has a gVisor container of its own.
 */
final class DockerRows implements AutoCloseable {

    static final String HOST_VARIABLE = "SANDBOX4J_DOCKER_HOST";
    static final String IMAGE_VARIABLE = "SANDBOX4J_TEST_IMAGE";
    private static final String RUNC = "runc";
    private static final String RUNSC = "runsc";
    private static final SandboxKey WARM = new SandboxKey(LocalRows.TENANT, "docker", "bench");
    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    private static final Command TRUE = Command.argv("/bin/true");
    private static final int WRITE_BYTES = 1024 * 1024;
    private static final int READ_BYTES = 16 * 1024 * 1024;
    private static final int RUNSC_WRITE_BYTES = 4 * 1024;

    static final Target EXEC_TARGET = Target.ratioAtMost(0.5);
    static final Target FILES_TARGET = Target.ratioAtMost(1.0);

    private final Settings settings;
    private final Path scratch;
    private final String host;
    private final String image;
    private final Optional<Path> cli;
    private final SandboxSpec spec = BenchSpec.SPEC;
    private DockerBackend runc;
    private Sandbox warm;
    private DockerBackend runsc;

    private DockerRows(Settings settings, Path scratch, String host, String image) {
        this.settings = settings;
        this.scratch = scratch;
        this.host = host;
        this.image = image;
        this.cli = HostFacts.onPath("docker");
    }

    /** Empty when {@link #HOST_VARIABLE} or {@link #IMAGE_VARIABLE} is unset: the rows are skipped. */
    static Optional<DockerRows> fromEnvironment(Settings settings, Path scratch) {
        String host = System.getenv(HOST_VARIABLE);
        String image = System.getenv(IMAGE_VARIABLE);
        if (host == null || host.isBlank() || image == null || image.isBlank()) {
            return Optional.empty();
        }
        return Optional.of(new DockerRows(settings, scratch, host, image));
    }

    static String whyMissing() {
        return "set " + HOST_VARIABLE + " and " + IMAGE_VARIABLE + " (scripts/test.sh provisions both)";
    }

    String engineFacts() {
        return "docker: " + host + ", image " + image + ", cli "
                + cli.map(path -> HostFacts.firstLineOf(List.of(path.toString(), "-H", host, "version", "--format",
                        "client {{.Client.Version}}, engine {{.Server.Version}}")).orElse(path.toString()))
                        .orElse("not found");
    }

    private Sandbox warm() {
        if (warm == null) {
            runc = open(RUNC);
            warm = runc.acquire(WARM, spec);
        }
        return warm;
    }

    private DockerBackend open(String runtime) {
        return DockerBackend.builder().host(host).image(image).runtime(runtime)
                .egressRoot(scratch.resolve("egress-" + runtime)).build();
    }

    /** Against the Engine API's three requests, and against {@code docker exec} where the CLI is here. */
    List<TableLine> exec() throws Exception {
        Sandbox sandbox = warm();
        ExecOptions options = ExecOptions.in("/", TIMEOUT);
        String container = runc.containerName(sandbox);
        List<TableLine> lines = new ArrayList<>();
        try (EngineApiExec api = new EngineApiExec(URI.create(host))) {
            List<Sample> contenders = new ArrayList<>(List.of(
                    Sample.timed(() -> LocalRows.succeeded(sandbox.exec(TRUE, options))),
                    Sample.timed(() -> api.run(container, List.of("/bin/true")))));
            cli.ifPresent(docker -> contenders.add(Sample.timed(() -> RawProcess.runExpectingSuccess(
                    new ProcessBuilder(docker.toString(), "-H", host, "exec", container, "/bin/true")))));
            double[] medians = Interleaved.medianMillis(settings.warmup(), settings.rounds(), contenders);
            lines.add(TableLine.millis("docker-exec: warm /bin/true vs Engine API (3 requests)", medians[0],
                    medians[1], EXEC_TARGET));
            lines.add(cli.isPresent()
                    ? TableLine.millis("docker-exec: warm /bin/true vs docker exec CLI", medians[0], medians[2],
                            Target.NONE)
                    : TableLine.skipped("docker-exec vs docker exec CLI", "no docker client on PATH"));
        }
        return lines;
    }

    TableLine write() throws Exception {
        return writeRow("docker-write: writeFile 1 MiB vs docker cp in", warm(), runc, WRITE_BYTES);
    }

    TableLine runscWrite() throws Exception {
        if (runsc == null) {
            runsc = open(RUNSC);
        }
        Sandbox sandbox = runsc.acquire(WARM, spec);
        return writeRow("runsc-write: writeFile 4 KiB vs docker cp in", sandbox, runsc, RUNSC_WRITE_BYTES);
    }

    private TableLine writeRow(String row, Sandbox sandbox, DockerBackend backend, int size) throws Exception {
        if (cli.isEmpty()) {
            return TableLine.skipped(row, "no docker client on PATH (the raw side is docker cp)");
        }
        byte[] payload = LocalRows.pattern(size);
        String workDir = spec.workDirIn(sandbox);
        Path hostFile = Files.write(scratch.resolve("write-" + size + ".bin"), payload);
        String target = backend.containerName(sandbox) + ":" + workDir + "/write-cp.bin";
        double[] medians = Interleaved.medianMillis(settings.warmup(), settings.rounds(), List.of(
                Sample.timed(() -> sandbox.writeFile("write.bin", payload, workDir)),
                Sample.timed(() -> RawProcess.runExpectingSuccess(
                        new ProcessBuilder(cli.get().toString(), "-H", host, "cp", hostFile.toString(), target)))));
        return TableLine.millis(row, medians[0], medians[1], FILES_TARGET);
    }

    TableLine read() throws Exception {
        String row = "docker-read: readFile 16 MiB vs docker cp out";
        if (cli.isEmpty()) {
            return TableLine.skipped(row, "no docker client on PATH (the raw side is docker cp)");
        }
        Sandbox sandbox = warm();
        String workDir = spec.workDirIn(sandbox);
        sandbox.writeFile("read.bin", LocalRows.pattern(READ_BYTES), workDir);
        String source = runc.containerName(sandbox) + ":" + workDir + "/read.bin";
        Path out = scratch.resolve("read-cp.bin");
        double[] medians = Interleaved.medianMillis(settings.warmup(), settings.rounds(), List.of(
                Sample.timed(() -> LocalRows.expectLength(sandbox.readFile("read.bin", workDir, READ_BYTES).length,
                        READ_BYTES)),
                Sample.timed(() -> RawProcess.runExpectingSuccess(
                        new ProcessBuilder(cli.get().toString(), "-H", host, "cp", source, out.toString())))));
        LocalRows.expectLength(Files.size(out), READ_BYTES);
        return TableLine.millis(row, medians[0], medians[1], FILES_TARGET);
    }

    /** Disposes of the containers of the run and closes the backends. */
    @Override
    public void close() {
        for (DockerBackend backend : new DockerBackend[] {runc, runsc}) {
            if (backend != null) {
                backend.disposeScope(WARM.scope(), WARM.threadId());
                backend.close();
            }
        }
    }
}
