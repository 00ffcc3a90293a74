package org.sandbox4j.springai;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.outputs.OutputSink;

/**
 * What the auto-configuration hands a {@link SandboxKind}.
 *
 * @param router      the application's router (its backends, floor and denials)
 * @param caller      the per-call context: the scope from {@code sandbox4j.scope}, the thread from
 *                    the call's Spring AI tool context
 * @param agentDir    the agent directory of every key ({@code sandbox4j.agent-dir})
 * @param egressAllow the hosts a kind may let its guest reach ({@code sandbox4j.egress-allow});
 *                    empty means no network at all
 * @param outputSink  where a kind lands the files it hands back ({@code sandbox4j.landing-dir}),
 *                    or empty when none is configured
 */
public record SandboxKindContext(SandboxRouter router, CallerContext caller, String agentDir, List<String> egressAllow,
        Optional<OutputSink> outputSink) {

    public SandboxKindContext {
        Objects.requireNonNull(router, "router");
        Objects.requireNonNull(caller, "caller");
        Objects.requireNonNull(agentDir, "agentDir");
        egressAllow = List.copyOf(egressAllow);
        Objects.requireNonNull(outputSink, "outputSink");
    }
}
