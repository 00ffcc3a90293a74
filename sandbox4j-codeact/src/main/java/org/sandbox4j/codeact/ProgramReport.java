package org.sandbox4j.codeact;

import java.util.ArrayList;
import java.util.List;

import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.outputs.LandedArtifact;

/** The text the model reads about a finished program, in the reference's shape. */
final class ProgramReport {

    static final String NOTHING_PRINTED = "The program printed nothing and exited with 0; print the values you need.";

    private ProgramReport() {
    }

    /** {@code stdout:} and {@code stderr:} sections when non-empty, then {@code exit code: N} when not 0. */
    static String of(ExecResult result) {
        List<String> sections = new ArrayList<>();
        String stdout = result.stdoutText();
        String stderr = result.stderrText();
        if (!stdout.isEmpty()) {
            sections.add("stdout:\n" + trimNewline(stdout));
        }
        if (!stderr.isEmpty()) {
            sections.add("stderr:\n" + trimNewline(stderr));
        }
        if (result.exitCode() != 0) {
            sections.add("exit code: " + result.exitCode());
        }
        return sections.isEmpty() ? NOTHING_PRINTED : String.join("\n", sections);
    }

    /** {@code Saved:} with one line per landed file, then what the program did not write. */
    static String saved(List<LandedArtifact> landed, List<String> notWritten) {
        List<String> lines = new ArrayList<>();
        if (!landed.isEmpty()) {
            lines.add("Saved:");
            landed.forEach(artifact -> lines.add("- " + artifact.display()));
        }
        if (!notWritten.isEmpty()) {
            lines.add("Not written by the program, so not saved: " + String.join(", ", notWritten));
        }
        return String.join("\n", lines);
    }

    private static String trimNewline(String text) {
        return text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
    }
}
