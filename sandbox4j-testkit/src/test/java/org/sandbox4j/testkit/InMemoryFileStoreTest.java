package org.sandbox4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.FileListing;

class InMemoryFileStoreTest {

    @Test
    void namesAreSortedAndStringsAreUtf8() {
        Map<String, Object> files = new LinkedHashMap<>();
        files.put("z.txt", "zed");
        files.put("a.bin", new byte[] {1, 2});
        files.put("café.txt", "é");

        InMemoryFileStore store = InMemoryFileStore.of(files);

        assertThat(store.listNames()).containsExactly("a.bin", "café.txt", "z.txt");
        assertThat(store.read("café.txt")).hasValueSatisfying(bytes -> assertThat(bytes).containsExactly(0xc3, 0xa9));
        assertThat(store.read("a.bin")).hasValueSatisfying(bytes -> assertThat(bytes).containsExactly(1, 2));
        assertThat(store.read("missing")).isEmpty();
    }

    @Test
    void theStoreCopiesTheMapAndItsArraysAndHandsOutCopies() {
        byte[] content = {1, 2, 3};
        Map<String, Object> files = new HashMap<>();
        files.put("a.bin", content);
        InMemoryFileStore store = InMemoryFileStore.of(files);

        content[0] = 9;
        files.put("b.bin", "later");
        files.remove("a.bin");
        store.read("a.bin").orElseThrow()[1] = 9;

        assertThat(store.listNames()).containsExactly("a.bin");
        assertThat(store.read("a.bin")).hasValueSatisfying(bytes -> assertThat(bytes).containsExactly(1, 2, 3));
        assertThatThrownBy(() -> store.listNames().add("c")).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void itServesAsTheCallerContextListing() {
        InMemoryFileStore store = InMemoryFileStore.of(Map.of("b", "2", "a", "1"));

        assertThat(FileListing.ALL.list(store)).containsExactly("a", "b");
    }

    @Test
    void otherValueTypesAreRefusedWithTheFix() {
        assertThatThrownBy(() -> InMemoryFileStore.of(Map.of("n.txt", 42)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'n.txt'")
                .hasMessageContaining("java.lang.Integer")
                .hasMessageContaining("byte[] or a String");
        Map<String, Object> withNull = new HashMap<>();
        withNull.put("n.txt", null);
        assertThatThrownBy(() -> InMemoryFileStore.of(withNull)).isInstanceOf(IllegalArgumentException.class);
    }
}
