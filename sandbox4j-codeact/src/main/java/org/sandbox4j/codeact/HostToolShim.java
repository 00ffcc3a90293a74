package org.sandbox4j.codeact;

import java.math.BigDecimal;
import java.text.Normalizer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import org.sandbox4j.core.spi.Json;

/**
 * The guest half of the host-tool transport: the source of a module the program imports
 * ({@value GuestRunLayout#SHIM_MODULE}) that turns a call into files the host supervisor reads.
 *
 * <p>The protocol, the same in both languages: {@code call(name, arguments)} claims the lowest free
 * call id by exclusive create of {@code NNNN.claim} in {@code host_tool_calls} (found next to the
 * shim's own file, so the program's working directory does not matter; claims are never removed,
 * so ids are never reused); writes {@code NNNN.request.json} = {@code {"id","name","arguments"}} to a
 * {@code .part} file and renames it into place, so the host never reads half a request; if that
 * fails, publishes {@code {"id":…,"abandoned":true}} so the host steps over the id, and rethrows;
 * then polls {@code NNNN.response.json} every {@value #POLL_MILLIS} ms for up to the call timeout.
 * {@code {"value":…}} is returned, {@code {"refusal":"…"}} raised as {@code HostToolError}, and no
 * answer in time raises {@code HostToolError("host did not answer within N seconds")}.
 *
 * <p>Wrappers per name ({@code sandbox4j_host_tools.lookup(city="Oslo")}) are conveniences and grant
 * nothing: the host resolves every name. Names reach the source only as JSON string literals
 * ({@link Json#quote}), never as code.
 */
final class HostToolShim {

    /** How often the guest looks for its answer. */
    static final long POLL_MILLIS = 50;
    /** Call ids are 4 digits, zero-padded: {@code 0001} … {@code 9999}. */
    static final int CALL_ID_DIGITS = 4;
    /** The last call id a run can claim. */
    static final int MAX_CALL_ID = 9999;
    /** How long a call waits for its answer by default; the host's run timeout should be the tighter bound. */
    static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(300);

    /**
     * Every global the Python shim defines, plus a module's own attributes: a wrapper with one of
     * these names (after NFKC, as Python reads identifiers) would replace the shim's own.
     */
    static final Set<String> PYTHON_SHIM_GLOBALS = Set.of(
            "json", "os", "time", "call", "HostToolError",
            "_CALLS", "_CALL_TIMEOUT_SECONDS", "_CALL_TIMEOUT_TEXT", "_POLL_SECONDS", "_MAX_CALL_ID",
            "_stem", "_claim", "_publish", "_answer", "_wrapper",
            "__name__", "__doc__", "__file__", "__loader__", "__spec__", "__package__", "__builtins__",
            "__cached__", "__annotations__", "__path__", "__all__", "__dict__", "__getattr__", "__dir__");

    /** Python's hard keywords: a wrapper named {@code class} could never be called as an attribute. */
    static final Set<String> PYTHON_KEYWORDS = Set.of(
            "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
            "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in",
            "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield");

    /**
     * The JavaScript shim's exports, plus {@code __proto__}, whose assignment would replace the
     * exports object's prototype rather than add a property.
     */
    static final Set<String> JAVASCRIPT_SHIM_EXPORTS = Set.of("call", "HostToolError", "__proto__");

    private HostToolShim() {
    }

    /**
     * The Python module. {@code from sandbox4j_host_tools import call}; {@code call("lookup",
     * city="Oslo")} or {@code call("lookup", {"city": "Oslo"})}.
     *
     * @param names       the registered tool names; wrappers are made for those that are identifiers
     * @param callTimeout how long one call waits for its answer; finite and positive
     */
    static String python(List<String> names, Duration callTimeout) {
        String timeoutText = seconds(callTimeout);
        StringBuilder source = new StringBuilder(PYTHON_TEMPLATE
                .replace("@CALL_TIMEOUT_SECONDS@", timeoutText)
                .replace("@CALL_TIMEOUT_TEXT@", Json.quote(timeoutText))
                .replace("@POLL_SECONDS@", seconds(Duration.ofMillis(POLL_MILLIS)))
                .replace("@MAX_CALL_ID@", Integer.toString(MAX_CALL_ID))
                .replace("@CALL_ID_DIGITS@", Integer.toString(CALL_ID_DIGITS)));
        Map<String, String> wrappers = pythonWrappers(names);
        if (!wrappers.isEmpty()) {
            source.append("\n# One wrapper per registered name that Python can spell as an attribute.\n");
        }
        for (Map.Entry<String, String> wrapper : wrappers.entrySet()) {
            source.append("globals()[").append(Json.quote(wrapper.getKey())).append("] = _wrapper(")
                    .append(Json.quote(wrapper.getValue())).append(")\n");
        }
        return source.toString();
    }

    /**
     * The JavaScript module (CommonJS, synchronous: {@code fs} for files, {@code Atomics.wait} to
     * sleep). {@code const tools = require('sandbox4j_host_tools'); tools.call('lookup', {city:
     * 'Oslo'})} or {@code tools.lookup({city: 'Oslo'})}.
     *
     * @param names       the registered tool names; wrappers are made for those that are identifiers
     * @param callTimeout how long one call waits for its answer; finite and positive
     */
    static String javascript(List<String> names, Duration callTimeout) {
        String timeoutText = seconds(callTimeout);
        long timeoutMillis = Math.max(1, callTimeout.toMillis());
        StringBuilder source = new StringBuilder(JAVASCRIPT_TEMPLATE
                .replace("@CALL_TIMEOUT_MILLIS@", Long.toString(timeoutMillis))
                .replace("@CALL_TIMEOUT_TEXT@", Json.quote(timeoutText))
                .replace("@POLL_MILLIS@", Long.toString(POLL_MILLIS))
                .replace("@MAX_CALL_ID@", Integer.toString(MAX_CALL_ID))
                .replace("@CALL_ID_DIGITS@", Integer.toString(CALL_ID_DIGITS)));
        List<String> wrappers = javascriptWrappers(names);
        if (!wrappers.isEmpty()) {
            source.append("\n// One wrapper per registered name that JavaScript can spell as a property.\n");
        }
        for (String name : wrappers) {
            String quoted = Json.quote(name);
            source.append("Object.defineProperty(module.exports, ").append(quoted).append(", { value: wrapper(")
                    .append(quoted).append("), enumerable: true });\n");
        }
        return source.toString();
    }

    /**
     * The Python wrappers: attribute name (NFKC, as Python reads it) to the registered name. Only
     * identifiers that are not keywords and do not shadow a shim global; names that collapse to
     * one attribute under NFKC get one wrapper, the first registered.
     */
    static Map<String, String> pythonWrappers(List<String> names) {
        Map<String, String> wrappers = new LinkedHashMap<>();
        for (String name : checkedNames(names)) {
            String attribute = Normalizer.normalize(name, Normalizer.Form.NFKC);
            if (isIdentifier(attribute, false) && !PYTHON_KEYWORDS.contains(attribute)
                    && !PYTHON_SHIM_GLOBALS.contains(attribute)) {
                wrappers.putIfAbsent(attribute, name);
            }
        }
        return wrappers;
    }

    /** The JavaScript wrappers: identifier names that do not replace an export. */
    static List<String> javascriptWrappers(List<String> names) {
        List<String> wrappers = new ArrayList<>();
        for (String name : checkedNames(names)) {
            if (isIdentifier(name, true) && !JAVASCRIPT_SHIM_EXPORTS.contains(name) && !wrappers.contains(name)) {
                wrappers.add(name);
            }
        }
        return wrappers;
    }

    /**
     * Whether {@code name} reads as one identifier: a start character (letter, letter number,
     * {@code _}, and in JavaScript {@code $}) then continue characters. An approximation of each
     * language's Unicode rule; a wrapper is assigned by string key, so a miss only hides a
     * convenience and never breaks the module.
     */
    static boolean isIdentifier(String name, boolean javascript) {
        if (name.isEmpty()) {
            return false;
        }
        int first = name.codePointAt(0);
        if (!(first == '_' || (javascript && first == '$') || Character.isUnicodeIdentifierStart(first))) {
            return false;
        }
        for (int i = Character.charCount(first); i < name.length(); ) {
            int c = name.codePointAt(i);
            boolean part = Character.isUnicodeIdentifierPart(c) && !Character.isIdentifierIgnorable(c);
            boolean joiner = javascript && (c == '$' || c == 0x200C || c == 0x200D);
            if (!part && !joiner) {
                return false;
            }
            i += Character.charCount(c);
        }
        return true;
    }

    private static List<String> checkedNames(List<String> names) {
        Objects.requireNonNull(names, "names");
        for (String name : names) {
            Objects.requireNonNull(name, "a host tool name");
        }
        return names;
    }

    /** Whole seconds as an integer ({@code 300}), else a plain decimal ({@code 0.5}). */
    private static String seconds(Duration timeout) {
        Objects.requireNonNull(timeout, "callTimeout");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("a host-tool call timeout must be positive, not " + timeout);
        }
        BigDecimal seconds = BigDecimal.valueOf(timeout.getSeconds()).add(BigDecimal.valueOf(timeout.getNano(), 9));
        return seconds.stripTrailingZeros().toPlainString();
    }

    private static final String PYTHON_TEMPLATE = """
            \"""sandbox4j host tools: call a function the host registered for this run.

            Generated by sandbox4j; the host decides what every name may do.

                from sandbox4j_host_tools import call, HostToolError
                call("lookup", city="Oslo")          # or call("lookup", {"city": "Oslo"})
            \"""

            import json
            import os
            import time

            _CALLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "host_tool_calls")
            _CALL_TIMEOUT_SECONDS = @CALL_TIMEOUT_SECONDS@
            _CALL_TIMEOUT_TEXT = @CALL_TIMEOUT_TEXT@
            _POLL_SECONDS = @POLL_SECONDS@
            _MAX_CALL_ID = @MAX_CALL_ID@


            class HostToolError(Exception):
                \"""The host refused a host-tool call or did not answer it; the message says which.\"""


            def _stem(number):
                return os.path.join(_CALLS, "%0@CALL_ID_DIGITS@d" % number)


            def _claim():
                # Exclusive create: two callers never hold one id, and a claim is never removed.
                os.makedirs(_CALLS, exist_ok=True)
                for number in range(1, _MAX_CALL_ID + 1):
                    try:
                        handle = os.open(_stem(number) + ".claim", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                    except FileExistsError:
                        continue
                    os.close(handle)
                    return number
                raise HostToolError("every host-tool call id up to %d is taken" % _MAX_CALL_ID)


            def _publish(number, document):
                # Written in full, then renamed: the host never reads half a request.
                final = _stem(number) + ".request.json"
                staged = final + ".part"
                with open(staged, "w", encoding="utf-8") as handle:
                    handle.write(json.dumps(document, ensure_ascii=False, allow_nan=False))
                os.replace(staged, final)


            def call(name, arguments=None, /, **keywords):
                \"""Calls host tool `name` with keyword arguments (a dict, keywords, or both); returns its value.\"""
                if keywords:
                    if arguments is None:
                        arguments = {}
                    if not isinstance(arguments, dict):
                        raise TypeError("pass host-tool arguments as one dict, as keywords, or both")
                    arguments = {**arguments, **keywords}
                number = _claim()
                try:
                    _publish(number, {"id": number, "name": name, "arguments": arguments})
                except BaseException:
                    try:
                        _publish(number, {"id": number, "abandoned": True})
                    except Exception:
                        pass
                    raise
                return _answer(number)


            def _answer(number):
                path = _stem(number) + ".response.json"
                deadline = time.monotonic() + _CALL_TIMEOUT_SECONDS
                while True:
                    try:
                        with open(path, "r", encoding="utf-8") as handle:
                            answer = json.load(handle)
                    except FileNotFoundError:
                        if time.monotonic() >= deadline:
                            raise HostToolError("host did not answer within " + _CALL_TIMEOUT_TEXT + " seconds") from None
                        time.sleep(_POLL_SECONDS)
                        continue
                    if "refusal" in answer:
                        raise HostToolError(answer["refusal"])
                    return answer["value"]


            def _wrapper(name):
                def wrapper(arguments=None, /, **keywords):
                    return call(name, arguments, **keywords)
                wrapper.__name__ = wrapper.__qualname__ = name
                wrapper.__doc__ = "Calls host tool " + json.dumps(name, ensure_ascii=False) + "."
                return wrapper
            """;

    private static final String JAVASCRIPT_TEMPLATE = """
            'use strict';
            // sandbox4j host tools: call a function the host registered for this run.
            // Generated by sandbox4j; the host decides what every name may do.
            //
            //   const tools = require('sandbox4j_host_tools');
            //   tools.call('lookup', { city: 'Oslo' });

            const fs = require('fs');
            const path = require('path');

            const CALLS = path.join(__dirname, 'host_tool_calls');
            const CALL_TIMEOUT_MILLIS = @CALL_TIMEOUT_MILLIS@;
            const CALL_TIMEOUT_TEXT = @CALL_TIMEOUT_TEXT@;
            const POLL_MILLIS = @POLL_MILLIS@;
            const MAX_CALL_ID = @MAX_CALL_ID@;
            // Atomics.wait on a private buffer is a synchronous sleep that burns no CPU.
            const SLEEPER = new Int32Array(new SharedArrayBuffer(4));

            /** The host refused a host-tool call or did not answer it; the message says which. */
            class HostToolError extends Error {
              constructor(message) {
                super(message);
                this.name = 'HostToolError';
              }
            }

            function stem(number) {
              return path.join(CALLS, String(number).padStart(@CALL_ID_DIGITS@, '0'));
            }

            function claim() {
              // Exclusive create: two callers never hold one id, and a claim is never removed.
              fs.mkdirSync(CALLS, { recursive: true });
              for (let number = 1; number <= MAX_CALL_ID; number++) {
                let handle;
                try {
                  handle = fs.openSync(stem(number) + '.claim', 'wx', 0o600);
                } catch (error) {
                  if (error.code === 'EEXIST') {
                    continue;
                  }
                  throw error;
                }
                fs.closeSync(handle);
                return number;
              }
              throw new HostToolError('every host-tool call id up to ' + MAX_CALL_ID + ' is taken');
            }

            function publish(number, document) {
              // Written in full, then renamed: the host never reads half a request.
              const target = stem(number) + '.request.json';
              const staged = target + '.part';
              fs.writeFileSync(staged, JSON.stringify(document));
              fs.renameSync(staged, target);
            }

            /** Calls host tool `name` with an object of keyword arguments; returns its value. */
            function call(name, args) {
              const number = claim();
              try {
                publish(number, { id: number, name: name, arguments: args === undefined ? null : args });
              } catch (error) {
                try {
                  publish(number, { id: number, abandoned: true });
                } catch (ignored) {
                  // Nothing more to tell the host; the original failure is what matters.
                }
                throw error;
              }
              return answer(number);
            }

            function answer(number) {
              const file = stem(number) + '.response.json';
              const deadline = Date.now() + CALL_TIMEOUT_MILLIS;
              for (;;) {
                let text;
                try {
                  text = fs.readFileSync(file, 'utf8');
                } catch (error) {
                  if (error.code !== 'ENOENT') {
                    throw error;
                  }
                  if (Date.now() >= deadline) {
                    throw new HostToolError('host did not answer within ' + CALL_TIMEOUT_TEXT + ' seconds');
                  }
                  Atomics.wait(SLEEPER, 0, 0, POLL_MILLIS);
                  continue;
                }
                const reply = JSON.parse(text);
                if (Object.prototype.hasOwnProperty.call(reply, 'refusal')) {
                  throw new HostToolError(reply.refusal);
                }
                return reply.value;
              }
            }

            function wrapper(name) {
              return function (args) {
                return call(name, args);
              };
            }

            module.exports = { call, HostToolError };
            """;
}
