package org.sandbox4j.cli;

import java.util.concurrent.Callable;

import org.sandbox4j.core.SandboxQuery;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.ParentCommand;

/** {@code sandbox4j purge}: disposes of what {@code ls} lists, and says how many. */
@Command(name = "purge", mixinStandardHelpOptions = true,
        description = "Dispose of the sandboxes 'ls' lists for a scope, or one --thread of it; prints how many were "
                + "removed.")
final class PurgeCommand implements Callable<Integer> {

    @ParentCommand
    Sandbox4jCommand root;

    @Mixin
    ConversationOptions conversation = new ConversationOptions();

    @Mixin
    DockerOptions docker = new DockerOptions();

    @Override
    public Integer call() {
        SandboxQuery query = Inventories.query(root, conversation);
        int removed = 0;
        for (Inventories.Opened opened : Inventories.open(root, docker)) {
            try (opened) {
                removed += opened.inventory().dispose(query);
            }
        }
        System.out.println("removed " + removed + " sandbox" + (removed == 1 ? "" : "es") + " of scope '"
                + query.scope() + "'" + query.threadId().map(thread -> ", thread '" + thread + "'").orElse(""));
        System.out.flush();
        return ExitCodes.OK;
    }
}
