package org.sandbox4j.core;

/**
 * The signals a caller may send with {@link SandboxProcess#signal}, by their Linux numbers. KILL is
 * not one of them: {@link SandboxProcess#kill} ends the whole tree, which a signal to one group cannot.
 */
public enum ProcessSignal implements WireValue {
    HANGUP(1),
    INTERRUPT(2),
    QUIT(3),
    USER1(10),
    USER2(12),
    TERMINATE(15);

    private final int number;

    ProcessSignal(int number) {
        this.number = number;
    }

    /** The signal's number on Linux (as {@code kill -s} and the agent protocol take it). */
    public int number() {
        return number;
    }

    /** The name {@code kill -s} takes: {@code TERM}, {@code INT}, ... */
    public String shellName() {
        return switch (this) {
            case HANGUP -> "HUP";
            case INTERRUPT -> "INT";
            case QUIT -> "QUIT";
            case USER1 -> "USR1";
            case USER2 -> "USR2";
            case TERMINATE -> "TERM";
        };
    }

    public static ProcessSignal parse(String value) {
        return WireValue.parse(ProcessSignal.class, value);
    }
}
