package org.sandbox4j.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.spi.Json;
import picocli.CommandLine.Help.Ansi;
import picocli.CommandLine.Model.CommandSpec;

/** {@code sandbox4j doctor}: every backend sandbox4j knows, checked on this host. */
final class DoctorCommand implements Callable<Integer> {

    /** The rung column of a backend whose rung only a built backend declares, when it could not be built. */
    static final String UNKNOWN = "unknown";

    final Sandbox4jCommand root;
    final CommandSpec spec;
    boolean json;
    String floor;
    final DockerOptions docker = new DockerOptions();

    DoctorCommand(Sandbox4jCommand root) {
        this.root = root;
        spec = CliSpec.command(Subcommand.DOCTOR.commandName(), this, "For every backend sandbox4j knows "
                + "(bubblewrap, process, sbx, docker): can it run here, the rung it declares and whether the floor "
                + "admits it, how it limits sandboxes, and what is missing with how to get it.",
            "",
            "docker is usable when its engine answers (--docker-host, DOCKER_HOST), has the runtime (--runtime) and "
                + "holds the image (--image); its rung follows the runtime the engine confirms (runc: container, "
                + "runsc: hardened_container), so it is unknown until then.");
        spec.addOption(CliSpec.flag(new String[] {"--json"}, () -> json, value -> json = value,
                "Answer as JSON instead of a table.").build());
        spec.addOption(CliSpec.option("--floor", "RUNG", String.class, () -> floor, value -> floor = value,
                "The floor to check against (default as run's).").build());
        docker.addTo(spec);
        CliSpec.standardHelpOptions(spec);
    }

    @Override
    public Integer call() {
        SandboxOptions options = new SandboxOptions();
        options.floor = floor;
        Isolation resolved = options.floor(root.configuration());
        KnownBackend chosen = options.backend(root.configuration());
        DockerSettings dockerSettings = docker.settings(root.configuration());
        List<BackendReport> reports = new ArrayList<>();
        for (KnownBackend backend : KnownBackend.values()) {
            root.console().progress("checking " + backend.wire() + "…");
            reports.add(BackendReport.check(backend, resolved, root, dockerSettings));
        }
        BackendReport used = reports.stream().filter(r -> r.backend() == chosen).findFirst().orElseThrow();
        if (json) {
            System.out.println("{\"version\":" + Json.quote(Version.number())
                    + ",\"floor\":" + Json.quote(resolved.wire())
                    + ",\"backend\":" + Json.quote(chosen.wire())
                    + ",\"runs\":" + (used.usable() && used.meetsFloor().orElse(false))
                    + ",\"backends\":" + reports.stream().map(BackendReport::json)
                            .collect(Collectors.joining(",", "[", "]")) + "}");
        } else {
            System.out.print(table(reports, resolved, used));
        }
        System.out.flush();
        return ExitCodes.OK;
    }

    private static String table(List<BackendReport> reports, Isolation floor, BackendReport used) {
        Ansi ansi = Terminal.isTerminal(Terminal.STDOUT) ? Ansi.AUTO : Ansi.OFF;
        StringBuilder out = new StringBuilder();
        String format = "%-11s %-19s %-7s %-14s %s%n";
        out.append(String.format(format, "BACKEND", "RUNG", "USABLE", "FLOOR " + floor.wire(), "LIMITS"));
        for (BackendReport report : reports) {
            String word = report.usable() ? "yes" : "no";
            String usable = ansi.string((report.usable() ? "@|green " : "@|red ") + word + "|@")
                    + " ".repeat(7 - word.length());
            out.append(String.format("%-11s %-19s %s %-14s %s%n", report.backend().wire(),
                    report.rung().map(Isolation::wire).orElse(UNKNOWN), usable,
                    report.meetsFloor().map(meets -> meets ? "meets" : "below").orElse("-"),
                    report.limits().orElse("-")));
            if (report.backend() == KnownBackend.MICROVM && report.usable() && !report.details().isEmpty()) {
                // Which accelerator its guests boot under, and why (TCG: slower, still a hypervisor boundary).
                out.append("    accelerator: ").append(report.details().get(0)).append('\n');
            }
            if (!report.languages().isEmpty()) {
                out.append("    languages: ").append(String.join(", ", report.languages())).append('\n');
            }
            for (int i = 0; i < report.missing().size(); i++) {
                out.append("    missing: ").append(report.missing().get(i)).append('\n');
                out.append("      fix: ").append(report.fixes().get(i)).append('\n');
            }
        }
        out.append('\n');
        String name = used.backend().wire();
        if (!used.usable()) {
            out.append("run uses '").append(name).append("', which cannot run here: see its fix above, or choose "
                    + "another with --backend.\n");
        } else if (!used.meetsFloor().orElse(false)) {
            String rung = used.rung().map(Isolation::wire).orElse(UNKNOWN);
            out.append("run uses '").append(name).append("' (").append(rung).append("), below the floor '")
                    .append(floor.wire()).append("', so run refuses it: pass --floor ").append(rung)
                    .append(" to accept it (the README says when a host should).\n");
        } else {
            out.append("run uses '").append(name).append("' at the floor '").append(floor.wire()).append("'.\n");
        }
        return out.toString();
    }
}
