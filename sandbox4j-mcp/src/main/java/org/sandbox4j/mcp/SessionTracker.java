package org.sandbox4j.mcp;

import java.io.IOException;

import io.modelcontextprotocol.spec.HttpHeaders;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Watches the SDK's streamable HTTP transport from outside, since it has no session-closed hook:
 * an initialize answer naming a session opens it in the ledger; every request naming a known
 * session counts as open until its (possibly asynchronous) response completes; a DELETE the SDK
 * accepted closes the session, which disposes of its sandboxes.
 */
final class SessionTracker extends HttpFilter {

    private static final long serialVersionUID = 1L;

    /** The session of the request this thread serves, for {@link TransportMapper} as the SDK decodes its body. */
    private static final ThreadLocal<String> RECEIVING = new ThreadLocal<>();

    private final transient SessionLedger ledger;

    SessionTracker(SessionLedger ledger) {
        this.ledger = ledger;
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        String sessionId = request.getHeader(HttpHeaders.MCP_SESSION_ID);
        boolean counted = sessionId != null && ledger.beginIfKnown(sessionId);
        boolean handedToAsync = false;
        RECEIVING.set(sessionId);
        try {
            chain.doFilter(request, response);
            if (counted && request.isAsyncStarted()) {
                request.getAsyncContext().addListener(new EndOnCompletion(ledger, sessionId));
                handedToAsync = true;
            }
        } finally {
            RECEIVING.remove();
            if (counted && !handedToAsync) {
                ledger.end(sessionId);
            }
        }
        if (sessionId == null) {
            String created = response.getHeader(HttpHeaders.MCP_SESSION_ID);
            if (created != null && response.getStatus() == HttpServletResponse.SC_OK) {
                ledger.opened(created);
            }
        } else if ("DELETE".equals(request.getMethod()) && response.getStatus() == HttpServletResponse.SC_OK) {
            ledger.close(sessionId);
        }
    }

    /** The MCP session of the request the calling thread is serving, or null. */
    static String receivingSession() {
        return RECEIVING.get();
    }

    /** Ends a counted request when its asynchronous response does, however it does. */
    private record EndOnCompletion(SessionLedger ledger, String sessionId) implements AsyncListener {

        @Override
        public void onComplete(AsyncEvent event) {
            ledger.end(sessionId);
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            // onComplete follows.
        }

        @Override
        public void onError(AsyncEvent event) {
            // onComplete follows.
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            // Not restarted by the SDK.
        }
    }
}
