package org.sandbox4j.core.outputs;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.StringJoiner;

import org.sandbox4j.core.DeclaredOutput;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.NameNormalization;
import org.sandbox4j.core.OutputDisposition;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxArtifactNameCollision;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxOutputMissing;
import org.sandbox4j.core.SandboxOutputNotConfined;
import org.sandbox4j.core.SandboxOutputNotRegular;
import org.sandbox4j.core.SandboxOutputSinkRequired;
import org.sandbox4j.core.SandboxOutputSizeUnknown;
import org.sandbox4j.core.SandboxOutputUnreachable;
import org.sandbox4j.core.SandboxPathNotConfined;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.SandboxTransferCapExceeded;
import org.sandbox4j.core.TransferLimits;

/**
 * Collects a spec's declared outputs from a sandbox and lands them in a sink.
 *
 * <p>{@link #collect} runs in a fixed phase order, and that order is the contract: everything the
 * library can refuse is refused before the first byte is read, and nothing the library decides
 * can fail after the first delivery. A collection is delivered whole or refused whole; nothing is
 * ever truncated.
 * <ol>
 *   <li>call-time outputs are admitted only by {@link SandboxSpec#outputsNamedAtCallTime()};</li>
 *   <li>landing outputs need a sink;</li>
 *   <li>names are checked without touching the sandbox: every path, every delivered name, and
 *       collisions between delivered names;</li>
 *   <li>every output is stat'ed, in declaration order, against one tally of
 *       {@link SandboxSpec#filesOut()} (consumed outputs count too);</li>
 *   <li>with nothing to land, the result is empty and the sink is never called;</li>
 *   <li>landing outputs are read with a fresh tally, each bounded by
 *       {@code min(stat size, remaining total)}, and the bytes actually read are counted again
 *       (the guest may have grown a file since the stat);</li>
 *   <li>artifacts are delivered in order.</li>
 * </ol>
 * Outputs are stat'ed and read with the spec's work dir as the sandbox holds it
 * ({@link SandboxSpec#workDirIn}) as working directory. Consumed outputs are never read here: the kind reads them with its own bound.
 */
public final class Outputs {

    private Outputs() {
    }

    /** {@link #collect(Sandbox, SandboxSpec, OutputSink, List)} with no call-time outputs. */
    public static List<LandedArtifact> collect(Sandbox sandbox, SandboxSpec spec, OutputSink sinkOrNull) {
        return collect(sandbox, spec, sinkOrNull, List.of());
    }

    /**
     * Collects {@code spec}'s declared outputs plus {@code callTimeOutputs} and delivers the
     * landing ones to {@code sinkOrNull}, in order.
     *
     * @param sinkOrNull      where landing outputs go; may be null only when nothing lands
     * @param callTimeOutputs outputs named by this call; the spec must admit them
     * @return one landed artifact per landing output that existed, in declaration order
     * @throws IllegalArgumentException    call-time outputs the spec does not admit
     * @throws SandboxOutputSinkRequired   landing outputs and no sink
     * @throws org.sandbox4j.core.SandboxArtifactNameInvalid   a path or delivered name breaks a naming rule
     * @throws SandboxArtifactNameCollision two landing outputs would land under one name
     * @throws SandboxOutputNotConfined    an output escapes the working directory or passes a link
     * @throws SandboxOutputUnreachable    another guest file-system error (the original is the cause)
     * @throws SandboxOutputMissing        a required output does not exist
     * @throws SandboxOutputNotRegular     an output is not a regular file
     * @throws SandboxOutputSizeUnknown    the sandbox could not tell an output's size
     * @throws SandboxTransferCapExceeded  a file, the file count or the total is over {@code spec.filesOut()}
     */
    public static List<LandedArtifact> collect(
            Sandbox sandbox, SandboxSpec spec, OutputSink sinkOrNull, List<DeclaredOutput> callTimeOutputs) {
        Objects.requireNonNull(sandbox, "sandbox");
        Objects.requireNonNull(spec, "spec");
        List<DeclaredOutput> callTime = List.copyOf(callTimeOutputs);

        // 1. Call-time names must be admitted by the spec.
        if (!callTime.isEmpty() && !spec.outputsNamedAtCallTime()) {
            throw new IllegalArgumentException("this call names outputs " + paths(callTime) + ", but the spec of kind "
                    + GuestText.quote(spec.kind()) + " does not admit outputs named at call time; set "
                    + "outputsNamedAtCallTime(true) on the spec or declare them there");
        }
        List<DeclaredOutput> all = new ArrayList<>(spec.declaredOutputs());
        all.addAll(callTime);
        List<DeclaredOutput> landing = landing(all);

        // 2. Landing outputs need somewhere to land.
        if (!landing.isEmpty() && sinkOrNull == null) {
            throw missingSinkRefusal(spec, landing, "collecting outputs");
        }

        // 3. Names, before the sandbox is touched.
        NameNormalization normalization = sinkOrNull == null ? NameNormalization.NONE : sinkOrNull.normalization();
        List<String> deliveredNames = checkNames(all, normalization);

        // 4. Stat everything against one tally.
        List<Pending> toRead = statPhase(sandbox, spec, all, deliveredNames);

        // 5. Nothing to land: the sink is not called.
        if (toRead.isEmpty()) {
            return List.of();
        }

        // 6. Read with a fresh tally, counting the bytes actually read.
        List<Artifact> artifacts = readPhase(sandbox, spec, toRead);

        // 7. Deliver in order. A sink throwing mid-set leaves earlier deliveries in place.
        List<LandedArtifact> landed = new ArrayList<>(artifacts.size());
        for (Artifact artifact : artifacts) {
            landed.add(Objects.requireNonNull(sinkOrNull.deliver(artifact), "the sink returned no landed artifact"));
        }
        return List.copyOf(landed);
    }

    /** The spec's own declared outputs that land (call-time outputs are not known here). */
    public static List<DeclaredOutput> landingOutputs(SandboxSpec spec) {
        return landing(spec.declaredOutputs());
    }

    /** Whether a tool built on {@code spec} can land artifacts, and so needs a sink. */
    public static boolean specLandsArtifacts(SandboxSpec spec) {
        return !landingOutputs(spec).isEmpty() || spec.outputsNamedAtCallTime();
    }

    /**
     * The refusal for landing outputs without a sink, built but not thrown, so that every caller
     * (this class, tool adapters at construction) uses one wording.
     *
     * @param landing the landing outputs in question; empty when the spec lands only names given at call time
     * @param askedBy what needed the sink, e.g. a tool name or "collecting outputs"
     */
    public static SandboxOutputSinkRequired missingSinkRefusal(
            SandboxSpec spec, List<DeclaredOutput> landing, String askedBy) {
        String what = landing.isEmpty()
                ? "lands artifacts it names at call time"
                : "lands " + paths(landing);
        return new SandboxOutputSinkRequired(askedBy + ": the spec of kind " + GuestText.quote(spec.kind()) + " " + what
                + ", but no output sink was given; pass an OutputSink (for example FileSystemSink.at(directory))");
    }

    private static List<DeclaredOutput> landing(List<DeclaredOutput> outputs) {
        return outputs.stream().filter(output -> output.disposition() == OutputDisposition.LAND).toList();
    }

    /**
     * Phase 3: validates every path and every delivered name, and refuses collisions. Returns,
     * aligned with {@code all}, each landing output's delivered name (null for consumed outputs).
     */
    private static List<String> checkNames(List<DeclaredOutput> all, NameNormalization normalization) {
        List<String> deliveredNames = new ArrayList<>(all.size());
        Map<String, String> deliveredByKey = new HashMap<>();
        for (DeclaredOutput output : all) {
            ArtifactNames.validate(output.path());
            if (output.disposition() != OutputDisposition.LAND) {
                deliveredNames.add(null);
                continue;
            }
            String delivered = ArtifactNames.deliveredName(output.landingName(), normalization);
            if (!delivered.equals(output.path())) {
                ArtifactNames.validate(delivered);
            }
            String earlier = deliveredByKey.putIfAbsent(ArtifactNames.collisionKey(delivered), delivered);
            if (earlier != null) {
                throw collision(earlier, delivered);
            }
            deliveredNames.add(delivered);
        }
        return deliveredNames;
    }

    private static SandboxArtifactNameCollision collision(String earlier, String later) {
        if (earlier.equals(later)) {
            return new SandboxArtifactNameCollision("two landing outputs both land as " + GuestText.quote(later)
                    + "; give one of them another name");
        }
        return new SandboxArtifactNameCollision("the landing names " + GuestText.quote(earlier) + " and "
                + GuestText.quote(later) + " differ only by case or Unicode form, and would land on one file on "
                + "many file systems; give one of them another name");
    }

    /** Phase 4: every output stat'ed once, in order; returns the landing outputs to read. */
    private static List<Pending> statPhase(
            Sandbox sandbox, SandboxSpec spec, List<DeclaredOutput> all, List<String> deliveredNames) {
        Tally tally = new Tally(spec.filesOut());
        List<Pending> toRead = new ArrayList<>();
        for (int i = 0; i < all.size(); i++) {
            DeclaredOutput output = all.get(i);
            Optional<SandboxEntry> entry = stat(sandbox, output.path(), spec.workDirIn(sandbox));
            if (entry.isEmpty()) {
                if (output.required()) {
                    throw new SandboxOutputMissing("the required output " + GuestText.quote(output.path())
                            + " does not exist in " + GuestText.quote(spec.workDirIn(sandbox))
                            + "; have the workload write it there, or declare it optional");
                }
                continue;
            }
            SandboxEntry found = entry.get();
            if (found.kind() != EntryKind.FILE) {
                throw new SandboxOutputNotRegular("the output " + GuestText.quote(output.path()) + " is a "
                        + found.kind().wire() + ", not a regular file; only regular files are collected");
            }
            if (found.sizeBytes().isEmpty()) {
                throw new SandboxOutputSizeUnknown("the sandbox could not tell the size of the output "
                        + GuestText.quote(output.path()) + ", and an unknown size is never taken as zero; "
                        + "use a backend that reports file sizes");
            }
            long size = found.sizeBytes().getAsLong();
            tally.add(output.path(), size);
            if (output.disposition() == OutputDisposition.LAND) {
                toRead.add(new Pending(output, deliveredNames.get(i), size));
            }
        }
        return toRead;
    }

    /** Phase 6: reads each landing output bounded by its stat size and what the total has left. */
    private static List<Artifact> readPhase(Sandbox sandbox, SandboxSpec spec, List<Pending> toRead) {
        Tally tally = new Tally(spec.filesOut());
        List<Artifact> artifacts = new ArrayList<>(toRead.size());
        for (Pending pending : toRead) {
            String path = pending.output().path();
            long maxBytes = Math.min(pending.statSize(), tally.remainingTotal());
            byte[] content = read(sandbox, path, spec.workDirIn(sandbox), maxBytes);
            if (content.length > maxBytes) {
                // A backend that buffers whole files can only refuse after the fact.
                throw new SandboxTransferCapExceeded("the output " + GuestText.quote(path) + " read back as "
                        + content.length + " bytes, more than the " + maxBytes + " bytes it was allowed "
                        + "(it grew after it was measured); collect it again once the workload has finished writing");
            }
            tally.add(path, content.length);
            artifacts.add(new Artifact(pending.deliveredName(), content, spec.kind(), pending.output().mediaType()));
        }
        return artifacts;
    }

    private static Optional<SandboxEntry> stat(Sandbox sandbox, String path, String workDir) {
        try {
            return sandbox.stat(path, workDir);
        } catch (SandboxPathNotConfined escape) {
            throw notConfined(path, workDir, escape);
        } catch (SandboxFileException unreachable) {
            throw unreachable(path, unreachable);
        }
    }

    private static byte[] read(Sandbox sandbox, String path, String workDir, long maxBytes) {
        try {
            return sandbox.readFile(path, workDir, maxBytes);
        } catch (SandboxPathNotConfined escape) {
            throw notConfined(path, workDir, escape);
        } catch (SandboxFileException unreachable) {
            throw unreachable(path, unreachable);
        }
    }

    private static SandboxOutputNotConfined notConfined(String path, String workDir, SandboxPathNotConfined escape) {
        return new SandboxOutputNotConfined("the output " + GuestText.quote(path) + " is not confined to "
                + GuestText.quote(workDir) + ": it resolves outside it or passes through a link; declare a path "
                + "inside the working directory that no link leads to", escape);
    }

    private static SandboxOutputUnreachable unreachable(String path, SandboxFileException error) {
        return new SandboxOutputUnreachable("the output " + GuestText.quote(path) + " could not be reached in the "
                + "sandbox (for example a parent is not a directory, or it vanished); the reason is in the cause", error);
    }

    private static String paths(List<DeclaredOutput> outputs) {
        StringJoiner joined = new StringJoiner(", ");
        outputs.forEach(output -> joined.add(GuestText.quote(output.path())));
        return joined.toString();
    }

    /** A landing output that passed the stat phase. */
    private record Pending(DeclaredOutput output, String deliveredName, long statSize) {
    }

    /** One running count against a direction's caps: per file, then file count, then total. */
    private static final class Tally {
        private final TransferLimits limits;
        private int files;
        private long totalBytes;

        Tally(TransferLimits limits) {
            this.limits = limits;
        }

        void add(String path, long bytes) {
            if (bytes > limits.maxBytesPerFile()) {
                throw new SandboxTransferCapExceeded("the output " + GuestText.quote(path) + " is " + bytes
                        + " bytes, over the per-file cap of " + limits.maxBytesPerFile()
                        + " bytes; produce a smaller file or raise the spec's filesOut limits");
            }
            if (files + 1 > limits.maxFiles()) {
                throw new SandboxTransferCapExceeded("the output " + GuestText.quote(path) + " would be file "
                        + (files + 1) + ", over the cap of " + limits.maxFiles()
                        + " files; declare fewer outputs or raise the spec's filesOut limits");
            }
            // Compared against what is left, so a huge cap cannot overflow the sum.
            if (bytes > remainingTotal()) {
                throw new SandboxTransferCapExceeded("the output " + GuestText.quote(path) + " brings the total to "
                        + (totalBytes + bytes) + " bytes, over the cap of " + limits.maxTotalBytes()
                        + " bytes; produce less or raise the spec's filesOut limits");
            }
            files++;
            totalBytes += bytes;
        }

        long remainingTotal() {
            return limits.maxTotalBytes() - totalBytes;
        }
    }
}
