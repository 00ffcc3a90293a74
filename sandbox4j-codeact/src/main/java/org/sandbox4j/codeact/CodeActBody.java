package org.sandbox4j.codeact;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.LinkedHashMap;
import java.util.concurrent.ConcurrentHashMap;

import org.sandbox4j.core.Command;
import org.sandbox4j.core.DeclaredOutput;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.FileStore;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.spi.Json;
import org.sandbox4j.core.NameNormalization;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxExecOutputLimitExceeded;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxLandingFailed;
import org.sandbox4j.core.SandboxOutputException;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.SandboxTimeoutException;
import org.sandbox4j.core.TransferLimits;
import org.sandbox4j.core.outputs.ArtifactNames;
import org.sandbox4j.core.outputs.LandedArtifact;
import org.sandbox4j.core.outputs.OutputSink;
import org.sandbox4j.core.outputs.Outputs;
import org.sandbox4j.core.tool.ToolBody;
import org.sandbox4j.core.tool.ToolCall;
import org.sandbox4j.core.tool.ToolRefusal;
import org.sandbox4j.core.tool.ToolResult;

/**
 * One call of {@code execute_code}, in order: the arguments' shape; the key from the host's
 * context; every name checked and every cap counted before anything is read; shared files read
 * only when the store's listing holds them (the injection pin); the sandbox acquired; the
 * language's runtime checked once per sandbox; program and files written into the call's own
 * directory; the program run with the configured timeout; its output reported; declared outputs
 * saved only when it exited with 0. The call directory is reclaimed by {@link
 * org.sandbox4j.core.tool.SandboxedTool} however this ends.
 */
final class CodeActBody implements ToolBody {

    static final String COULD_NOT_WRITE = "Error: could not write the program into the sandbox.";
    static final String COULD_NOT_RUN = "Error: could not run the program in the sandbox.";
    static final String NOT_SAVED = "Error: the program ran, but its outputs could not be saved.";

    /** How many conversations' runtime answers are remembered. */
    static final int REMEMBERED_CONVERSATIONS = 4096;

    /** Bound on asking the guest whether it has an interpreter. */
    static final Duration RUNTIME_CHECK_TIMEOUT = Duration.ofSeconds(30);

    private final CodeActConfig config;
    private final Optional<HostToolPath> hostTools;
    /**
     * Each conversation's answer per language: asked once, then remembered. Keyed by the
     * conversation, not the handle (backends hand out a new handle per acquire); one tool has one
     * spec, so a replaced sandbox has the same image and the same interpreters. Bounded, least
     * recently used first out.
     */
    private final Map<SandboxKey, Map<Language, Boolean>> runtimes = Collections.synchronizedMap(
            new LinkedHashMap<>(16, 0.75f, true) {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(Map.Entry<SandboxKey, Map<Language, Boolean>> eldest) {
                    return size() > REMEMBERED_CONVERSATIONS;
                }
            });

    CodeActBody(CodeActConfig config) {
        this.config = config;
        this.hostTools = config.hostTools().map(registry -> new HostToolPath(registry, config));
    }

    /**
     * The call as {@link ToolBody} sees it: {@link #run}, reduced to the model's text. While a
     * {@link CodeActRunner} waits on this thread, it is also told the structured outcome, or the
     * refusal that ended the call.
     */
    @Override
    public ToolResult call(ToolCall call, Map<String, Object> arguments) {
        CodeActRunner.Observation observer = CodeActRunner.observer();
        try {
            CodeActOutcome outcome = run(call, arguments);
            if (observer != null) {
                observer.outcome(outcome);
            }
            return outcome.result();
        } catch (RuntimeException failure) {
            if (observer != null) {
                observer.failure(failure);
            }
            throw failure;
        }
    }

    /** One call, in the order the class documentation gives; refusals are thrown as {@link ToolRefusal}. */
    CodeActOutcome run(ToolCall call, Map<String, Object> arguments) {
        CallArguments request = CallArguments.parse(arguments, config);
        CodeActRunner.Observation observer = CodeActRunner.observer();
        CodeActRunner.Program given = observer == null ? CodeActRunner.Program.AS_IS : observer.program();
        SandboxKey key = call.key();
        Language language = request.language();
        byte[] program = request.code().getBytes(StandardCharsets.UTF_8);

        Set<String> reserved = reservedNames(language);
        CallNames.check("files", request.files(), reserved);
        CallNames.check("outputs", request.outputs(), reserved);
        Transfer transfer = new Transfer(config.spec().filesIn());
        transfer.count(request.files().size() + config.transportFiles());
        if (request.outputs().size() > config.spec().filesOut().maxFiles()) {
            throw new ToolRefusal("Error: `outputs` names " + request.outputs().size() + " files, but a call may save "
                    + "at most " + config.spec().filesOut().maxFiles() + ". Nothing was run.");
        }
        transfer.add("the program", program.length);
        hostTools.ifPresent(path -> transfer.add("the host-tool shim", path.shimBytes(language)));
        List<SharedFile> shared = readShared(call, request.files(), transfer);

        Sandbox sandbox = call.acquire(key);
        String workDir = config.spec().workDirIn(sandbox);
        String callDir = call.callDirectory(sandbox);
        requireRuntime(call, key, sandbox, language);

        String filesPrefix = call.callId() + "/" + (hostTools.isPresent() ? HostToolPath.WORK_DIRECTORY + "/" : "");
        ExecResult result;
        if (hostTools.isPresent()) {
            writeShared(call, sandbox, workDir, filesPrefix, shared);
            result = hostTools.get().run(call, sandbox, callDir, language, program);
        } else {
            writeShared(call, sandbox, workDir, filesPrefix, shared);
            write(call, sandbox, workDir, filesPrefix + language.programFileName(), program);
            result = runPlain(call, sandbox, callDir, language, given);
        }

        String report = ProgramReport.of(result);
        if (result.exitCode() != 0 || config.outputs() == OutputMode.NONE) {
            return CodeActOutcome.ran(report, result);
        }
        Saved saved = save(call, sandbox, filesPrefix, request.outputs());
        return saved.problem()
                .map(problem -> new CodeActOutcome(ToolResult.ofProgram(report, 0).failedAfter(report + "\n" + problem),
                        Optional.of(result), saved.landed(), saved.notWritten(), Optional.of(problem)))
                .orElseGet(() -> new CodeActOutcome(ToolResult.ofProgram(saved.landed().isEmpty()
                        && saved.notWritten().isEmpty() ? report
                        : report + "\n" + ProgramReport.saved(saved.landed(), saved.notWritten()), 0),
                        Optional.of(result), saved.landed(), saved.notWritten(), Optional.empty()));
    }

    private Set<String> reservedNames(Language language) {
        Set<String> reserved = new HashSet<>();
        if (hostTools.isEmpty()) {
            reserved.add(language.programFileName()); // it shares the call directory with the files
        }
        if (config.outputs() == OutputMode.MANIFEST) {
            reserved.add(CodeAct.MANIFEST_FILE_NAME);
        }
        return reserved;
    }

    private List<SharedFile> readShared(ToolCall call, List<String> names, Transfer transfer) {
        if (names.isEmpty()) {
            return List.of();
        }
        FileStore store = config.fileStore().orElseThrow();
        List<String> listing = call.listFiles(store);
        Set<String> listed = new HashSet<>(listing);
        for (String name : names) {
            if (!listed.contains(name)) {
                throw CallNames.notListed(name, listing);
            }
        }
        List<SharedFile> files = new ArrayList<>(names.size());
        for (String name : names) {
            Optional<byte[]> content;
            try {
                content = store.read(name);
            } catch (SandboxInterrupted cancelled) {
                throw cancelled;
            } catch (RuntimeException failure) {
                call.logFailure("reading " + GuestText.quote(name) + " from the file store", failure);
                content = Optional.empty();
            }
            byte[] bytes = content.orElseThrow(() -> new ToolRefusal("Error: " + GuestText.quote(name)
                    + " could not be read from the user's file store. Nothing was run."));
            transfer.add(GuestText.quote(name), bytes.length);
            files.add(new SharedFile(name, bytes));
        }
        return files;
    }

    private void requireRuntime(ToolCall call, SandboxKey key, Sandbox sandbox, Language language) {
        Map<Language, Boolean> known = runtimes.computeIfAbsent(key, k -> new ConcurrentHashMap<>());
        Boolean present = known.get(language);
        if (present == null) {
            present = hasCommand(call, sandbox, language.requiredCommand());
            known.put(language, present);
        }
        if (!present) {
            List<String> others = config.languages().stream().filter(l -> l != language).map(Language::wire).toList();
            throw new ToolRefusal("Error: this sandbox cannot run " + language.wire() + " programs (it has no '"
                    + language.requiredCommand() + "')" + (others.isEmpty() ? "." : "; use " + String.join(" or ", others)
                    + " instead."));
        }
    }

    private boolean hasCommand(ToolCall call, Sandbox sandbox, String command) {
        // The command name is a fixed constant, and it travels as an argument, never in the script.
        ExecResult probe;
        try {
            probe = sandbox.exec(Command.argv(List.of("sh", "-c", "command -v \"$1\" >/dev/null 2>&1", "sh", command)),
                    ExecOptions.in("/", RUNTIME_CHECK_TIMEOUT));
        } catch (SandboxInterrupted cancelled) {
            throw cancelled;
        } catch (RuntimeException failure) {
            throw call.refusal("checking for " + command, failure, COULD_NOT_RUN);
        }
        return probe.exitCode() == 0;
    }

    private void writeShared(ToolCall call, Sandbox sandbox, String workDir, String prefix, List<SharedFile> files) {
        for (SharedFile file : files) {
            write(call, sandbox, workDir, prefix + file.name(), file.content());
        }
    }

    static void write(ToolCall call, Sandbox sandbox, String workDir, String path, byte[] content) {
        try {
            sandbox.writeFile(path, content, workDir);
        } catch (SandboxInterrupted cancelled) {
            throw cancelled;
        } catch (RuntimeException failure) {
            throw call.refusal("writing " + path, failure, COULD_NOT_WRITE);
        }
    }

    private ExecResult runPlain(ToolCall call, Sandbox sandbox, String callDir, Language language,
            CodeActRunner.Program given) {
        List<String> argv = new ArrayList<>(language.interpreter());
        argv.add(callDir + "/" + language.programFileName());
        argv.addAll(given.arguments());
        ExecOptions options = ExecOptions.in(callDir, config.execTimeout()).withOutputCap(config.maxOutputBytes());
        if (given.stdin().isPresent()) {
            options = options.withStdin(given.stdin().get());
        }
        if (call.output().isPresent()) {
            options = options.withListener(call.output().get());
        }
        try {
            return sandbox.exec(Command.argv(argv), options);
        } catch (SandboxTimeoutException timeout) {
            throw new ToolRefusal(timedOut(config.execTimeout()), timeout);
        } catch (SandboxExecOutputLimitExceeded tooMuch) {
            throw new ToolRefusal("Error: the program printed more than " + config.maxOutputBytes()
                    + " bytes, so it was stopped; print less.", tooMuch);
        } catch (SandboxInterrupted cancelled) {
            throw cancelled;
        } catch (RuntimeException failure) {
            throw call.refusal("the run", failure, COULD_NOT_RUN);
        }
    }

    static String timedOut(Duration timeout) {
        return "Error: the program timed out after " + timeout.toSeconds() + " s and was stopped, with every "
                + "process it started.";
    }

    /** What saving a successful program's outputs came to: what landed, what it did not write, or why nothing could. */
    record Saved(List<LandedArtifact> landed, List<String> notWritten, Optional<String> problem) {

        static final Saved NOTHING = new Saved(List.of(), List.of(), Optional.empty());

        static Saved failed(String problem) {
            return new Saved(List.of(), List.of(), Optional.of(problem));
        }
    }

    private Saved save(ToolCall call, Sandbox sandbox, String prefix, List<String> declared) {
        OutputSink sink = config.outputSink().orElseThrow();
        SandboxSpec spec = config.spec();
        List<String> names = declared;
        try {
            if (config.outputs() == OutputMode.MANIFEST) {
                Manifest manifest = Manifest.read(sandbox, spec, prefix);
                if (manifest.names().isEmpty()) {
                    return Saved.NOTHING;
                }
                names = manifest.names();
                spec = manifest.remainingCaps(spec);
            }
            if (names.isEmpty()) {
                return Saved.NOTHING;
            }
            List<DeclaredOutput> outputs = names.stream()
                    .map(name -> DeclaredOutput.land(prefix + name).named(name).optional()).toList();
            List<LandedArtifact> landed = Outputs.collect(sandbox, spec, sink, outputs);
            Set<String> landedNames = new HashSet<>();
            landed.forEach(artifact -> landedNames.add(artifact.name()));
            NameNormalization normalization = sink.normalization();
            List<String> notWritten = names.stream()
                    .filter(name -> !landedNames.contains(ArtifactNames.deliveredName(name, normalization))).toList();
            return new Saved(List.copyOf(landed), notWritten, Optional.empty());
        } catch (ToolRefusal refusal) {
            return Saved.failed(refusal.sentence());
        } catch (SandboxLandingFailed landing) {
            call.logFailure("landing", landing);
            return Saved.failed("Error: the outputs could not all be saved; some may have been saved before the "
                    + "failure.");
        } catch (SandboxOutputException refused) {
            // Library-authored sentences about names, sizes and caps: fit for the model, and the fix is its to make.
            return Saved.failed("Nothing was saved: " + refused.getMessage());
        } catch (SandboxInterrupted cancelled) {
            throw cancelled;
        } catch (RuntimeException failure) {
            call.logFailure("saving outputs", failure);
            return Saved.failed(NOT_SAVED);
        }
    }

    /** A file from the store, read and counted. */
    record SharedFile(String name, byte[] content) {
    }

    /** The running count of what one call writes into the sandbox, against {@code filesIn}. */
    static final class Transfer {
        private final TransferLimits limits;
        private long total;

        Transfer(TransferLimits limits) {
            this.limits = limits;
        }

        void count(int files) {
            if (files > limits.maxFiles()) {
                throw new ToolRefusal("Error: this call would write " + files + " files into the sandbox, more than "
                        + "the " + limits.maxFiles() + " allowed (the program counts as one); share fewer files. "
                        + "Nothing was run.");
            }
        }

        void add(String what, long bytes) {
            if (bytes > limits.maxBytesPerFile()) {
                throw new ToolRefusal("Error: " + what + " is " + bytes + " bytes, more than the " + limits.maxBytesPerFile()
                        + " allowed per file. Nothing was run.");
            }
            total += bytes;
            if (total > limits.maxTotalBytes()) {
                throw new ToolRefusal("Error: with " + what + ", this call would write " + total + " bytes into the "
                        + "sandbox, more than the " + limits.maxTotalBytes() + " allowed. Nothing was run.");
            }
        }
    }

    /** What {@value CodeAct#MANIFEST_FILE_NAME} names, read with a bound and checked like declared names. */
    record Manifest(List<String> names, long bytes) {

        static Manifest read(Sandbox sandbox, SandboxSpec spec, String prefix) {
            String workDir = spec.workDirIn(sandbox);
            String path = prefix + CodeAct.MANIFEST_FILE_NAME;
            Optional<SandboxEntry> entry = sandbox.stat(path, workDir);
            if (entry.isEmpty()) {
                return new Manifest(List.of(), 0);
            }
            TransferLimits caps = spec.filesOut();
            long bound = Math.min(CodeAct.MAX_MANIFEST_BYTES, Math.min(caps.maxBytesPerFile(), caps.maxTotalBytes()));
            if (entry.get().kind() != EntryKind.FILE || entry.get().sizeBytes().isEmpty()
                    || entry.get().sizeBytes().getAsLong() > bound) {
                throw new ToolRefusal(invalid("it must be a regular file of at most " + bound + " bytes"));
            }
            byte[] content = sandbox.readFile(path, workDir, bound);
            Object document;
            try {
                document = Json.parse(new String(content, StandardCharsets.UTF_8));
            } catch (Json.Malformed malformed) {
                throw new ToolRefusal(invalid("it is not valid JSON"));
            }
            if (!(document instanceof Map<?, ?> object) || !(object.get("outputs") instanceof List<?> entries)) {
                throw new ToolRefusal(invalid("it must be an object with an \"outputs\" array"));
            }
            List<String> names = new ArrayList<>();
            for (Object element : entries) {
                if (!(element instanceof Map<?, ?> output) || !(output.get("path") instanceof String name)) {
                    throw new ToolRefusal(invalid("each entry of \"outputs\" must be {\"path\": \"name\"}"));
                }
                names.add(name);
            }
            try {
                CallNames.check(CodeAct.MANIFEST_FILE_NAME, names, Set.of(CodeAct.MANIFEST_FILE_NAME));
            } catch (ToolRefusal refusal) {
                throw new ToolRefusal("Nothing was saved: " + refusal.sentence().replace(" Nothing was run.", ""));
            }
            return new Manifest(List.copyOf(names), content.length);
        }

        /** The caps left for the outputs once the manifest's bytes and slot are spent. */
        SandboxSpec remainingCaps(SandboxSpec spec) {
            TransferLimits caps = spec.filesOut();
            if (caps.maxTotalBytes() - bytes < 1 || caps.maxFiles() < 2) {
                throw new ToolRefusal("Nothing was saved: the manifest used up the room for outputs.");
            }
            return spec.toBuilder().filesOut(new TransferLimits(caps.maxBytesPerFile(), caps.maxTotalBytes() - bytes,
                    caps.maxFiles() - 1)).build();
        }

        private static String invalid(String why) {
            return "Nothing was saved: " + CodeAct.MANIFEST_FILE_NAME + " could not be used (" + why
                    + "; write {\"outputs\": [{\"path\": \"name\"}]}).";
        }
    }
}
