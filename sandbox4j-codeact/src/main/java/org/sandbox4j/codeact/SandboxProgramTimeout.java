package org.sandbox4j.codeact;

import java.util.Objects;
import java.util.Optional;

import org.sandbox4j.core.SandboxTimeoutException;

/**
 * A host-tool run's program did not finish within the run's timeout. Says what the host did about
 * it ({@link #outcome()}, {@link #reach()}) and what the program had printed by then. The message
 * is fit for a model: fixed sentences, the program's own output under an "Output so far:" label or
 * the host's note about why there is none, never both.
 *
 * <p>{@link Outcome#SENT} is not proof of death: the signal was accepted, that is all. Beyond the
 * reference, {@link #launcherEnded()} says whether the command that launched the program was also
 * ended by the backend, which on a backend that gives each command its own process namespace
 * (bubblewrap) ends the program and everything it started even where no signal could reach them.
 */
public final class SandboxProgramTimeout extends SandboxTimeoutException {

    private static final long serialVersionUID = 1L;

    /** What became of the attempt to stop the program. */
    public enum Outcome {
        /** SIGKILL was accepted by the guest; {@link #reach()} says for what. */
        SENT,
        /** A pid was recorded but could not be used (not a positive number, or the kill failed). */
        REFUSED,
        /** No launcher ever ran: only the upload happened. */
        ABSENT,
        /** The launcher ran but recorded no pid. */
        UNRECORDED,
        /** The host could not look, or the launcher itself did not come back. */
        UNKNOWN
    }

    /** Who SIGKILL was sent to. */
    public enum Reach {
        /** The program's whole process group (its session), children included. */
        GROUP,
        /** The program's own process only; children it started may still run. */
        PROGRAM
    }

    private final Outcome outcome;
    private final Reach reach;
    private final boolean launcherEnded;
    private final String outputSoFar;

    /**
     * @param situation     the opening sentence (what ran out, and when)
     * @param outcome       what stopping achieved
     * @param reach         who the signal reached, present only with {@link Outcome#SENT}
     * @param launcherEnded whether the backend ended the launching command as well
     * @param outputSoFar   the program's output as read, or empty when none was read
     * @param hostNote      why no output was read; used only when {@code outputSoFar} is empty
     */
    SandboxProgramTimeout(String situation, Outcome outcome, Optional<Reach> reach, boolean launcherEnded,
            Optional<String> outputSoFar, String hostNote) {
        super(message(situation, outcome, reach, launcherEnded, outputSoFar, hostNote));
        this.outcome = Objects.requireNonNull(outcome, "outcome");
        if (reach.isPresent() != (outcome == Outcome.SENT)) {
            throw new IllegalArgumentException("a reach goes with a sent signal and only with one");
        }
        this.reach = reach.orElse(null);
        this.launcherEnded = launcherEnded;
        this.outputSoFar = outputSoFar.orElse("");
    }

    public Outcome outcome() {
        return outcome;
    }

    /** Who SIGKILL reached; empty unless {@link #outcome()} is {@link Outcome#SENT}. */
    public Optional<Reach> reach() {
        return Optional.ofNullable(reach);
    }

    /** Whether the backend ended the command that launched the program. */
    public boolean launcherEnded() {
        return launcherEnded;
    }

    /** What the program printed before it was stopped (stdout and stderr merged, cut); empty when none was read. */
    public String outputSoFar() {
        return outputSoFar;
    }

    private static String message(String situation, Outcome outcome, Optional<Reach> reach, boolean launcherEnded,
            Optional<String> outputSoFar, String hostNote) {
        StringBuilder text = new StringBuilder(situation);
        if (reach.isPresent() && reach.get() == Reach.GROUP) {
            text.append(" Its process group was sent SIGKILL.");
        } else if (reach.isPresent()) {
            text.append(" SIGKILL reaches the program alone; processes it started may still be running.");
        } else if (launcherEnded) {
            text.append(" It could not be signalled, but the command that launched it was ended, which ends it and"
                    + " every process it started where each command has a process namespace of its own; elsewhere"
                    + " it may still be running.");
        } else {
            text.append(" It could not be signalled and may still be running.");
        }
        if (outputSoFar.isPresent() && !outputSoFar.get().isEmpty()) {
            text.append("\nOutput so far:\n").append(outputSoFar.get());
        } else if (outputSoFar.isPresent()) {
            text.append("\nThe program printed nothing.");
        } else {
            text.append("\nNo output was read — ").append(hostNote);
        }
        return text.toString();
    }
}
