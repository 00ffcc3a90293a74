package org.sandbox4j.core.tool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.sandbox4j.core.tool.KeyTools.AGENT;
import static org.sandbox4j.core.tool.KeyTools.whoami;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.FileListing;
import org.sandbox4j.core.SandboxInterrupted;

class FrameworkCallsTest {

    private static final String LOGGER = "org.sandbox4j.test.FrameworkCallsTest";

    private final CurrentConversation conversations = new CurrentConversation();
    private final FrameworkCalls calls = new FrameworkCalls("Acme", conversations, System.getLogger(LOGGER));
    private final SandboxTool plain = whoami("plain", conversations.callerContext("tenant", FileListing.ALL), false)
            .orElseThrow();
    private final SandboxTool gated = whoami("gated", conversations.callerContext("tenant", FileListing.ALL), true)
            .orElseThrow();
    private final List<String> logged = new ArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            logged.add(record.getMessage());
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    FrameworkCallsTest() {
        Logger.getLogger(LOGGER).addHandler(capture);
    }

    @AfterEach
    void release() {
        Logger.getLogger(LOGGER).removeHandler(capture);
        Thread.interrupted();
    }

    @Test
    void aCallRunsAsTheThreadTheAdapterReadAndNoLongerThan() {
        assertThat(calls.call(plain, "c-1", "{}", Optional.empty())).isEqualTo(ToolResult.ok("tenant|c-1|" + AGENT));
        assertThat(calls.call(plain, "c-2", "{\"threadId\":\"c-1\"}", Optional.empty()).text())
                .isEqualTo("tenant|c-2|" + AGENT);
        assertThat(conversations.thread()).isEmpty();
    }

    @Test
    void theApprovalIsAskedOnlyForAToolThatRequiresItAndANoRunsNothing() {
        List<String> asked = new ArrayList<>();
        boolean[] answer = {false};
        Optional<CallApproval> approval = Optional.of((tool, arguments, thread) -> {
            asked.add(tool + " " + arguments + " " + thread);
            return answer[0];
        });

        assertThat(calls.call(gated, "c-1", "{}", approval)).isEqualTo(ToolResult.error(FrameworkCalls.NOT_APPROVED));
        answer[0] = true;
        assertThat(calls.call(gated, "c-1", "{}", approval).text()).isEqualTo("tenant|c-1|" + AGENT);
        assertThat(calls.call(plain, "c-2", "{}", approval).text()).isEqualTo("tenant|c-2|" + AGENT);
        assertThat(asked).containsExactly("gated {} c-1", "gated {} c-1");
    }

    @Test
    void aMissingOrFailingApprovalIsANo() {
        Optional<CallApproval> down = Optional.of((tool, arguments, thread) -> {
            throw new IllegalStateException("the approval service is down");
        });

        assertThat(calls.call(gated, "c-1", "{}", Optional.empty())).isEqualTo(ToolResult.error(FrameworkCalls.NOT_APPROVED));
        assertThat(calls.call(gated, "c-1", "{}", down)).isEqualTo(ToolResult.error(FrameworkCalls.NOT_APPROVED));
        assertThat(logged).anyMatch(message -> message.contains("the approval service is down"));
    }

    @Test
    void aCancelledCallIsAnsweredAndKeepsTheInterrupt() {
        ToolResult result = calls.call("slow", "c-1", () -> {
            throw new SandboxInterrupted("cancelled while waiting");
        });

        assertThat(result).isEqualTo(ToolResult.error(FrameworkCalls.CANCELLED));
        assertThat(Thread.currentThread().isInterrupted()).isTrue();
    }

    @Test
    void aBodyThatThrowsGivesTheFixedSentenceAndTheDetailGoesToTheLog() {
        ToolResult result = calls.call("broken", "c-1", () -> {
            throw new IllegalStateException("secret at 10.1.2.3");
        });

        assertThat(result).isEqualTo(ToolResult.error(FrameworkCalls.FAILED));
        assertThat(logged).anyMatch(message -> message.contains("broken: the Acme call failed")
                && message.contains("10.1.2.3"));
        assertThat(conversations.thread()).isEmpty();
    }

    @Test
    void theNoConversationSentenceIsTheOneAToolGivesWhenCalledOutsideAConversation() {
        assertThat(plain.callJson("{}")).isEqualTo(ToolResult.error(FrameworkCalls.noConversation("plain")));
    }
}
