package org.sandbox4j.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.codeact.CodeActOutcome;
import org.sandbox4j.codeact.CodeActRunner;
import org.sandbox4j.codeact.Language;
import org.sandbox4j.codeact.OutputMode;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.outputs.FileSystemSink;
import org.sandbox4j.core.outputs.LandedArtifact;
import org.sandbox4j.core.spi.GuestText;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code sandbox4j run}: a program through {@code execute_code}, the same kind a model calls, with
 * its own standard output, standard error and exit code handed back as they were.
 */
final class RunCommand implements Callable<Integer> {

    /** What {@code FILE} means when it is this: the program comes from standard input. */
    static final String STDIN = "-";

    /** What separates the program's own arguments from FILE (picocli keeps it once FILE stopped option parsing). */
    static final String END_OF_OPTIONS = "--";

    /** The short names a shell user types for a language, by its wire name. */
    private static final Map<String, String> ALIASES = aliases();

    final Sandbox4jCommand root;
    final CommandSpec spec;
    String code;
    /**
     * FILE, then the program's arguments; with {@code -e}, arguments only. Options end at the first
     * of these (as {@code uv run} and {@code docker run}), so the program's own flags are its own.
     */
    List<String> positionals = new ArrayList<>();
    String lang;
    Map<String, Path> files = new LinkedHashMap<>();
    Path out;
    List<String> outputs = new ArrayList<>();
    final SandboxOptions sandbox = new SandboxOptions();

    RunCommand(Sandbox4jCommand root) {
        this.root = root;
        spec = CliSpec.command(Subcommand.RUN.commandName(), this, "Run a program (-e CODE, a FILE, or standard "
                + "input) in a sandbox; its standard output and error come back on the matching streams, and its "
                + "exit code is sandbox4j's.");
        spec.usageMessage().sortOptions(false);
        spec.addOption(CliSpec.option(new String[] {"-e", "--code"}, "CODE", String.class, () -> code,
                value -> code = value, "The program's source.").build());
        spec.addPositional(CliSpec.<List<String>>positionals("0..*", "FILE [--] ARGS", () -> positionals,
                value -> positionals = value, "A file holding the program ('-' or nothing: standard input), then "
                        + "the arguments the program gets (with -e: only arguments, after --).").build());
        spec.addOption(CliSpec.option("--lang", "LANGUAGE", String.class, () -> lang, value -> lang = value,
                "python (default; py), javascript (js, node), java or bash (sh); a FILE's extension chooses "
                        + "otherwise.").build());
        spec.addOption(CliSpec.<Map<String, Path>>option("--file", "NAME=PATH", Map.class, () -> files,
                value -> files = value, "Share a host file with the program as NAME in its working directory "
                        + "(repeatable).").auxiliaryTypes(String.class, Path.class).build());
        spec.addOption(CliSpec.option("--out", "DIR", Path.class, () -> out, value -> out = value,
                "Land the program's outputs in DIR: those named by --output, else those the program lists in "
                        + "outputs.json ({\"outputs\": [{\"path\": \"name\"}]}). Saved only when it exits 0.")
                .build());
        spec.addOption(CliSpec.<List<String>>option("--output", "NAME", List.class, () -> outputs,
                value -> outputs = value, "A file the program writes in its working directory, landed in --out "
                        + "(repeatable).").auxiliaryTypes(String.class).build());
        sandbox.addTo(spec);
        CliSpec.standardHelpOptions(spec);
    }

    @Override
    public Integer call() {
        Optional<String> file = file();
        List<String> programArguments = programArguments();
        String program = program(file);
        Language language = language(file);
        if (!outputs.isEmpty() && out == null) {
            throw CliFailure.usage("--output names a file to save, but no --out DIR says where");
        }
        if (out != null) {
            checkOutDirectory(out);
        }
        HostFiles shared = HostFiles.of(files);
        // Standard input is the program's own input unless it was the program.
        byte[] stdin = programIsStandardInput(file) ? new byte[0] : StandardInput.unlessTerminal();
        try (Session session = Session.open(root, sandbox)) {
            CodeActRunner runner = runner(session, language, shared);
            Map<String, Object> arguments = new LinkedHashMap<>();
            arguments.put("code", program);
            if (!files.isEmpty()) {
                arguments.put("files", List.copyOf(files.keySet()));
            }
            if (!outputs.isEmpty()) {
                arguments.put("outputs", List.copyOf(outputs));
            }
            CodeActRunner.Program given = CodeActRunner.Program.AS_IS.withArguments(programArguments)
                    .withOutput(ExecCommand::relay);
            if (stdin.length > 0) {
                given = given.withStdin(stdin);
            }
            session.console().progress("running " + language.wire() + " in a " + session.backend().name()
                    + " sandbox…");
            CodeActRunner.Run run;
            try {
                run = runner.run(arguments, given);
            } catch (IllegalArgumentException wrong) {
                throw CliFailure.usage(wrong.getMessage());
            }
            return report(session, run);
        }
    }

    private boolean programIsStandardInput(Optional<String> file) {
        return code == null && (file.isEmpty() || file.get().equals(STDIN));
    }

    /** FILE: the first positional unless -e gave the program. */
    private Optional<String> file() {
        return code != null || positionals.isEmpty() ? Optional.empty() : Optional.of(positionals.get(0));
    }

    /** What follows FILE (one {@code --} after it dropped), or every positional after -e and {@code --}. */
    private List<String> programArguments() {
        if (code != null) {
            // Without --, a positional beside -e is more likely a FILE given as well than an argument.
            if (!positionals.isEmpty() && !spec.commandLine().getParseResult().originalArgs().contains(END_OF_OPTIONS)) {
                throw CliFailure.usage("give the program once: -e CODE or a FILE, not both (the program's arguments "
                        + "go after --)");
            }
            return List.copyOf(positionals);
        }
        if (positionals.size() < 2) {
            return List.of();
        }
        List<String> after = positionals.subList(1, positionals.size());
        return List.copyOf(after.get(0).equals(END_OF_OPTIONS) ? after.subList(1, after.size()) : after);
    }

    /**
     * Refused before anything runs: a program's outputs land only in a directory, made if it is
     * missing, and a regular file there would fail only after the program ran.
     */
    private static void checkOutDirectory(Path out) {
        String shown = GuestText.quote(out.toString());
        if (Files.isDirectory(out)) {
            if (!Files.isWritable(out)) {
                throw CliFailure.usage("--out " + shown + " is a directory this user cannot write to");
            }
            return;
        }
        if (Files.exists(out, LinkOption.NOFOLLOW_LINKS)) {
            throw CliFailure.usage("--out " + shown + " exists and is not a directory; give a directory (made if "
                    + "missing) for the program's outputs");
        }
        Path parent = out.toAbsolutePath().getParent();
        while (parent != null && !Files.exists(parent)) {
            parent = parent.getParent();
        }
        if (parent == null || !Files.isDirectory(parent) || !Files.isWritable(parent)) {
            throw CliFailure.usage("--out " + shown + " cannot be made: " + (parent == null ? "no parent directory"
                    : GuestText.quote(parent.toString()) + " is not a directory this user can write to"));
        }
    }

    private CodeActRunner runner(Session session, Language language, HostFiles shared) {
        CodeAct.Builder builder = CodeAct.builder(session.router(), Session.AGENT, session.context())
                .languages(language)
                .egressAllow(session.allow()).egressWithoutHosts(session.noNetwork())
                .execTimeout(session.timeout());
        session.maxOutputBytes().ifPresent(builder::maxOutputBytes);
        if (!files.isEmpty()) {
            builder.fileStore(shared);
        }
        if (out != null) {
            builder.outputs(outputs.isEmpty() ? OutputMode.MANIFEST : OutputMode.DECLARED)
                    .outputSink(FileSystemSink.at(out.toAbsolutePath()));
        }
        try {
            return builder.buildRunner().orElseThrow();
        } catch (SandboxException refused) {
            throw Failures.of(refused);
        } catch (IllegalArgumentException wrong) {
            throw CliFailure.usage(wrong.getMessage());
        }
    }

    /**
     * Says what sandbox4j itself could not do; the program's streams were relayed as they arrived
     * (its result holds them too, so nothing is printed twice) and its exit code is handed back.
     */
    private static int report(Session session, CodeActRunner.Run run) {
        Console console = session.console();
        CodeActOutcome outcome = run.outcome();
        Optional<ExecResult> program = outcome.program();
        System.out.flush();
        System.err.flush();
        if (program.isEmpty()) {
            throw Failures.ofCall(outcome.result().text(), run.failure());
        }
        for (LandedArtifact saved : outcome.saved()) {
            console.progress("saved " + saved.display());
        }
        if (!outcome.notWritten().isEmpty()) {
            console.warn("not written by the program, so not saved: " + String.join(", ", outcome.notWritten()));
        }
        if (outcome.problem().isPresent()) {
            throw CliFailure.failed(Failures.sentence(outcome.problem().get()));
        }
        int exitCode = program.get().exitCode();
        Failures.killed(exitCode, session.memoryBytes()).ifPresent(console::warn);
        return exitCode;
    }

    private String program(Optional<String> file) {
        if (code != null) {
            return code;
        }
        if (file.isPresent() && !file.get().equals(STDIN)) {
            Path path = Path.of(file.get());
            try {
                if (Files.size(path) > StandardInput.MAX_BYTES) {
                    throw CliFailure.usage("the program " + GuestText.quote(file.get()) + " is larger than "
                            + Sizes.describe(StandardInput.MAX_BYTES) + "; no source is that long");
                }
                return Files.readString(path, StandardCharsets.UTF_8);
            } catch (NoSuchFileException e) {
                throw CliFailure.usage("no program file " + GuestText.quote(file.get()) + " (give -e CODE for a "
                        + "program on the command line)");
            } catch (IOException e) {
                throw CliFailure.usage("cannot read the program from " + GuestText.quote(file.get()) + ": "
                        + GuestText.escape(String.valueOf(e.getMessage())));
            }
        }
        if (Terminal.isTerminal(Terminal.STDIN)) {
            throw CliFailure.usage("no program: give -e CODE, a FILE, or pipe it on standard input");
        }
        return new String(StandardInput.read(System.in), StandardCharsets.UTF_8);
    }

    private Language language(Optional<String> file) {
        if (lang != null) {
            String wanted = lang.strip().toLowerCase(Locale.ROOT);
            return Language.fromWire(ALIASES.getOrDefault(wanted, wanted)).orElseThrow(() -> CliFailure.usage(
                    "unknown language " + GuestText.quote(lang) + "; choose one of " + languages() + " (or "
                            + String.join(", ", ALIASES.keySet()) + ")"));
        }
        if (file.isPresent() && !file.get().equals(STDIN)) {
            String name = Path.of(file.get()).getFileName().toString();
            for (Language language : Language.values()) {
                String extension = language.programFileName().substring(language.programFileName().lastIndexOf('.'));
                if (name.endsWith(extension)) {
                    return language;
                }
            }
        }
        return Language.PYTHON;
    }

    private static Map<String, String> aliases() {
        Map<String, String> aliases = new LinkedHashMap<>();
        aliases.put("py", Language.PYTHON.wire());
        aliases.put("python3", Language.PYTHON.wire());
        aliases.put("js", Language.JAVASCRIPT.wire());
        aliases.put("node", Language.JAVASCRIPT.wire());
        aliases.put("sh", Language.BASH.wire());
        return Collections.unmodifiableMap(aliases);
    }

    private static List<String> languages() {
        return java.util.Arrays.stream(Language.values()).map(Language::wire).toList();
    }
}
