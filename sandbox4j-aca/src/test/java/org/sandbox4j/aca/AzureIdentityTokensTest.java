package org.sandbox4j.aca;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

import com.azure.core.credential.AccessToken;
import com.azure.core.credential.TokenCredential;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The azure-identity adapter asks the credential for exactly the configured scope and hands back
 * its token. (DefaultAzureCredential itself is not called here: it would try the metadata address.)
 */
class AzureIdentityTokensTest {

    @Test
    void theCredentialIsAskedForTheScopeAndItsTokenReturned() {
        List<List<String>> asked = new ArrayList<>();
        TokenCredential credential = request -> {
            asked.add(request.getScopes());
            return Mono.just(new AccessToken("token-for-" + request.getScopes().get(0), OffsetDateTime.now().plusHours(1)));
        };
        AcaTokenSupplier tokens = AzureIdentityTokens.of(credential);
        assertThat(tokens.token(AcaTokenSupplier.DEFAULT_SCOPE)).isEqualTo("token-for-" + AcaTokenSupplier.DEFAULT_SCOPE);
        assertThat(asked).containsExactly(List.of(AcaTokenSupplier.DEFAULT_SCOPE));
    }

    @Test
    void aCredentialWithoutATokenIsRefused() {
        TokenCredential empty = request -> Mono.empty();
        assertThatThrownBy(() -> AzureIdentityTokens.of(empty).token("scope")).isInstanceOf(RuntimeException.class);
    }
}
