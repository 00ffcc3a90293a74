package org.sandbox4j.sbx;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.sandbox4j.core.Json;
import org.sandbox4j.core.SandboxException;

/**
 * The {@code sbx} surface the backend drives (pinned in {@code SBX-PROTOCOL.md}), one method per
 * command, with the error lines every command shares turned into exceptions: a lapsed login into
 * {@link SbxLoginRequired}, a daemon without its engine into {@link SbxDaemonFault}.
 */
final class SbxCli {

    static final String LOGIN_LAPSED = "You are not signed in";
    static final String ENGINE_LOST = "sandbox engine is unavailable";
    static final String ALREADY_EXISTS = "already exists";
    static final String NOT_FOUND = "not found";
    static final String AGENT_FORWARDING_SETTING = "ssh.agentForwardingEnabled";
    static final String DENY_EVERY_HOST = "**";

    private final SbxRunner runner;
    private final String backendName;
    private final Duration timeout;

    SbxCli(SbxRunner runner, String backendName, Duration timeout) {
        this.runner = runner;
        this.backendName = backendName;
        this.timeout = timeout;
    }

    SbxRunner runner() {
        return runner;
    }

    /** {@code sbx settings get ssh.agentForwardingEnabled}: true unless it answers {@code false}. */
    boolean agentForwardingEnabled() {
        SbxReply reply = checked(List.of("settings", "get", AGENT_FORWARDING_SETTING), "settings get");
        String value = reply.stdout().strip();
        if (value.equals("false")) {
            return false;
        }
        if (value.equals("true")) {
            return true;
        }
        throw new SandboxException("backend '" + backendName + "': sbx answered '" + abbreviate(value) + "' for "
                + AGENT_FORWARDING_SETTING + ", neither true nor false; check the sbx version (tested with v0.45.1)");
    }

    /** {@code sbx mcp ls --format json}: the registered MCP servers' names. */
    List<String> mcpServers() {
        SbxReply reply = checked(List.of("mcp", "ls", "--format", "json"), "mcp ls");
        List<String> names = new ArrayList<>();
        for (Map<String, Object> server : parsed(reply, "mcp ls")) {
            Object name = server.get("name");
            names.add(name instanceof String text ? text : String.valueOf(server));
        }
        return names;
    }

    /** {@code sbx ls --format json}. An engine-less daemon answers an empty list here. */
    List<SbxListing> ls() {
        SbxReply reply = checked(List.of("ls", "--format", "json"), "ls");
        List<SbxListing> listings = new ArrayList<>();
        try {
            for (Map<String, Object> row : parsed(reply, "ls")) {
                listings.add(new SbxListing(Json.string(row, "id"), Json.string(row, "name"),
                        Json.string(row, "status"), Json.string(row, "template"),
                        Json.string(row, "workspace")));
            }
        } catch (Json.Malformed malformed) {
            throw unreadable("ls", malformed);
        }
        return listings;
    }

    Optional<SbxListing> find(String name) {
        return ls().stream().filter(listing -> listing.name().equals(name)).findFirst();
    }

    /** How a create ended: made with this id, or the name was taken by a racing create. */
    record Created(Optional<String> id) {
        boolean nameTaken() {
            return id.isEmpty();
        }
    }

    /** {@code sbx create --name N --template T --deny-network "**" [--cpus C] [--memory M] WORKSPACE}. */
    Created create(String name, String template, Optional<Integer> cpus, Optional<String> memory, String workspace) {
        SbxReply reply = runner.run(createArgs(name, template, cpus, memory, workspace), timeout);
        if (reply.succeeded()) {
            return new Created(Optional.of(reply.stdout().strip()));
        }
        String line = classify(reply, "create");
        if (line.contains(ALREADY_EXISTS)) {
            return new Created(Optional.empty());
        }
        throw failed("create", reply, line);
    }

    static List<String> createArgs(String name, String template, Optional<Integer> cpus, Optional<String> memory,
            String workspace) {
        List<String> args = new ArrayList<>(List.of("create", "--name", name, "--template", template,
                "--deny-network", DENY_EVERY_HOST));
        cpus.ifPresent(count -> args.addAll(List.of("--cpus", Integer.toString(count))));
        memory.ifPresent(size -> args.addAll(List.of("--memory", size)));
        args.add(workspace);
        return args;
    }

    /** {@code sbx rm --force NAME}: true when removed, false when there was no such sandbox. */
    boolean rm(String name) {
        SbxReply reply = runner.run(List.of("rm", "--force", name), timeout);
        if (reply.succeeded()) {
            return true;
        }
        String line = classify(reply, "rm");
        if (line.contains(NOT_FOUND)) {
            return false;
        }
        throw failed("rm", reply, line);
    }

    /**
     * {@code sbx exec [--user root] NAME -- COMMAND...} run to completion, for the backend's own
     * short commands (probe, bind, kill). The reply is returned as is: the caller reads the exit.
     */
    SbxReply exec(String name, boolean root, List<String> command, Duration bound) {
        return runner.run(execArgs(name, root, false, command), bound);
    }

    static List<String> execArgs(String name, boolean root, boolean interactive, List<String> command) {
        List<String> args = new ArrayList<>();
        args.add("exec");
        if (interactive) {
            args.add("-i");
        }
        if (root) {
            args.addAll(List.of("--user", "root"));
        }
        args.add(name);
        args.add("--");
        args.addAll(command);
        return args;
    }

    // ---------------------------------------------------------------- errors

    private SbxReply checked(List<String> args, String what) {
        SbxReply reply = runner.run(args, timeout);
        if (reply.succeeded()) {
            return reply;
        }
        throw failed(what, reply, classify(reply, what));
    }

    /**
     * Throws the shared failures (login, daemon, timeout) and otherwise returns the error line
     * ({@code ""} when there is none) for the caller's own reading.
     */
    String classify(SbxReply reply, String what) {
        if (reply.timedOut()) {
            throw new SandboxException("backend '" + backendName + "': sbx " + what + " did not answer within "
                    + timeout.toSeconds() + " s and was killed; check that the sbx daemon is healthy (sbx ls)");
        }
        String line = reply.errorLine().orElse("");
        raiseShared(line);
        return line;
    }

    /** Throws for an error line every command shares. */
    void raiseShared(String line) {
        if (line.contains(LOGIN_LAPSED)) {
            throw new SbxLoginRequired("backend '" + backendName + "': the sbx login lapsed and every sbx command "
                    + "fails until someone signs in again: run 'sbx login' (in CI, pipe an access token to 'sbx login "
                    + "--username <user> --password-stdin')");
        }
        if (line.contains(ENGINE_LOST)) {
            throw new SbxDaemonFault("backend '" + backendName + "': the sbx daemon lost its sandbox engine (it lists "
                    + "no sandboxes and runs none); run 'sbx daemon restart'");
        }
    }

    private SandboxException failed(String what, SbxReply reply, String line) {
        return new SandboxException("backend '" + backendName + "': sbx " + what + " failed (exit " + reply.exitCode()
                + (line.isEmpty() ? "" : ": " + abbreviate(line)) + "); run it by hand to see why");
    }

    private List<Map<String, Object>> parsed(SbxReply reply, String what) {
        try {
            return Json.parseArrayOfObjects(reply.stdout());
        } catch (Json.Malformed malformed) {
            throw unreadable(what, malformed);
        }
    }

    private SandboxException unreadable(String what, Json.Malformed malformed) {
        return new SandboxException("backend '" + backendName + "': could not read the JSON of sbx " + what + " ("
                + malformed.getMessage() + "); check the sbx version (tested with v0.45.1)");
    }

    private static String abbreviate(String text) {
        return text.length() <= 200 ? text : text.substring(0, 200) + "...";
    }
}
