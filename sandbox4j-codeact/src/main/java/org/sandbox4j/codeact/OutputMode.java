package org.sandbox4j.codeact;

/** Whether and how a call of {@code execute_code} hands files back to the host. */
public enum OutputMode {
    /** Only what the program prints comes back. */
    NONE,
    /** The model names the files to save in the call's {@code outputs} parameter. */
    DECLARED,
    /**
     * The program names them itself by writing {@value CodeAct#MANIFEST_FILE_NAME} in its working
     * directory: {@code {"outputs": [{"path": "chart.png"}]}}.
     */
    MANIFEST
}
