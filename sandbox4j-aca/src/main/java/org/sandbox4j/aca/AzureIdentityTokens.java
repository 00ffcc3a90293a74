package org.sandbox4j.aca;

import java.util.Objects;

import com.azure.core.credential.AccessToken;
import com.azure.core.credential.TokenCredential;
import com.azure.core.credential.TokenRequestContext;
import com.azure.identity.DefaultAzureCredentialBuilder;

/**
 * The {@link AcaTokenSupplier} over azure-identity, for hosts that have it (an optional
 * dependency: add {@code com.azure:azure-identity} yourself; nothing else in this module needs
 * it). The credential caches and refreshes its tokens itself; the token stays on the host.
 *
 * <pre>{@code
 * AcaBackend backend = new AcaBackend(config, AzureIdentityTokens.defaultAzureCredential());
 * }</pre>
 */
public final class AzureIdentityTokens implements AcaTokenSupplier {

    private final TokenCredential credential;

    private AzureIdentityTokens(TokenCredential credential) {
        this.credential = Objects.requireNonNull(credential, "credential");
    }

    /**
     * Tokens from {@code DefaultAzureCredential}: environment, workload identity, managed identity,
     * the Azure CLI and the other sources it tries, in its order.
     *
     * @throws NoClassDefFoundError azure-identity is not on the class path
     */
    public static AzureIdentityTokens defaultAzureCredential() {
        return new AzureIdentityTokens(new DefaultAzureCredentialBuilder().build());
    }

    /** Tokens from any azure-identity credential (a managed identity, a service principal, …). */
    public static AzureIdentityTokens of(TokenCredential credential) {
        return new AzureIdentityTokens(credential);
    }

    /**
     * @throws IllegalStateException the credential gave no token (its own exception, with the
     *                               detail, propagates as thrown; the backend keeps it out of
     *                               every message a model sees)
     */
    @Override
    public String token(String scope) {
        AccessToken token = credential.getTokenSync(new TokenRequestContext().addScopes(scope));
        if (token == null || token.getToken() == null || token.getToken().isEmpty()) {
            throw new IllegalStateException("the Azure credential returned no token for scope " + scope);
        }
        return token.getToken();
    }
}
