package org.sandbox4j.testkit.tck;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.SandboxSpec;

/**
 * A named set of probes with what a backend must declare to be tested by it (its gate), how the
 * suite's sandbox is specified, and what is planted before the probes run.
 *
 * @param name         stable, e.g. {@code FILES_IN}
 * @param gate         capabilities the backend must declare
 * @param minimumRung  the isolation rung the backend must declare, if any
 * @param egressModes  egress modes the backend must declare
 * @param needsEgress  whether the target must supply an {@link EgressFixture}
 * @param shapeOnly    whether the probes check only the shape of what the sandbox's methods answer
 *                     (kinds, refusals, what is stored), so a target that models shape only and runs
 *                     nothing can pass it honestly
 * @param shape        adds what the suite needs to the spec
 * @param setup        plants the suite's layout once the sandbox is acquired
 * @param probes       in the order they run
 */
public record Suite(
        String name,
        Set<Capability> gate,
        Optional<Isolation> minimumRung,
        Set<Egress> egressModes,
        boolean needsEgress,
        boolean shapeOnly,
        SpecShape shape,
        Setup setup,
        List<Probe> probes) {

    /** Adds to the suite's spec what this suite needs. */
    @FunctionalInterface
    public interface SpecShape {
        SandboxSpec.Builder shape(SandboxSpec.Builder spec, ConformanceTarget target);
    }

    /** Plants the suite's layout; runs once, before the first probe. */
    @FunctionalInterface
    public interface Setup {
        void plant(ProbeContext context) throws Exception;
    }

    public Suite {
        Objects.requireNonNull(name, "name");
        gate = gate.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(gate));
        Objects.requireNonNull(minimumRung, "minimumRung");
        egressModes = egressModes.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(egressModes));
        Objects.requireNonNull(shape, "shape");
        Objects.requireNonNull(setup, "setup");
        probes = List.copyOf(probes);
        Set<String> names = new java.util.HashSet<>();
        for (Probe probe : probes) {
            if (!names.add(probe.name())) {
                throw new IllegalArgumentException("two probes of " + name + " are named " + probe.name());
            }
        }
        if (probes.isEmpty()) {
            throw new IllegalArgumentException("a suite needs at least one probe");
        }
    }

    public static Builder builder(String name) {
        return new Builder(name);
    }

    /**
     * The preamble every file suite shares: it is tested on a backend that declares the one file
     * method it attacks, and checks shape only (kinds, refusals, what is stored).
     */
    public static Builder files(String name, Capability method) {
        return builder(name).checksShapeOnly().gate(method);
    }

    /**
     * The preamble every egress suite shares: it runs commands ({@link Capability#EXEC}), is tested
     * only on a backend that enforces {@code mode}, and acquires its sandbox with that mode.
     */
    public static Builder egress(String name, Egress mode) {
        return builder(name).gate(Capability.EXEC).egressModes(mode).shape((spec, target) -> spec.egress(mode));
    }

    /**
     * Why this backend cannot be tested by this suite, or empty when it can.
     */
    public Optional<String> ineligibility(BackendDeclarations declared, ConformanceTarget target) {
        List<String> reasons = new ArrayList<>();
        Set<Capability> missing = EnumSet.noneOf(Capability.class);
        missing.addAll(gate);
        missing.removeAll(declared.capabilities());
        if (!missing.isEmpty()) {
            reasons.add("it does not declare " + wires(missing));
        }
        if (minimumRung.isPresent() && !declared.isolation().meetsFloor(minimumRung.get())) {
            reasons.add("it declares isolation '" + declared.isolation().wire() + "', below '"
                    + minimumRung.get().wire() + "'");
        }
        Set<Egress> modes = EnumSet.noneOf(Egress.class);
        modes.addAll(egressModes);
        modes.removeAll(declared.egressModes());
        if (!modes.isEmpty()) {
            reasons.add("it does not enforce egress " + wires(modes));
        }
        if (!shapeOnly && target.modelsShapeOnly()) {
            reasons.add("its target models shape only and runs nothing, so these probes would test nothing real");
        }
        if (needsEgress && target.egressFixture().isEmpty()) {
            reasons.add("its target supplies no EgressFixture (loopback servers and an allowlist)");
        }
        if (reasons.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of("the " + name + " suite cannot test this backend: " + String.join("; ", reasons));
    }

    private static String wires(Set<? extends org.sandbox4j.core.WireValue> values) {
        return values.stream().map(org.sandbox4j.core.WireValue::wire).sorted().collect(Collectors.joining(", "));
    }

    /** Mutable, single-use builder. */
    public static final class Builder {
        private final String name;
        private final Set<Capability> gate = EnumSet.noneOf(Capability.class);
        private Isolation minimumRung;
        private final Set<Egress> egressModes = EnumSet.noneOf(Egress.class);
        private boolean needsEgress;
        private boolean shapeOnly;
        private SpecShape shape = (spec, target) -> spec;
        private Setup setup = context -> { };
        private final List<Probe> probes = new ArrayList<>();

        private Builder(String name) {
            this.name = name;
        }

        public Builder gate(Capability... capabilities) {
            gate.addAll(List.of(capabilities));
            return this;
        }

        public Builder minimumRung(Isolation rung) {
            this.minimumRung = rung;
            return this;
        }

        public Builder egressModes(Egress... modes) {
            egressModes.addAll(List.of(modes));
            return this;
        }

        public Builder needsEgressFixture() {
            this.needsEgress = true;
            return this;
        }

        /** The probes check only shape, so a target that runs nothing may be tested by this suite. */
        public Builder checksShapeOnly() {
            this.shapeOnly = true;
            return this;
        }

        /** Adds {@code specShape} to the spec, after whatever earlier calls added. */
        public Builder shape(SpecShape specShape) {
            SpecShape earlier = this.shape;
            this.shape = (spec, target) -> specShape.shape(earlier.shape(spec, target), target);
            return this;
        }

        public Builder setup(Setup plant) {
            this.setup = plant;
            return this;
        }

        public Builder probe(Probe probe) {
            probes.add(probe);
            return this;
        }

        public Builder probes(List<Probe> more) {
            probes.addAll(more);
            return this;
        }

        /** Adds {@code more}, in order, after the probes added so far. */
        public Builder probes(Probe... more) {
            return probes(List.of(more));
        }

        public Suite build() {
            return new Suite(name, gate, Optional.ofNullable(minimumRung), egressModes, needsEgress, shapeOnly, shape,
                    setup, probes);
        }
    }
}
