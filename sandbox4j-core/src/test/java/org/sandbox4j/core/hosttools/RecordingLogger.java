package org.sandbox4j.core.hosttools;

import java.lang.System.Logger;
import java.text.MessageFormat;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.CopyOnWriteArrayList;

/** A {@link System.Logger} that keeps every line, so tests can read what reached the host's log. */
final class RecordingLogger implements Logger {

    record Line(Level level, String message, Throwable thrown) {
    }

    final List<Line> lines = new CopyOnWriteArrayList<>();

    @Override
    public String getName() {
        return "recording";
    }

    @Override
    public boolean isLoggable(Level level) {
        return true;
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String message, Throwable thrown) {
        lines.add(new Line(level, message, thrown));
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String format, Object... params) {
        lines.add(new Line(level, params == null || params.length == 0 ? format : MessageFormat.format(format, params),
                null));
    }

    /** Every logged message joined, for containment checks. */
    String text() {
        StringBuilder all = new StringBuilder();
        for (Line line : lines) {
            all.append(line.message()).append('\n');
        }
        return all.toString();
    }
}
