package org.sandbox4j.cli;

import java.util.Locale;

import org.sandbox4j.core.spi.GuestText;

/** Byte sizes as Docker's CLI writes them: {@code 512m}, {@code 2g}, {@code 64k}, or plain bytes. */
final class Sizes {

    private static final long KIB = 1L << 10;
    private static final long MIB = 1L << 20;
    private static final long GIB = 1L << 30;

    private Sizes() {
    }

    /**
     * {@code 1073741824}, {@code 1024k}, {@code 512m}, {@code 512MiB}, {@code 2g}, {@code 2GB}
     * (binary units, as Docker's {@code --memory}); positive.
     *
     * @throws CliFailure a usage failure naming {@code flag} and the forms it takes
     */
    static long parse(String text, String flag) {
        String value = text.strip().toLowerCase(Locale.ROOT);
        if (value.endsWith("ib")) {
            value = value.substring(0, value.length() - 2);
        } else if (value.endsWith("b")) {
            value = value.substring(0, value.length() - 1);
        }
        long unit = 1;
        if (!value.isEmpty()) {
            switch (value.charAt(value.length() - 1)) {
                case 'k' -> unit = KIB;
                case 'm' -> unit = MIB;
                case 'g' -> unit = GIB;
                default -> unit = 1;
            }
        }
        String digits = unit == 1 ? value : value.substring(0, value.length() - 1);
        long number;
        try {
            number = Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw CliFailure.usage(flag + " " + GuestText.quote(text) + " is not a size; write 512m, 2g, 64k or a "
                    + "number of bytes");
        }
        if (number <= 0 || number > Long.MAX_VALUE / unit) {
            throw CliFailure.usage(flag + " must be a positive size, not " + GuestText.quote(text));
        }
        return number * unit;
    }

    /** {@code 1 GiB}, {@code 512 MiB}, {@code 1536 KiB}, or bytes: the largest unit that divides it. */
    static String describe(long bytes) {
        if (bytes % GIB == 0) {
            return bytes / GIB + " GiB";
        }
        if (bytes % MIB == 0) {
            return bytes / MIB + " MiB";
        }
        if (bytes % KIB == 0) {
            return bytes / KIB + " KiB";
        }
        return bytes + " bytes";
    }
}
