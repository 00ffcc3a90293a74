package org.sandbox4j.cli;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxSpec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code sandbox4j exec -- ARGV…}: a raw command in the work dir of the sandbox {@code run} uses
 * for the same thread (the same spec), never through a shell. Output streams as it arrives.
 */
final class ExecCommand implements Callable<Integer> {

    /** Where the work dir is made from: the guest's root. */
    private static final String ROOT = "/";

    final Sandbox4jCommand root;
    final CommandSpec spec;
    final SandboxOptions sandbox = new SandboxOptions();
    List<String> argv;

    ExecCommand(Sandbox4jCommand root) {
        this.root = root;
        spec = CliSpec.command(Subcommand.EXEC.commandName(), this, "Run a command (an argv, never a shell line) in "
                + "a sandbox's work dir: the sandbox 'run' uses for the same --thread. Standard input is passed on "
                + "when it is not a terminal.");
        spec.usageMessage().sortOptions(false);
        sandbox.addTo(spec);
        spec.addPositional(CliSpec.<List<String>>positionals("1..*", "ARGV", () -> argv, value -> argv = value,
                "The command and its arguments, after --.").build());
        CliSpec.standardHelpOptions(spec);
    }

    @Override
    public Integer call() {
        byte[] stdin = StandardInput.unlessTerminal();
        try (Session session = Session.open(root, sandbox)) {
            SandboxSpec spec;
            try {
                spec = CodeAct.builder(session.router(), Session.AGENT, session.context())
                        .egressAllow(session.allow()).egressWithoutHosts(session.noNetwork()).spec();
                session.router().ensureCanServe(spec);
            } catch (IllegalArgumentException wrong) {
                throw CliFailure.usage(wrong.getMessage());
            } catch (SandboxException refused) {
                throw Failures.of(refused);
            }
            session.console().progress("preparing a " + session.backend().name() + " sandbox…");
            try {
                Sandbox box = session.router().acquire(session.key(), spec);
                ensureWorkDir(box, spec.workDirIn(box), session.timeout());
                ExecOptions options = ExecOptions.in(spec.workDirIn(box), session.timeout())
                        .withListener(ExecCommand::relay);
                if (session.maxOutputBytes().isPresent()) {
                    options = options.withOutputCap(session.maxOutputBytes().get());
                }
                if (stdin.length > 0) {
                    options = options.withStdin(stdin);
                }
                ExecResult result = box.exec(Command.argv(argv), options);
                System.out.flush();
                System.err.flush();
                Failures.killed(result.exitCode(), session.memoryBytes()).ifPresent(session.console()::warn);
                return result.exitCode();
            } catch (IllegalArgumentException wrong) {
                throw CliFailure.usage(wrong.getMessage());
            } catch (SandboxException failure) {
                throw Failures.of(failure);
            }
        }
    }

    /**
     * acquire does not create the work dir (run's launcher makes it, and a backend may mount only
     * its parent, as docker does), so a thread's first command would find none to start in.
     */
    private static void ensureWorkDir(Sandbox box, String workDir, Duration timeout) {
        if (box.stat(workDir, ROOT).isPresent()) {
            return;
        }
        ExecResult made = box.exec(Command.argv("mkdir", "-p", "--", workDir), ExecOptions.in(ROOT, timeout));
        if (made.exitCode() != 0) {
            throw CliFailure.failed("cannot create the work dir " + workDir + " in the sandbox: "
                    + new String(made.stderr(), StandardCharsets.UTF_8).strip());
        }
    }

    /** Output as it arrives, each stream to its own; one writer at a time per stream. */
    static void relay(ExecStream stream, byte[] chunk) {
        PrintStream target = stream == ExecStream.STDERR ? System.err : System.out;
        synchronized (target) {
            target.write(chunk, 0, chunk.length);
            target.flush();
        }
    }
}
