package org.sandbox4j.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The fixed part of every {@code bwrap} command line one backend runs: namespaces, identity,
 * capabilities and the read-only system file system. Computed once per backend; each exec adds
 * its workspace, working directory, environment and command.
 */
final class BwrapLayout {

    /** The unprivileged identity inside every sandbox (the conventional {@code nobody}). */
    static final int GUEST_UID = 65534;
    static final int GUEST_GID = 65534;
    static final String GUEST_HOSTNAME = "sandbox4j";
    /** Top-level names of a merged-/usr host that are links into /usr (or directories on older hosts). */
    private static final List<String> USR_LINKS = List.of("bin", "sbin", "lib", "lib32", "lib64", "libx32");
    /** Host configuration a guest program commonly needs and that says nothing about the host's users. */
    private static final List<String> HOST_ETC = List.of("alternatives", "ssl", "ca-certificates", "ld.so.cache",
            "localtime", "mime.types");
    /** Never taken from a root file system: the sandbox makes its own. */
    private static final List<String> PRIVATE_TOP_LEVEL = List.of("proc", "dev", "tmp", "sys", "run");
    /** Sorted: the same layout is the same bwrap line in every JVM (a remembered host check names it). */
    private static final Map<String, String> GUEST_ETC_FILES = java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(Map.of(
            "passwd", "root:x:0:0:root:/root:/bin/sh\nsandbox:x:" + GUEST_UID + ":" + GUEST_GID
                    + ":sandbox4j guest:/tmp:/bin/sh\n",
            "group", "root:x:0:\nsandbox:x:" + GUEST_GID + ":\n",
            "hosts", "127.0.0.1 localhost\n::1 localhost\n",
            "nsswitch.conf", "passwd: files\ngroup: files\nhosts: files dns\n")));

    /**
     * What the resident agent keeps inside bubblewrap's user namespace (it is uid 0 there, never on
     * the host): enough to give each command namespaces, a /proc and empty temporary directories of
     * its own and to drop it to {@link #GUEST_UID} with no capability at all.
     */
    static final String AGENT_CAPABILITIES = "CAP_SYS_ADMIN,CAP_SETPCAP,CAP_SETUID,CAP_SETGID,CAP_SETFCAP";
    private static final List<String> NAMESPACES = List.of("--unshare-all", "--unshare-user");
    private static final List<String> SESSION = List.of("--die-with-parent", "--new-session");

    private final List<String> fixedArguments;
    private final List<String> agentArguments;
    private final String description;

    private BwrapLayout(List<String> fileSystem, String description) {
        List<String> guest = new ArrayList<>(NAMESPACES);
        guest.add("--disable-userns");
        guest.addAll(SESSION);
        guest.addAll(List.of("--uid", Integer.toString(GUEST_UID), "--gid", Integer.toString(GUEST_GID),
                "--cap-drop", "ALL"));
        guest.addAll(fileSystem);
        // The agent makes each command's user namespace (where nested ones are then refused) and drops it to nobody.
        List<String> agent = new ArrayList<>(NAMESPACES);
        agent.addAll(SESSION);
        agent.addAll(List.of("--uid", "0", "--gid", "0", "--cap-add", AGENT_CAPABILITIES));
        agent.addAll(fileSystem);
        this.fixedArguments = List.copyOf(guest);
        this.agentArguments = List.copyOf(agent);
        this.description = description;
    }

    /**
     * @param rootFilesystem a host directory whose top level becomes the guest's (read-only); empty
     *                       = the host's own /usr and its usual links, with a synthesised /etc
     * @param extraBinds     more read-only binds, host path to guest path
     * @param guestEtc       a directory this backend owns, where the synthesised /etc files are written
     * @param tmpBytes       the size of each exec's private /tmp and /var/tmp (tmpfs)
     */
    static BwrapLayout of(Optional<Path> rootFilesystem, List<ReadOnlyBind> extraBinds, Path guestEtc, long tmpBytes)
            throws IOException {
        List<String> args = new ArrayList<>(List.of("--hostname", GUEST_HOSTNAME));
        String description;
        if (rootFilesystem.isPresent()) {
            Path root = rootFilesystem.get().toRealPath();
            try (Stream<Path> top = Files.list(root)) {
                for (Path entry : top.sorted().toList()) {
                    String name = entry.getFileName().toString();
                    if (PRIVATE_TOP_LEVEL.contains(name)) {
                        continue;
                    }
                    if (Files.isSymbolicLink(entry)) {
                        args.addAll(List.of("--symlink", Files.readSymbolicLink(entry).toString(), "/" + name));
                    } else if (Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS)) {
                        args.addAll(List.of("--ro-bind", entry.toString(), "/" + name));
                    }
                }
            }
            description = "root file system " + root;
        } else {
            args.addAll(List.of("--ro-bind", "/usr", "/usr"));
            for (String name : USR_LINKS) {
                Path host = Path.of("/", name);
                if (Files.isSymbolicLink(host)) {
                    args.addAll(List.of("--symlink", Files.readSymbolicLink(host).toString(), "/" + name));
                } else if (Files.isDirectory(host, LinkOption.NOFOLLOW_LINKS)) {
                    args.addAll(List.of("--ro-bind", host.toString(), "/" + name));
                }
            }
            args.addAll(List.of("--dir", "/etc"));
            for (String name : hostEtcNames()) {
                args.addAll(List.of("--ro-bind-try", "/etc/" + name, "/etc/" + name));
            }
            Files.createDirectories(guestEtc);
            for (Map.Entry<String, String> file : GUEST_ETC_FILES.entrySet()) {
                Path path = guestEtc.resolve(file.getKey());
                if (!Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS)
                        || !Files.readString(path, StandardCharsets.UTF_8).equals(file.getValue())) {
                    Files.writeString(path, file.getValue(), StandardCharsets.UTF_8);
                }
                args.addAll(List.of("--ro-bind", path.toString(), "/etc/" + file.getKey()));
            }
            description = "host /usr";
        }
        String tmpSize = Long.toString(tmpBytes);
        args.addAll(List.of("--proc", "/proc", "--dev", "/dev", "--size", tmpSize, "--tmpfs", "/tmp", "--size", tmpSize,
                "--tmpfs", "/var/tmp"));
        for (ReadOnlyBind bind : extraBinds) {
            args.addAll(List.of("--ro-bind", bind.host().toString(), bind.guest()));
        }
        if (!extraBinds.isEmpty()) {
            description += " + " + extraBinds;
        }
        args.add("--clearenv");
        return new BwrapLayout(args, description);
    }

    /** The host's /etc entries worth sharing: a fixed list plus each JDK's configuration (/etc/java-*). */
    private static List<String> hostEtcNames() throws IOException {
        List<String> names = new ArrayList<>(HOST_ETC);
        Path etc = Path.of("/etc");
        if (Files.isDirectory(etc)) {
            try (Stream<Path> entries = Files.list(etc)) {
                entries.map(path -> path.getFileName().toString()).filter(name -> name.startsWith("java-")).sorted()
                        .forEach(names::add);
            }
        }
        return names;
    }

    /** The fixed arguments of a command's own bwrap: the guest as nobody, with no capability. */
    List<String> fixedArguments() {
        return fixedArguments;
    }

    /**
     * The same file system and namespaces for a sandbox's resident agent: uid 0 of bubblewrap's user
     * namespace with {@link #AGENT_CAPABILITIES}, and nested user namespaces allowed (the agent
     * makes one per command, as nobody, where none can be made again).
     */
    List<String> agentArguments() {
        return agentArguments;
    }

    /** What the guest's file system is made of, for the identity fingerprint and diagnostics. */
    String description() {
        return description;
    }

    /**
     * A host path bound read-only into every sandbox.
     *
     * @param host  an absolute host path
     * @param guest an absolute guest path
     */
    record ReadOnlyBind(Path host, String guest) {
        ReadOnlyBind {
            if (!host.isAbsolute() || !guest.startsWith("/")) {
                throw new IllegalArgumentException("a read-only bind needs absolute paths, not " + host + " -> "
                        + guest);
            }
        }

        @Override
        public String toString() {
            return host + " -> " + guest;
        }
    }
}
