package org.sandbox4j.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.HostCeilings;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.egress.EgressPolicy;
import picocli.CommandLine.Model.CommandSpec;

/** Where {@code run} and {@code exec} run: backend, floor, egress, timeout, conversation. */
final class SandboxOptions {

    static final String MAX_OUTPUT_FLAG = "--max-output";

    String backend;
    String floor;
    List<String> allow;
    String noNetwork;
    String timeout;
    String memory;
    Integer processes;
    String maxOutput;
    final ConversationOptions conversation = new ConversationOptions();
    final DockerOptions docker = new DockerOptions();

    /** Declares the options on {@code spec}, in the order the help lists them, writing this object's fields. */
    void addTo(CommandSpec spec) {
        spec.addOption(CliSpec.option("--backend", "NAME", String.class, () -> backend, value -> backend = value,
                "microvm (the default where QEMU and its guest are here), bubblewrap (the default otherwise), sbx "
                        + "or docker (env SANDBOX4J_BACKEND).").build());
        spec.addOption(CliSpec.option("--floor", "RUNG", String.class, () -> floor, value -> floor = value,
                "The weakest isolation allowed: none, runtime, os_process, container, hardened_container, microvm "
                        + "(default, as the library's router) or vm (env SANDBOX4J_FLOOR).").build());
        spec.addOption(CliSpec.<List<String>>option("--allow", "RULE", List.class, () -> allow,
                value -> allow = value, "A host the program may reach through the egress proxy: host, *.suffix or "
                        + "an IP literal, each with an optional :port (repeatable; env SANDBOX4J_ALLOW). Without any, "
                        + "no network.").auxiliaryTypes(String.class).build());
        spec.addOption(CliSpec.option("--no-network", "MODE", String.class, () -> noNetwork,
                value -> noNetwork = value, "What no network means without --allow: closed (default: no device "
                        + "beyond loopback) or deny-all (every destination refused by a filter outside the guest, as "
                        + "sbx delivers; env SANDBOX4J_NO_NETWORK).").build());
        spec.addOption(CliSpec.option("--timeout", "DURATION", String.class, () -> timeout, value -> timeout = value,
                "How long the program may run: 90, 90s, 2m, 1h (env SANDBOX4J_TIMEOUT; default 120s).").build());
        spec.addOption(CliSpec.option(new String[] {"-m", GuestLimits.MEMORY_FLAG}, "SIZE", String.class,
                () -> memory, value -> memory = value, "The most memory the sandbox's processes may hold together: "
                        + "512m, 2g (default: the backend's, 1g for bubblewrap and docker, 256m for microvm).")
                .build());
        spec.addOption(CliSpec.option(GuestLimits.PROCESSES_FLAG, "N", Integer.class, () -> processes,
                value -> processes = value, "The most processes and threads the sandbox may run at once "
                        + "(default 256).").build());
        spec.addOption(CliSpec.option(MAX_OUTPUT_FLAG, "SIZE", String.class, () -> maxOutput,
                value -> maxOutput = value, "The most the program may print, standard output and error together, "
                        + "before it is stopped: 64k, 10m (default 1m for run, 8m for exec).").build());
        conversation.addTo(spec);
        docker.addTo(spec);
    }

    KnownBackend backend(Configuration configuration) {
        return configuration.value(Setting.BACKEND, backend).map(KnownBackend::parse)
                .orElseGet(() -> KnownBackend.preferred(configuration.environment()));
    }

    Isolation floor(Configuration configuration) {
        return configuration.value(Setting.FLOOR, floor).map(value -> {
            try {
                return Isolation.parse(value.strip().toLowerCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw CliFailure.usage("'" + value + "' (" + configuration.whereSet(Setting.FLOOR, floor) + ") is not "
                        + "a rung; the ladder is " + Isolation.ladder());
            }
        }).orElse(SandboxRouter.DEFAULT_FLOOR);
    }

    /** The allowlist, checked against the egress grammar now rather than at the first acquire. */
    List<String> allow(Configuration configuration) {
        List<String> rules = configuration.values(Setting.ALLOW, allow);
        try {
            EgressPolicy.parse(rules);
        } catch (IllegalArgumentException e) {
            throw CliFailure.usage("an --allow rule is not valid: " + e.getMessage());
        }
        return rules;
    }

    /** {@code closed} (the default) or {@code deny-all}; anything else is a usage error naming both. */
    Egress noNetwork(Configuration configuration) {
        return configuration.value(Setting.NO_NETWORK, noNetwork).map(value -> {
            String wire = value.strip().toLowerCase(Locale.ROOT);
            if (wire.equals(Egress.CLOSED.wire()) || wire.equals(Egress.DENY_ALL.wire())) {
                return Egress.parse(wire);
            }
            throw CliFailure.usage("'" + value + "' (" + configuration.whereSet(Setting.NO_NETWORK, noNetwork)
                    + ") is not a way to have no network; write " + Egress.CLOSED.wire() + " or "
                    + Egress.DENY_ALL.wire() + " (hosts are opened with --allow)");
        }).orElse(Egress.CLOSED);
    }

    GuestLimits limits() {
        if (processes != null && processes < 1) {
            throw CliFailure.usage(GuestLimits.PROCESSES_FLAG + " must be a positive number, not " + processes);
        }
        return new GuestLimits(Optional.ofNullable(memory).map(value -> Sizes.parse(value, GuestLimits.MEMORY_FLAG)),
                Optional.ofNullable(processes));
    }

    /** The output cap {@code --max-output} asked for; empty means the command's default. */
    Optional<Long> maxOutputBytes() {
        Optional<Long> cap = Optional.ofNullable(maxOutput).map(value -> Sizes.parse(value, MAX_OUTPUT_FLAG));
        if (cap.isPresent() && cap.get() > HostCeilings.MAX_BUFFERED_BYTES) {
            // The output is held in this JVM as well as streamed: the same ceiling as every buffered guest byte.
            throw CliFailure.usage(MAX_OUTPUT_FLAG + " may be at most " + Sizes.describe(HostCeilings.MAX_BUFFERED_BYTES)
                    + " (an eighth of this JVM's heap, at most 256 MiB), not " + Sizes.describe(cap.get())
                    + "; write large results to a file and land it with --out");
        }
        return cap;
    }

    Duration timeout(Configuration configuration) {
        return configuration.value(Setting.TIMEOUT, timeout).map(SandboxOptions::duration)
                .orElse(CodeAct.DEFAULT_EXEC_TIMEOUT);
    }

    /** {@code 90}, {@code 90s}, {@code 2m}, {@code 1h}, or ISO-8601 ({@code PT90S}); positive. */
    static Duration duration(String text) {
        String value = text.strip().toLowerCase(Locale.ROOT);
        Duration parsed;
        try {
            if (value.startsWith("pt")) {
                parsed = Duration.parse(value.toUpperCase(Locale.ROOT));
            } else if (value.endsWith("ms")) {
                parsed = Duration.ofMillis(Long.parseLong(value.substring(0, value.length() - 2)));
            } else if (value.endsWith("s")) {
                parsed = Duration.ofSeconds(Long.parseLong(value.substring(0, value.length() - 1)));
            } else if (value.endsWith("m")) {
                parsed = Duration.ofMinutes(Long.parseLong(value.substring(0, value.length() - 1)));
            } else if (value.endsWith("h")) {
                parsed = Duration.ofHours(Long.parseLong(value.substring(0, value.length() - 1)));
            } else {
                parsed = Duration.ofSeconds(Long.parseLong(value));
            }
        } catch (NumberFormatException | DateTimeParseException e) {
            throw CliFailure.usage(GuestText.quote(text) + " is not a duration; write 90, 90s, 2m or 1h");
        }
        if (parsed.isNegative() || parsed.isZero()) {
            throw CliFailure.usage("a timeout must be positive, not " + GuestText.quote(text));
        }
        if (parsed.compareTo(ExecOptions.MAX_TIMEOUT) > 0) {
            throw CliFailure.usage("a timeout may be at most " + ExecOptions.MAX_TIMEOUT.toHours() + "h, not "
                    + GuestText.quote(text) + "; run longer work as several commands, or in the background with a "
                    + "status file");
        }
        return parsed;
    }
}
