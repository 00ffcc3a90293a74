package org.sandbox4j.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The bounded pipe between a process's stdin writer and its feeder exec. */
class FeedPipeTest {

    @Test
    void aWriterWaitsWhileThePipeIsFullAndEveryByteArrivesInOrder() throws Exception {
        FeedPipe pipe = new FeedPipe();
        byte[] input = new byte[FeedPipe.CAPACITY * 3 + 17];
        for (int i = 0; i < input.length; i++) {
            input[i] = (byte) (i * 31);
        }
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            try {
                pipe.write(input, 0, input.length);
                pipe.end();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(200);
        assertThat(writer).as("more than the pipe holds waits for a reader").isNotDone();
        assertThat(pipe.available()).isEqualTo(FeedPipe.CAPACITY);
        assertThat(pipe.awaitDrained(Duration.ofMillis(10))).isFalse();
        byte[] read = pipe.readAllBytes();
        writer.get(5, TimeUnit.SECONDS);
        assertThat(read).isEqualTo(input);
        assertThat(pipe.awaitDrained(Duration.ofMillis(10))).as("the reader reached the end").isTrue();
    }

    @Test
    void anAbortEndsTheReaderAndRefusesTheWriter() throws Exception {
        FeedPipe pipe = new FeedPipe();
        pipe.write(new byte[10], 0, 10);
        pipe.abort();
        assertThat(pipe.read(new byte[10], 0, 10)).isEqualTo(-1);
        assertThatThrownBy(() -> pipe.write(new byte[1], 0, 1)).isInstanceOf(IOException.class);
        assertThat(pipe.awaitDrained(Duration.ofMillis(10))).isTrue();
    }

    @Test
    void aWriteAfterTheEndIsRefused() {
        FeedPipe pipe = new FeedPipe();
        pipe.end();
        assertThatThrownBy(() -> pipe.write(new byte[1], 0, 1)).isInstanceOf(IOException.class);
    }
}
