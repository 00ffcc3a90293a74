package org.sandbox4j.testkit.tck;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.spi.ExecRefusals;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.testkit.ForwardingBackend;
import org.sandbox4j.testkit.ForwardingSandbox;

/**
 * Wraps a correct target and breaks one exec behaviour, so each EXEC probe can be shown to fail.
 * The guest side (planting and verification) goes through the honest sandbox.
 */
final class FlawedExecTarget implements ConformanceTarget {

    /** One way an exec can be wrong. */
    enum ExecFlaw {
        /** Joins argv words with spaces and hands them to a shell. */
        ARGV_THROUGH_SHELL {
            @Override
            Command command(Command honest) {
                return honest instanceof Command.Argv argv ? Command.shell(String.join(" ", argv.words())) : honest;
            }
        },
        /** stderr appended to stdout; stderr empty. */
        MERGES_STREAMS {
            @Override
            ExecResult result(ExecResult honest) {
                byte[] merged = Arrays.copyOf(honest.stdout(), honest.stdout().length + honest.stderr().length);
                System.arraycopy(honest.stderr(), 0, merged, honest.stdout().length, honest.stderr().length);
                return new ExecResult(merged, new byte[0], honest.exitCode(), honest.elapsed());
            }
        },
        /** stdout cut at the first NUL, as a C-string transport would. */
        CUTS_AT_NUL {
            @Override
            ExecResult result(ExecResult honest) {
                byte[] out = honest.stdout();
                int nul = 0;
                while (nul < out.length && out[nul] != 0) {
                    nul++;
                }
                return new ExecResult(Arrays.copyOf(out, nul), honest.stderr(), honest.exitCode(), honest.elapsed());
            }
        },
        /** Keeps only the low bit of the exit code: success or failure. */
        FLATTENS_EXIT_CODES {
            @Override
            ExecResult result(ExecResult honest) {
                return new ExecResult(honest.stdout(), honest.stderr(), honest.exitCode() == 0 ? 0 : 1,
                        honest.elapsed());
            }
        },
        /** Counts the cap 64 times too high: the refusal still comes, after far too much output. */
        LAX_OUTPUT_CAP {
            @Override
            ExecOptions options(ExecOptions honest) {
                return honest.withOutputCap(honest.outputCapBytes() * LAX_CAP_FACTOR);
            }
        },
        /** Drops the caller's environment. */
        DROPS_ENVIRONMENT {
            @Override
            ExecOptions options(ExecOptions honest) {
                return honest.withEnvironment(Map.of());
            }
        },
        /** Drops stdin. */
        DROPS_STDIN {
            @Override
            ExecOptions options(ExecOptions honest) {
                return new ExecOptions(honest.workingDirectory(), honest.timeout(), honest.environment(),
                        Optional.empty(), honest.outputCapBytes(), honest.listener());
            }
        },
        /** Never tells the listener anything. */
        SILENT_LISTENER {
            @Override
            ExecOptions options(ExecOptions honest) {
                return new ExecOptions(honest.workingDirectory(), honest.timeout(), honest.environment(),
                        honest.stdin(), honest.outputCapBytes(), Optional.empty());
            }
        },
        /** Runs in the parent of the directory asked for. */
        RUNS_ONE_LEVEL_UP {
            @Override
            ExecOptions options(ExecOptions honest) {
                String directory = honest.workingDirectory();
                return directory.equals("/") ? honest
                        : honest.withWorkingDirectory(directory.substring(0, Math.max(1, directory.lastIndexOf('/'))));
            }
        },
        /** Stretches every timeout five-fold. */
        LATE_TIMEOUT {
            @Override
            ExecOptions options(ExecOptions honest) {
                return honest.withTimeout(honest.timeout().multipliedBy(LATE_TIMEOUT_FACTOR));
            }
        },
        /** As bwrap does: a program it cannot execute is its own failure, exit 1 and its own words. */
        MISSING_PROGRAM_EXITS_ONE {
            @Override
            ExecResult exec(Sandbox honest, Command command, ExecOptions options) {
                return whenCannotExecute(honest.exec(command, options), result -> withStderr(result, 1,
                        "bwrap: execvp " + firstWord(command) + ": No such file or directory\n"));
            }
        },
        /** As an OCI runtime does: exit 126/127 kept, stderr replaced by the runtime's own report. */
        RUNTIME_WORDS_AS_STDERR {
            @Override
            ExecResult exec(Sandbox honest, Command command, ExecOptions options) {
                return whenCannotExecute(honest.exec(command, options), result -> withStderr(result,
                        result.exitCode(), "OCI runtime exec failed: exec failed: unable to start container process: "
                                + "exec: \"" + firstWord(command) + "\": executable file not found in $PATH: unknown\n"));
            }
        },
        /** As the reference's old bootstrap did: a working directory it cannot enter is exit 126 and a sentence. */
        WORKING_DIRECTORY_AS_EXIT_CODE {
            @Override
            ExecResult exec(Sandbox honest, Command command, ExecOptions options) {
                try {
                    return honest.exec(command, options);
                } catch (SandboxFileNotFound | SandboxNotADirectory refused) {
                    return ExecResult.of("", "sandbox4j: the working directory " + options.workingDirectory()
                            + " does not exist in the guest or is not a directory\n", 126, Duration.ZERO);
                }
            }
        },
        /** Guesses a launcher failure from the exit code and stderr, so the command's own words are taken for one. */
        GUESSES_LAUNCHER_FAILURE_FROM_STDERR {
            @Override
            ExecResult exec(Sandbox honest, Command command, ExecOptions options) {
                ExecResult result = honest.exec(command, options);
                String stderr = result.stderrText().toLowerCase(Locale.ROOT);
                if (result.exitCode() >= 125 && (stderr.contains("chdir") || stderr.contains("working directory"))) {
                    throw ExecRefusals.workingDirectoryMissing(options.workingDirectory());
                }
                return result;
            }
        };

        ExecResult exec(Sandbox honest, Command command, ExecOptions options) {
            return result(honest.exec(command(command), options(options)));
        }

        Command command(Command honest) {
            return honest;
        }

        ExecOptions options(ExecOptions honest) {
            return honest;
        }

        ExecResult result(ExecResult honest) {
            return honest;
        }
    }

    static final long LAX_CAP_FACTOR = 64;

    /** {@code rewrite} applied to exit 126 or 127 (a program that could not be executed); anything else as it is. */
    private static ExecResult whenCannotExecute(ExecResult result, UnaryOperator<ExecResult> rewrite) {
        return result.exitCode() == 126 || result.exitCode() == 127 ? rewrite.apply(result) : result;
    }

    private static ExecResult withStderr(ExecResult result, int exitCode, String stderr) {
        return new ExecResult(result.stdout(), stderr.getBytes(StandardCharsets.UTF_8), exitCode, result.elapsed());
    }

    /** The program an argv names, or a shell line's first word. */
    private static String firstWord(Command command) {
        return command instanceof Command.Argv argv ? argv.words().get(0)
                : ((Command.Shell) command).line().split(" ", 2)[0];
    }
    static final long LATE_TIMEOUT_FACTOR = 5;

    private final ConformanceTarget honest;
    private final ExecFlaw flaw;

    FlawedExecTarget(ConformanceTarget honest, ExecFlaw flaw) {
        this.honest = Objects.requireNonNull(honest, "honest");
        this.flaw = Objects.requireNonNull(flaw, "flaw");
    }

    @Override
    public SandboxBackend newBackend() {
        SandboxBackend backend = honest.newBackend();
        return new ForwardingBackend(backend) {
            @Override
            public String name() {
                return backend.name() + "+" + flaw;
            }

            @Override
            public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
                return new FlawedSandbox(backend.acquire(key, spec), flaw);
            }
        };
    }

    /** Plants and verifies through the honest sandbox: verification never trusts the flawed exec. */
    @Override
    public GuestSide guestSide(Sandbox sandbox) {
        return honest.guestSide(((FlawedSandbox) sandbox).honest());
    }

    @Override
    public String workBase() {
        return honest.workBase();
    }

    @Override
    public SandboxSpec spec(SandboxSpec.Builder suiteSpec) {
        return honest.spec(suiteSpec);
    }

    /** The honest sandbox, with {@link ExecFlaw} applied to each exec. */
    private static final class FlawedSandbox extends ForwardingSandbox {
        private final ExecFlaw flaw;

        FlawedSandbox(Sandbox honest, ExecFlaw flaw) {
            super(honest);
            this.flaw = flaw;
        }

        Sandbox honest() {
            return delegate();
        }

        @Override
        public ExecResult exec(Command command, ExecOptions options) {
            return flaw.exec(delegate(), command, options);
        }
    }
}
