package onceflow;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import onceflow.EventDefinition.Field;
import onceflow.EventDefinition.Kind;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The Spark parser's reading of one record's value against the one event definition: phases 1
 * (after the tombstone and size checks) to 5 and the relations of phase 6 that read the value
 * only, in the order and with the reasons of onceflow/events.py (the Python reader), so both give
 * a record the same reason. It holds that procedure and no rule: every rule, reason and limit is
 * the EventDefinition it is built with. Returns (reason, null) for an invalid value and
 * (null, the event's row in the definition's Spark schema) for a valid one. A value FastPath
 * accepts after phase 1 is not read again.
 */
public final class EventCheck implements UDF1<byte[], Row> {
  private static final long serialVersionUID = 1L;

  private static final class Invalid extends Exception {
    private static final long serialVersionUID = 1L;

    Invalid(String reason) {
      super(reason, null, false, false);
    }
  }

  private final EventDefinition d;

  public EventCheck(String definition) throws java.io.IOException {
    d = new EventDefinition(definition);
  }

  /** True when FastPath alone accepts the value (a valid event it is sure of): for tests. */
  public boolean fast(byte[] value) {
    try {
      text(value);
    } catch (Invalid invalid) {
      return false;
    }
    return FastPath.read(d, value) != null;
  }

  /** (the reason, null) for an invalid value; (null, the event as the schema's row). */
  @Override
  public Row call(byte[] value) {
    try {
      text(value);
      Row fast = FastPath.read(d, value);
      if (fast != null) return RowFactory.create(null, fast);
      Map<String, Object> doc = document(value);
      version(doc);
      shape("", List.of(doc));
      values(doc);
      relations(doc);
      return RowFactory.create(null, row(d.event, doc));
    } catch (Invalid invalid) {
      return RowFactory.create(invalid.getMessage(), null);
    }
  }

  /** A valid event's object as a row of `type`: what from_json would read from its text. */
  @SuppressWarnings("unchecked")
  private static Row row(StructType type, Map<String, Object> object) {
    StructField[] fields = type.fields();
    Object[] values = new Object[fields.length];
    for (int i = 0; i < fields.length; i++) {
      Object value = object.get(fields[i].name());
      values[i] = absent(value) ? null : typed(fields[i].dataType(), value);
    }
    return RowFactory.create(values);
  }

  @SuppressWarnings("unchecked")
  private static Object typed(DataType type, Object value) {
    if (type instanceof StructType struct) return row(struct, (Map<String, Object>) value);
    if (type instanceof ArrayType array) {
      List<Object> elements = (List<Object>) value;
      List<Object> typed = new ArrayList<>(elements.size());
      for (Object element : elements) typed.add(typed(array.elementType(), element));
      return typed;
    }
    return value; // a string or a long, as the shape has checked
  }

  /** Phase 1 after the size: UTF-8, then no lone surrogate or U+0000 escaped. */
  private void text(byte[] value) throws Invalid {
    int bits = 0;
    for (byte b : value) bits |= b; // a byte with its high bit set: not ASCII
    if (bits < 0) {
      try {
        StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(value));
      } catch (CharacterCodingException e) {
        throw new Invalid(d.messages.get("not_utf8"));
      }
    }
    if (!hasBackslash(value)) return;
    String text = new String(value, StandardCharsets.UTF_8);
    if (!text.contains(d.escapeMark)) return;
    String escapes = text.replaceAll(d.escapedBackslash, d.backslashReplacement);
    if (d.loneSurrogate.matcher(escapes).find()) throw new Invalid(d.messages.get("lone_surrogate"));
    if (d.nul.matcher(escapes).find()) throw new Invalid(d.messages.get("nul"));
  }

  private static boolean hasBackslash(byte[] value) {
    for (byte b : value) if (b == '\\') return true;
    return false;
  }

  /** Phase 2 (after phase 1): the one JSON object the value holds. */
  @SuppressWarnings("unchecked")
  private Map<String, Object> document(byte[] value) throws Invalid {
    JsonTree tree;
    try {
      tree = new JsonTree(value, d.maxDepth, d.maxNumberDigits);
    } catch (JsonTree.NotJson e) {
      throw new Invalid(d.messages.get("not_json"));
    }
    if (!(tree.root instanceof Map)) throw new Invalid(d.messages.get("not_object"));
    if (tree.duplicate) throw new Invalid(d.messages.get("duplicate_key"));
    return (Map<String, Object>) tree.root;
  }

  private static boolean absent(Object value) {
    return value == null || value == JsonTree.NULL;
  }

  private static boolean is(Object value, Kind kind) {
    return switch (kind) {
      case STRING -> value instanceof String;
      case INTEGER -> value instanceof Long;
      case OBJECT -> value instanceof Map;
      case ARRAY -> value instanceof List;
    };
  }

  /** Phase 3. */
  private void version(Map<String, Object> doc) throws Invalid {
    Field version = d.version;
    Object value = doc.get(version.name);
    if (absent(value)) throw new Invalid(version.missing);
    if (!is(value, version.kind)) throw new Invalid(version.wrongType);
    if (version.breaks(value, d.earliest, d.latest)) throw new Invalid(reason(version, value));
  }

  /** Phase 4 for the objects at `path` (one, or an array's elements), depth first. */
  @SuppressWarnings("unchecked")
  private void shape(String path, List<Map<String, Object>> objects) throws Invalid {
    List<Field> fields = d.children.getOrDefault(path, List.of());
    Set<String> declared = d.names.getOrDefault(path, Set.of());
    String smallest = null;
    for (Map<String, Object> object : objects) {
      if (object.size() <= declared.size() && declared.containsAll(object.keySet())) continue;
      for (String name : object.keySet()) {
        if (declared.contains(name)) continue;
        if (smallest == null || compareCodePoints(name, smallest) < 0) smallest = name;
      }
    }
    if (smallest != null) throw new Invalid(d.unknownPrefix.get(path) + smallest);
    for (Field field : fields) {
      boolean missing = false, wrong = false;
      for (Map<String, Object> object : objects) {
        Object value = object.get(field.name);
        if (absent(value)) missing = true;
        else if (!is(value, field.kind)) wrong = true;
      }
      if (field.required && missing) throw new Invalid(field.missing);
      if (wrong) throw new Invalid(field.wrongType);
      if (field.kind == Kind.OBJECT) {
        List<Map<String, Object>> nested = new ArrayList<>();
        for (Map<String, Object> object : objects) {
          Object value = object.get(field.name);
          if (!absent(value)) nested.add((Map<String, Object>) value);
        }
        shape(field.path, nested);
      } else if (field.kind == Kind.ARRAY) {
        List<Map<String, Object>> elements = new ArrayList<>();
        for (Map<String, Object> object : objects) {
          Object value = object.get(field.name);
          if (absent(value)) continue;
          for (Object element : (List<Object>) value) {
            if (!(element instanceof Map)) throw new Invalid(field.elementsWrongType);
            elements.add((Map<String, Object>) element);
          }
        }
        shape(field.path + "[]", elements);
      }
    }
  }

  /** Python's order of strings: by code point (String.compareTo compares UTF-16 units). */
  private static int compareCodePoints(String a, String b) {
    int i = 0, j = 0;
    while (i < a.length() && j < b.length()) {
      int x = a.codePointAt(i), y = b.codePointAt(j);
      if (x != y) return Integer.compare(x, y);
      i += Character.charCount(x);
      j += Character.charCount(y);
    }
    return Integer.compare(a.length() - i, b.length() - j);
  }

  /** The value at a path outside arrays (present: the shape was checked). */
  private static Object one(Object from, String[] steps) {
    Object value = from;
    for (String step : steps) value = ((Map<?, ?>) value).get(step);
    return value;
  }

  /** Phase 5. */
  private void values(Map<String, Object> doc) throws Invalid {
    for (Field field : d.valueOrder) check(field, doc, 0);
  }

  /** The field's rule on every present value at its path below `node` (its steps from `step`),
   * in document order (each element's, under an array). */
  @SuppressWarnings("unchecked")
  private void check(Field field, Object node, int step) throws Invalid {
    if (step == field.steps.length) {
      if (field.breaks(node, d.earliest, d.latest)) throw new Invalid(reason(field, node));
      return;
    }
    Object value = ((Map<String, Object>) node).get(field.steps[step]);
    if (absent(value)) return;
    if (!field.arraySteps[step]) {
      check(field, value, step + 1);
      return;
    }
    for (Object element : (List<Object>) value) check(field, element, step + 1);
  }

  private static String reason(Field field, Object value) {
    return field.reason.replace("{value}", String.valueOf(value));
  }

  /** Phase 6's relations between the value's fields, read from the tree. */
  private void relations(Map<String, Object> doc) throws Invalid {
    String broken = Relations.broken(d.relations, doc, (from, path) -> one(from, path.keys));
    if (broken != null) throw new Invalid(broken);
  }
}
