package org.sandbox4j.microvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;

/**
 * How QEMU runs the guest's CPU. Both keep the hypervisor boundary (the guest has its own kernel);
 * they differ in speed only.
 */
public enum Accelerator {
    /** Hardware virtualisation through {@code /dev/kvm}: fast, where the host really supports it. */
    KVM("kvm"),
    /** QEMU's own translator: slower, works everywhere, still a separate guest kernel. */
    TCG("tcg,tb-size=32");

    private final String qemuOption;

    Accelerator(String qemuOption) {
        this.qemuOption = qemuOption;
    }

    /** The value of QEMU's {@code -accel}; TCG's translation buffer is kept small so guest RAM bounds memory. */
    String qemuOption() {
        return qemuOption;
    }

    /**
     * Which accelerator to try on this host, and why. A {@code /dev/kvm} that opens is not proof:
     * some hosts expose a paravirtual (PVM) device on which a stock guest kernel crashes, so
     * {@link #KVM} is only a candidate here, confirmed by the first guest that boots under it.
     */
    public record Choice(Accelerator accelerator, String reason) {
        public Choice {
            Objects.requireNonNull(accelerator, "accelerator");
            Objects.requireNonNull(reason, "reason");
        }
    }

    /** Reads this host's facts: the KVM device, the PVM module, the CPU's virtualisation flags. */
    static Choice probeHost() {
        return probe(Path.of("/dev/kvm"), Path.of("/sys/module/kvm_pvm"), Path.of("/proc/cpuinfo"));
    }

    static Choice probe(Path kvmDevice, Path pvmModule, Path cpuinfo) {
        if (!Files.exists(kvmDevice)) {
            return new Choice(TCG, "TCG: no " + kvmDevice + " (slower, still a hypervisor boundary)");
        }
        if (!Files.isReadable(kvmDevice) || !Files.isWritable(kvmDevice)) {
            return new Choice(TCG, "TCG: " + kvmDevice + " is not open to this user (add it to the kvm group for "
                    + "speed; TCG is slower, still a hypervisor boundary)");
        }
        if (Files.exists(pvmModule)) {
            return new Choice(TCG, "TCG: " + kvmDevice + " is a paravirtual (PVM) device, on which a stock guest "
                    + "kernel crashes (slower, still a hypervisor boundary)");
        }
        String flags;
        try {
            flags = Files.readString(cpuinfo).toLowerCase(Locale.ROOT);
        } catch (IOException | RuntimeException e) {
            return new Choice(TCG, "TCG: " + cpuinfo + " cannot be read to confirm the CPU virtualises");
        }
        if (!flags.matches("(?s).*\\b(vmx|svm)\\b.*")) {
            return new Choice(TCG, "TCG: the CPU reports neither vmx nor svm (slower, still a hypervisor boundary)");
        }
        return new Choice(KVM, "KVM: " + kvmDevice + " is usable and the CPU virtualises (confirmed by the first "
                + "boot; a guest that does not come up under it falls back to TCG)");
    }
}
