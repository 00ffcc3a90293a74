package org.sandbox4j.sbx;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.sandbox4j.core.spi.BackendNames;

/**
 * How {@link SbxBackend} reaches {@code sbx} and where it keeps its workspaces. Every setting has
 * a default; build one with {@link #builder()}.
 *
 * @param name                the backend's name for the router and messages
 * @param sbxPath             the {@code sbx} binary: a path, or a name looked up on {@code PATH}
 * @param workspaceRoot       where each sandbox's private workspace directory is made (never the
 *                            temporary directory, which a host may clean)
 * @param namePrefix          the first part of every sandbox name this backend owns
 * @param commandTimeout      the bound on each {@code sbx} management command (create, ls, rm, ...)
 * @param execCleanupTimeout  the bound on the second {@code sbx exec} that kills an expired command
 * @param cpus                {@code sbx create --cpus}, when set
 * @param memory              {@code sbx create --memory} (e.g. {@code 4g}), when set
 * @param environment         variables added to {@code sbx}'s own environment (the host's is kept);
 *                            {@value #NO_TELEMETRY} is always set
 */
public record SbxConfig(
        String name,
        String sbxPath,
        Path workspaceRoot,
        String namePrefix,
        Duration commandTimeout,
        Duration execCleanupTimeout,
        Optional<Integer> cpus,
        Optional<String> memory,
        Map<String, String> environment) {

    /** The backend's name unless the builder gives another. */
    public static final String DEFAULT_NAME = "sbx";
    /** The binary looked up on PATH unless configured (or the Windows install location, when present). */
    public static final String DEFAULT_SBX = "sbx";
    /** The prefix of every sandbox name the backend owns. */
    public static final String DEFAULT_NAME_PREFIX = "sandbox4j-";
    /** The bound on a management command; a create pulls a template and boots a VM. */
    public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(300);
    /** The bound on the kill of an expired command. */
    public static final Duration DEFAULT_EXEC_CLEANUP_TIMEOUT = Duration.ofSeconds(10);
    /** Always in {@code sbx}'s environment: opts out of its telemetry. */
    public static final String NO_TELEMETRY = "SBX_NO_TELEMETRY";
    /** The directory name under the per-user state directory. */
    static final String STATE_DIRECTORY_NAME = "sandbox4j-sbx";

    private static final String NAME_PREFIX_PATTERN = "[a-z0-9][a-z0-9-]*";

    public SbxConfig {
        BackendNames.require(name);
        Objects.requireNonNull(sbxPath, "sbxPath");
        if (sbxPath.isBlank()) {
            throw new IllegalArgumentException("the sbx path cannot be blank; name the binary or leave the default");
        }
        workspaceRoot = Objects.requireNonNull(workspaceRoot, "workspaceRoot").toAbsolutePath().normalize();
        Objects.requireNonNull(namePrefix, "namePrefix");
        if (!namePrefix.matches(NAME_PREFIX_PATTERN)) {
            throw new IllegalArgumentException("the name prefix '" + namePrefix + "' must match " + NAME_PREFIX_PATTERN
                    + " (sbx names are lower-case); the default is " + DEFAULT_NAME_PREFIX);
        }
        requirePositive(commandTimeout, "the command timeout");
        requirePositive(execCleanupTimeout, "the exec cleanup timeout");
        Objects.requireNonNull(cpus, "cpus");
        cpus.ifPresent(count -> {
            if (count < 1) {
                throw new IllegalArgumentException("cpus must be at least 1, not " + count);
            }
        });
        Objects.requireNonNull(memory, "memory");
        memory.ifPresent(size -> {
            if (size.isBlank()) {
                throw new IllegalArgumentException("memory cannot be blank; leave it unset for sbx's default");
            }
        });
        Map<String, String> copy = new LinkedHashMap<>(Objects.requireNonNull(environment, "environment"));
        copy.put(NO_TELEMETRY, "1");
        environment = Collections.unmodifiableMap(copy);
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * The per-user state directory: {@code %LOCALAPPDATA%\sandbox4j-sbx\workspaces} on Windows,
     * {@code ~/Library/Application Support/sandbox4j-sbx} on macOS, else
     * {@code $XDG_STATE_HOME/sandbox4j-sbx/workspaces} ({@code ~/.local/state} when unset).
     */
    public static Path defaultWorkspaceRoot() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        Path home = Path.of(System.getProperty("user.home"));
        if (os.startsWith("windows")) {
            String local = System.getenv("LOCALAPPDATA");
            Path base = local == null || local.isBlank() ? home.resolve("AppData").resolve("Local") : Path.of(local);
            return base.resolve(STATE_DIRECTORY_NAME).resolve("workspaces");
        }
        if (os.startsWith("mac")) {
            return home.resolve("Library").resolve("Application Support").resolve(STATE_DIRECTORY_NAME);
        }
        String xdg = System.getenv("XDG_STATE_HOME");
        Path base = xdg == null || xdg.isBlank() ? home.resolve(".local").resolve("state") : Path.of(xdg);
        return base.resolve(STATE_DIRECTORY_NAME).resolve("workspaces");
    }

    /** {@code sbx} on PATH, or on Windows the winget install location when it exists. */
    public static String defaultSbxPath() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String local = System.getenv("LOCALAPPDATA");
        if (os.startsWith("windows") && local != null && !local.isBlank()) {
            Path installed = Path.of(local, "DockerSandboxes", "bin", "sbx.exe");
            if (Files.isRegularFile(installed)) {
                return installed.toString();
            }
        }
        return DEFAULT_SBX;
    }

    private static void requirePositive(Duration value, String what) {
        Objects.requireNonNull(value, what);
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, not " + value);
        }
    }

    /** Mutable, single-use builder; {@link #build()} validates. */
    public static final class Builder {
        private String name = DEFAULT_NAME;
        private String sbxPath;
        private Path workspaceRoot;
        private String namePrefix = DEFAULT_NAME_PREFIX;
        private Duration commandTimeout = DEFAULT_COMMAND_TIMEOUT;
        private Duration execCleanupTimeout = DEFAULT_EXEC_CLEANUP_TIMEOUT;
        private Integer cpus;
        private String memory;
        private final Map<String, String> environment = new LinkedHashMap<>();

        private Builder() {
        }

        public Builder name(String value) {
            this.name = value;
            return this;
        }

        public Builder sbxPath(String value) {
            this.sbxPath = value;
            return this;
        }

        public Builder workspaceRoot(Path value) {
            this.workspaceRoot = value;
            return this;
        }

        public Builder namePrefix(String value) {
            this.namePrefix = value;
            return this;
        }

        public Builder commandTimeout(Duration value) {
            this.commandTimeout = value;
            return this;
        }

        public Builder execCleanupTimeout(Duration value) {
            this.execCleanupTimeout = value;
            return this;
        }

        public Builder cpus(int value) {
            this.cpus = value;
            return this;
        }

        public Builder memory(String value) {
            this.memory = value;
            return this;
        }

        /** Adds one variable to {@code sbx}'s environment (e.g. {@code SBX_EMULATOR_HOME} in tests). */
        public Builder environment(String variable, String value) {
            this.environment.put(Objects.requireNonNull(variable, "variable"), Objects.requireNonNull(value, "value"));
            return this;
        }

        public SbxConfig build() {
            return new SbxConfig(name, sbxPath == null ? defaultSbxPath() : sbxPath,
                    workspaceRoot == null ? defaultWorkspaceRoot() : workspaceRoot, namePrefix, commandTimeout,
                    execCleanupTimeout, Optional.ofNullable(cpus), Optional.ofNullable(memory), environment);
        }
    }
}
