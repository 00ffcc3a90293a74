package org.sandbox4j.sbx;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A recording fake of the {@code sbx} surface in SBX-PROTOCOL.md, for the protocol's own unit
 * tests. Management commands are answered from memory; a streamed exec runs the wrapper for real
 * with this host's {@code /bin/sh}, with guest paths under a sandbox's bound mount point mapped to
 * its host workspace (the bind the guest would see).
 */
final class FakeSbx implements SbxRunner {

    /** As real sbx v0.39 answered a lapsed login (third-party notes). */
    static final String LOGIN = "401 Unauthorized: no valid user session found";
    /** Carries the words the reference classifies a lost engine by; the rest is assumed. */
    static final String ENGINE = "sandboxd: backend unavailable";

    /** One sandbox the fake holds. */
    static final class Box {
        final String id;
        final String name;
        /** The {@code --template} image, or null for the shell agent's own. */
        final String template;
        final String workspace;
        String mountPoint;

        Box(String id, String name, String template, String workspace) {
            this.id = id;
            this.name = name;
            this.template = template;
            this.workspace = workspace;
        }
    }

    final List<List<String>> calls = Collections.synchronizedList(new ArrayList<>());
    final Map<String, Box> boxes = Collections.synchronizedMap(new LinkedHashMap<>());
    volatile boolean agentForwarding;
    volatile String agentForwardingAnswer;
    volatile List<String> mcpServers = List.of();
    volatile boolean loggedOut;
    volatile boolean engineLost;
    volatile boolean forwardAgent;
    volatile String missingCommands = "";
    volatile boolean killFails;
    volatile boolean bindFails;
    /** How many of the next streamed execs find their own bind refused (a template without user namespaces). */
    volatile int unboundExecs;
    volatile Consumer<String> onRm = name -> { };
    /** {@code sbx policy} rules, as {@code sbx policy ls --json} lists them (the reference's shape). */
    final List<Rule> rules = Collections.synchronizedList(new ArrayList<>());
    volatile boolean governed;
    volatile String secrets = "{\"secrets\":[],\"custom_secrets\":[],\"env_only_count\":0}";
    private int ruleIds;

    /** One rule: {@code resources} may change as {@code policy rm} takes resources out. */
    static final class Rule {
        final String id;
        final String scope;
        final String decision;
        volatile String status = "active";
        final List<String> resources;

        Rule(String id, String scope, String decision, List<String> resources) {
            this.id = id;
            this.scope = scope;
            this.decision = decision;
            this.resources = new ArrayList<>(resources);
        }
    }

    synchronized void addRule(String scope, String decision, String... resources) {
        rules.add(new Rule("rule-" + (++ruleIds), scope, decision, List.of(resources)));
    }

    /** The resources of {@code scope}'s rules with {@code decision}. */
    List<String> resources(String scope, String decision) {
        synchronized (rules) {
            return rules.stream().filter(rule -> rule.scope.equals(scope) && rule.decision.equals(decision))
                    .flatMap(rule -> rule.resources.stream()).sorted().toList();
        }
    }
    volatile Consumer<List<String>> onCreate = args -> { };
    private int ids;

    List<List<String>> callsOf(String command) {
        synchronized (calls) {
            return calls.stream().filter(args -> args.get(0).equals(command)).toList();
        }
    }

    void clearCalls() {
        calls.clear();
    }

    @Override
    public SbxReply run(List<String> args, Duration timeout) {
        calls.add(List.copyOf(args));
        if (args.stream().anyMatch(String::isEmpty)) {
            return SbxReply.error("empty argument at position " + args.indexOf(""));
        }
        if (loggedOut && !args.get(0).equals("version")) {
            return SbxReply.error(LOGIN);
        }
        switch (args.get(0)) {
            case "version":
                return SbxReply.ok("sbx version v0.45.1\n");
            case "settings":
                return SbxReply.ok((agentForwardingAnswer != null ? agentForwardingAnswer : String.valueOf(agentForwarding))
                        + "\n");
            case "mcp":
                StringBuilder servers = new StringBuilder("{\"servers\":[");
                for (String server : mcpServers) {
                    servers.append(servers.length() > 12 ? "," : "").append("{\"name\":\"").append(server)
                            .append("\",\"url\":\"http://127.0.0.1:1\"}");
                }
                return SbxReply.ok(servers.append("]}\n").toString());
            case "ls":
                return SbxReply.ok(engineLost ? "{\"sandboxes\":[]}\n" : listing());
            case "create":
                return create(args);
            case "rm":
                if (engineLost) {
                    return SbxReply.error(ENGINE);
                }
                onRm.accept(args.get(2));
                return boxes.remove(args.get(2)) != null ? SbxReply.ok("")
                        : SbxReply.error("sandbox " + args.get(2) + " not found");
            case "exec":
                return exec(args);
            case "policy":
                return policy(args);
            case "secret":
                return args.equals(List.of("secret", "ls", "--json")) ? SbxReply.ok(secrets + "\n")
                        : SbxReply.error("unknown secret command");
            default:
                return SbxReply.error("unknown command " + args.get(0));
        }
    }

    private synchronized SbxReply create(List<String> args) {
        if (engineLost) {
            return SbxReply.error(ENGINE);
        }
        onCreate.accept(args);
        String name = args.get(args.indexOf("--name") + 1);
        if (boxes.containsKey(name)) {
            return SbxReply.error("a sandbox named " + name + " already exists");
        }
        String id = "id-" + (++ids);
        int template = args.indexOf("--template");
        boxes.put(name, new Box(id, name, template < 0 ? null : args.get(template + 1), args.get(args.size() - 1)));
        int deny = args.indexOf("--deny-network");
        if (deny >= 0) {
            addRule("sandbox:" + name, "deny", args.get(deny + 1));
        }
        // With --quiet, nothing; the id is never printed (the backend reads it from ls).
        return SbxReply.ok("");
    }

    private synchronized SbxReply policy(List<String> args) {
        String verb = args.get(1);
        switch (verb) {
            case "ls": {
                String only = args.size() == 4 ? "sandbox:" + args.get(2) : null;
                StringBuilder json = new StringBuilder("{\"rules\":[");
                boolean first = true;
                synchronized (rules) {
                    for (Rule rule : rules) {
                        if (only != null && !rule.scope.equals("global") && !rule.scope.equals(only)) {
                            continue;
                        }
                        json.append(first ? "" : ",").append("{\"id\":\"").append(rule.id).append("\",\"scope\":\"")
                                .append(rule.scope).append("\",\"decision\":\"").append(rule.decision)
                                .append("\",\"status\":\"").append(governed ? "inactive" : rule.status)
                                .append("\",\"resource_type\":\"network\",\"resources\":[");
                        for (int i = 0; i < rule.resources.size(); i++) {
                            json.append(i == 0 ? "" : ",").append('"').append(rule.resources.get(i)).append('"');
                        }
                        json.append("]}");
                        first = false;
                    }
                }
                return SbxReply.ok(json.append("]}\n").toString());
            }
            case "allow":
            case "deny": {
                int sandbox = args.indexOf("--sandbox");
                String scope = sandbox < 0 ? "global" : "sandbox:" + args.get(sandbox + 1);
                addRule(scope, verb, args.get(args.size() - 1).split(","));
                return SbxReply.ok("");
            }
            case "rm": {
                String scope = "sandbox:" + args.get(args.indexOf("--sandbox") + 1);
                String resource = args.get(args.indexOf("--resource") + 1);
                boolean found = false;
                synchronized (rules) {
                    for (Rule rule : rules) {
                        if (rule.scope.equals(scope)) {
                            found |= rule.resources.remove(resource);
                        }
                    }
                    rules.removeIf(rule -> rule.resources.isEmpty());
                }
                return found ? SbxReply.ok("") : SbxReply.error("no rule for " + resource);
            }
            case "check":
                return new SbxReply(1, "{\"allowed\":false,\"governance\":{\"active\":" + governed + "}}\n", "",
                        false);
            default:
                return SbxReply.error("unknown policy command " + verb);
        }
    }

    /** Adds a sandbox as another process would have made it. */
    synchronized Box adopt(String name, String template, Path workspace) {
        Box box = new Box("id-" + (++ids), name, template, workspace.toString());
        try {
            // As the other process's backend recorded it before its create.
            Files.writeString(workspace.resolveSibling(workspace.getFileName() + SbxBackend.IMAGE_SUFFIX),
                    template == null ? SbxBackend.AGENT_IMAGE : template);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        boxes.put(name, box);
        return box;
    }

    private String listing() {
        StringBuilder json = new StringBuilder("{\"sandboxes\":[");
        synchronized (boxes) {
            for (Box box : boxes.values()) {
                json.append(json.length() > 14 ? "," : "").append("{\"name\":\"").append(box.name)
                        .append("\",\"id\":\"").append(box.id).append("\",\"workspaces\":[\"").append(box.workspace)
                        .append("\"]}");
            }
        }
        return json.append("]}\n").toString();
    }

    /** Where NAME stands in {@code exec [-i] [-u USER] NAME COMMAND...}: flags end at the first positional. */
    static int nameIndex(List<String> args) {
        int i = 1;
        while (args.get(i).startsWith("-")) {
            i += args.get(i).equals("-u") || args.get(i).equals("--user") ? 2 : 1;
        }
        return i;
    }

    private SbxReply exec(List<String> args) {
        if (engineLost) {
            return SbxReply.error(ENGINE);
        }
        int at = nameIndex(args);
        String name = args.get(at);
        Box box = boxes.get(name);
        if (box == null) {
            return SbxReply.error("sandbox " + name + " not found");
        }
        List<String> command = args.subList(at + 1, args.size());
        String script = command.get(2);
        if (script.equals(SbxScripts.PROBE)) {
            return SbxReply.ok((forwardAgent ? SbxScripts.AGENT_SOCKET + " /run/host-services/ssh-auth.sock\n" : "")
                    + SbxScripts.MISSING + missingCommands + "\n" + SbxScripts.PROBE_DONE + "\n");
        }
        if (script.equals(SbxScripts.MOUNT_POINT)) {
            if (bindFails) {
                return new SbxReply(1, "", "mkdir: cannot create directory: Permission denied\n", false);
            }
            box.mountPoint = command.get(4);
            return SbxReply.ok("");
        }
        if (script.equals(SbxScripts.SIGNAL)) {
            return local(command);
        }
        if (script.equals(SbxScripts.KILL)) {
            if (killFails) {
                return new SbxReply(-1, "", "", true);
            }
            return local(command);
        }
        return SbxReply.error("the fake runs only the backend's scripts, not " + command);
    }

    private static SbxReply local(List<String> command) {
        List<String> argv = new ArrayList<>(command);
        argv.set(0, "/bin/sh");
        try {
            Process process = new ProcessBuilder(argv).start();
            process.getOutputStream().close();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            String err = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            process.waitFor(30, TimeUnit.SECONDS);
            return new SbxReply(process.exitValue(), out, err, false);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public Process start(List<String> args) throws IOException {
        calls.add(List.copyOf(args));
        int at = nameIndex(args);
        String name = args.get(at);
        Box box = boxes.get(name);
        if (loggedOut) {
            return failing(LOGIN);
        }
        if (engineLost) {
            return failing(ENGINE);
        }
        if (box == null) {
            return failing("sandbox " + name + " not found");
        }
        List<String> argv = new ArrayList<>(args.subList(at + 1, args.size()));
        argv.set(0, "/bin/sh");
        // argv: sh -c WRAPPER $0 WRAPPER enter nonce state workspace mountPoint workDir backstop envCount words...
        String nonce = argv.get(6);
        if (box.mountPoint == null || unboundExecs > 0) {
            if (unboundExecs > 0) {
                unboundExecs--;
            }
            return new ProcessBuilder("/bin/sh", "-c", "printf 'mount: permission denied\\n%s unbound\\n' \"$0\" >&2; exit "
                    + SbxScripts.CANNOT_RUN, nonce).start();
        }
        // The bind stage is the guest's: the fake starts the wrapper at its run stage with guest
        // paths under the mount point mapped to the host workspace (what the bind would show).
        String mountPoint = argv.get(9);
        argv.set(5, "run");
        argv.set(10, mapped(argv.get(10), mountPoint, box.workspace));
        int envs = Integer.parseInt(argv.get(12));
        for (int i = 13 + envs; i < argv.size(); i++) {
            String word = decode(argv.get(i));
            argv.set(i, SbxScripts.encode(mapped(word, mountPoint, box.workspace)));
        }
        return new ProcessBuilder(argv).start();
    }

    private static Process failing(String message) throws IOException {
        return new ProcessBuilder("/bin/sh", "-c", "echo \"ERROR: $0\" >&2; exit 1", message).start();
    }

    private static String decode(String word) {
        return new String(Base64.getDecoder().decode(word.substring(1)), StandardCharsets.UTF_8);
    }

    private static String mapped(String guest, String mountPoint, String workspace) {
        if (guest.equals(mountPoint)) {
            return workspace;
        }
        return guest.startsWith(mountPoint + "/") ? workspace + guest.substring(mountPoint.length()) : guest;
    }

    static Path workspaceOf(Box box) {
        return Path.of(box.workspace);
    }

    static boolean exists(Path path) {
        return Files.exists(path);
    }
}
