package org.sandbox4j.cli;

/**
 * The Docker engine and image the docker tests use, as {@code sandbox4j-docker}'s tests find them:
 * {@code scripts/test.sh} starts dockerd (runtimes runc and runsc), builds the test image and
 * exports both. Missing, a test fails with the reason (provisioning is part of the build), never
 * skips.
 */
final class DockerEngine {

    static final String HOST = "SANDBOX4J_DOCKER_HOST";
    static final String IMAGE = "SANDBOX4J_TEST_IMAGE";
    static final String PROBLEM = "SANDBOX4J_ENGINES_PROBLEM";

    private DockerEngine() {
    }

    static String host() {
        return required(HOST, "dockerd");
    }

    static String image() {
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
