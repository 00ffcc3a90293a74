package org.sandbox4j.aca;

/**
 * Where {@link AcaBackend} gets the bearer token for each data-plane request. The token is used
 * on the host only: it is never written into a guest, its environment or its files, and never
 * logged.
 *
 * <p>Implementations should cache a token until shortly before it expires; the backend asks for
 * one on every attempt of every request (so a refreshed token is picked up after a 401 or 403).
 * With azure-identity on the class path, {@link AzureIdentityTokens} adapts
 * {@code DefaultAzureCredential} or any other {@code TokenCredential}.
 */
@FunctionalInterface
public interface AcaTokenSupplier {

    /** The scope the Azure SDK for this service asks for. */
    String DEFAULT_SCOPE = "https://dynamicsessions.io/.default";

    /**
     * @param scope the OAuth scope to request, {@link AcaConfig#tokenScope()}
     * @return a bearer token for that scope (without the {@code Bearer } prefix)
     */
    String token(String scope);
}
