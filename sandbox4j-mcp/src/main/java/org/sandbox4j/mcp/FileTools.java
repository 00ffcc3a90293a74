package org.sandbox4j.mcp;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiFunction;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import io.modelcontextprotocol.spec.McpSchema.ToolAnnotations;

import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.spi.Json;
import org.sandbox4j.core.tool.FrameworkCalls;
import org.sandbox4j.core.tool.ToolRefusal;
import org.sandbox4j.core.tool.ToolResult;

/**
 * The file tools a host enables with {@link SandboxMcpServer.Builder#sessionFiles}: write, read,
 * list and delete files in the calling session's area. The session is the call's own (from the
 * server's per-call context), never an argument. What the model reads is fixed sentences plus
 * validated names; host paths never appear.
 */
final class FileTools {

    /** The {@code encoding} of text: UTF-8, the default. */
    static final String TEXT = "utf-8";
    /** The {@code encoding} of bytes: standard base64. */
    static final String BASE64 = "base64";

    private static final String NAME = "name";
    private static final String CONTENT = "content";
    private static final String ENCODING = "encoding";

    private FileTools() {
    }

    /** The four tools over {@code store}, in {@link SessionFiles#TOOL_NAMES} order. */
    static List<SyncToolSpecification> specifications(SessionFileStore store, McpJsonMapper mapper,
            FrameworkCalls calls, SessionLedger ledger, ClientCancellations cancellations) {
        SessionFiles limits = store.limits();
        return List.of(
                tool(mapper, calls, ledger, cancellations, SessionFiles.WRITE_FILE, writeDescription(limits), writeSchema(),
                        annotations(false, true), Set.of(NAME, CONTENT, ENCODING), (session, arguments) ->
                                write(store, session, arguments)),
                tool(mapper, calls, ledger, cancellations, SessionFiles.READ_FILE, READ_DESCRIPTION, readSchema(),
                        annotations(true, false), Set.of(NAME, ENCODING), (session, arguments) ->
                                read(store, session, arguments)),
                tool(mapper, calls, ledger, cancellations, SessionFiles.LIST_FILES, LIST_DESCRIPTION, EMPTY_SCHEMA,
                        annotations(true, false), Set.of(), (session, arguments) -> list(store, session)),
                tool(mapper, calls, ledger, cancellations, SessionFiles.DELETE_FILE, DELETE_DESCRIPTION, deleteSchema(),
                        annotations(false, true), Set.of(NAME), (session, arguments) ->
                                delete(store, session, arguments)));
    }

    private static SyncToolSpecification tool(McpJsonMapper mapper, FrameworkCalls calls, SessionLedger ledger,
            ClientCancellations cancellations,
            String name, String description, String schema, ToolAnnotations annotations, Set<String> parameters,
            BiFunction<String, Map<String, Object>, ToolResult> body) {
        Tool tool = Tool.builder()
                .name(name)
                .description(description)
                .inputSchema(mapper, schema)
                .outputSchema(mapper, ToolBridge.OUTPUT_SCHEMA)
                .annotations(annotations)
                .meta(Map.of(ToolBridge.REQUIRES_APPROVAL_META, false))
                .build();
        return ToolBridge.specification(tool, (session, arguments, output) -> calls.call(name, session, () -> {
            try {
                refuseUnknown(name, parameters, arguments);
                return body.apply(session, arguments);
            } catch (ToolRefusal refused) {
                return ToolResult.error(refused.sentence());
            }
        }), ledger, cancellations);
    }

    // ---------------------------------------------------------------- the four bodies

    private static ToolResult write(SessionFileStore store, String session, Map<String, Object> arguments) {
        String name = string(arguments, NAME, "written");
        String content = string(arguments, CONTENT, "written");
        byte[] bytes;
        if (encoding(arguments, "written").equals(BASE64)) {
            try {
                bytes = Base64.getDecoder().decode(content.replaceAll("\\s", ""));
            } catch (IllegalArgumentException notBase64) {
                throw new ToolRefusal("Error: `content` is not valid base64. Nothing was written.");
            }
        } else {
            bytes = content.getBytes(StandardCharsets.UTF_8);
        }
        SessionFileStore.Written written = store.write(session, name, bytes);
        SessionFiles limits = store.limits();
        return ToolResult.ok("Wrote " + GuestText.quote(written.name()) + " (" + written.sizeBytes() + " bytes). "
                + "The session holds " + written.files() + " of " + limits.maxFiles() + " files, "
                + written.totalBytes() + " of " + limits.maxTotalBytes() + " bytes. To give it to a program, list "
                + GuestText.quote(written.name()) + " in execute_code's `files`.");
    }

    private static ToolResult read(SessionFileStore store, String session, Map<String, Object> arguments) {
        String name = string(arguments, NAME, "read");
        boolean base64 = encoding(arguments, "read").equals(BASE64);
        byte[] bytes = store.read(session, name);
        if (base64) {
            return ToolResult.ok(Base64.getEncoder().encodeToString(bytes));
        }
        try {
            return ToolResult.ok(StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString());
        } catch (CharacterCodingException notText) {
            throw new ToolRefusal("Error: " + GuestText.quote(name) + " is not UTF-8 text (" + bytes.length + " bytes); "
                    + "read it with `encoding` \"" + BASE64 + "\".");
        }
    }

    private static ToolResult list(SessionFileStore store, String session) {
        List<SessionFileStore.Entry> entries = store.list(session);
        SessionFiles limits = store.limits();
        if (entries.isEmpty()) {
            return ToolResult.ok("The session holds no files yet (room for " + limits.maxFiles() + " files, "
                    + limits.maxTotalBytes() + " bytes in all). Write one with write_file, or have execute_code save "
                    + "files here by naming them in its `outputs`.");
        }
        List<String> lines = new ArrayList<>();
        long total = 0;
        for (SessionFileStore.Entry entry : entries) {
            lines.add(entry.name() + " (" + entry.sizeBytes() + " bytes)");
            total += entry.sizeBytes();
        }
        lines.add(entries.size() + " of " + limits.maxFiles() + " files, " + total + " of " + limits.maxTotalBytes()
                + " bytes.");
        return ToolResult.ok(String.join("\n", lines));
    }

    private static ToolResult delete(SessionFileStore store, String session, Map<String, Object> arguments) {
        String name = string(arguments, NAME, "deleted");
        store.delete(session, name);
        return ToolResult.ok("Deleted " + GuestText.quote(SessionFileStore.storedName(name, "deleted")) + ".");
    }

    // ---------------------------------------------------------------- arguments

    private static void refuseUnknown(String tool, Set<String> accepted, Map<String, Object> arguments) {
        for (String key : arguments.keySet()) {
            if (!accepted.contains(key)) {
                String use = accepted.isEmpty() ? "it takes none" : "use " + String.join(", ", new TreeSet<>(accepted));
                throw new ToolRefusal("Error: " + GuestText.quote(key) + " is not a parameter of " + tool + "; " + use
                        + ". Nothing was done.");
            }
        }
    }

    private static String string(Map<String, Object> arguments, String parameter, String done) {
        if (!(arguments.get(parameter) instanceof String value)) {
            throw new ToolRefusal("Error: `" + parameter + "` must be a string. Nothing was " + done + ".");
        }
        return value;
    }

    private static String encoding(Map<String, Object> arguments, String done) {
        Object value = arguments.get(ENCODING);
        if (value == null || TEXT.equals(value)) {
            return TEXT;
        }
        if (BASE64.equals(value)) {
            return BASE64;
        }
        throw new ToolRefusal("Error: `encoding` must be \"" + TEXT + "\" (the default) or \"" + BASE64 + "\". "
                + "Nothing was " + done + ".");
    }

    // ---------------------------------------------------------------- what the model reads

    static String writeDescription(SessionFiles limits) {
        return "Saves a file in this session's file area, on the host: up to " + limits.maxFiles() + " files of at "
                + "most " + limits.maxFileBytes() + " bytes each, " + limits.maxTotalBytes() + " bytes in all, kept "
                + "until the session ends. execute_code runs each program in a fresh directory, so this is how files "
                + "reach a program and come back: write a file here, list its name in execute_code's `files` to "
                + "place it next to the program, have the program write its results and list their names in "
                + "`outputs`, then read them with read_file. `name` is a plain file name (no '/'); a file of that "
                + "name is replaced. `content` is UTF-8 text, or base64 with `encoding` \"base64\".";
    }

    static final String READ_DESCRIPTION = "Returns a file from this session's file area: one written with write_file, "
            + "or saved there by execute_code through its `outputs`. Text comes back as it is; a file that is not "
            + "UTF-8 text needs `encoding` \"base64\".";

    static final String LIST_DESCRIPTION = "Lists the files in this session's file area with their sizes, and how "
            + "much of its room they use.";

    static final String DELETE_DESCRIPTION = "Deletes a file from this session's file area, to make room.";

    static final String EMPTY_SCHEMA = "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}";

    private static String nameProperty(String description) {
        return Json.quote(NAME) + ":{\"type\":\"string\",\"description\":" + Json.quote(description) + "}";
    }

    private static String encodingProperty(String description) {
        return Json.quote(ENCODING) + ":{\"type\":\"string\",\"enum\":[" + Json.quote(TEXT) + "," + Json.quote(BASE64)
                + "],\"default\":" + Json.quote(TEXT) + ",\"description\":" + Json.quote(description) + "}";
    }

    private static String object(List<String> properties, List<String> required) {
        return "{\"type\":\"object\",\"properties\":{" + String.join(",", properties) + "},\"required\":["
                + String.join(",", required.stream().map(Json::quote).toList()) + "],\"additionalProperties\":false}";
    }

    static String writeSchema() {
        return object(List.of(
                nameProperty("The file's name: a plain file name such as data.csv, no '/'."),
                Json.quote(CONTENT) + ":{\"type\":\"string\",\"description\":"
                        + Json.quote("The file's content: UTF-8 text, or base64 with encoding \"base64\".") + "}",
                encodingProperty("How `content` is written: \"utf-8\" text (default) or \"base64\" bytes.")),
                List.of(NAME, CONTENT));
    }

    static String readSchema() {
        return object(List.of(
                nameProperty("The file's name, as list_files shows it."),
                encodingProperty("How the content comes back: \"utf-8\" text (default) or \"base64\" bytes.")),
                List.of(NAME));
    }

    static String deleteSchema() {
        return object(List.of(nameProperty("The file's name, as list_files shows it.")), List.of(NAME));
    }

    private static ToolAnnotations annotations(boolean readOnly, boolean destructive) {
        return ToolAnnotations.builder().readOnlyHint(readOnly).destructiveHint(destructive).idempotentHint(true)
                .openWorldHint(false).build();
    }
}
