package org.sandbox4j.docker;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.regex.Pattern;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.HostCeilings;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.spi.ConfinedFiles.Stat;
import org.sandbox4j.core.spi.FileRefusals;
import org.sandbox4j.core.spi.GuestText;

/**
 * Reads what {@link GuestScripts#listing} printed: for each child {@code <type letter> <size>
 * <mtime> <mode>\n<name>\0} (find's {@code %y}: f, d, l, or another letter for anything else;
 * {@code %T@}: seconds since the epoch with a fraction; {@code %m}: the permission bits in octal). The guest wrote it, so every field is checked and anything else is refused
 * whole rather than guessed at.
 */
final class ListingOutput {

    private static final int FIELDS = 4;
    /** find's %T@: whole seconds since the epoch (a guest may set any time, even before it), a fraction. */
    private static final Pattern TIME = Pattern.compile("-?\\d{1,12}(\\.\\d{1,10})?");

    private ListingOutput() {
    }

    static Map<String, Stat> parse(byte[] output, String path, String backendName) {
        Map<String, Stat> children = new HashMap<>();
        int at = 0;
        while (at < output.length) {
            int newline = Tar.indexOf(output, (byte) '\n', at);
            int end = newline < 0 ? -1 : Tar.indexOf(output, (byte) 0, newline + 1);
            if (end < 0) {
                throw malformed(path, backendName, "an entry is cut short");
            }
            String[] fields = new String(output, at, newline - at, StandardCharsets.US_ASCII).split(" ", -1);
            String name = name(output, newline + 1, end, path, backendName);
            if (fields.length != FIELDS || children.containsKey(name)) {
                throw malformed(path, backendName, "the entry of " + GuestText.quote(name) + " is not one type, size, "
                        + "time and mode, or is listed twice");
            }
            if (children.size() >= HostCeilings.MAX_LISTED_ENTRIES) {
                throw FileRefusals.listingTooLarge(path);
            }
            children.put(name, stat(fields, name, path, backendName));
            at = end + 1;
        }
        return children;
    }

    private static Stat stat(String[] fields, String name, String path, String backendName) {
        long size;
        Instant modified;
        int mode;
        try {
            size = Long.parseLong(fields[1]);
            if (!TIME.matcher(fields[2]).matches()) {
                throw new NumberFormatException("not seconds.fraction");
            }
            BigDecimal seconds = new BigDecimal(fields[2]);
            BigDecimal whole = seconds.setScale(0, RoundingMode.FLOOR);
            modified = Instant.ofEpochSecond(whole.longValueExact(), seconds.subtract(whole).movePointRight(9).intValue());
            mode = Integer.parseInt(fields[3], 8);
        } catch (NumberFormatException | ArithmeticException | java.time.DateTimeException e) {
            throw malformed(path, backendName, "the entry of " + GuestText.quote(name) + " has a size, time or mode "
                    + "that is not a number");
        }
        if (fields[0].length() != 1 || mode < 0 || mode > SandboxEntry.MAX_MODE) {
            throw malformed(path, backendName, "the entry of " + GuestText.quote(name) + " has no one-letter type, or "
                    + "a mode beyond 07777");
        }
        Stat kind = switch (fields[0].charAt(0)) {
            case 'f' -> size < 0 ? new Stat(EntryKind.FILE, OptionalLong.empty()) : Stat.file(size);
            case 'd' -> Stat.of(EntryKind.DIRECTORY);
            case 'l' -> Stat.of(EntryKind.SYMLINK);
            default -> Stat.of(EntryKind.OTHER);
        };
        return kind.with(mode, modified);
    }

    private static String name(byte[] output, int from, int to, String path, String backendName) {
        String name;
        try {
            name = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(output, from, to - from)).toString();
        } catch (CharacterCodingException e) {
            throw new SandboxFileException(GuestText.quote(path) + " holds a name that is not UTF-8, which no path "
                    + "given to this sandbox can name; nothing was listed: rename it in the guest");
        }
        if (name.isEmpty() || name.equals(".") || name.equals("..") || name.indexOf('/') >= 0) {
            throw malformed(path, backendName, "a name is empty, '.', '..' or holds '/'");
        }
        return name;
    }

    private static SandboxFileException malformed(String path, String backendName, String why) {
        return new SandboxFileException("backend '" + backendName + "': the guest's listing of " + GuestText.quote(path)
                + " is malformed (" + why + "); nothing was listed");
    }
}
