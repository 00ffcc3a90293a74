package org.sandbox4j.testkit.tck;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.sandbox4j.core.ExecResult;

/**
 * Makes HTTP requests from the guest with the client the backend names, or the first of curl,
 * wget and python3 the guest has. "Reached" means the client saw a 2xx status from the server:
 * {@code 000} (no response), {@code 403} and {@code 407} from a refusing proxy all count as not
 * reached.
 */
final class GuestHttp {

    /** The longest a client waits for one response; a refusing proxy answers long before. */
    static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(20);

    private static final long MINIMUM_TIMEOUT_SECONDS = 1;
    private static final int EXEC_MARGIN_DIVISOR = 2;
    private static final Pattern STATUS = Pattern.compile("(\\d{3})\\s*$");
    private static final int SUCCESS_CLASS = 2;
    private static final int STATUS_CLASS_DIVISOR = 100;
    private static final String LOOK_UP = "command -v \"$1\" >/dev/null 2>&1";

    private final ProbeContext context;
    private final GuestHttpClient client;

    private GuestHttp(ProbeContext context, GuestHttpClient client) {
        this.context = context;
        this.client = client;
    }

    /**
     * The client {@code named} (the fixture's choice), or the first the guest has; without one the
     * probe is skipped, saying so.
     */
    static GuestHttp in(ProbeContext context, Optional<String> named) {
        if (named.isPresent()) {
            GuestHttpClient chosen = GuestHttpClient.named(named.get()).orElseThrow(() -> new IllegalArgumentException(
                    "the egress fixture names the HTTP client '" + named.get() + "'; the TCK drives curl, wget or python3"));
            Check.that(has(context, chosen), "the egress fixture names the HTTP client '" + chosen.command()
                    + "', but the guest has no such command");
            return new GuestHttp(context, chosen);
        }
        for (GuestHttpClient candidate : GuestHttpClient.SEARCH_ORDER) {
            if (has(context, candidate)) {
                return new GuestHttp(context, candidate);
            }
        }
        Assumptions.abort("the guest has no HTTP client: looked for curl, wget and python3 (an EgressFixture may name one)");
        throw new AssertionError("unreachable: abort throws");
    }

    GuestHttpClient client() {
        return client;
    }

    /** Makes the request and reads the status the client printed. */
    HttpOutcome fetch(HttpAttempt attempt) {
        ExecResult result = context.exec(client.argv(attempt, timeoutSeconds()).toArray(String[]::new));
        String printed = result.stdoutText().strip();
        Matcher status = STATUS.matcher(printed);
        Check.that(status.find(), "the guest's " + client.command() + " printed no HTTP status for " + attempt
                + " (exit " + result.exitCode() + ", stdout " + Check.show(printed) + ", stderr "
                + Check.show(result.stderrText().strip()) + "): the probe cannot tell whether it was reached");
        return new HttpOutcome(attempt, Integer.parseInt(status.group(1)));
    }

    /** Asserts the request got a 2xx: the positive control every egress probe starts from. */
    void assertReached(HttpAttempt attempt, String what) {
        HttpOutcome outcome = fetch(attempt);
        Check.that(outcome.reached(), what + ": " + attempt + " was not reached (status " + outcome.shown() + ")");
    }

    private long timeoutSeconds() {
        long bound = Math.min(CLIENT_TIMEOUT.toSeconds(), context.execTimeout().toSeconds() / EXEC_MARGIN_DIVISOR);
        return Math.max(MINIMUM_TIMEOUT_SECONDS, bound);
    }

    private static boolean has(ProbeContext context, GuestHttpClient client) {
        return context.shell(LOOK_UP, client.command()).exitCode() == 0;
    }

    /**
     * What one request got.
     *
     * @param attempt the request
     * @param status  the final HTTP status, {@code 0} when no response came
     */
    record HttpOutcome(HttpAttempt attempt, int status) {

        HttpOutcome {
            Objects.requireNonNull(attempt, "attempt");
        }

        boolean reached() {
            return status / STATUS_CLASS_DIVISOR == SUCCESS_CLASS;
        }

        String shown() {
            return String.format("%03d", status);
        }
    }
}
