package org.sandbox4j.docker;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.StreamType;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.SandboxExecOutputLimitExceeded;
import org.sandbox4j.core.spi.ExecCapture;
import org.sandbox4j.core.spi.ExecRefusals;

/** The frames of one exec as the engine sends them: the wrapper's preamble, the command's output, the engine's words. */
class ExecOutputTest {

    private static final ExecOptions OPTIONS = ExecOptions.in("/", Duration.ofSeconds(5));

    private static Frame stdout(String text) {
        return new Frame(StreamType.STDOUT, text.getBytes(StandardCharsets.UTF_8));
    }

    private static Frame stderr(String text) {
        return new Frame(StreamType.STDERR, text.getBytes(StandardCharsets.UTF_8));
    }

    private static ExecOutput wrapped(ExecOptions options) {
        return new ExecOutput(new ExecCapture(options, "docker-test"), true);
    }

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Test
    void thePreambleSplitAcrossFramesIsTakenAndTheRestIsTheCommands() {
        ExecOutput output = wrapped(OPTIONS);
        output.onNext(stdout("sandbox4j-ex"));
        output.onNext(stdout("ec 4242 rea"));
        output.onNext(stdout("dy\nfirst line\n"));
        output.onNext(stderr("oops\n"));
        output.onNext(stdout("second"));
        output.finish();
        assertThat(output.setup()).contains(GuestScripts.Setup.READY);
        assertThat(output.group()).hasValue(4242);
        assertThat(text(output.stdout())).isEqualTo("first line\nsecond");
        assertThat(text(output.stderr())).isEqualTo("oops\n");
    }

    @Test
    void theWrappersRefusalsAreRead() {
        for (GuestScripts.Setup setup : GuestScripts.Setup.values()) {
            ExecOutput output = wrapped(OPTIONS);
            output.onNext(stdout(GuestScripts.PREAMBLE + "7 " + setup.word + "\n"));
            output.finish();
            assertThat(output.setup()).contains(setup);
            assertThat(output.stdout()).isEmpty();
        }
    }

    /** What the engine writes in the preamble's place (its runtime could not start the wrapper) is never output. */
    @Test
    void theEnginesWordsInThePreamblesPlaceAreNotTheCommandsOutput() {
        String oci = "OCI runtime exec failed: exec failed: unable to start container process: exec: \"sh\": "
                + "executable file not found in $PATH: unknown\r\n";
        ExecOutput output = wrapped(OPTIONS);
        output.onNext(new Frame(StreamType.RAW, oci.getBytes(StandardCharsets.UTF_8)));
        output.finish();
        assertThat(output.setup()).isEmpty();
        assertThat(output.stdout()).isEmpty();
        assertThat(output.engineText()).isEqualTo(oci.strip());
        assertThat(output.group()).isEmpty();

        for (String notOurs : new String[] {"sandbox4j-exec 12 fine\n", "sandbox4j-exec x ready\n", "short\n",
                "sandbox4j-exec 12"}) {
            ExecOutput other = wrapped(OPTIONS);
            other.onNext(stdout(notOurs));
            other.onNext(stdout("more"));
            other.finish();
            assertThat(other.setup()).as(notOurs).isEmpty();
            assertThat(other.stdout()).as(notOurs).isEmpty();
            assertThat(other.engineText()).as(notOurs).startsWith(notOurs.strip());
        }
    }

    @Test
    void whatTheEngineSaysIsBounded() {
        ExecOutput output = wrapped(OPTIONS);
        output.onNext(stdout("x".repeat(ExecOutput.MAX_ENGINE_TEXT_BYTES * 4)));
        output.finish();
        assertThat(output.engineText()).hasSize(ExecOutput.MAX_ENGINE_TEXT_BYTES);
    }

    @Test
    void anInternalCommandsStdoutIsAllItsOwn() {
        ExecOutput output = new ExecOutput(new ExecCapture(OPTIONS, "docker-test"), false);
        output.onNext(stdout(GuestScripts.PREAMBLE + "1 ready\nrest"));
        output.finish();
        assertThat(text(output.stdout())).isEqualTo(GuestScripts.PREAMBLE + "1 ready\nrest");
    }

    /** The one cap and the one listener rule are ExecCapture's: past the cap nothing is kept, and the wording is ExecRefusals'. */
    @Test
    void theSharedCapAndTheListenerAreExecCapturesAndThePreambleIsNotCounted() throws InterruptedException {
        ByteArrayOutputStream heard = new ByteArrayOutputStream();
        ExecOutput output = wrapped(OPTIONS.withOutputCap(8).withListener((stream, chunk) -> {
            heard.writeBytes(chunk);
            if (stream == ExecStream.STDERR) {
                throw new IllegalStateException("a listener that throws is logged, and the command goes on");
            }
        }));
        output.onNext(stdout(GuestScripts.PREAMBLE + "99 ready\n12345"));
        output.onNext(stderr("678"));
        assertThat(output.refusal("yes", "was killed")).isEmpty();
        output.onNext(stdout("9"));
        assertThat(output.awaitEndOrCap(0)).as("the cap calls for attention").isTrue();
        assertThat(output.refusal("yes", "was killed")).get().isInstanceOf(SandboxExecOutputLimitExceeded.class)
                .extracting(Throwable::getMessage)
                .isEqualTo(ExecRefusals.outputCapExceeded("yes", 8, "was killed").getMessage());
        assertThat(text(heard.toByteArray())).isEqualTo("12345678");
        assertThat(text(output.stdout()) + text(output.stderr())).isEqualTo("12345678");
    }

    /** A started process's frames: its preamble is told once its word is known, and before it stderr too is not the command's. */
    @Test
    void aProcesssFramesGoToItsSinkOnlyAfterThePreamble() throws InterruptedException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        boolean[] ended = {false};
        ExecOutput output = ExecOutput.process(new ExecOutput.Sink() {
            @Override
            public boolean offer(ExecStream stream, byte[] payload) {
                (stream == ExecStream.STDOUT ? out : err).writeBytes(payload);
                return true;
            }

            @Override
            public boolean stopped() {
                return false;
            }

            @Override
            public void ended() {
                ended[0] = true;
            }
        });
        output.onNext(stderr("the wrapper's own words\n"));
        output.onNext(stdout(GuestScripts.PREAMBLE + "31"));
        assertThat(output.awaitPreamble(0)).as("half a preamble is not one").isFalse();
        output.onNext(stdout(" ready\nhello"));
        assertThat(output.awaitPreamble(0)).isTrue();
        assertThat(output.setup()).contains(GuestScripts.Setup.READY);
        assertThat(output.group()).hasValue(31);
        output.onNext(stderr("oops"));
        output.onComplete();
        assertThat(text(out.toByteArray())).isEqualTo("hello");
        assertThat(text(err.toByteArray())).isEqualTo("oops");
        assertThat(output.engineText()).isEqualTo("the wrapper's own words");
        assertThat(ended[0]).isTrue();
    }

    @Test
    void aProcessWithoutAPreambleIsToldWhenItsStreamEnds() throws InterruptedException {
        ExecOutput output = ExecOutput.process(new ExecOutput.Sink() {
            @Override
            public boolean offer(ExecStream stream, byte[] payload) {
                throw new AssertionError("nothing is the command's");
            }

            @Override
            public boolean stopped() {
                return false;
            }
        });
        output.onNext(stdout("OCI runtime exec failed"));
        output.onComplete();
        assertThat(output.awaitPreamble(0)).isTrue();
        output.finish();
        assertThat(output.setup()).isEmpty();
        assertThat(output.engineText()).isEqualTo("OCI runtime exec failed");
    }
}
