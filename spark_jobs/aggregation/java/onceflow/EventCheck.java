package onceflow;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.Serializable;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.spark.sql.api.java.UDF1;

/**
 * The Spark parser's check of one record's value against the one event definition
 * (onceflow/event_definition.py): phases 1 (after the tombstone and size checks) to 5, and the
 * relations of phase 6 that read the value only. The definition arrives as data, exported by
 * spark_jobs/aggregation/event_check.py; this class holds no rule of its own, only the
 * procedure onceflow/events.py (the Python reader) follows, so both give a record the same
 * reason. Returns the record's dead-letter reason, or null for a valid value.
 */
public final class EventCheck implements UDF1<byte[], String> {
  private static final long serialVersionUID = 1L;
  private static final Object NULL = new Object() {}; // a JSON null (absent is Java null)
  private static final int LARGE = Integer.MAX_VALUE;
  private static final JsonFactory JSON =
      JsonFactory.builder()
          .streamReadConstraints(
              StreamReadConstraints.builder()
                  .maxNestingDepth(LARGE)
                  .maxNumberLength(LARGE)
                  .maxStringLength(LARGE)
                  .maxNameLength(LARGE)
                  .build())
          .build();

  private enum Kind { STRING, INTEGER, OBJECT, ARRAY }

  private static final class Field implements Serializable {
    private static final long serialVersionUID = 1L;
    String path, name, reason, missing, wrongType, elementsWrongType;
    String[] steps;
    boolean[] arraySteps;
    Kind kind;
    boolean required, timestamp;
    Set<String> oneOf;
    int maxLength = -1;
    Pattern pattern;
    Long minimum, maximum;
  }

  private static final class Relation implements Serializable {
    private static final long serialVersionUID = 1L;
    String kind, field, source, array, reason;
    String[] factors;
    Map<String, String> mapping;
  }

  private static final class Invalid extends Exception {
    private static final long serialVersionUID = 1L;

    Invalid(String reason) {
      super(reason, null, false, false);
    }
  }

  private final Map<String, String> messages = new HashMap<>();
  private final Map<String, List<Field>> children = new HashMap<>();
  private final Map<String, String> unknownPrefix = new HashMap<>();
  private final List<Field> valueOrder = new ArrayList<>();
  private final List<Relation> relations = new ArrayList<>();
  private final Field version;
  private final String escapeMark, escapedBackslash, backslashReplacement;
  private final Pattern loneSurrogate, nul;
  private final int maxDepth, maxNumberDigits;
  private final long earliest, latest;

  public EventCheck(String definition) throws IOException {
    JsonNode d = new ObjectMapper().readTree(definition);
    d.get("messages").properties().forEach(e -> messages.put(e.getKey(), e.getValue().asText()));
    Map<String, Field> byPath = new HashMap<>();
    for (JsonNode f : d.get("fields")) {
      Field field = field(f);
      byPath.put(field.path, field);
      children.computeIfAbsent(f.get("parent").asText(), k -> new ArrayList<>()).add(field);
    }
    d.get("unknown").properties().forEach(e -> unknownPrefix.put(e.getKey(), e.getValue().asText()));
    for (JsonNode path : d.get("value_order")) valueOrder.add(byPath.get(path.asText()));
    for (JsonNode r : d.get("relations")) relations.add(relation(r));
    version = byPath.get(d.get("version").asText());
    escapeMark = d.get("escape_mark").asText();
    escapedBackslash = d.get("escaped_backslash").get(0).asText();
    backslashReplacement = d.get("escaped_backslash").get(1).asText();
    loneSurrogate = Pattern.compile(d.get("lone_surrogate").asText());
    nul = Pattern.compile(d.get("nul").asText());
    maxDepth = d.get("max_depth").asInt();
    maxNumberDigits = d.get("max_number_digits").asInt();
    earliest = d.get("earliest").asLong();
    latest = d.get("latest").asLong();
  }

  private static Field field(JsonNode f) {
    Field field = new Field();
    field.path = f.get("path").asText();
    field.name = f.get("name").asText();
    field.kind = Kind.valueOf(f.get("json").asText());
    field.required = f.get("required").asBoolean();
    field.reason = f.get("reason").asText();
    field.missing = f.get("missing").asText();
    field.wrongType = f.get("wrong_type").asText();
    field.elementsWrongType = f.path("elements_wrong_type").asText(null);
    JsonNode steps = f.get("steps");
    field.steps = new String[steps.size()];
    field.arraySteps = new boolean[steps.size()];
    for (int i = 0; i < steps.size(); i++) {
      field.steps[i] = steps.get(i).get(0).asText();
      field.arraySteps[i] = steps.get(i).get(1).asBoolean();
    }
    if (f.get("one_of").size() > 0) {
      field.oneOf = new HashSet<>();
      for (JsonNode v : f.get("one_of")) field.oneOf.add(v.asText());
    }
    if (!f.get("max_length").isNull()) field.maxLength = f.get("max_length").asInt();
    if (!f.get("pattern").isNull()) field.pattern = Pattern.compile(f.get("pattern").asText());
    field.timestamp = f.get("timestamp").asBoolean();
    if (!f.get("minimum").isNull()) field.minimum = f.get("minimum").asLong();
    if (!f.get("maximum").isNull()) field.maximum = f.get("maximum").asLong();
    return field;
  }

  private static Relation relation(JsonNode r) {
    Relation relation = new Relation();
    relation.kind = r.get("kind").asText();
    relation.field = r.get("field").asText();
    relation.reason = r.get("reason").asText();
    relation.source = r.path("source").asText(null);
    relation.array = r.path("array").asText(null);
    if (r.has("factors")) {
      relation.factors = new String[] {r.get("factors").get(0).asText(), r.get("factors").get(1).asText()};
    }
    if (r.has("mapping")) {
      relation.mapping = new HashMap<>();
      r.get("mapping").properties().forEach(e -> relation.mapping.put(e.getKey(), e.getValue().asText()));
    }
    return relation;
  }

  @Override
  public String call(byte[] value) {
    try {
      Map<String, Object> doc = document(value);
      version(doc);
      shape("", List.of(doc));
      values(doc);
      relations(doc);
      return null;
    } catch (Invalid invalid) {
      return invalid.getMessage();
    }
  }

  /** Phase 1 after the size: UTF-8, then no lone surrogate or U+0000 escaped. */
  private void text(byte[] value) throws Invalid {
    boolean ascii = true, backslash = false;
    for (byte b : value) {
      if (b < 0) ascii = false;
      else if (b == '\\') backslash = true;
    }
    if (!ascii) {
      try {
        StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(value));
      } catch (CharacterCodingException e) {
        throw new Invalid(messages.get("not_utf8"));
      }
    }
    if (!backslash) return;
    String text = new String(value, StandardCharsets.UTF_8);
    if (!text.contains(escapeMark)) return;
    String escapes = text.replaceAll(escapedBackslash, backslashReplacement);
    if (loneSurrogate.matcher(escapes).find()) throw new Invalid(messages.get("lone_surrogate"));
    if (nul.matcher(escapes).find()) throw new Invalid(messages.get("nul"));
  }

  /** Phases 1 and 2: the one JSON object the value holds. */
  @SuppressWarnings("unchecked")
  private Map<String, Object> document(byte[] value) throws Invalid {
    text(value);
    boolean[] duplicate = {false};
    Object root;
    // Bytes Jackson would read as a byte order mark or another encoding are no JSON text here
    // (JSON's text is UTF-8 with no mark, and U+0000 is never JSON outside an escape).
    boolean bom = value.length >= 3 && value[0] == (byte) 0xEF && value[1] == (byte) 0xBB
        && value[2] == (byte) 0xBF;
    if (bom || indexOf(value, (byte) 0) >= 0) throw new Invalid(messages.get("not_json"));
    try (JsonParser p = JSON.createParser(value)) {
      JsonToken first = p.nextToken();
      if (first == null) throw new Invalid(messages.get("not_json"));
      root = read(p, first, 0, duplicate);
      if (p.nextToken() != null) throw new Invalid(messages.get("not_json"));
    } catch (IOException e) {
      throw new Invalid(messages.get("not_json"));
    }
    if (!(root instanceof Map)) throw new Invalid(messages.get("not_object"));
    if (duplicate[0]) throw new Invalid(messages.get("duplicate_key"));
    return (Map<String, Object>) root;
  }

  private static int indexOf(byte[] value, byte wanted) {
    for (int i = 0; i < value.length; i++) if (value[i] == wanted) return i;
    return -1;
  }

  private Object read(JsonParser p, JsonToken token, int depth, boolean[] duplicate)
      throws IOException, Invalid {
    switch (token) {
      case START_OBJECT -> {
        if (depth + 1 > maxDepth) throw new Invalid(messages.get("not_json"));
        Map<String, Object> object = new HashMap<>();
        for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
          String name = p.currentName();
          Object item = read(p, p.nextToken(), depth + 1, duplicate);
          if (object.put(name, item) != null) duplicate[0] = true;
        }
        return object;
      }
      case START_ARRAY -> {
        if (depth + 1 > maxDepth) throw new Invalid(messages.get("not_json"));
        List<Object> array = new ArrayList<>();
        for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
          array.add(read(p, t, depth + 1, duplicate));
        }
        return array;
      }
      case VALUE_STRING -> {
        return p.getText();
      }
      case VALUE_NUMBER_INT -> {
        digits(p);
        return p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
            ? p.getBigIntegerValue()
            : (Object) p.getLongValue();
      }
      case VALUE_NUMBER_FLOAT -> {
        digits(p);
        return Double.NaN; // a float: of no declared JSON type
      }
      case VALUE_TRUE, VALUE_FALSE -> {
        return Boolean.valueOf(token == JsonToken.VALUE_TRUE);
      }
      case VALUE_NULL -> {
        return NULL;
      }
      default -> throw new Invalid(messages.get("not_json"));
    }
  }

  private void digits(JsonParser p) throws IOException, Invalid {
    char[] text = p.getTextCharacters();
    int count = 0;
    for (int i = p.getTextOffset(), end = i + p.getTextLength(); i < end; i++) {
      if (text[i] >= '0' && text[i] <= '9') count++;
    }
    if (count > maxNumberDigits) throw new Invalid(messages.get("not_json"));
  }

  private static boolean absent(Object value) {
    return value == null || value == NULL;
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
    Object value = doc.get(version.name);
    if (absent(value)) throw new Invalid(version.missing);
    if (!is(value, version.kind)) throw new Invalid(version.wrongType);
    if (breaks(version, value)) throw new Invalid(reason(version, value));
  }

  /** Phase 4 for the objects at `path` (one, or an array's elements), depth first. */
  @SuppressWarnings("unchecked")
  private void shape(String path, List<Map<String, Object>> objects) throws Invalid {
    List<Field> fields = children.getOrDefault(path, List.of());
    String smallest = null;
    for (Map<String, Object> object : objects) {
      for (String name : object.keySet()) {
        if (declared(fields, name)) continue;
        if (smallest == null || compareCodePoints(name, smallest) < 0) smallest = name;
      }
    }
    if (smallest != null) throw new Invalid(unknownPrefix.get(path) + smallest);
    for (Field field : fields) {
      List<Object> present = new ArrayList<>(objects.size());
      for (Map<String, Object> object : objects) {
        Object value = object.get(field.name);
        if (!absent(value)) present.add(value);
      }
      if (field.required && present.size() < objects.size()) throw new Invalid(field.missing);
      for (Object value : present) {
        if (!is(value, field.kind)) throw new Invalid(field.wrongType);
      }
      if (field.kind == Kind.OBJECT) {
        List<Map<String, Object>> nested = new ArrayList<>();
        for (Object value : present) nested.add((Map<String, Object>) value);
        shape(field.path, nested);
      } else if (field.kind == Kind.ARRAY) {
        List<Map<String, Object>> elements = new ArrayList<>();
        for (Object value : present) {
          for (Object element : (List<Object>) value) {
            if (!(element instanceof Map)) throw new Invalid(field.elementsWrongType);
            elements.add((Map<String, Object>) element);
          }
        }
        shape(field.path + "[]", elements);
      }
    }
  }

  private static boolean declared(List<Field> fields, String name) {
    for (Field field : fields) if (field.name.equals(name)) return true;
    return false;
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

  /** Every present value at the field's path (each element's, under an array). */
  @SuppressWarnings("unchecked")
  private static List<Object> at(Map<String, Object> doc, String[] steps, boolean[] arrays) {
    List<Object> current = List.of(doc);
    for (int s = 0; s < steps.length; s++) {
      List<Object> next = new ArrayList<>();
      for (Object object : current) {
        Object value = ((Map<String, Object>) object).get(steps[s]);
        if (absent(value)) continue;
        if (arrays[s]) next.addAll((List<Object>) value);
        else next.add(value);
      }
      current = next;
    }
    return current;
  }

  private static Object one(Map<String, Object> doc, String path) {
    String[] steps = path.split("\\.");
    return at(doc, steps, new boolean[steps.length]).get(0);
  }

  /** Phase 5. */
  private void values(Map<String, Object> doc) throws Invalid {
    for (Field field : valueOrder) {
      for (Object value : at(doc, field.steps, field.arraySteps)) {
        if (breaks(field, value)) throw new Invalid(reason(field, value));
      }
    }
  }

  private boolean breaks(Field field, Object value) {
    if (field.kind == Kind.ARRAY) value = (long) ((List<?>) value).size();
    if (field.oneOf != null && !field.oneOf.contains(value)) return true;
    if (field.maxLength >= 0) {
      String text = (String) value;
      if (text.length() > field.maxLength
          && text.codePointCount(0, text.length()) > field.maxLength) return true;
    }
    if (field.pattern != null && !field.pattern.matcher((String) value).matches()) return true;
    if (field.timestamp && !instantOk((String) value)) return true;
    if (field.minimum != null && (Long) value < field.minimum) return true;
    return field.maximum != null && (Long) value > field.maximum;
  }

  /** An RFC 3339 time whose instant's whole second lies within the definition's years. */
  private boolean instantOk(String text) {
    try {
      long second = OffsetDateTime.parse(text, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toEpochSecond();
      return earliest <= second && second <= latest;
    } catch (DateTimeParseException e) {
      return false;
    }
  }

  private static String reason(Field field, Object value) {
    return field.reason.replace("{value}", String.valueOf(value));
  }

  /** Phase 6's relations between the value's fields. */
  @SuppressWarnings("unchecked")
  private void relations(Map<String, Object> doc) throws Invalid {
    for (Relation relation : relations) {
      boolean holds;
      if (relation.kind.equals("implies")) {
        Object implied = relation.mapping.get(one(doc, relation.source));
        holds = one(doc, relation.field).equals(implied);
      } else {
        List<Object> elements = (List<Object>) one(doc, relation.array);
        holds = sumOfProducts(elements, relation.factors).equals(
            BigInteger.valueOf((Long) one(doc, relation.field)));
      }
      if (!holds) throw new Invalid(relation.reason);
    }
  }

  @SuppressWarnings("unchecked")
  private static BigInteger sumOfProducts(List<Object> elements, String[] factors) {
    long total = 0;
    try {
      for (Object element : elements) {
        Map<String, Object> e = (Map<String, Object>) element;
        total = Math.addExact(total,
            Math.multiplyExact((Long) e.get(factors[0]), (Long) e.get(factors[1])));
      }
      return BigInteger.valueOf(total);
    } catch (ArithmeticException overflow) {
      BigInteger exact = BigInteger.ZERO;
      for (Object element : elements) {
        Map<String, Object> e = (Map<String, Object>) element;
        exact = exact.add(BigInteger.valueOf((Long) e.get(factors[0]))
            .multiply(BigInteger.valueOf((Long) e.get(factors[1]))));
      }
      return exact;
    }
  }
}
