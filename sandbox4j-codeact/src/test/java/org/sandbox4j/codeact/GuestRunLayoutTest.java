package org.sandbox4j.codeact;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class GuestRunLayoutTest {

    private static final String RUN = "/sandbox4j/work/abc123";

    @Test
    void everyTransportFileLivesInTheSiblingOfWork() {
        GuestRunLayout layout = GuestRunLayout.of(RUN, "program.py", GuestRunLayout.PYTHON_SHIM);

        assertThat(layout.directory()).isEqualTo(RUN);
        assertThat(layout.work()).isEqualTo(RUN + "/work");
        assertThat(layout.transport()).isEqualTo(RUN + "/host_tools");
        assertThat(layout.program()).isEqualTo(RUN + "/host_tools/program.py");
        assertThat(layout.shim()).isEqualTo(RUN + "/host_tools/sandbox4j_host_tools.py");
        assertThat(layout.launcher()).isEqualTo(RUN + "/host_tools/run_program.sh");
        assertThat(layout.calls()).isEqualTo(RUN + "/host_tools/host_tool_calls");
        assertThat(layout.output()).isEqualTo(RUN + "/host_tools/program_output.txt");
        assertThat(layout.exitCode()).isEqualTo(RUN + "/host_tools/program_exit_code");
        assertThat(layout.pid()).isEqualTo(RUN + "/host_tools/program_pid");
        assertThat(layout.session()).isEqualTo(RUN + "/host_tools/program_session");
        assertThat(layout.request(7)).isEqualTo(RUN + "/host_tools/host_tool_calls/0007.request.json");
        assertThat(layout.response(12)).isEqualTo(RUN + "/host_tools/host_tool_calls/0012.response.json");
        assertThat(HostToolSupervisor.transportReclaimRefusal(layout)).isEmpty();
    }

    @Test
    void theJavaScriptShimHasItsOwnName() {
        GuestRunLayout layout = GuestRunLayout.of(RUN, "program.js", GuestRunLayout.JAVASCRIPT_SHIM);

        assertThat(layout.shim()).isEqualTo(RUN + "/host_tools/sandbox4j_host_tools.js");
    }

    @ParameterizedTest(name = "run directory {0}")
    @ValueSource(strings = {"relative/run", "/a:b/run", "/a\\b/run", "/a/./run", "/a/../run", "/a//run", "/a/run/",
            "/", "/a/\0run", ""})
    void aRunDirectoryThatIsNotAbsoluteNormalisedAndSeparatorFreeIsRefused(String runDirectory) {
        assertThatThrownBy(() -> GuestRunLayout.of(runDirectory, "program.py", GuestRunLayout.PYTHON_SHIM))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("run directory");
    }

    @Test
    void aRunDirectoryMayHoldQuotesAndDollarsBecauseEveryWordIsQuoted() {
        assertThat(GuestRunLayout.of("/w/it's $(x) `y`", "program.py", GuestRunLayout.PYTHON_SHIM).work())
                .isEqualTo("/w/it's $(x) `y`/work");
    }

    @ParameterizedTest(name = "program {0}")
    @ValueSource(strings = {"", ".", "..", "a/b.py", "/abs.py", "a\\b.py", "nul\0.py",
            // transport names and their staged spellings
            "sandbox4j_host_tools.py", "sandbox4j_host_tools.js", "run_program.sh", "host_tool_calls",
            "program_output.txt", "program_exit_code", "program_pid", "program_session", "program_pid.part",
            "program_exit_code.part", "program_session.part", "run_program.sh.part", "host_tool_calls.part",
            // module stems the shim or the interpreter's startup imports
            "json.py", "os.py", "time.pyc", "site.py", "sitecustomize.py", "usercustomize.py", "encodings.py",
            "io.py", "abc.pyw", "codecs.so", "stat.pyd", "posixpath.py", "genericpath.py", "_collections_abc.py",
            "_sitebuiltins.py", "_bootlocale.py", "json.cpython-311-x86_64-linux-gnu.so", "os.abi3.so",
            "time.cp311-win_amd64.pyd", "sandbox4j_host_tools.pyc",
            // the shim's module for Node
            "sandbox4j_host_tools.mjs", "sandbox4j_host_tools.cjs"})
    void aProgramNameTheTransportOrAnImportNeedsIsRefused(String program) {
        assertThatThrownBy(() -> GuestRunLayout.of(RUN, program, GuestRunLayout.PYTHON_SHIM))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("program");
    }

    @ParameterizedTest(name = "program {0}")
    @ValueSource(strings = {"program.py", "main.js", "program.mjs", "json.txt", "json.backup.py", "json",
            "os.js", "time.cjs", "notes.md", "program", "-x.py", "json.py.txt", "a b.py", "it's.py"})
    void otherBareNamesAreAccepted(String program) {
        assertThat(GuestRunLayout.of(RUN, program, GuestRunLayout.PYTHON_SHIM).program())
                .isEqualTo(RUN + "/host_tools/" + program);
    }

    @ParameterizedTest(name = "shim {0}")
    @ValueSource(strings = {"maf_host_tools.py", "sandbox4j_host_tools.mjs", "", "../sandbox4j_host_tools.py"})
    void onlyTheTwoShimNamesAreAccepted(String shim) {
        assertThatThrownBy(() -> GuestRunLayout.of(RUN, "program.py", shim))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("shim");
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(nullValues = "none", value = {
            "json.py, json", "json.pyc, json", "json.so, json", "json.cpython-311-x86_64-linux-gnu.so, json",
            "json.abi3.pyd, json", "json.txt, none", "json.backup.py, none", "json, none", ".py, ''"})
    void theModuleStemFollowsPythonsFinder(String file, String stem) {
        assertThat(GuestRunLayout.moduleStem(file, java.util.Set.of("py", "pyc", "pyw", "so", "pyd"), true))
                .isEqualTo(stem);
    }
}
