package org.sandbox4j.docker;

/**
 * Where the engines the tests use are: {@code scripts/test.sh} starts them (dockerd with runtimes
 * runc and runsc, and Podman's API service) and exports their sockets and the test image. A test
 * that finds one missing fails with the reason (provisioning is part of the build), never skips.
 *
 * <p>The one fixture of every module's Docker tests: {@code sandbox4j-cli}'s tests take it from
 * this module's test jar.
 */
public final class TestEngines {

    public static final String DOCKER_HOST = "SANDBOX4J_DOCKER_HOST";
    public static final String PODMAN_HOST = "SANDBOX4J_PODMAN_HOST";
    public static final String IMAGE = "SANDBOX4J_TEST_IMAGE";
    public static final String PROBLEM = "SANDBOX4J_ENGINES_PROBLEM";

    private TestEngines() {
    }

    /** dockerd's endpoint (runtimes runc and runsc). */
    public static String dockerHost() {
        return required(DOCKER_HOST, "dockerd");
    }

    public static String podmanHost() {
        return required(PODMAN_HOST, "Podman's API service");
    }

    /** The image every test container runs, in both engines. */
    public static String image() {
        return required(IMAGE, "the test image");
    }

    private static String required(String variable, String what) {
        String value = System.getenv(variable);
        if (value == null || value.isBlank()) {
            String problem = System.getenv(PROBLEM);
            throw new AssertionError(variable + " is not set, so " + what + " is not provisioned: "
                    + (problem == null || problem.isBlank() ? "run the build through scripts/test.sh, which installs "
                    + "and starts the engines and builds the test image" : "provisioning failed: " + problem));
        }
        return value;
    }
}
