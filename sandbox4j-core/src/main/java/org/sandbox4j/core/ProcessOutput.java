package org.sandbox4j.core;

/**
 * What one {@link SandboxProcess#read} took: the bytes each stream held, and whether the stream has
 * ended (no more will come). Both empty and neither ended means nothing arrived within the wait.
 */
public record ProcessOutput(byte[] stdout, byte[] stderr, boolean stdoutEnded, boolean stderrEnded) {

    public ProcessOutput {
        stdout = stdout.clone();
        stderr = stderr.clone();
    }

    @Override
    public byte[] stdout() {
        return stdout.clone();
    }

    @Override
    public byte[] stderr() {
        return stderr.clone();
    }

    /** Both streams ended: every byte the process wrote has been read. */
    public boolean ended() {
        return stdoutEnded && stderrEnded;
    }

    /** Nothing in this read. */
    public boolean isEmpty() {
        return stdout.length == 0 && stderr.length == 0;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof ProcessOutput that && java.util.Arrays.equals(stdout, that.stdout)
                && java.util.Arrays.equals(stderr, that.stderr) && stdoutEnded == that.stdoutEnded
                && stderrEnded == that.stderrEnded;
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(java.util.Arrays.hashCode(stdout), java.util.Arrays.hashCode(stderr), stdoutEnded,
                stderrEnded);
    }

    @Override
    public String toString() {
        return "ProcessOutput[stdout=" + stdout.length + " bytes" + (stdoutEnded ? " (ended)" : "") + ", stderr="
                + stderr.length + " bytes" + (stderrEnded ? " (ended)" : "") + "]";
    }
}
