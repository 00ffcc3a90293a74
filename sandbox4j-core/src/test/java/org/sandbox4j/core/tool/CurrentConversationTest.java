package org.sandbox4j.core.tool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;
import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.FileListing;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxThreadContextMissing;

class CurrentConversationTest {

    private final CurrentConversation conversations = new CurrentConversation();

    @Test
    void theThreadIsSetForTheCallOnlyAndANestedCallRestoresTheOuterOne() {
        assertThat(conversations.thread()).isEmpty();

        String seen = conversations.callAs("outer", () -> {
            String inner = conversations.callAs("inner", () -> conversations.thread().orElseThrow());
            return inner + "," + conversations.thread().orElseThrow();
        });

        assertThat(seen).isEqualTo("inner,outer");
        assertThat(conversations.thread()).as("cleared after the call").isEmpty();
    }

    @Test
    void theThreadIsClearedWhenTheBodyThrows() {
        assertThatThrownBy(() -> conversations.callAs("c-1", () -> {
            throw new IllegalStateException("boom");
        })).hasMessage("boom");

        assertThat(conversations.thread()).isEmpty();
    }

    @Test
    void theCallerContextReadsTheThreadOnEveryCallAndRefusesOutsideOne() throws Exception {
        CallerContext context = conversations.callerContext("tenant", FileListing.ALL);

        assertThat(conversations.callAs("c-1", () -> context.key("agent")))
                .isEqualTo(new SandboxKey("tenant", "c-1", "agent"));
        assertThat(conversations.callAs("c-2", () -> context.key("agent")).threadId()).isEqualTo("c-2");
        assertThatThrownBy(() -> context.key("agent")).isInstanceOf(SandboxThreadContextMissing.class);
        assertThat(CompletableFuture.supplyAsync(() -> conversations.callAs("elsewhere",
                () -> context.key("agent").threadId())).get()).isEqualTo("elsewhere");
        assertThat(conversations.callAs("c-3", () -> CompletableFuture.supplyAsync(conversations::thread).join()))
                .as("another thread is not in this thread's call").isEmpty();
    }

    @Test
    void aContextNeedsAScopeThatNamesSomeone() {
        assertThatThrownBy(() -> conversations.callerContext(null, FileListing.ALL))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> conversations.callerContext(" ", FileListing.ALL))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name the user or application");
    }
}
