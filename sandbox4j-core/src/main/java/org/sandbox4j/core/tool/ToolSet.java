package org.sandbox4j.core.tool;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.spi.GuestText;

/**
 * How an adapter turns what its host's tool factory built into the tools it offers: the factory
 * is called once; an absent tool (a kind with no backend) is left out; two tools with one name are
 * refused, the adapter's own reserved names included; and a tool that
 * {@linkplain SandboxTool#requiresApproval() requires approval} is refused unless the host gave an
 * approval. All at build, so the host sees a misconfiguration at start-up, never the model at its
 * first call. Immutable; each setter returns a new rule set.
 *
 * <pre>{@code
 * List<SandboxTool> tools = ToolSet.forFramework("Spring AI")
 *         .approvalGiven(approval != null, "give the provider an approval(...) that asks")
 *         .assemble(factory, conversations.callerContext(scope, listing));
 * }</pre>
 */
public final class ToolSet {

    private final String framework;
    private final List<String> reserved;
    private final String reservedFor;
    private final boolean approvalGiven;
    private final String howToApprove;

    private ToolSet(String framework, List<String> reserved, String reservedFor, boolean approvalGiven,
            String howToApprove) {
        this.framework = framework;
        this.reserved = reserved;
        this.reservedFor = reservedFor;
        this.approvalGiven = approvalGiven;
        this.howToApprove = howToApprove;
    }

    /**
     * The rules for an adapter to {@code framework} (its name as a host knows it, used in the
     * refusals): no reserved names, and no approval given.
     */
    public static ToolSet forFramework(String framework) {
        return new ToolSet(Objects.requireNonNull(framework, "framework"), List.of(), "", false,
                "give the adapter an approval that asks");
    }

    /** The adapter lists tools of its own named {@code names} (what {@code owner} names them, for the refusal). */
    public ToolSet reserving(List<String> names, String owner) {
        return new ToolSet(framework, List.copyOf(names), Objects.requireNonNull(owner, "owner"), approvalGiven,
                howToApprove);
    }

    /**
     * Whether the host gave an approval, and, for the refusal when it did not, how it gives one
     * (e.g. {@code "give SandboxToolProvider.builder().approval(...) that asks"}).
     */
    public ToolSet approvalGiven(boolean given, String howToGiveOne) {
        return new ToolSet(framework, reserved, reservedFor, given, Objects.requireNonNull(howToGiveOne,
                "howToGiveOne"));
    }

    /**
     * Calls {@code factory} once with {@code context} and keeps what it built, in its order.
     *
     * @param factory the host's tool factory; none means no tools
     * @return the tools present, in the factory's order; empty when there are none
     * @throws NullPointerException     the factory returned null
     * @throws IllegalArgumentException two tools with one name (a reserved one included), or a tool
     *                                  that requires approval without an approval given
     */
    public List<SandboxTool> assemble(Function<? super CallerContext, ? extends Collection<Optional<SandboxTool>>>
            factory, CallerContext context) {
        if (factory == null) {
            return List.of();
        }
        Collection<Optional<SandboxTool>> built = Objects.requireNonNull(factory.apply(context),
                "the tool factory returned null; return an empty list for no tools");
        Set<String> names = new HashSet<>(reserved);
        List<SandboxTool> tools = new ArrayList<>();
        for (Optional<SandboxTool> candidate : built) {
            if (candidate == null || candidate.isEmpty()) {
                continue;
            }
            SandboxTool tool = candidate.get();
            if (!names.add(tool.name())) {
                throw new IllegalArgumentException("two tools are named " + GuestText.quote(tool.name()) + "; "
                        + framework + " tells tools apart by name, so each must be unique"
                        + (reserved.contains(tool.name()) ? " (" + reservedFor + " are " + reserved + ")" : ""));
            }
            if (tool.requiresApproval() && !approvalGiven) {
                throw new IllegalArgumentException("the tool " + GuestText.quote(tool.name()) + " requires a person's "
                        + "approval of each call (it acts with the user's identity outside the sandbox), and "
                        + framework + " has no step that stops a call for a person; " + howToApprove
                        + ", or leave the tool out");
            }
            tools.add(tool);
        }
        return List.copyOf(tools);
    }
}
