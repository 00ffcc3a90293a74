package org.sandbox4j.cli;

import org.sandbox4j.core.SandboxQuery;
import picocli.CommandLine.Command;

/** {@code sandbox4j purge}: disposes of what {@code ls} lists, and says how many. */
@Command(name = "purge", mixinStandardHelpOptions = true,
        description = "Dispose of the sandboxes 'ls' lists for a scope, or one --thread of it; prints how many were "
                + "removed.")
final class PurgeCommand extends InventoryCommand {

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
