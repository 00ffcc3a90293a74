package org.sandbox4j.agent;

/**
 * The numbers of protocol version 1 ({@code PROTOCOL.md}): framing, message types, error codes and
 * the bounds the host holds the agent to. Defined once; the agent's own copy is in {@code s4j-agent.c}.
 */
final class AgentProtocol {

    static final int VERSION = 1;
    static final int MAGIC = 0x5334;
    /** What {@code frame_length} counts besides the payload: magic, version, type, id. */
    static final int HEADER_BYTES = 8;
    /** The length prefix and the header: what precedes every payload on the wire. */
    static final int PREFIX_BYTES = 4 + HEADER_BYTES;
    /** The largest payload either side sends (the agent announces the same in HELLO_OK). */
    static final int MAX_PAYLOAD = 1024 * 1024;
    /** The smallest max_payload an agent may announce: one full stdin chunk must fit. */
    static final int MIN_ANNOUNCED_PAYLOAD = 64 * 1024 + 64;

    static final int NONCE_BYTES = 32;
    static final int PING_MAX = 256;
    static final int RESEED_MAX = 4096;
    /** The longest lease the agent arms (366 days). */
    static final long LEASE_MAX_SECONDS = 366L * 24 * 3600;
    static final int MAX_PATH_BYTES = 4096;
    /** Longest text field the host decodes from the agent (names, messages, link targets). */
    static final int MAX_TEXT_BYTES = 4096;
    static final int MAX_NAME_BYTES = 255;
    static final int OUT_CHUNK_MAX = 256 * 1024;
    static final int READ_CHUNK_MAX = 256 * 1024;
    static final int STDIN_CHUNK_MAX = 64 * 1024;
    static final int STDIN_WINDOW = 256 * 1024;
    /** The output credit each stream of an exec starts with (the agent accepts 4 KiB to 16 MiB). */
    static final int OUTPUT_WINDOW = 256 * 1024;

    /** A WRITE_DATA chunk: well inside MAX_PAYLOAD with its length prefix. */
    static final int WRITE_CHUNK = 512 * 1024;

    // host -> agent
    static final int HELLO = 0x01;
    static final int PING = 0x02;
    static final int RESEED = 0x03;
    static final int SHUTDOWN = 0x04;
    static final int SET_CLOCK = 0x05;
    /** Since agent 1.1 (HELLO_OK flag {@link #FLAG_LEASE}). */
    static final int SET_LEASE = 0x06;
    static final int EXEC = 0x10;
    static final int STDIN = 0x11;
    static final int STDIN_CLOSE = 0x12;
    static final int SIGNAL = 0x13;
    static final int KILL = 0x14;
    static final int OUTPUT_ACK = 0x15;
    static final int LSTAT = 0x20;
    static final int READ = 0x21;
    static final int WRITE_OPEN = 0x22;
    static final int WRITE_DATA = 0x23;
    static final int WRITE_COMMIT = 0x24;
    static final int WRITE_ABORT = 0x25;
    static final int LIST = 0x26;
    static final int MKDIR = 0x27;
    static final int UNLINK = 0x28;
    static final int RMDIR = 0x29;
    static final int REMOVE_TREE = 0x2A;

    // agent -> host
    static final int HELLO_OK = 0x81;
    static final int PONG = 0x82;
    static final int STARTED = 0x90;
    static final int OUT = 0x91;
    static final int EXIT = 0x92;
    static final int STDIN_ACK = 0x93;
    static final int STAT = 0xA0;
    static final int DATA = 0xA1;
    static final int ENTRIES = 0xA2;
    static final int DONE = 0xA3;
    static final int ERROR = 0xFF;

    // EXEC flags, WRITE_OPEN flags
    static final int EXEC_STDIN_PIPE = 1;
    /** Run with the agent's own identity, not its {@code --user}: for the host's own setup only. */
    static final int EXEC_AS_AGENT = 2;
    /** End the command's whole tree when its leader exits, before EXIT (HELLO_OK flag {@link #FLAG_TREE_REPORT}). */
    static final int EXEC_END_TREE = 4;
    static final int WRITE_MAY_REPLACE = 1;

    // EXIT fields
    static final int EXITED = 0;
    static final int SIGNALLED = 1;
    static final int LAUNCH_RAN = 0;
    static final int LAUNCH_NOT_FOUND = 1;
    static final int LAUNCH_NOT_EXECUTABLE = 2;
    static final int MAX_SIGNAL = 64;
    /** EXIT's last field (agent 1.2): what became of the command's tree. */
    static final int TREE_UNKNOWN = 0;
    static final int TREE_ENDED = 1;
    static final int TREE_SURVIVED = 2;
    /** SIGNAL's scope: the command's process group. */
    static final int SIGNAL_GROUP = 1;

    // STAT / ENTRIES kinds
    static final int KIND_FILE = 1;
    static final int KIND_DIRECTORY = 2;
    static final int KIND_SYMLINK = 3;
    static final int KIND_OTHER = 4;

    // streams
    static final int STDOUT = 1;
    static final int STDERR = 2;

    // HELLO_OK flags
    static final int FLAG_PID1 = 1;
    static final int FLAG_CGROUP_KILL = 2;
    /** The agent honours {@code SET_LEASE}. */
    static final int FLAG_LEASE = 4;
    /** Agent 1.2: a kill also scans /proc for the exec's {@code S4J_EXEC} marker ({@code --marker-kill}). */
    static final int FLAG_MARKER_KILL = 8;
    /** Agent 1.2: each exec runs under an init of its own in new PID and mount namespaces ({@code --exec-namespaces}). */
    static final int FLAG_EXEC_NAMESPACES = 16;
    /** Agent 1.2: each command has a user namespace of its own, without capabilities ({@code --exec-user}). */
    static final int FLAG_EXEC_USER = 32;
    /** Agent 1.2: the agent honours {@link #EXEC_END_TREE} and EXIT carries the tree field. */
    static final int FLAG_TREE_REPORT = 64;

    private AgentProtocol() {
    }

    /** Whether {@code type} is a message the agent may send in version 1. */
    static boolean isAgentMessage(int type) {
        return switch (type) {
            case HELLO_OK, PONG, STARTED, OUT, EXIT, STDIN_ACK, STAT, DATA, ENTRIES, DONE, ERROR -> true;
            default -> false;
        };
    }

    /** The error codes of an {@code ERROR} frame. */
    enum ErrorCode {
        PROTOCOL(1), BAD_REQUEST(2), VERSION(3), NOT_READY(4), UNKNOWN_TYPE(5), UNKNOWN_ID(6), ID_IN_USE(7),
        LIMIT(8), FLOW(9),
        NOT_FOUND(20), NOT_DIRECTORY(21), IS_DIRECTORY(22), SYMLINK(23), EXISTS(24), NOT_EMPTY(25), TOO_LARGE(26),
        NOT_REGULAR(27), PERMISSION(28), NO_SPACE(29), IO(30),
        CWD_NOT_FOUND(40), CWD_NOT_DIRECTORY(41), LAUNCH(42),
        /** A code this version does not know: treated as the agent failing, never guessed at. */
        UNKNOWN(-1);

        private final int wire;

        ErrorCode(int wire) {
            this.wire = wire;
        }

        static ErrorCode of(int wire) {
            for (ErrorCode code : values()) {
                if (code.wire == wire) {
                    return code;
                }
            }
            return UNKNOWN;
        }
    }
}
