package org.sandbox4j.local;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The seccomp filter every bubblewrap guest runs under: {@code mknod} and {@code mknodat} of a
 * FIFO fail with EPERM; every other system call is untouched. The host reads and lists the
 * workspace from outside, and Java has no non-blocking open: a FIFO a guest swaps in for a file
 * or a directory would block the host thread opening it until something opened the other end.
 * With no FIFO possible, no open of the workspace can block. (Device nodes need CAP_MKNOD, which
 * no guest has; a socket file fails to open at once.) Anonymous pipes are not affected.
 *
 * <p>A classic BPF program as bubblewrap's {@code --add-seccomp-fd} reads it (an array of
 * {@code struct sock_filter}, native byte order), built here rather than with libseccomp so the
 * backend needs no native tool. It covers x86-64 (with its x32 and i386 entry points) and
 * AArch64 (with 32-bit ARM); on any other architecture it allows everything, and
 * {@link #forThisHost()} says so.
 */
final class NoFifoFilter {

    // seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
    private static final int NR = 0;
    private static final int ARCH = 4;
    private static final int ARG1 = 16 + 8;
    private static final int ARG2 = 16 + 16;
    private static final int AUDIT_ARCH_X86_64 = 0xC000003E;
    private static final int AUDIT_ARCH_I386 = 0x40000003;
    private static final int AUDIT_ARCH_AARCH64 = 0xC00000B7;
    private static final int AUDIT_ARCH_ARM = 0x40000028;
    /** x32 system calls are x86-64's numbers with this bit set. */
    private static final int X32_BIT = 0x40000000;
    private static final int S_IFMT = 0xF000;
    private static final int S_IFIFO = 0x1000;
    private static final int RET_ALLOW = 0x7FFF0000;
    private static final int RET_ERRNO_EPERM = 0x00050000 | 1;

    private static final short LD_W_ABS = 0x20;
    private static final short JEQ_K = 0x15;
    private static final short AND_K = 0x54;
    private static final short RET_K = 0x06;

    /**
     * One system-call entry point: its audit architecture, and its numbers of {@code mknod} (-1:
     * it has none, as AArch64) and {@code mknodat}; x86-64's also takes x32 calls, which are its
     * numbers with {@link #X32_BIT} set.
     */
    private record Entry(String label, int auditArch, boolean dropsX32Bit, int mknod, int mknodat) {
    }

    private static final List<Entry> ENTRIES = List.of(
            new Entry("x86-64", AUDIT_ARCH_X86_64, true, 133, 259),
            new Entry("i386", AUDIT_ARCH_I386, false, 14, 297),
            new Entry("aarch64", AUDIT_ARCH_AARCH64, false, -1, 33),
            new Entry("arm", AUDIT_ARCH_ARM, false, 14, 324));

    private NoFifoFilter() {
    }

    /** Whether the filter knows this JVM's architecture (else it would allow everything). */
    static boolean coversThisHost() {
        String arch = System.getProperty("os.arch");
        return arch.equals("amd64") || arch.equals("x86_64") || arch.equals("aarch64");
    }

    /** The program's bytes in this host's byte order. */
    static byte[] forThisHost() {
        Program program = new Program();
        program.load(ARCH);
        for (Entry entry : ENTRIES) {
            program.jumpIfEquals(entry.auditArch(), entry.label());
        }
        program.allow();

        for (Entry entry : ENTRIES) {
            program.label(entry.label());
            program.load(NR);
            if (entry.dropsX32Bit()) {
                program.and(~X32_BIT);
            }
            if (entry.mknod() >= 0) {
                program.jumpIfEquals(entry.mknod(), "mode-in-arg1");
            }
            program.jumpIfEquals(entry.mknodat(), "mode-in-arg2");
            program.allow();
        }

        for (String mode : List.of("mode-in-arg1", "mode-in-arg2")) {
            program.label(mode);
            program.load(mode.endsWith("1") ? ARG1 : ARG2);
            program.and(S_IFMT);
            program.jumpIfEquals(S_IFIFO, "deny");
            program.allow();
        }
        program.label("deny");
        program.ret(RET_ERRNO_EPERM);
        return program.assemble();
    }

    /** A straight-line cBPF program with forward jumps to labels, resolved when assembled. */
    private static final class Program {
        private record Instruction(short code, String jumpTo, int k) {
        }

        private final List<Instruction> instructions = new ArrayList<>();
        private final Map<String, Integer> labels = new HashMap<>();

        void load(int offset) {
            instructions.add(new Instruction(LD_W_ABS, null, offset));
        }

        void and(int mask) {
            instructions.add(new Instruction(AND_K, null, mask));
        }

        /** Jumps to {@code label} when the accumulator equals {@code value}; else falls through. */
        void jumpIfEquals(int value, String label) {
            instructions.add(new Instruction(JEQ_K, label, value));
        }

        void allow() {
            ret(RET_ALLOW);
        }

        void ret(int value) {
            instructions.add(new Instruction(RET_K, null, value));
        }

        void label(String name) {
            labels.put(name, instructions.size());
        }

        byte[] assemble() {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            ByteBuffer entry = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder());
            for (int index = 0; index < instructions.size(); index++) {
                Instruction instruction = instructions.get(index);
                int jumpTrue = 0;
                if (instruction.jumpTo() != null) {
                    jumpTrue = labels.get(instruction.jumpTo()) - index - 1;
                    if (jumpTrue < 0 || jumpTrue > 255) {
                        throw new IllegalStateException("a BPF jump must go forward by at most 255: " + jumpTrue);
                    }
                }
                entry.clear();
                entry.putShort(instruction.code()).put((byte) jumpTrue).put((byte) 0).putInt(instruction.k());
                bytes.write(entry.array(), 0, 8);
            }
            return bytes.toByteArray();
        }
    }
}
