package org.sandbox4j.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.HostCeilings;
import org.sandbox4j.core.ProcessOptions;
import org.sandbox4j.core.ProcessOutput;
import org.sandbox4j.core.ProcessSignal;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxProcessKilled;
import org.sandbox4j.core.SandboxProcessLimitExceeded;
import org.sandbox4j.core.SandboxTimeoutException;

/** The handle's rules, over a driver that records what the handle asks of it (the backends run the real thing). */
class GuestProcessTest {

    private static final Duration SHORT = Duration.ofMillis(200);
    private static final Duration WAIT = Duration.ofSeconds(5);

    /** Records the calls; stdin goes to a buffer, a kill reports the leader's death as a backend would. */
    private static final class RecordingDriver implements GuestProcess.Driver {
        final ByteArrayOutputStream stdin = new ByteArrayOutputStream();
        final List<ProcessSignal> signals = new ArrayList<>();
        final AtomicInteger kills = new AtomicInteger();
        final AtomicBoolean stdinClosed = new AtomicBoolean();
        final CountDownLatch stdinBlocked = new CountDownLatch(1);
        volatile boolean disposed;
        volatile boolean blockStdin;
        GuestProcess handle;

        @Override
        public synchronized void writeStdin(byte[] bytes, int off, int len) throws IOException {
            if (blockStdin) {
                stdinBlocked.countDown();
                try {
                    Thread.sleep(Long.MAX_VALUE);
                } catch (InterruptedException e) {
                    throw new IOException(e);
                }
            }
            stdin.write(bytes, off, len);
        }

        @Override
        public void closeStdin() {
            stdinClosed.set(true);
        }

        @Override
        public synchronized void signal(ProcessSignal signal) {
            signals.add(signal);
        }

        volatile long killTakes;
        volatile long killedAt;

        @Override
        public void killTree() {
            kills.incrementAndGet();
            try {
                Thread.sleep(killTakes);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            killedAt = System.nanoTime();
        }

        @Override
        public boolean sandboxDisposed() {
            return disposed;
        }

        synchronized String written() {
            return stdin.toString(StandardCharsets.UTF_8);
        }
    }

    private static GuestProcess started(RecordingDriver driver, ProcessOptions options) {
        GuestProcess handle = GuestProcess.reserve("test", UUID.randomUUID().toString(), "cat", options);
        handle.attach(driver);
        driver.handle = handle;
        return handle;
    }

    private static GuestProcess started(RecordingDriver driver) {
        return started(driver, ProcessOptions.in("/w", Duration.ofMinutes(1)));
    }

    @Test
    void whatIsWrittenReachesTheDriverInOrderAndClosingStdinFollowsIt() throws InterruptedException {
        RecordingDriver driver = new RecordingDriver();
        GuestProcess handle = started(driver);
        assertThat(handle.write("one ".getBytes(StandardCharsets.UTF_8), WAIT)).isEqualTo(4);
        assertThat(handle.write("two".getBytes(StandardCharsets.UTF_8), WAIT)).isEqualTo(3);
        handle.closeStdin();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!driver.stdinClosed.get() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(driver.written()).isEqualTo("one two");
        assertThat(driver.stdinClosed).isTrue();
        assertThatThrownBy(() -> handle.write(new byte[1], WAIT)).isInstanceOf(IllegalStateException.class);
        handle.close();
    }

    @Test
    void aGuestThatDoesNotReadStdinBlocksTheWriterForItsWaitOnly() throws InterruptedException {
        RecordingDriver driver = new RecordingDriver();
        driver.blockStdin = true;
        GuestProcess handle = started(driver);
        handle.write(new byte[1], WAIT);
        assertThat(driver.stdinBlocked.await(5, TimeUnit.SECONDS)).isTrue();
        long start = System.nanoTime();
        int accepted = handle.write(new byte[4 * GuestProcess.STDIN_WINDOW_BYTES], SHORT);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(WAIT);
        assertThat(accepted).isEqualTo(GuestProcess.STDIN_WINDOW_BYTES);
        handle.close();
    }

    @Test
    void outputIsHeldUpToTheWindowAndTheProducerWaitsForRoom() throws InterruptedException {
        RecordingDriver driver = new RecordingDriver();
        int window = ProcessOptions.MIN_WINDOW_BYTES;
        GuestProcess handle = started(driver, ProcessOptions.in("/w", Duration.ofMinutes(1)).withWindow(window));
        AtomicInteger delivered = new AtomicInteger();
        Thread producer = new Thread(() -> {
            byte[] chunk = new byte[1024];
            for (int i = 0; i < 3 * window / chunk.length; i++) {
                if (!handle.output(ExecStream.STDOUT, chunk, 0, chunk.length)) {
                    return;
                }
                delivered.addAndGet(chunk.length);
            }
            handle.outputEnded(ExecStream.STDOUT);
            handle.outputEnded(ExecStream.STDERR);
        });
        producer.start();
        Thread.sleep(300);
        assertThat(delivered.get()).as("held no more than the window").isLessThanOrEqualTo(window);
        int read = 0;
        ProcessOutput output;
        do {
            output = handle.read(WAIT);
            assertThat(output.stdout().length).isLessThanOrEqualTo(window);
            read += output.stdout().length;
        } while (!output.ended());
        producer.join(5000);
        assertThat(read).isEqualTo(3 * window);
        handle.close();
    }

    @Test
    void aLeaderThatExitsEndsTheProcessWithItsCodeAndLeftoversAreKilled() {
        RecordingDriver driver = new RecordingDriver();
        GuestProcess handle = started(driver);
        assertThat(handle.waitFor(SHORT)).isEmpty();
        assertThat(handle.isAlive()).isTrue();
        handle.exited(7);
        assertThat(handle.waitFor(WAIT)).hasValue(7);
        assertThat(handle.isAlive()).isFalse();
        assertThat(driver.kills).hasValue(1);
        handle.signal(ProcessSignal.TERMINATE);
        assertThat(driver.signals).as("nothing is signalled once it ended").isEmpty();
        handle.close();
    }

    @Test
    void signalsGoToTheDriverWhileItRuns() {
        RecordingDriver driver = new RecordingDriver();
        GuestProcess handle = started(driver);
        handle.signal(ProcessSignal.INTERRUPT);
        assertThat(driver.signals).containsExactly(ProcessSignal.INTERRUPT);
        handle.close();
    }

    @Test
    void killIsTheEndTheHandleReportsAndCloseRefusesLaterCalls() {
        RecordingDriver driver = new RecordingDriver();
        GuestProcess handle = started(driver);
        handle.kill();
        handle.exited(137);
        assertThatThrownBy(() -> handle.waitFor(WAIT)).isInstanceOf(SandboxProcessKilled.class);
        handle.close();
        handle.close();
        handle.kill();
        assertThat(driver.kills).hasValue(1);
        assertThat(handle.isAlive()).isFalse();
        assertThatThrownBy(() -> handle.read(WAIT)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> handle.waitFor(WAIT)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void theLifetimeKillsAndWaitForSaysSo() {
        RecordingDriver driver = new RecordingDriver();
        GuestProcess handle = started(driver, ProcessOptions.in("/w", Duration.ofMillis(100)));
        assertThatThrownBy(() -> handle.waitFor(WAIT)).isInstanceOf(SandboxTimeoutException.class)
                .hasMessageContaining("lifetime of 100 ms");
        assertThat(driver.kills).hasValue(1);
        handle.close();
    }

    @Test
    void aDeathBySignalWhileTheSandboxWentAwayIsADisposal() {
        RecordingDriver driver = new RecordingDriver();
        GuestProcess handle = started(driver);
        driver.disposed = true;
        handle.exited(137);
        assertThatThrownBy(() -> handle.waitFor(WAIT)).isInstanceOf(SandboxDisposed.class);
        assertThatThrownBy(() -> handle.write(new byte[1], WAIT)).isInstanceOf(SandboxDisposed.class);
        assertThatThrownBy(() -> handle.read(WAIT)).isInstanceOf(SandboxDisposed.class);
        handle.close();
    }

    @Test
    void anEndWithoutTheCommandsCodeIsADisposalOrALossNeverAnExitCode() {
        RecordingDriver disposedOf = new RecordingDriver();
        GuestProcess underDisposal = started(disposedOf);
        disposedOf.disposed = true;
        underDisposal.endedUnreported(new SandboxException("the launcher exited 1 before its command"));
        assertThatThrownBy(() -> underDisposal.waitFor(WAIT)).isInstanceOf(SandboxDisposed.class);
        assertThat(disposedOf.kills).as("what the command left is killed").hasValue(1);
        underDisposal.close();

        RecordingDriver failed = new RecordingDriver();
        GuestProcess lost = started(failed);
        lost.endedUnreported(new SandboxException("the launcher exited 1 before its command"));
        assertThatThrownBy(() -> lost.waitFor(WAIT)).isInstanceOf(SandboxException.class)
                .isNotInstanceOf(SandboxDisposed.class).hasMessageContaining("the launcher exited 1");
        lost.close();
    }

    /** A real launcher's exit: the backend says whether its code is the command's; when not, it is never returned. */
    @Test
    void aLaunchersOwnExitIsNeverReportedAsTheCommands() throws Exception {
        for (boolean disposed : new boolean[] {true, false}) {
            GuestProcess handle = GuestProcess.reserve("test", UUID.randomUUID().toString(), "sleep 300",
                    ProcessOptions.in("/w", Duration.ofMinutes(1)));
            Process launcher = new ProcessBuilder("sh", "-c", "exit 1").start();
            HostProcess.serve(handle, launcher, Process::destroyForcibly, (process, signal) -> { }, () -> disposed,
                    code -> Optional.of(new SandboxException("the launcher exited " + code + " and recorded no end "
                            + "of its command")));
            if (disposed) {
                assertThatThrownBy(() -> handle.waitFor(WAIT)).isInstanceOf(SandboxDisposed.class);
            } else {
                assertThatThrownBy(() -> handle.waitFor(WAIT)).isNotInstanceOf(SandboxDisposed.class)
                        .hasMessageContaining("the launcher exited 1 and recorded no end");
            }
            handle.close();
        }
        GuestProcess handle = GuestProcess.reserve("test", UUID.randomUUID().toString(), "exit 3",
                ProcessOptions.in("/w", Duration.ofMinutes(1)));
        HostProcess.serve(handle, new ProcessBuilder("sh", "-c", "exit 3").start(), Process::destroyForcibly,
                (process, signal) -> { }, () -> true, code -> Optional.empty());
        assertThat(handle.waitFor(WAIT)).as("a code the backend says is the command's, even under a disposal")
                .hasValue(3);
        handle.close();
    }

    @Test
    void aSandboxRunsAtMostTheLimitAndAnEndedOneFreesItsSlot() {
        String sandbox = UUID.randomUUID().toString();
        ProcessOptions options = ProcessOptions.in("/w", Duration.ofMinutes(1)).withWindow(ProcessOptions.MIN_WINDOW_BYTES);
        List<GuestProcess> running = new ArrayList<>();
        for (int i = 0; i < HostCeilings.MAX_PROCESSES_PER_SANDBOX; i++) {
            GuestProcess handle = GuestProcess.reserve("test", sandbox, "cat", options);
            handle.attach(new RecordingDriver());
            running.add(handle);
        }
        assertThatThrownBy(() -> GuestProcess.reserve("test", sandbox, "cat", options))
                .isInstanceOf(SandboxProcessLimitExceeded.class).hasMessageContaining("close a process");
        running.get(0).exited(0);
        GuestProcess freed = GuestProcess.reserve("test", sandbox, "cat", options);
        freed.abandon();
        running.forEach(GuestProcess::close);
    }

    @Test
    void listenerModeHandsOutputOverAndRefusesReads() {
        List<String> heard = new ArrayList<>();
        RecordingDriver driver = new RecordingDriver();
        GuestProcess handle = started(driver, ProcessOptions.in("/w", Duration.ofMinutes(1))
                .withListener((stream, chunk) -> heard.add(stream + ":" + new String(chunk, StandardCharsets.UTF_8))));
        handle.output(ExecStream.STDERR, "oops".getBytes(StandardCharsets.UTF_8), 0, 4);
        assertThat(heard).containsExactly("STDERR:oops");
        assertThatThrownBy(() -> handle.read(WAIT)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("listener");
        handle.close();
    }

    @Test
    void badOptionsAreRefusedByName() {
        assertThatThrownBy(() -> ProcessOptions.in("/w", Duration.ZERO)).hasMessageContaining("lifetime");
        assertThatThrownBy(() -> ProcessOptions.in("/w", Duration.ofDays(2))).hasMessageContaining("lifetime");
        assertThatThrownBy(() -> ProcessOptions.in("/w", Duration.ofSeconds(1)).withWindow(10))
                .hasMessageContaining("window");
        assertThatThrownBy(() -> ProcessOptions.in("/w", Duration.ofSeconds(1))
                .withEnvironment(java.util.Map.of("1BAD", "x"))).hasMessageContaining("not a valid environment");
        RecordingDriver driver = new RecordingDriver();
        GuestProcess handle = started(driver);
        assertThatThrownBy(() -> handle.read(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        handle.close();
    }

    @Test
    void aWaiterHearsOfTheKillOnlyOnceTheTreeIsGoneAndItsSlotIsFree() throws InterruptedException {
        RecordingDriver driver = new RecordingDriver();
        driver.killTakes = 500;
        String sandbox = UUID.randomUUID().toString();
        ProcessOptions options = ProcessOptions.in("/w", Duration.ofMinutes(1)).withWindow(ProcessOptions.MIN_WINDOW_BYTES);
        List<GuestProcess> full = new ArrayList<>();
        for (int i = 0; i < HostCeilings.MAX_PROCESSES_PER_SANDBOX; i++) {
            GuestProcess handle = GuestProcess.reserve("test", sandbox, "cat", options);
            handle.attach(i == 0 ? driver : new RecordingDriver());
            full.add(handle);
        }
        Thread killer = new Thread(full.get(0)::kill);
        killer.start();
        assertThatThrownBy(() -> full.get(0).waitFor(WAIT)).isInstanceOf(SandboxProcessKilled.class);
        long toldAt = System.nanoTime();
        assertThat(driver.killedAt).as("the kill was done when the waiter was told").isNotZero()
                .isLessThanOrEqualTo(toldAt);
        GuestProcess.reserve("test", sandbox, "cat", options).abandon();
        killer.join(5000);
        full.forEach(GuestProcess::close);
        assertThatThrownBy(() -> full.get(0).closeStdin()).isInstanceOf(IllegalStateException.class);
    }
}
