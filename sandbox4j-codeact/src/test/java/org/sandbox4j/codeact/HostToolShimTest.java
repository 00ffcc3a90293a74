package org.sandbox4j.codeact;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

class HostToolShimTest {

    private static final Duration TIMEOUT = HostToolShim.DEFAULT_CALL_TIMEOUT;

    @Test
    void pythonWrappersAreMadeOnlyForIdentifiersThatAreNotKeywordsOrShimGlobals() {
        List<String> names = List.of("lookup", "class", "None", "call", "json", "HostToolError", "_claim", "__file__",
                "get-weather", "2fast", "with space", "", "match", "_private", "naïve");

        assertThat(HostToolShim.pythonWrappers(names)).containsOnlyKeys("lookup", "match", "_private", "naïve");
    }

    @Test
    void pythonWrappersAreNamedAsPythonReadsThemAfterNfkcAndCollapsingNamesGetOne() {
        // U+FB01 LATIN SMALL LIGATURE FI reads as "fi"; the full-width "ｆｉｎｄ" too; "ｃａｌｌ" would shadow call.
        List<String> names = List.of("ﬁnd", "find", "ｆｉｎｄ", "ｃａｌｌ", "ｃｌａｓｓ");

        assertThat(HostToolShim.pythonWrappers(names)).containsExactly(java.util.Map.entry("find", "ﬁnd"));
    }

    @Test
    void javascriptWrappersAreMadeForIdentifiersThatDoNotReplaceAnExport() {
        List<String> names = List.of("lookup", "$money", "class", "call", "HostToolError", "__proto__", "get-weather",
                "2fast", "ﬁnd", "a\u200Db");

        assertThat(HostToolShim.javascriptWrappers(names))
                .containsExactly("lookup", "$money", "class", "ﬁnd", "a\u200Db");
    }

    @Test
    void everyGlobalThePythonShimDefinesIsProtectedFromWrappers() {
        String source = HostToolShim.python(List.of(), TIMEOUT);
        Pattern binding = Pattern.compile("^(?:def |class |import )?([A-Za-z_][A-Za-z0-9_]*)", Pattern.MULTILINE);
        List<String> globals = new ArrayList<>();
        for (String line : source.split("\n")) {
            if (line.isEmpty() || Character.isWhitespace(line.charAt(0)) || line.startsWith("#")
                    || line.startsWith("\"\"\"")) {
                continue;
            }
            Matcher matcher = binding.matcher(line);
            if (matcher.find() && (line.startsWith("def ") || line.startsWith("class ") || line.startsWith("import ")
                    || line.contains(" = "))) {
                globals.add(matcher.group(1));
            }
        }

        assertThat(globals).contains("json", "os", "time", "call", "HostToolError", "_CALLS", "_wrapper");
        assertThat(HostToolShim.PYTHON_SHIM_GLOBALS).containsAll(globals);
    }

    @Test
    void namesReachTheSourceOnlyAsJsonStringLiterals() {
        String hostile = "x\") ; import os ; os.system(\"touch pwned\") ; (\"\n'''\u2028";
        List<String> names = List.of(hostile, "lookup");

        String python = HostToolShim.python(names, TIMEOUT);
        String javascript = HostToolShim.javascript(names, TIMEOUT);

        String literal = org.sandbox4j.core.spi.Json.quote(hostile);
        assertThat(python).doesNotContain(hostile);
        assertThat(javascript).doesNotContain(hostile);
        // Not an identifier, so no wrapper, and the name appears nowhere (it is only ever resolved host-side).
        assertThat(python).doesNotContain(literal);
        assertThat(python).contains("globals()[\"lookup\"] = _wrapper(\"lookup\")\n");
        assertThat(javascript).contains(
                "Object.defineProperty(module.exports, \"lookup\", { value: wrapper(\"lookup\"), enumerable: true });\n");
    }

    @Test
    void aPythonWrapperIsKeyedByItsNfkcSpellingAndCallsTheRegisteredName() {
        assertThat(HostToolShim.python(List.of("ﬁnd"), TIMEOUT)).contains("globals()[\"find\"] = _wrapper(\"ﬁnd\")\n");
        // NFKC turns a no-break space into a space: not an identifier, so no wrapper.
        assertThat(HostToolShim.pythonWrappers(List.of("naïve\u00A0x"))).isEmpty();
    }

    @Test
    void theProtocolConstantsAppearInBothShims() {
        String python = HostToolShim.python(List.of(), Duration.ofMillis(1500));
        String javascript = HostToolShim.javascript(List.of(), Duration.ofMillis(1500));

        assertThat(python).contains("_CALL_TIMEOUT_SECONDS = 1.5\n", "_CALL_TIMEOUT_TEXT = \"1.5\"\n",
                "_POLL_SECONDS = 0.05\n", "\"%04d\" % number", "\"host_tool_calls\"", "os.O_EXCL", ".claim",
                ".request.json", ".part", "os.replace(", "\"abandoned\": True", ".response.json", "\"refusal\"",
                "\"host did not answer within \" + _CALL_TIMEOUT_TEXT + \" seconds\"", "__file__");
        assertThat(javascript).contains("const CALL_TIMEOUT_MILLIS = 1500;\n", "const CALL_TIMEOUT_TEXT = \"1.5\";\n",
                "const POLL_MILLIS = 50;\n", "padStart(4, '0')", "'host_tool_calls'", "'wx'", ".claim",
                ".request.json", ".part", "fs.renameSync(", "abandoned: true", ".response.json", "'refusal'",
                "'host did not answer within ' + CALL_TIMEOUT_TEXT + ' seconds'", "__dirname", "Atomics.wait",
                "SharedArrayBuffer", "module.exports = { call, HostToolError };");
        assertThat(HostToolShim.python(List.of(), Duration.ofSeconds(300))).contains("_CALL_TIMEOUT_TEXT = \"300\"");
    }

    @Test
    void aCallTimeoutMustBePositive() {
        for (Duration bad : List.of(Duration.ZERO, Duration.ofMillis(-1))) {
            assertThatThrownBy(() -> HostToolShim.python(List.of(), bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("positive");
            assertThatThrownBy(() -> HostToolShim.javascript(List.of(), bad))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("positive");
        }
        assertThatThrownBy(() -> HostToolShim.python(List.of(), null)).isInstanceOf(NullPointerException.class);
    }
}
