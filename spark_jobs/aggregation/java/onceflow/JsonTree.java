package onceflow;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A value's bytes as one strict JSON value (RFC 8259), decoded as onceflow/event_json.py decodes
 * it: objects as maps (the last of a repeated key kept, and the repeat noted), arrays as lists,
 * strings, integers within 64 bits as Long, and markers for a JSON null, a larger integer and a
 * float. The nesting and digit limits are the definition's, not Jackson's defaults.
 */
final class JsonTree {
  static final Object NULL = new Object(); // a JSON null (an absent key is Java null)
  static final Object BIG_INTEGER = new Object(); // an integer beyond 64 bits
  static final Object FLOAT = new Object(); // a number with a fraction or an exponent
  private static final int LARGE = Integer.MAX_VALUE;
  private static final JsonFactory JSON =
      JsonFactory.builder()
          .disable(JsonFactory.Feature.CANONICALIZE_FIELD_NAMES)
          .streamReadConstraints(
              StreamReadConstraints.builder()
                  .maxNestingDepth(LARGE)
                  .maxNumberLength(LARGE)
                  .maxStringLength(LARGE)
                  .maxNameLength(LARGE)
                  .build())
          .build();

  /** The bytes are not exactly one strict JSON value within the limits. */
  static final class NotJson extends Exception {
    private static final long serialVersionUID = 1L;

    NotJson() {
      super(null, null, false, false);
    }
  }

  final Object root;
  boolean duplicate; // an object repeats a key
  private final int maxDepth, maxNumberDigits;

  /**
   * Whether Jackson reads the bytes as UTF-8: it reads their first four for a byte order mark or
   * U+0000s, the marks of UTF-16 and UTF-32. JSON's text here is UTF-8 with no mark, and U+0000
   * is never JSON outside an escape (past the first bytes, Jackson refuses it as Python's decoder
   * does), so a value with either there is not JSON.
   */
  static boolean utf8Start(byte[] value) {
    boolean bom = value.length >= 3 && value[0] == (byte) 0xEF && value[1] == (byte) 0xBB
        && value[2] == (byte) 0xBF;
    for (int i = 0; i < Math.min(4, value.length); i++) if (value[i] == 0) return false;
    return !bom;
  }

  /** Decode `value`, valid UTF-8 whose escapes passed phase 1. */
  JsonTree(byte[] value, int maxDepth, int maxNumberDigits) throws NotJson {
    this.maxDepth = maxDepth;
    this.maxNumberDigits = maxNumberDigits;
    if (!utf8Start(value)) throw new NotJson();
    try (JsonParser p = JSON.createParser(value)) {
      JsonToken first = p.nextToken();
      if (first == null) throw new NotJson();
      root = read(p, first, 0);
      if (p.nextToken() != null) throw new NotJson();
    } catch (IOException | RuntimeException e) { // a parser's own limit: no crash, a reason
      throw new NotJson();
    }
  }

  private Object read(JsonParser p, JsonToken token, int depth) throws IOException, NotJson {
    switch (token) {
      case START_OBJECT -> {
        if (depth + 1 > maxDepth) throw new NotJson();
        Map<String, Object> object = new HashMap<>();
        for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
          String name = p.currentName();
          if (object.put(name, read(p, p.nextToken(), depth + 1)) != null) duplicate = true;
        }
        return object;
      }
      case START_ARRAY -> {
        if (depth + 1 > maxDepth) throw new NotJson();
        List<Object> array = new ArrayList<>();
        for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
          array.add(read(p, t, depth + 1));
        }
        return array;
      }
      case VALUE_STRING -> {
        return p.getText();
      }
      case VALUE_NUMBER_INT -> {
        digits(p);
        return p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
            ? BIG_INTEGER
            : (Object) p.getLongValue();
      }
      case VALUE_NUMBER_FLOAT -> {
        digits(p);
        return FLOAT;
      }
      case VALUE_TRUE, VALUE_FALSE -> {
        return Boolean.valueOf(token == JsonToken.VALUE_TRUE);
      }
      case VALUE_NULL -> {
        return NULL;
      }
      default -> throw new NotJson();
    }
  }

  /** A number of more digits than the limit (sign, point and exponent mark aside). */
  private void digits(JsonParser p) throws IOException, NotJson {
    char[] text = p.getTextCharacters();
    int count = 0;
    for (int i = p.getTextOffset(), end = i + p.getTextLength(); i < end; i++) {
      if (text[i] >= '0' && text[i] <= '9') count++;
    }
    if (count > maxNumberDigits) throw new NotJson();
  }
}
