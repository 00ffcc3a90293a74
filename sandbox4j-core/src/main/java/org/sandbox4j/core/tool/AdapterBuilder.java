package org.sandbox4j.core.tool;

import java.lang.System.Logger;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.FileListing;

/**
 * The settings every adapter's builder takes from its host, and the one way they become the
 * adapter's tools: the scope of every key, the tool factory, which names of a file store the
 * tools may use, and the approval asked before each call of a tool that requires one. An adapter's
 * builder extends this with its framework's own settings, so
 * {@code builder().scope(..).tools(..).build()} reads, and checks, the same in every adapter.
 *
 * @param <B> the adapter's builder, which every setter returns
 * @param <A> the adapter's approval, in its framework's shape (mapped to a {@link CallApproval} per call)
 */
public abstract class AdapterBuilder<B extends AdapterBuilder<B, A>, A> {

    private final String framework;
    private String scope;
    private Function<? super CallerContext, ? extends Collection<Optional<SandboxTool>>> toolFactory;
    private FileListing fileListing = FileListing.ALL;
    private A approval;

    /** @param framework the framework's name as a host knows it, for refusals and the log */
    protected AdapterBuilder(String framework) {
        this.framework = Objects.requireNonNull(framework, "framework");
    }

    /** The scope (tenant, user, application) of every key. */
    public B scope(String scope) {
        this.scope = scope;
        return self();
    }

    /**
     * Builds the tools for the context the adapter supplies: its thread is the conversation of the
     * call in progress, as the adapter reads it from its framework (never from the arguments). An
     * empty {@code Optional} (a kind with no backend) is left out; without a factory the adapter
     * offers no tools.
     */
    public B tools(Function<? super CallerContext, ? extends Collection<Optional<SandboxTool>>> factory) {
        this.toolFactory = factory;
        return self();
    }

    /** Which names of a file store the tools may use (default: all of them). */
    public B fileListing(FileListing listing) {
        this.fileListing = Objects.requireNonNull(listing, "listing");
        return self();
    }

    /**
     * Asked before each call of a tool that requires approval (only those); without it such a tool
     * is refused at build. A {@code false}, or a throw, gives the model {@link FrameworkCalls#NOT_APPROVED}.
     */
    public B approval(A approval) {
        this.approval = approval;
        return self();
    }

    /** The scope given; a blank or missing one is refused when the tools are assembled. */
    protected final String givenScope() {
        return scope;
    }

    /** The factory given to {@link #tools}; null when none was. */
    protected final Function<? super CallerContext, ? extends Collection<Optional<SandboxTool>>> givenToolFactory() {
        return toolFactory;
    }

    /** The approval given, if any. */
    protected final Optional<A> givenApproval() {
        return Optional.ofNullable(approval);
    }

    /**
     * Calls the tool factory once, under {@link ToolSet}'s rules, and binds the calls to a fresh
     * conversation holder.
     *
     * @param howToApprove how a host gives an approval, for the refusal of a tool that needs one
     * @param logger       the adapter's log
     */
    protected final Assembled assemble(String howToApprove, Logger logger) {
        return assemble(rules(howToApprove), new CurrentConversation(), toolFactory, logger);
    }

    /**
     * As {@link #assemble(String, Logger)}, for an adapter that lists tools of its own or hands
     * the factory more than the context (MCP's session files).
     *
     * @param rules         {@link #rules}, with the adapter's reserved names added
     * @param conversations the holder the adapter's own parts read the conversation from too
     * @param factory       the factory to call, in place of the one given to {@link #tools}; none means no tools
     */
    protected final Assembled assemble(ToolSet rules, CurrentConversation conversations,
            Function<? super CallerContext, ? extends Collection<Optional<SandboxTool>>> factory, Logger logger) {
        List<SandboxTool> tools = rules.assemble(factory, conversations.callerContext(scope, fileListing));
        return new Assembled(tools, new FrameworkCalls(framework, conversations, logger));
    }

    /** {@link ToolSet}'s rules for this framework, knowing whether an approval was given. */
    protected final ToolSet rules(String howToApprove) {
        return ToolSet.forFramework(framework).approvalGiven(approval != null, howToApprove);
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /**
     * What {@link #assemble} built: the tools present, in the factory's order, and how each of
     * their calls runs.
     */
    public record Assembled(List<SandboxTool> tools, FrameworkCalls calls) {

        public Assembled {
            tools = List.copyOf(tools);
            Objects.requireNonNull(calls, "calls");
        }
    }
}
