package org.sandbox4j.cli;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.codeact.Language;
import org.sandbox4j.codeact.OutputMode;
import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.TransferLimits;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.mcp.HttpEndpoint;
import org.sandbox4j.mcp.SandboxMcpServer;
import org.sandbox4j.mcp.SessionFiles;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code sandbox4j mcp}: serves {@code execute_code} to any MCP client, over stdio (what Claude
 * Desktop and IDEs start) or streamable HTTP on a loopback port. Each MCP session is its own
 * conversation thread; closing the session disposes of its sandbox. {@code --file-tools} adds the
 * session file tools, with the session's area as execute_code's file store and output sink.
 */
final class McpCommand implements Callable<Integer> {

    /** The environment variable holding the HTTP bearer token, so it need not appear in a process listing. */
    static final String TOKEN_VARIABLE = "SANDBOX4J_MCP_TOKEN";

    /** The library's loggers, held here: the logging system keeps loggers only weakly. */
    private static final Logger SANDBOX4J_LOG = Logger.getLogger("org.sandbox4j");

    /** Bytes in a mebibyte, for the help text. */
    static final long MIB = 1024L * 1024;

    final Sandbox4jCommand root;
    final CommandSpec spec;
    Integer httpPort;
    String token;
    List<String> languages = new ArrayList<>();
    boolean fileTools;
    final SandboxOptions sandbox = new SandboxOptions();

    McpCommand(Sandbox4jCommand root) {
        this.root = root;
        spec = CliSpec.command(Subcommand.MCP.commandName(), this, "Serve execute_code over MCP: on standard input "
                + "and output (default), or streamable HTTP on a loopback port. Each MCP session gets its own "
                + "sandbox, disposed of when the session closes.",
            "",
            "With --file-tools, each session also gets a file area on this host and the tools write_file, "
                + "read_file, list_files and delete_file: the model writes a file, names it in execute_code's "
                + "`files`, has the program write outputs it names in `outputs`, and reads them back. Names are "
                + "plain file names; a session holds at most " + SessionFiles.DEFAULT_MAX_FILES + " files of "
                + SessionFiles.DEFAULT_MAX_FILE_BYTES / MIB + " MiB, " + SessionFiles.DEFAULT_MAX_TOTAL_BYTES / MIB
                + " MiB in all. The areas live under the state directory (" + McpFileRoot.STATE_SUBDIRECTORY
                + "/), or a temporary directory without one; each is deleted when its session closes, and the "
                + "rest when the command ends.");
        spec.usageMessage().sortOptions(false);
        spec.addOption(CliSpec.option("--http", "PORT", Integer.class, () -> httpPort, value -> httpPort = value,
                "Serve streamable HTTP on 127.0.0.1:PORT (0: any free port) instead of stdio.").build());
        spec.addOption(CliSpec.option("--token", "TOKEN", String.class, () -> token, value -> token = value,
                "Bearer token HTTP clients must send (env " + TOKEN_VARIABLE + "; prefer the variable).").build());
        spec.addOption(CliSpec.<List<String>>option("--lang", "LANGUAGE", List.class, () -> languages,
                value -> languages = value, "Languages offered to the model, the first the default: python "
                        + "(default), javascript, java, bash (repeatable or comma-separated).")
                .auxiliaryTypes(String.class).splitRegex(",").build());
        spec.addOption(CliSpec.flag(new String[] {"--file-tools"}, () -> fileTools, value -> fileTools = value,
                "Also offer write_file, read_file, list_files and delete_file on a file area of each session's own, "
                        + "which execute_code takes its `files` from and saves its `outputs` to.").build());
        sandbox.addTo(spec);
        CliSpec.standardHelpOptions(spec);
    }

    @Override
    public Integer call() throws InterruptedException {
        if (sandbox.conversation.thread != null) {
            throw CliFailure.usage("mcp takes no --thread: every MCP session is its own thread");
        }
        List<Language> offered = offered();
        if (token != null && httpPort == null) {
            throw CliFailure.usage("--token only applies to --http; stdio is reachable by its parent alone");
        }
        logProblems(root.console());
        Optional<String> fromVariable = Optional.ofNullable(System.getenv(TOKEN_VARIABLE))
                .filter(value -> !value.isBlank());
        if (httpPort == null && fromVariable.isPresent()) {
            // A variable exported for an HTTP server elsewhere must not stop a host from starting this one.
            root.console().warn(TOKEN_VARIABLE + " is set and ignored: a bearer token only applies to --http");
        }
        Optional<String> bearer = httpPort == null ? Optional.empty()
                : Optional.ofNullable(token).filter(value -> !value.isBlank()).or(() -> fromVariable);
        try (Session session = Session.open(root, sandbox);
                McpFileRoot files = fileTools ? McpFileRoot.open(root.stateDirectory()) : null) {
            SandboxMcpServer.Builder builder = SandboxMcpServer.builder()
                    .router(session.router())
                    .scope(session.scope())
                    .serverInfo(SandboxMcpServer.DEFAULT_SERVER_NAME, Version.number());
            if (files == null) {
                builder.tools(context -> List.of(codeAct(session, offered, context).build()));
            } else {
                session.console().detail("MCP file tools on, their areas under " + files.path());
                builder.sessionFiles(files.sessionFiles())
                        .tools((context, areas) -> List.of(codeAct(session, offered, context)
                                .fileStore(areas)
                                .outputs(OutputMode.DECLARED).outputSink(areas)
                                .filesOut(within(CodeAct.DEFAULT_FILES_OUT, areas.limits()))
                                .build()));
            }
            bearer.ifPresent(builder::bearerToken);
            SandboxMcpServer server;
            try {
                server = builder.build();
            } catch (SandboxException refused) {
                throw Failures.of(refused);
            }
            try (server) {
                if (httpPort == null) {
                    session.console().detail("serving MCP on standard input and output");
                    server.serveStdio();
                    return ExitCodes.OK;
                }
                return serveHttp(session, server);
            }
        }
    }

    /**
     * Without {@code --verbose} (which logs everything from INFO up), warnings and errors of the
     * server and its tools still go to standard error, one line each: a tool's "the detail is in
     * the host's log" must point at something. Never to standard output, the stdio transport.
     */
    private void logProblems(Console console) {
        if (root.verbose) {
            return;
        }
        SANDBOX4J_LOG.setLevel(Level.WARNING);
        SANDBOX4J_LOG.addHandler(new Handler() {
            private final SimpleFormatter formatter = new SimpleFormatter();

            @Override
            public void publish(LogRecord record) {
                if (!isLoggable(record)) {
                    return;
                }
                String line = formatter.formatMessage(record)
                        + (record.getThrown() == null ? "" : ": " + ErrorDetail.of(record.getThrown()));
                if (record.getLevel().intValue() >= Level.SEVERE.intValue()) {
                    console.error("error: " + GuestText.escape(line));
                } else {
                    console.warn("warning: " + GuestText.escape(line));
                }
            }

            @Override
            public void flush() {
                // Console flushes each line.
            }

            @Override
            public void close() {
                // Standard error is not this handler's to close.
            }
        });
    }

    private static CodeAct.Builder codeAct(Session session, List<Language> offered, CallerContext context) {
        CodeAct.Builder builder = CodeAct.builder(session.router(), Session.AGENT, context)
                .languages(offered.get(0), offered.subList(1, offered.size()).toArray(Language[]::new))
                .egressAllow(session.allow()).egressWithoutHosts(session.noNetwork())
                .execTimeout(session.timeout());
        session.maxOutputBytes().ifPresent(builder::maxOutputBytes);
        return builder;
    }

    /**
     * What one call may save, within the session's own caps too: outputs that could never fit are
     * refused whole, before anything lands, rather than part way through the landing.
     */
    static TransferLimits within(TransferLimits limits, SessionFiles caps) {
        return new TransferLimits(Math.min(limits.maxBytesPerFile(), caps.maxFileBytes()),
                Math.min(limits.maxTotalBytes(), caps.maxTotalBytes()), Math.min(limits.maxFiles(), caps.maxFiles()));
    }

    private int serveHttp(Session session, SandboxMcpServer server) throws InterruptedException {
        HttpEndpoint endpoint;
        try {
            endpoint = server.serveHttp(httpPort);
        } catch (IllegalArgumentException wrong) {
            throw CliFailure.usage(wrong.getMessage());
        }
        // The address is the one line a user needs, so it is said even with --quiet off or on a pipe.
        System.err.println(Console.PREFIX + "serving MCP at " + endpoint.uri() + " (Ctrl-C to stop)");
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            endpoint.close();
            stopped.countDown();
        }, "sandbox4j-mcp-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        stopped.await();
        return ExitCodes.OK;
    }

    private List<Language> offered() {
        List<String> names = languages.isEmpty() ? List.of(Language.PYTHON.wire()) : languages;
        LinkedHashSet<Language> offered = new LinkedHashSet<>();
        for (String name : names) {
            offered.add(Language.fromWire(name.strip().toLowerCase(Locale.ROOT)).orElseThrow(() -> CliFailure.usage(
                    "'" + name + "' is not a language sandbox4j runs; use python, javascript, java or bash")));
        }
        return List.copyOf(offered);
    }
}
