package org.sandbox4j.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code sandbox4j run}: a program through {@code execute_code}, the same kind a model calls, with
 * its own standard output, standard error and exit code handed back as they were.
 */
@Command(name = "run", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Run a program (-e CODE, a FILE, or standard input) in a sandbox; its standard output and "
                + "error come back on the matching streams, and its exit code is sandbox4j's.")
final class RunCommand implements Callable<Integer> {

    /** What {@code FILE} means when it is this: the program comes from standard input. */
    static final String STDIN = "-";

    @ParentCommand
    Sandbox4jCommand root;

    @Option(names = {"-e", "--code"}, paramLabel = "CODE", description = "The program's source.")
    String code;

    @Parameters(index = "0", arity = "0..1", paramLabel = "FILE",
            description = "A file holding the program ('-' or nothing: standard input).")
    String file;

    @Option(names = "--lang", paramLabel = "LANGUAGE",
            description = "python (default), javascript, java or bash; a FILE's extension chooses otherwise.")
    String lang;

    @Option(names = "--file", paramLabel = "NAME=PATH",
            description = "Share a host file with the program as NAME in its working directory (repeatable).")
    Map<String, Path> files = new LinkedHashMap<>();

    @Option(names = "--out", paramLabel = "DIR",
            description = "Land the program's outputs in DIR: those named by --output, else those the program lists "
                    + "in outputs.json ({\"outputs\": [{\"path\": \"name\"}]}). Saved only when it exits 0.")
    Path out;

    @Option(names = "--output", paramLabel = "NAME",
            description = "A file the program writes in its working directory, landed in --out (repeatable).")
    List<String> outputs = new ArrayList<>();

    @Mixin
    SandboxOptions sandbox = new SandboxOptions();

    @Override
    public Integer call() {
        String program = program();
        Language language = language();
        if (!outputs.isEmpty() && out == null) {
            throw CliFailure.usage("--output names a file to save, but no --out DIR says where");
        }
        HostFiles shared = HostFiles.of(files);
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
            session.console().progress("running " + language.wire() + " in a " + session.backend().name()
                    + " sandbox…");
            CodeActRunner.Run run = runner.run(arguments);
            return report(session.console(), run);
        }
    }

    private CodeActRunner runner(Session session, Language language, HostFiles shared) {
        CodeAct.Builder builder = CodeAct.builder(session.router(), Session.AGENT, session.context())
                .languages(language)
                .egressAllow(session.allow()).egressWithoutHosts(session.noNetwork())
                .execTimeout(session.timeout());
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

    /** Hands the program's streams and exit code back as they were; says what sandbox4j itself could not do. */
    private static int report(Console console, CodeActRunner.Run run) {
        CodeActOutcome outcome = run.outcome();
        Optional<ExecResult> program = outcome.program();
        if (program.isEmpty()) {
            throw Failures.ofCall(outcome.result().text(), run.failure());
        }
        write(System.out, program.get().stdout());
        write(System.err, program.get().stderr());
        for (LandedArtifact saved : outcome.saved()) {
            console.progress("saved " + saved.display());
        }
        if (!outcome.notWritten().isEmpty()) {
            console.warn("not written by the program, so not saved: " + String.join(", ", outcome.notWritten()));
        }
        if (outcome.problem().isPresent()) {
            throw CliFailure.failed(Failures.sentence(outcome.problem().get()));
        }
        return program.get().exitCode();
    }

    private static void write(PrintStream stream, byte[] bytes) {
        stream.write(bytes, 0, bytes.length);
        stream.flush();
    }

    private String program() {
        if (code != null && file != null) {
            throw CliFailure.usage("give the program once: -e CODE or a FILE, not both");
        }
        if (code != null) {
            return code;
        }
        try {
            if (file != null && !file.equals(STDIN)) {
                return Files.readString(Path.of(file), StandardCharsets.UTF_8);
            }
            if (Terminal.isTerminal(Terminal.STDIN)) {
                throw CliFailure.usage("no program: give -e CODE, a FILE, or pipe it on standard input");
            }
            return new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw CliFailure.usage("cannot read the program from " + (file == null ? "standard input" : file) + ": "
                    + e.getMessage());
        }
    }

    private Language language() {
        if (lang != null) {
            return Language.fromWire(lang.strip().toLowerCase(Locale.ROOT)).orElseThrow(() -> CliFailure.usage(
                    "unknown language '" + lang + "'; choose one of " + languages()));
        }
        if (file != null && !file.equals(STDIN)) {
            String name = Path.of(file).getFileName().toString();
            for (Language language : Language.values()) {
                String extension = language.programFileName().substring(language.programFileName().lastIndexOf('.'));
                if (name.endsWith(extension)) {
                    return language;
                }
            }
        }
        return Language.PYTHON;
    }

    private static List<String> languages() {
        return java.util.Arrays.stream(Language.values()).map(Language::wire).toList();
    }
}
