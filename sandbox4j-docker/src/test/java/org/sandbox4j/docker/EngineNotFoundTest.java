package org.sandbox4j.docker;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.exception.DockerException;
import com.github.dockerjava.api.exception.InternalServerErrorException;
import com.github.dockerjava.api.exception.NotFoundException;
import org.junit.jupiter.api.Test;

/** "Not found" as each engine says it: Docker's 404, and Podman 4.3's 500 for a container removed meanwhile. */
class EngineNotFoundTest {

    @Test
    void dockersNotFoundAndPodmansNoSuchContainerAreBothNotFound() {
        assertThat(Engine.isNotFound(new NotFoundException("Status 404: {\"message\":\"No such container: x\"}")))
                .isTrue();
        assertThat(Engine.isNotFound(new InternalServerErrorException("Status 500: {\"cause\":\"no such container\","
                + "\"message\":\"container 85b9 does not exist in database: no such container\",\"response\":500}")))
                .isTrue();
    }

    @Test
    void anyOtherServerErrorIsNot() {
        assertThat(Engine.isNotFound(new InternalServerErrorException("Status 500: {\"cause\":\"database is locked\","
                + "\"message\":\"no such container mentioned only in passing\",\"response\":500}"))).isFalse();
        assertThat(Engine.isNotFound(new DockerException("Status 409: conflict", 409))).isFalse();
        assertThat(Engine.isNotFound(new IllegalStateException("no such container"))).isFalse();
    }
}
