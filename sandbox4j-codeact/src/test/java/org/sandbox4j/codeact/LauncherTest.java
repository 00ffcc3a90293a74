package org.sandbox4j.codeact;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.sandbox4j.core.spi.PosixShell;

/** The launcher's text; {@link HostToolTransportTest} runs it in a real guest. */
class LauncherTest {

    private static final String HOSTILE_RUN = "/w/it's $(touch pwned) `touch pwned2` \"x\"";

    @Test
    void everyPathAndInterpreterWordIsSingleQuoted() {
        GuestRunLayout layout = GuestRunLayout.of(HOSTILE_RUN, "program.py", GuestRunLayout.PYTHON_SHIM);

        String script = Launcher.script(layout, List.of("python3", "-X", "utf8"));

        // The outer script names the paths quoted once; the detached shell's text is quoted again inside it.
        assertThat(script).contains("cd " + PosixShell.quote(layout.directory()) + " || exit 1\n");
        assertThat(script).contains("mkdir -p " + PosixShell.quote(layout.work()) + " && cd "
                + PosixShell.quote(layout.work()) + " || exit 1\n");
        String program = "'python3' '-X' 'utf8' " + PosixShell.quote(layout.program()) + " > "
                + PosixShell.quote(layout.output()) + " 2>&1 < /dev/null &";
        assertThat(script).contains(PosixShell.quote(program).replaceAll("^'|'$", ""));
        assertThat(unquotedText(script)).doesNotContain("$(touch").doesNotContain("`touch");
        // And inside each detached shell's own text, one level down.
        for (String prefix : List.of("setsid nohup sh -c ", "  nohup sh -c ")) {
            String inner = wordAfter(script, prefix);
            assertThat(inner).contains("$(touch pwned)").contains("mv -f");
            assertThat(unquotedText(inner)).doesNotContain("$(touch").doesNotContain("`touch").contains("wait");
        }
    }

    @Test
    void theLauncherStartsTheProgramDetachedAndRecordsPidSessionAndExitByRename() {
        GuestRunLayout layout = GuestRunLayout.of("/w/run", "program.js", GuestRunLayout.JAVASCRIPT_SHIM);

        String script = Launcher.script(layout, List.of("node"));

        assertThat(script).contains("if command -v setsid > /dev/null 2>&1; then\n  setsid nohup sh -c ");
        assertThat(script).contains("else\n  nohup sh -c ");
        assertThat(script).contains("printf '%s\\n' '" + Launcher.SESSION_MARKER + "'\n");
        assertThat(script).contains("> /dev/null 2>&1 < /dev/null &\n");
        // Inside the detached shell (quoted once more): pid, exit status and session, each staged then renamed.
        assertThat(script).contains("printf '\\''%s\\n'\\'' \"$program\" > '\\''/w/run/host_tools/program_pid.part'\\''"
                + " && mv -f '\\''/w/run/host_tools/program_pid.part'\\'' '\\''/w/run/host_tools/program_pid'\\''");
        assertThat(script).contains("\"$status\" > '\\''/w/run/host_tools/program_exit_code.part'\\'' && mv -f");
        assertThat(script).contains("\"$$\" > '\\''/w/run/host_tools/program_session.part'\\''");
        assertThat(script).contains("PYTHONPATH='\\''/w/run/host_tools'\\''$kept");
        assertThat(script).contains("NODE_PATH='\\''/w/run/host_tools'\\''$kept");
        assertThat(script).contains("PYTHONUNBUFFERED=1\nPYTHONNOUSERSITE=1\n");
        assertThat(script).contains("set -f");
        assertThat(script).contains("'\\''node'\\'' '\\''/w/run/host_tools/program.js'\\'' > "
                + "'\\''/w/run/host_tools/program_output.txt'\\'' 2>&1 < /dev/null &");
        assertThat(script).endsWith("wait\nexit 0\n");
    }

    @Test
    void anEmptyInterpreterIsRefused() {
        GuestRunLayout layout = GuestRunLayout.of("/w/run", "program.py", GuestRunLayout.PYTHON_SHIM);

        assertThatThrownBy(() -> Launcher.script(layout, List.of())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Launcher.script(layout, List.of(""))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Launcher.script(layout, List.of("python3\0"))).isInstanceOf(IllegalArgumentException.class);
    }

    /** What the shell would interpret in {@code script}: everything outside single quotes, escapes dropped. */
    private static String unquotedText(String script) {
        StringBuilder outside = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < script.length(); i++) {
            char c = script.charAt(i);
            if (quoted) {
                quoted = c != '\'';
            } else if (c == '\'') {
                quoted = true;
            } else if (c == '\\') {
                i++;
            } else {
                outside.append(c);
            }
        }
        return outside.toString();
    }

    /** The word that follows {@code prefix} in {@code script}, with the shell's quoting undone. */
    private static String wordAfter(String script, String prefix) {
        StringBuilder word = new StringBuilder();
        int i = script.indexOf(prefix) + prefix.length();
        while (i < script.length() && !Character.isWhitespace(script.charAt(i))) {
            char c = script.charAt(i++);
            if (c == '\'') {
                int end = script.indexOf('\'', i);
                word.append(script, i, end);
                i = end + 1;
            } else if (c == '\\') {
                word.append(script.charAt(i++));
            } else {
                word.append(c);
            }
        }
        return word.toString();
    }
}
