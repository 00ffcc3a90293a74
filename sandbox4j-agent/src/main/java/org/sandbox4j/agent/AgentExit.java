package org.sandbox4j.agent;

/**
 * An {@code EXIT}: the command's exit code as a shell reports it (128 + n for a death by signal n;
 * 127 and 126 for a program that could not be run), whether it ran, and what became of its tree.
 *
 * @param exitCode the code
 * @param launch   {@link AgentProtocol#LAUNCH_RAN}, {@link AgentProtocol#LAUNCH_NOT_FOUND} or
 *                 {@link AgentProtocol#LAUNCH_NOT_EXECUTABLE}
 * @param tree     {@link AgentProtocol#TREE_UNKNOWN} (an agent before 1.2 says nothing),
 *                 {@link AgentProtocol#TREE_ENDED} or {@link AgentProtocol#TREE_SURVIVED}
 */
record AgentExit(int exitCode, int launch, int tree) {

    /** A command killed by signal n exits 128 + n, as a shell reports it. */
    static final int SIGNAL_EXIT_BASE = 128;
    /** What a shell exits with for a program it cannot find, and for one it may not execute. */
    static final int MISSING_PROGRAM_EXIT = 127;
    static final int NOT_EXECUTABLE_EXIT = 126;
    private static final int MAX_EXIT_STATUS = 255;

    /** Processes of the command survived the agent's kill: the sandbox can no longer be trusted to be idle. */
    boolean treeSurvived() {
        return tree == AgentProtocol.TREE_SURVIVED;
    }

    /** The EXIT in {@code frame}; a malformed one breaks the connection. */
    static AgentExit of(AgentConnection connection, Frame frame) {
        PayloadReader reader = frame.reader();
        int how = connection.decode(reader::u8);
        int code = connection.decode(reader::i32);
        int launch = connection.decode(reader::u8);
        int tree = connection.decode(() -> reader.hasMore() ? reader.u8() : AgentProtocol.TREE_UNKNOWN);
        if (tree > AgentProtocol.TREE_SURVIVED) {
            throw connection.broken(new AgentProtocolViolation("an EXIT with tree " + tree));
        }
        if (how == AgentProtocol.SIGNALLED && launch == AgentProtocol.LAUNCH_RAN && code >= 1
                && code <= AgentProtocol.MAX_SIGNAL) {
            return new AgentExit(SIGNAL_EXIT_BASE + code, launch, tree);
        }
        if (how != AgentProtocol.EXITED || code < 0 || code > MAX_EXIT_STATUS) {
            throw connection.broken(new AgentProtocolViolation("an EXIT with how " + how + ", code " + code
                    + ", launch " + launch));
        }
        return switch (launch) {
            case AgentProtocol.LAUNCH_RAN -> new AgentExit(code, launch, tree);
            case AgentProtocol.LAUNCH_NOT_FOUND -> new AgentExit(MISSING_PROGRAM_EXIT, launch, tree);
            case AgentProtocol.LAUNCH_NOT_EXECUTABLE -> new AgentExit(NOT_EXECUTABLE_EXIT, launch, tree);
            default -> throw connection.broken(new AgentProtocolViolation("an EXIT with launch " + launch));
        };
    }
}
