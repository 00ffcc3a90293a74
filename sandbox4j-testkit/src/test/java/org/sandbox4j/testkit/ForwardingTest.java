package org.sandbox4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ProcessOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxProcess;
import org.sandbox4j.core.SandboxSpec;

/**
 * Every method of {@link Sandbox} and {@link SandboxBackend}, found by reflection, reaches the
 * delegate of a {@link ForwardingSandbox} or {@link ForwardingBackend}: a method later added to
 * either interface that the forwarder forgets fails here (an abstract one already fails to compile).
 */
class ForwardingTest {

    @Test
    void everySandboxMethodReachesTheDelegate() {
        assertThat(unforwarded(Sandbox.class, delegate -> new ForwardingSandbox(delegate) { }))
                .as("Sandbox methods a ForwardingSandbox does not pass to its delegate").isEmpty();
    }

    @Test
    void everyBackendMethodReachesTheDelegate() {
        assertThat(unforwarded(SandboxBackend.class, delegate -> new ForwardingBackend(delegate) { }))
                .as("SandboxBackend methods a ForwardingBackend does not pass to its delegate").isEmpty();
    }

    @Test
    void theCheckCoversTheOptionalMethodsAndTheConveniences() {
        List<String> names = Arrays.stream(Sandbox.class.getMethods()).map(Method::getName).toList();
        assertThat(names).contains("writeFile", "mkdir", "exec", "stat", "readFile", "listDir", "remove");
        assertThat(Arrays.stream(Sandbox.class.getMethods()).filter(Method::isDefault).count())
                .as("the optional methods and the two conveniences are defaults").isGreaterThanOrEqualTo(6);
    }

    /**
     * Positive control: a forwarder that passes only the obligatory (abstract) methods and leaves
     * every default to the interface is caught, method by method; its conveniences still pass,
     * since they reach the delegate through the obligatory methods.
     */
    @Test
    void aForwarderThatForgetsTheOptionalMethodsIsCaught() {
        List<String> missed = unforwarded(Sandbox.class, delegate -> (Sandbox) Proxy.newProxyInstance(
                Sandbox.class.getClassLoader(), new Class<?>[] {Sandbox.class}, (proxy, method, arguments) ->
                        method.isDefault() ? InvocationHandler.invokeDefault(proxy, method, arguments)
                                : method.invoke(delegate, arguments)));
        assertThat(missed).hasSize(8).allSatisfy(problem -> assertThat(problem).contains("never reached"));
        assertThat(String.join("\n", missed)).contains("stat", "readFile", "listDir(java.lang.String,java.lang.String)",
                "listDir(java.lang.String,java.lang.String,int)", "remove", "mkdir", "relocatedWorkDir", "start");
    }

    /** Positive control: a forwarder that alters what it passes on is caught. */
    @Test
    void aForwarderThatChangesTheArgumentsIsCaught() {
        List<String> missed = unforwarded(SandboxBackend.class, delegate -> new ForwardingBackend(delegate) {
            @Override
            public int disposeScope(String scope, String threadId) {
                return super.disposeScope(scope, "other-thread");
            }
        });
        assertThat(missed).singleElement().asString().contains("disposeScope").contains("other-thread");
    }

    /**
     * Calls each public method of {@code type} on {@code forwarder.apply(recordingDelegate)} and
     * returns what went wrong: a method whose call never reached the delegate, or one that reached
     * it as itself but with other arguments, more than once, or without handing back the delegate's
     * result. A default method that reaches the delegate only through other methods passes: that
     * is a convenience left to the interface, implemented through the primary methods.
     */
    private static <T> List<String> unforwarded(Class<T> type, Function<T, T> forwarder) {
        List<String> problems = new ArrayList<>();
        for (Method method : type.getMethods()) {
            if (Modifier.isStatic(method.getModifiers())) {
                continue;
            }
            Recorder recorder = new Recorder();
            T forwarding = forwarder.apply(type.cast(Proxy.newProxyInstance(type.getClassLoader(),
                    new Class<?>[] {type}, recorder::invoke)));
            Object[] arguments = arguments(method);
            Object result = null;
            Throwable thrown = null;
            try {
                result = method.invoke(forwarding, arguments);
            } catch (InvocationTargetException e) {
                thrown = e.getCause();
            } catch (IllegalAccessException e) {
                throw new AssertionError(e);
            }
            if (recorder.calls.isEmpty()) {
                problems.add(method + " never reached the delegate" + (thrown == null ? "" : "; it threw " + thrown));
                continue;
            }
            if (thrown != null) {
                problems.add(method + " reached the delegate, then threw " + thrown);
                continue;
            }
            Call call = recorder.calls.get(0);
            if (recorder.calls.stream().noneMatch(received -> received.method().equals(method))) {
                if (!method.isDefault()) {
                    problems.add(method + " reached the delegate only as " + recorder.calls);
                }
            } else if (recorder.calls.size() != 1 || !Arrays.deepEquals(call.arguments(), arguments)) {
                problems.add(method + " reached the delegate as " + recorder.calls);
            } else if (method.getReturnType().isPrimitive() ? !Objects.equals(result, call.result())
                    : result != call.result()) {
                problems.add(method + " returned " + result + ", not the delegate's " + call.result());
            }
        }
        return problems;
    }

    private static Object[] arguments(Method method) {
        Class<?>[] types = method.getParameterTypes();
        Object[] arguments = new Object[types.length];
        for (int i = 0; i < types.length; i++) {
            arguments[i] = argument(types[i], i);
        }
        return arguments;
    }

    /** A distinct value of each parameter type the two interfaces use; a new type must be added here. */
    private static Object argument(Class<?> type, int position) {
        if (type == String.class) {
            return "/work/argument-" + position;
        } else if (type == byte[].class) {
            return new byte[] {1, 2, (byte) position};
        } else if (type == long.class) {
            return 4096L + position;
        } else if (type == int.class) {
            return 3 + position;
        } else if (type == boolean.class) {
            return true;
        } else if (type == Duration.class) {
            return Duration.ofSeconds(7 + position);
        } else if (type == Command.class) {
            return Command.argv("echo", "argument-" + position);
        } else if (type == ExecOptions.class) {
            return ExecOptions.in("/work/options-" + position, Duration.ofSeconds(3));
        } else if (type == ProcessOptions.class) {
            return ProcessOptions.in("/work/process-options-" + position, Duration.ofSeconds(5));
        } else if (type == List.class) {
            return List.of("echo", "argument-" + position);
        } else if (type == SandboxKey.class) {
            return new SandboxKey("scope", "thread", "agent-" + position);
        } else if (type == SandboxSpec.class) {
            return SandboxSpec.builder("kind-" + position).build();
        }
        throw new AssertionError("ForwardingTest has no argument of type " + type.getName() + ": add one");
    }

    /** One call the delegate received, with the value it answered. */
    private record Call(Method method, Object[] arguments, Object result) {
        @Override
        public String toString() {
            return method.getName() + Arrays.deepToString(arguments);
        }
    }

    /** The delegate: records each call and answers it with a fresh value of the return type. */
    private static final class Recorder {
        private final List<Call> calls = new ArrayList<>();

        Object invoke(Object proxy, Method method, Object[] arguments) {
            if (method.getDeclaringClass() == Object.class) {
                return switch (method.getName()) {
                    case "equals" -> proxy == arguments[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    default -> "recording delegate";
                };
            }
            Object result = answer(method.getReturnType());
            calls.add(new Call(method, arguments == null ? new Object[0] : arguments, result));
            return result;
        }

        private static Object answer(Class<?> type) {
            if (type == void.class) {
                return null;
            } else if (type == int.class) {
                return 17;
            } else if (type == String.class) {
                return "answer";
            } else if (type == byte[].class) {
                return new byte[] {42};
            } else if (type == ExecResult.class) {
                return ExecResult.of("out", "err", 3, Duration.ofMillis(5));
            } else if (type == Optional.class) {
                return Optional.of("answer");
            } else if (type == List.class) {
                return List.of("answer");
            } else if (type == SandboxProcess.class) {
                return Proxy.newProxyInstance(SandboxProcess.class.getClassLoader(),
                        new Class<?>[] {SandboxProcess.class}, (proxy, method, arguments) -> null);
            } else if (type == BackendDeclarations.class) {
                return BackendDeclarations.builder(Isolation.MICROVM).build();
            } else if (type == Sandbox.class) {
                return new ForwardingSandbox(InMemorySandbox.builder().build()) { };
            }
            throw new AssertionError("ForwardingTest has no answer of type " + type.getName() + ": add one");
        }
    }
}
