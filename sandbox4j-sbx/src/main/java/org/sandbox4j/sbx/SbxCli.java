package org.sandbox4j.sbx;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.spi.Json;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.sbx.SbxJson.Unreadable;

/**
 * The {@code sbx} surface the backend drives (pinned in {@code SBX-PROTOCOL.md}), one method per
 * command, with the failures every command shares turned into exceptions: a lapsed login into
 * {@link SbxLoginRequired}, a daemon without its engine into {@link SbxDaemonFault}, an image
 * sbx cannot start its shell in into a message naming {@code /bin/sh} and {@code /bin/bash}.
 */
final class SbxCli {

    /**
     * Words of a lapsed login, matched case-insensitively anywhere in stderr: the reference's
     * hints; real sbx v0.39 was seen to answer {@code 401 Unauthorized ... no valid user session found}.
     */
    static final List<String> LOGIN_HINTS = List.of("sbx login", "not logged in", "log in", "unauthorized",
            "unauthenticated");
    /** How sandboxd says it lost its engine (the reference's classification). */
    static final String ENGINE_LOST = "backend unavailable";
    /** How sbx v0.45.1 reports an image it cannot start its shell in (no {@code /bin/bash}), per the reference. */
    static final String NO_STARTUP = "kit startup exited with code 127";
    /** The agent every sandbox is created for: a plain shell ({@code sbx create shell PATH}). */
    static final String AGENT = "shell";
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
        throw new SandboxException("backend '" + backendName + "': sbx answered " + GuestText.quote(value) + " for "
                + AGENT_FORWARDING_SETTING + ", neither true nor false; check the sbx version (tested with v0.45.1)");
    }

    /**
     * {@code sbx mcp ls --json}: the registered MCP servers, each named by its {@code name} when it
     * has one. A payload without a {@code servers} list is refused, never read as "none".
     */
    List<String> mcpServers() {
        SbxReply reply = checked(List.of("mcp", "ls", "--json"), "mcp ls");
        List<String> names = new ArrayList<>();
        try {
            for (Object server : list(Json.parseObject(reply.stdout()), "servers")) {
                Object name = server instanceof Map<?, ?> entry ? entry.get("name") : null;
                names.add(name instanceof String text ? GuestText.quote(text) : Json.kind(server));
            }
        } catch (Json.Malformed | Unreadable malformed) {
            throw unreadable("mcp ls", malformed);
        }
        return names;
    }

    /**
     * {@code sbx ls --json}: {@code {"sandboxes":[{"name","id","workspaces":[...]}]}}. An
     * engine-less daemon answers no sandboxes here. Other fields (status, template) are ignored.
     */
    List<SbxListing> ls() {
        SbxReply reply = checked(List.of("ls", "--json"), "ls");
        List<SbxListing> listings = new ArrayList<>();
        try {
            for (Object row : list(Json.parseObject(reply.stdout()), "sandboxes")) {
                Map<String, Object> object = SbxJson.object(row, "a sandbox");
                List<String> workspaces = new ArrayList<>();
                for (Object workspace : list(object, "workspaces")) {
                    workspaces.add(SbxJson.text(workspace, "a workspace"));
                }
                listings.add(new SbxListing(Json.string(object, "id"), Json.string(object, "name"), workspaces));
            }
        } catch (Json.Malformed | Unreadable malformed) {
            throw unreadable("ls", malformed);
        }
        return listings;
    }

    private static List<?> list(Map<String, Object> object, String field) {
        return SbxJson.list(object, field, false);
    }

    Optional<SbxListing> find(String name) {
        return ls().stream().filter(listing -> listing.name().equals(name)).findFirst();
    }

    /** How a create ended: this call made the sandbox, or a racing create had taken the name. */
    enum Created {
        MADE,
        NAME_TAKEN
    }

    /**
     * {@code sbx create shell --name N [--cpus C] [--memory M] --skills off --deny-network "**"
     * --quiet [--template IMAGE] WORKSPACE}. Its stdout is not read (no source says it is the id):
     * the caller takes the id from {@link #ls()} afterwards.
     */
    Created create(String name, Optional<String> image, Optional<Integer> cpus, Optional<String> memory,
            String workspace) {
        SbxReply reply = runner.run(createArgs(name, image, cpus, memory, workspace), timeout);
        if (reply.succeeded()) {
            return Created.MADE;
        }
        String line = classify(reply, "create");
        if (line.contains(ALREADY_EXISTS) || reply.stderr().contains(ALREADY_EXISTS)) {
            return Created.NAME_TAKEN;
        }
        throw failed("create", reply, line);
    }

    /**
     * The create argv. {@code --template} is a container image (default: the agent's own), so it
     * is passed only when the spec names one; {@code --skills off} keeps the shared skills store
     * out, so the workspace is the sandbox's only mount.
     */
    static List<String> createArgs(String name, Optional<String> image, Optional<Integer> cpus,
            Optional<String> memory, String workspace) {
        List<String> args = new ArrayList<>(List.of("create", AGENT, "--name", name));
        cpus.ifPresent(count -> args.addAll(List.of("--cpus", Integer.toString(count))));
        memory.ifPresent(size -> args.addAll(List.of("--memory", size)));
        args.addAll(List.of("--skills", "off", "--deny-network", DENY_EVERY_HOST, "--quiet"));
        image.ifPresent(template -> args.addAll(List.of("--template", template)));
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
     * {@code sbx exec [-u root] NAME COMMAND...} run to completion, for the backend's own short
     * commands (probe, mount point, kill). The reply is returned as is: the caller reads the exit.
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
            args.addAll(List.of("-u", "root"));
        }
        // No "--": sbx exec stops reading flags at NAME (as docker exec does), so a "--" would
        // reach the guest as the command. Every command here starts with a fixed program name.
        args.add(name);
        args.addAll(command);
        return args;
    }

    // ---------------------------------------------------------------- sbx policy and sbx secret

    /** What {@code sbx policy deny network --protocol} is given: every protocol a rule can name. */
    static final String DENY_PROTOCOLS = "tcp,udp";
    /** The name {@code sbx policy check} is asked about when the allowlist is empty. */
    static final String PROBE_HOST = "example.invalid";

    /**
     * {@code sbx policy ls [NAME] --json}: every rule, or (with a name) the global rules and the
     * sandbox's own.
     */
    List<SbxEgress.Rule> policyRules(Optional<String> sandbox) {
        List<String> args = new ArrayList<>(List.of("policy", "ls"));
        sandbox.ifPresent(args::add);
        args.add("--json");
        SbxReply reply = checked(args, "policy ls");
        try {
            return SbxEgress.rules(reply.stdout());
        } catch (Json.Malformed | Unreadable malformed) {
            throw unreadable("policy ls", malformed);
        }
    }

    /**
     * {@code sbx policy check network --json HOST}: whether organization governance is active. A
     * verdict is {@code {"allowed": bool, "governance": {"active": bool}}}, exit 0 when allowed and
     * 1 when denied; anything else is refused, never read as "not governed".
     */
    boolean governed(String host) {
        SbxReply reply = runner.run(List.of("policy", "check", "network", "--json", host), timeout);
        String line = classify(reply, "policy check");
        Map<String, Object> verdict;
        try {
            verdict = Json.parseObject(reply.stdout());
        } catch (Json.Malformed malformed) {
            throw failed("policy check", reply, line);
        }
        Object allowed = verdict.get("allowed");
        if (!(allowed instanceof Boolean answer) || reply.exitCode() != (answer ? 0 : 1)) {
            throw failed("policy check", reply, line);
        }
        Object active = verdict.get("governance") instanceof Map<?, ?> governance ? governance.get("active") : null;
        if (!(active instanceof Boolean governed)) {
            throw new SandboxException("backend '" + backendName + "': sbx policy check --json did not say whether "
                    + "organization governance is active, so whether this host's rules apply cannot be told; check "
                    + "the sbx version (tested with v0.45.1)");
        }
        return governed;
    }

    /** Governance ({@link #governed}) and {@code sbx secret ls --json} read against the allowlist. */
    Optional<String> postureRefusal(List<String> hosts, String sandbox) {
        boolean governed = governed(hosts.isEmpty() ? PROBE_HOST : hosts.get(0).replaceFirst("^\\*\\.", ""));
        SbxReply secrets = checked(List.of("secret", "ls", "--json"), "secret ls");
        try {
            return SbxEgress.postureRefusal(hosts, secrets.stdout(), sandbox, governed);
        } catch (Json.Malformed | Unreadable malformed) {
            throw unreadable("secret ls", malformed);
        }
    }

    /** {@code sbx policy allow network --sandbox NAME R1,R2,...}. */
    void allow(String sandbox, List<String> resources) {
        checked(List.of("policy", "allow", "network", "--sandbox", sandbox, String.join(",", resources)),
                "policy allow");
    }

    /** {@code sbx policy deny network --sandbox NAME --protocol tcp,udp R1,R2,...}. */
    void deny(String sandbox, List<String> resources) {
        checked(List.of("policy", "deny", "network", "--sandbox", sandbox, "--protocol", DENY_PROTOCOLS,
                String.join(",", resources)), "policy deny");
    }

    /** {@code sbx policy rm network --sandbox NAME --resource R --force}. */
    void removeRule(String sandbox, String resource) {
        checked(List.of("policy", "rm", "network", "--sandbox", sandbox, "--resource", resource, "--force"),
                "policy rm");
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
        if (!reply.succeeded()) {
            raiseShared(reply.stderr());
        }
        return reply.errorLine().orElse("");
    }

    /**
     * Throws for a failure every command shares, read from sbx's whole stderr (bounded by the
     * runner): the sources give words, not a line format, so no {@code ERROR:} prefix is assumed.
     */
    void raiseShared(String stderr) {
        String said = stderr.toLowerCase(Locale.ROOT);
        if (said.contains(ENGINE_LOST)) {
            throw new SbxDaemonFault("backend '" + backendName + "': the sbx daemon lost its sandbox engine (it lists "
                    + "no sandboxes and runs none; sbx said " + GuestText.quote(stderr.strip()) + "); run 'sbx daemon "
                    + "restart'");
        }
        if (LOGIN_HINTS.stream().anyMatch(said::contains)) {
            throw new SbxLoginRequired("backend '" + backendName + "': the sbx login lapsed and every sbx command "
                    + "fails until someone signs in again: run 'sbx login' (in CI, pipe an access token to 'sbx login "
                    + "--username <user> --password-stdin')");
        }
        if (said.contains(NO_STARTUP)) {
            throw new SandboxException("backend '" + backendName + "': sbx could not start the template's shell (sbx "
                    + "said " + GuestText.quote(stderr.strip()) + "); a template needs /bin/sh and /bin/bash");
        }
    }

    private SandboxException failed(String what, SbxReply reply, String line) {
        return new SandboxException("backend '" + backendName + "': sbx " + what + " failed (exit " + reply.exitCode()
                + (line.isEmpty() ? "" : ": " + GuestText.quote(line)) + "); run it by hand to see why");
    }

    private SandboxException unreadable(String what, IllegalArgumentException malformed) {
        return new SandboxException("backend '" + backendName + "': could not read the JSON of sbx " + what + " ("
                + malformed.getMessage() + "); check the sbx version (tested with v0.45.1)");
    }
}
