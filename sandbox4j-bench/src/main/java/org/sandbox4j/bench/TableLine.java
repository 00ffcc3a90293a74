package org.sandbox4j.bench;

import java.util.List;
import java.util.Locale;

/** One row of {@link SideBySide}'s table, already worded. */
record TableLine(String row, String sandbox4j, String raw, String ratio, String target, String met) {

    static final TableLine HEADER = new TableLine("row", "sandbox4j", "raw mechanism", "ratio", "target", "met?");

    /** Two medians in milliseconds, and their ratio. */
    static TableLine millis(String row, double sandbox4j, double raw, Target target) {
        double ratio = sandbox4j / raw;
        return new TableLine(row, formatMillis(sandbox4j), formatMillis(raw), formatRatio(ratio), target.text(),
                target.met(sandbox4j, ratio));
    }

    /** The measurement the next rows compare with. */
    static TableLine baseline(String row, double millis) {
        return new TableLine(row, formatMillis(millis), "(baseline)", "-", "-", "-");
    }

    /** A measurement whose target is on sandbox4j's value alone (the raw value is for reading). */
    static TableLine absolute(String row, String sandbox4j, String raw, double value, Target target) {
        return new TableLine(row, sandbox4j, raw, "-", target.text(), target.met(value, Double.NaN));
    }

    static TableLine skipped(String row, String why) {
        return new TableLine(row, "skipped: " + oneLine(why), "", "", "", "");
    }

    static TableLine failed(String row, Throwable failure) {
        return new TableLine(row, "failed: " + oneLine(failure.getClass().getSimpleName() + ": " + failure.getMessage()),
                "", "", "", "");
    }

    static String formatMillis(double millis) {
        return String.format(Locale.ROOT, millis < 10 ? "%.2f ms" : "%.1f ms", millis);
    }

    static String formatRatio(double ratio) {
        return String.format(Locale.ROOT, "%.2fx", ratio);
    }

    private static final int MAX_MESSAGE_CHARS = 160;

    /** A message on one line, control characters escaped, bounded. */
    private static String oneLine(String text) {
        StringBuilder out = new StringBuilder();
        for (char c : String.valueOf(text).toCharArray()) {
            out.append(Character.isISOControl(c) ? String.format(Locale.ROOT, "\\u%04x", (int) c) : c);
        }
        return out.length() > MAX_MESSAGE_CHARS ? out.substring(0, MAX_MESSAGE_CHARS) + "..." : out.toString();
    }

    List<String> cells() {
        return List.of(row, sandbox4j, raw, ratio, target, met);
    }

    /** The lines as a Markdown table, each column as wide as its widest cell. */
    static String render(List<TableLine> lines) {
        int[] widths = new int[HEADER.cells().size()];
        for (TableLine line : lines) {
            List<String> cells = line.cells();
            for (int i = 0; i < widths.length; i++) {
                widths[i] = Math.max(widths[i], cells.get(i).length());
            }
        }
        StringBuilder out = new StringBuilder();
        for (int index = 0; index < lines.size(); index++) {
            List<String> cells = lines.get(index).cells();
            out.append('|');
            for (int i = 0; i < widths.length; i++) {
                out.append(' ').append(pad(cells.get(i), widths[i])).append(" |");
            }
            out.append('\n');
            if (index == 0) {
                out.append('|');
                for (int width : widths) {
                    out.append('-').append("-".repeat(width)).append("-|");
                }
                out.append('\n');
            }
        }
        return out.toString();
    }

    private static String pad(String text, int width) {
        return text + " ".repeat(width - text.length());
    }
}
