package org.sandbox4j.codeact;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The languages {@code execute_code} can run, each through an interpreter the guest must have.
 * Which of them a deployment offers is the host's choice ({@link CodeAct.Builder#languages}); a
 * guest without the interpreter gets a clear answer, never a confusing shell error.
 */
public enum Language {

    /** CPython 3, the reference's only language and the default. */
    PYTHON("python", "program.py", List.of("python3"), "python3"),
    /** Node.js. */
    JAVASCRIPT("javascript", "program.js", List.of("node"), "node"),
    /**
     * Java, through single-file source launch ({@code java Main.java}): the first top-level class
     * must declare {@code main}. A small heap and the client compiler keep start-up short; the
     * sandbox's own limits still bound it.
     */
    JAVA("java", "Main.java", List.of("java", "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"), "java"),
    /** GNU bash. */
    BASH("bash", "program.sh", List.of("bash"), "bash");

    private final String wire;
    private final String programFileName;
    private final List<String> interpreter;
    private final String requiredCommand;

    Language(String wire, String programFileName, List<String> interpreter, String requiredCommand) {
        this.wire = wire;
        this.programFileName = programFileName;
        this.interpreter = interpreter;
        this.requiredCommand = requiredCommand;
    }

    /** The name the model and configuration use. */
    public String wire() {
        return wire;
    }

    /** The file the program is written to. */
    public String programFileName() {
        return programFileName;
    }

    /** The argv prefix that runs the program file. */
    public List<String> interpreter() {
        return interpreter;
    }

    /** The command the guest must have on its {@code PATH}. */
    public String requiredCommand() {
        return requiredCommand;
    }

    /** Whether guest code in this language can call host tools (a shim exists for it). */
    public boolean hasHostToolShim() {
        return this == PYTHON || this == JAVASCRIPT;
    }

    /** The language named {@code wire} (case-insensitive), or empty. */
    public static Optional<Language> fromWire(String wire) {
        String wanted = wire.strip().toLowerCase(Locale.ROOT);
        for (Language language : values()) {
            if (language.wire.equals(wanted)) {
                return Optional.of(language);
            }
        }
        return Optional.empty();
    }
}
