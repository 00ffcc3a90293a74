package org.sandbox4j.codeact;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.GuestText;

/**
 * Where one host-tool run keeps its files in the guest. With {@code T = <run>/host_tools}: the
 * model's files live only in {@code <run>/work} (the program's working directory), and the
 * transport's own files (program, shim, launcher, request and response files, output, exit code,
 * pid, session id) in the sibling {@code T}. The program runs from {@code T}, so nothing the model
 * writes into {@code work} can shadow the shim or a module the shim imports.
 *
 * <p>The canonical constructor takes any paths (a hand-built layout is how tests prove that the
 * supervisor's reclaim guards hold); {@link #of} is the validated way to make one. The run
 * directory must be fresh for every run: a stale exit marker would end the next run at once.
 *
 * @param directory the run directory
 * @param work      the program's working directory, where the model's files go
 * @param program   the program file, in {@code T}
 * @param shim      the guest module that talks to the host, in {@code T}
 * @param launcher  the POSIX sh launcher, in {@code T}
 * @param calls     the directory of request and response files, in {@code T}
 * @param output    the program's stdout and stderr, merged, in {@code T}
 * @param exitCode  the exit marker: the program's exit status, written last, in {@code T}
 * @param pid       the program's process id, in {@code T}
 * @param session   the session (and process group) id when {@code setsid} was used, in {@code T}
 */
record GuestRunLayout(
        String directory,
        String work,
        String program,
        String shim,
        String launcher,
        String calls,
        String output,
        String exitCode,
        String pid,
        String session) {

    /** The transport's directory inside the run directory. */
    static final String TRANSPORT_DIRECTORY = "host_tools";
    /** The model's (and the program's working) directory inside the run directory. */
    static final String WORK_DIRECTORY = "work";
    /** The module name guest code imports or requires. */
    static final String SHIM_MODULE = "sandbox4j_host_tools";
    /** The Python shim's file name. */
    static final String PYTHON_SHIM = SHIM_MODULE + ".py";
    /** The JavaScript (CommonJS) shim's file name. */
    static final String JAVASCRIPT_SHIM = SHIM_MODULE + ".js";
    static final String LAUNCHER = "run_program.sh";
    static final String CALLS = "host_tool_calls";
    static final String OUTPUT = "program_output.txt";
    static final String EXIT_CODE = "program_exit_code";
    static final String PID = "program_pid";
    static final String SESSION = "program_session";
    /** The suffix of a file written in full before it is renamed into place. */
    static final String STAGED_SUFFIX = ".part";

    /** Every name the transport uses in {@code T}; with their staged spellings, none may name the program. */
    static final List<String> TRANSPORT_NAMES =
            List.of(PYTHON_SHIM, JAVASCRIPT_SHIM, LAUNCHER, CALLS, OUTPUT, EXIT_CODE, PID, SESSION);

    /** Suffixes under which Python imports a file as a module (the part after the first dot). */
    private static final Set<String> PYTHON_MODULE_SUFFIXES = Set.of("py", "pyc", "pyw", "so", "pyd");
    /** Extension-module suffixes that may follow a tag ({@code json.cpython-311-x86_64-linux-gnu.so}). */
    private static final List<String> PYTHON_TAGGED_SUFFIXES = List.of(".so", ".pyd");
    /** Suffixes under which Node resolves a file as a module. */
    private static final Set<String> JAVASCRIPT_MODULE_SUFFIXES = Set.of("js", "mjs", "cjs");

    /**
     * Module names a program in {@code T} must not take: {@code T} is first on the import path, so a
     * program named {@code json.py} would be imported in place of the module the shim needs, and
     * the startup modules would be imported in place of the interpreter's own before any code runs.
     */
    static final Set<String> RESERVED_PYTHON_STEMS = Set.of(SHIM_MODULE, "json", "os", "time",
            "encodings", "site", "sitecustomize", "usercustomize", "abc", "codecs", "genericpath", "io",
            "posixpath", "stat", "_collections_abc", "_sitebuiltins", "_bootlocale");
    /** Node's built-in modules cannot be shadowed by a file; only the shim's own name can. */
    static final Set<String> RESERVED_JAVASCRIPT_STEMS = Set.of(SHIM_MODULE);

    GuestRunLayout {
        Objects.requireNonNull(directory, "directory");
        Objects.requireNonNull(work, "work");
        Objects.requireNonNull(program, "program");
        Objects.requireNonNull(shim, "shim");
        Objects.requireNonNull(launcher, "launcher");
        Objects.requireNonNull(calls, "calls");
        Objects.requireNonNull(output, "output");
        Objects.requireNonNull(exitCode, "exitCode");
        Objects.requireNonNull(pid, "pid");
        Objects.requireNonNull(session, "session");
    }

    /**
     * The layout of one run.
     *
     * @param runDirectory    a fresh, absolute, normalised guest directory with no {@code :} (the
     *                        import-path separator) and no backslash
     * @param programFileName a bare file name for the program, not a transport name, not a module
     *                        name the shim or the interpreter's startup needs
     * @param shimFileName    {@value #PYTHON_SHIM} or {@value #JAVASCRIPT_SHIM}
     * @throws IllegalArgumentException naming what to change
     */
    static GuestRunLayout of(String runDirectory, String programFileName, String shimFileName) {
        Objects.requireNonNull(runDirectory, "runDirectory");
        Objects.requireNonNull(programFileName, "programFileName");
        Objects.requireNonNull(shimFileName, "shimFileName");
        checkRunDirectory(runDirectory);
        if (!shimFileName.equals(PYTHON_SHIM) && !shimFileName.equals(JAVASCRIPT_SHIM)) {
            throw new IllegalArgumentException("the shim must be named " + PYTHON_SHIM + " or " + JAVASCRIPT_SHIM
                    + ", not " + GuestText.quote(shimFileName));
        }
        checkProgramName(programFileName);
        String transport = runDirectory + "/" + TRANSPORT_DIRECTORY;
        return new GuestRunLayout(
                runDirectory,
                runDirectory + "/" + WORK_DIRECTORY,
                transport + "/" + programFileName,
                transport + "/" + shimFileName,
                transport + "/" + LAUNCHER,
                transport + "/" + CALLS,
                transport + "/" + OUTPUT,
                transport + "/" + EXIT_CODE,
                transport + "/" + PID,
                transport + "/" + SESSION);
    }

    /** {@code T}: the directory holding the shim (and, in a layout from {@link #of}, every transport file). */
    String transport() {
        return GuestPaths.parent(shim);
    }

    /** Every transport file, each of which must sit directly in {@link #transport()}. */
    List<String> transportFiles() {
        return List.of(program, shim, launcher, calls, output, exitCode, pid, session);
    }

    /** Every path of the layout, the run directory included. */
    List<String> allPaths() {
        return List.of(directory, work, program, shim, launcher, calls, output, exitCode, pid, session);
    }

    /** The request file of call {@code id}. */
    String request(int id) {
        return calls + "/" + callStem(id) + ".request.json";
    }

    /** The response file of call {@code id}. */
    String response(int id) {
        return calls + "/" + callStem(id) + ".response.json";
    }

    /** {@code 0001}, {@code 0002}, …: the shim's zero-padded call id. */
    static String callStem(int id) {
        return String.format(Locale.ROOT, "%0" + HostToolShim.CALL_ID_DIGITS + "d", id);
    }

    private static void checkRunDirectory(String runDirectory) {
        if (runDirectory.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("the run directory cannot contain a NUL character");
        }
        if (!runDirectory.startsWith("/")) {
            throw new IllegalArgumentException("the run directory " + GuestText.quote(runDirectory)
                    + " must be an absolute guest path");
        }
        if (runDirectory.indexOf(':') >= 0) {
            throw new IllegalArgumentException("the run directory " + GuestText.quote(runDirectory)
                    + " cannot contain ':', which separates PYTHONPATH and NODE_PATH entries; choose another");
        }
        if (runDirectory.indexOf('\\') >= 0) {
            throw new IllegalArgumentException("the run directory " + GuestText.quote(runDirectory)
                    + " cannot contain a backslash; guest paths are POSIX");
        }
        if (!GuestPaths.normalize(runDirectory).equals(runDirectory)) {
            throw new IllegalArgumentException("the run directory " + GuestText.quote(runDirectory)
                    + " must be normalised (no '.', '..', repeated or trailing '/'); pass "
                    + GuestText.quote(GuestPaths.normalize(runDirectory)));
        }
        if (runDirectory.equals("/")) {
            throw new IllegalArgumentException("the run directory cannot be '/'; pass a fresh directory per run");
        }
    }

    private static void checkProgramName(String name) {
        if (name.isEmpty() || name.equals(".") || name.equals("..") || name.indexOf('/') >= 0
                || name.indexOf('\\') >= 0 || name.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("the program must be a bare file name (no '/', no backslash, not '.' "
                    + "or '..'), not " + GuestText.quote(name));
        }
        for (String transportName : TRANSPORT_NAMES) {
            if (name.equals(transportName) || name.equals(transportName + STAGED_SUFFIX)) {
                throw new IllegalArgumentException("the program cannot be named " + GuestText.quote(name)
                        + ": the host-tool transport uses that name; choose another, such as program.py");
            }
        }
        String stem = moduleStem(name, PYTHON_MODULE_SUFFIXES, true);
        if (stem != null && RESERVED_PYTHON_STEMS.contains(stem)) {
            throw new IllegalArgumentException("the program cannot be named " + GuestText.quote(name)
                    + ": Python would import it as module '" + stem + "', which the shim or the interpreter's "
                    + "startup needs; choose another name");
        }
        stem = moduleStem(name, JAVASCRIPT_MODULE_SUFFIXES, false);
        if (stem != null && RESERVED_JAVASCRIPT_STEMS.contains(stem)) {
            throw new IllegalArgumentException("the program cannot be named " + GuestText.quote(name)
                    + ": Node would resolve it as the shim module '" + stem + "'; choose another name");
        }
    }

    /**
     * The module a file would be imported as: the text before the first dot when the rest is one
     * of {@code suffixes}, or (with {@code tagged}) a multi-dot rest ending in an extension-module
     * suffix. {@code null} when the file is no module ({@code notes.txt}, {@code json.backup.py}).
     */
    static String moduleStem(String name, Set<String> suffixes, boolean tagged) {
        int dot = name.indexOf('.');
        if (dot < 0) {
            return null;
        }
        String stem = name.substring(0, dot);
        String suffix = name.substring(dot + 1);
        if (suffixes.contains(suffix)) {
            return stem;
        }
        if (tagged && suffix.indexOf('.') >= 0) {
            for (String extension : PYTHON_TAGGED_SUFFIXES) {
                if (suffix.endsWith(extension)) {
                    return stem;
                }
            }
        }
        return null;
    }
}
