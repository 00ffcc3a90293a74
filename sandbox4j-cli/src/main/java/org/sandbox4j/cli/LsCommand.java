package org.sandbox4j.cli;

import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

import org.sandbox4j.core.spi.Json;
import org.sandbox4j.core.SandboxListing;
import org.sandbox4j.core.SandboxQuery;

/** {@code sandbox4j ls}: the sandboxes the backends' own records hold, for a scope or one thread. */
final class LsCommand extends InventoryCommand {

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss")
            .withZone(ZoneId.systemDefault());

    boolean json;

    LsCommand(Sandbox4jCommand root) {
        super(root, Subcommand.LS.commandName(), "List the sandboxes the backends' own records hold (not this "
                + "process's memory) for a scope, or one --thread of it.");
        spec.addOption(CliSpec.flag(new String[] {"--json"}, () -> json, value -> json = value,
                "Answer as a JSON array.").build());
    }

    @Override
    public Integer call() {
        SandboxQuery query = query();
        List<SandboxListing> listings = askEachInventory(inventory -> inventory.list(query)).stream()
                .flatMap(List::stream).toList();
        if (json) {
            System.out.println(listings.stream().map(LsCommand::json).collect(Collectors.joining(",", "[", "]")));
        } else if (listings.isEmpty()) {
            root.console().warn("no sandboxes for " + described(query));
        } else {
            String format = "%-11s %-36s %-9s %-14s %-19s %s%n";
            System.out.printf(format, "BACKEND", "SANDBOX", "KIND", "THREAD", "CREATED", "LAST USED");
            for (SandboxListing listing : listings) {
                System.out.printf(format, listing.backend(), listing.id(), listing.kind().orElse("-"), thread(listing),
                        time(listing.createdAt()), time(listing.lastUsed()));
            }
        }
        System.out.flush();
        return ExitCodes.OK;
    }

    /** The thread as given, else its digest: records keep labels only as digests. */
    private static String thread(SandboxListing listing) {
        return listing.threadId().orElse("#" + listing.threadDigest());
    }

    private static String time(Optional<Instant> instant) {
        return instant.map(at -> TIME.format(at.truncatedTo(ChronoUnit.SECONDS))).orElse("-");
    }

    private static String json(SandboxListing listing) {
        return "{\"backend\":" + Json.quote(listing.backend())
                + ",\"id\":" + Json.quote(listing.id())
                + ",\"kind\":" + listing.kind().map(Json::quote).orElse("null")
                + ",\"scope\":" + Json.quote(listing.scope())
                + ",\"thread\":" + listing.threadId().map(Json::quote).orElse("null")
                + ",\"threadDigest\":" + Json.quote(listing.threadDigest())
                + ",\"createdAt\":" + listing.createdAt().map(at -> Json.quote(at.toString())).orElse("null")
                + ",\"lastUsed\":" + listing.lastUsed().map(at -> Json.quote(at.toString())).orElse("null") + "}";
    }
}
