package org.sandbox4j.cli;

import org.sandbox4j.core.SandboxQuery;

/** {@code sandbox4j purge}: disposes of what {@code ls} lists, and says how many. */
final class PurgeCommand extends InventoryCommand {

    PurgeCommand(Sandbox4jCommand root) {
        super(root, Subcommand.PURGE.commandName(), "Dispose of the sandboxes 'ls' lists for a scope, or one --thread "
                + "of it; prints how many were removed.");
    }

    @Override
    public Integer call() {
        SandboxQuery query = query();
        int removed = askEachInventory(inventory -> inventory.dispose(query)).stream()
                .mapToInt(Integer::intValue).sum();
        System.out.println("removed " + removed + " sandbox" + (removed == 1 ? "" : "es") + " of "
                + described(query));
        System.out.flush();
        return ExitCodes.OK;
    }
}
