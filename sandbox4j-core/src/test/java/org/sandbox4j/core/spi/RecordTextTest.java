package org.sandbox4j.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class RecordTextTest {

    @Test
    void whatPropertiesLoadsBackIsWhatWasWritten() throws Exception {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("kind", "a=b:c#d!e\\f");
        fields.put("lines", "one\ntwo\r\nthree\tfour\fend");
        fields.put("spaces", "  leading and trailing  ");
        fields.put("controls", "\u0000\u0001\u001b[31m\u007f");
        fields.put("unicode", "données ✓ \uD83D\uDE00");
        fields.put("empty", "");
        fields.put("key with = and : and spaces", "value");
        fields.put("#not-a-comment", "!not-either");
        Properties loaded = new Properties();
        loaded.load(new StringReader(RecordText.of("a record", fields)));
        assertThat(loaded).containsExactlyInAnyOrderEntriesOf(fields);
    }

    @Test
    void oneLinePerFieldInOrderAfterTheCommentAndNoDate() {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("b", "2");
        fields.put("a", "1\nforged=entry");
        String text = RecordText.of("sandbox4j record", fields);
        assertThat(text.split("\n")).containsExactly("#sandbox4j record", "b=2", "a=1\\nforged\\=entry");
    }

    @Test
    void aCommentThatIsNotOnePrintableLineIsRefused() {
        assertThatThrownBy(() -> RecordText.of("two\nlines", Map.of())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RecordText.of("caf\u00e9", Map.of())).isInstanceOf(IllegalArgumentException.class);
    }
}
