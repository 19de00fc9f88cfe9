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
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.YearMonth;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The Spark parser's check of one record's value against the one event definition
 * (onceflow/event_definition.py): phases 1 (after the tombstone and size checks) to 5, and the
 * relations of phase 6 that read the value only. The definition arrives as data, exported by
 * spark_jobs/aggregation/event_check.py; this class holds no rule of its own, only the
 * procedure onceflow/events.py (the Python reader) follows, so both give a record the same
 * reason. Returns the record's dead-letter reason, or null for a valid value.
 */
public final class EventCheck implements UDF1<byte[], Row> {
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
    private transient ThreadLocal<Matcher> matcher; // one per thread, reset per value

    boolean matches(String text) {
      ThreadLocal<Matcher> local = matcher;
      if (local == null) {
        local = ThreadLocal.withInitial(() -> pattern.matcher(""));
        matcher = local;
      }
      return local.get().reset(text).matches();
    }
  }

  private static final class Relation implements Serializable {
    private static final long serialVersionUID = 1L;
    String kind, reason;
    String[] field, source, array, factors;
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
  private final Map<String, Set<String>> names = new HashMap<>();
  private final Map<String, String> unknownPrefix = new HashMap<>();
  private final List<Field> valueOrder = new ArrayList<>();
  private final List<Relation> relations = new ArrayList<>();
  private final Field version;
  private final String escapeMark, escapedBackslash, backslashReplacement;
  private final Pattern loneSurrogate, nul;
  private final int maxDepth, maxNumberDigits;
  private final long earliest, latest;
  private final StructType event;

  public EventCheck(String definition) throws IOException {
    JsonNode d = new ObjectMapper().readTree(definition);
    d.get("messages").properties().forEach(e -> messages.put(e.getKey(), e.getValue().asText()));
    Map<String, Field> byPath = new HashMap<>();
    for (JsonNode f : d.get("fields")) {
      Field field = field(f);
      byPath.put(field.path, field);
      children.computeIfAbsent(f.get("parent").asText(), k -> new ArrayList<>()).add(field);
      names.computeIfAbsent(f.get("parent").asText(), k -> new HashSet<>()).add(field.name);
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
    event = (StructType) DataType.fromJson(d.get("event_schema").asText());
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
    relation.field = r.get("field").asText().split("\\.");
    relation.reason = r.get("reason").asText();
    if (r.has("source")) relation.source = r.get("source").asText().split("\\.");
    if (r.has("array")) relation.array = r.get("array").asText().split("\\.");
    if (r.has("factors")) {
      relation.factors = new String[] {r.get("factors").get(0).asText(), r.get("factors").get(1).asText()};
    }
    if (r.has("mapping")) {
      relation.mapping = new HashMap<>();
      r.get("mapping").properties().forEach(e -> relation.mapping.put(e.getKey(), e.getValue().asText()));
    }
    return relation;
  }

  /** (the reason, null) for an invalid value; (null, the event as the schema's row). */
  @Override
  public Row call(byte[] value) {
    try {
      Map<String, Object> doc = document(value);
      version(doc);
      shape("", List.of(doc));
      values(doc);
      relations(doc);
      return RowFactory.create(null, row(event, doc));
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
        throw new Invalid(messages.get("not_utf8"));
      }
    }
    if (!hasBackslash(value)) return;
    String text = new String(value, StandardCharsets.UTF_8);
    if (!text.contains(escapeMark)) return;
    String escapes = text.replaceAll(escapedBackslash, backslashReplacement);
    if (loneSurrogate.matcher(escapes).find()) throw new Invalid(messages.get("lone_surrogate"));
    if (nul.matcher(escapes).find()) throw new Invalid(messages.get("nul"));
  }

  private static boolean hasBackslash(byte[] value) {
    for (byte b : value) if (b == '\\') return true;
    return false;
  }

  /** Phases 1 and 2: the one JSON object the value holds. */
  @SuppressWarnings("unchecked")
  private Map<String, Object> document(byte[] value) throws Invalid {
    text(value);
    boolean[] duplicate = {false};
    Object root;
    // Jackson reads the first bytes for a byte order mark or U+0000s, the marks of another
    // encoding; JSON's text here is UTF-8 with no mark, and U+0000 is never JSON outside an
    // escape (past the first bytes, Jackson refuses it as Python's decoder does).
    boolean bom = value.length >= 3 && value[0] == (byte) 0xEF && value[1] == (byte) 0xBB
        && value[2] == (byte) 0xBF;
    boolean zero = false;
    for (int i = 0; i < Math.min(4, value.length); i++) zero |= value[i] == 0;
    if (bom || zero) throw new Invalid(messages.get("not_json"));
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
    Set<String> declared = names.getOrDefault(path, Set.of());
    String smallest = null;
    for (Map<String, Object> object : objects) {
      if (object.size() <= declared.size() && declared.containsAll(object.keySet())) continue;
      for (String name : object.keySet()) {
        if (declared.contains(name)) continue;
        if (smallest == null || compareCodePoints(name, smallest) < 0) smallest = name;
      }
    }
    if (smallest != null) throw new Invalid(unknownPrefix.get(path) + smallest);
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
  @SuppressWarnings("unchecked")
  private static Object one(Map<String, Object> doc, String[] steps) {
    Object value = doc;
    for (String step : steps) value = ((Map<String, Object>) value).get(step);
    return value;
  }

  /** Phase 5. */
  private void values(Map<String, Object> doc) throws Invalid {
    for (Field field : valueOrder) check(field, doc, 0);
  }

  /** The field's rule on every present value at its path below `node` (its steps from `step`),
   * in document order (each element's, under an array). */
  @SuppressWarnings("unchecked")
  private void check(Field field, Object node, int step) throws Invalid {
    if (step == field.steps.length) {
      if (breaks(field, node)) throw new Invalid(reason(field, node));
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

  private boolean breaks(Field field, Object value) {
    if (field.kind == Kind.ARRAY) value = (long) ((List<?>) value).size();
    if (field.oneOf != null && !field.oneOf.contains(value)) return true;
    if (field.maxLength >= 0) {
      String text = (String) value;
      if (text.length() > field.maxLength
          && text.codePointCount(0, text.length()) > field.maxLength) return true;
    }
    if (field.pattern != null && !field.matches((String) value)) return true;
    if (field.timestamp && !instantOk((String) value)) return true;
    if (field.minimum != null && (Long) value < field.minimum) return true;
    return field.maximum != null && (Long) value > field.maximum;
  }

  /** An RFC 3339 time whose instant's whole second lies within the definition's years. */
  private boolean instantOk(String text) {
    long second = epochSecond(text);
    if (second == UNREAD) {
      try {
        second = OffsetDateTime.parse(text, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toEpochSecond();
      } catch (DateTimeParseException e) {
        return false;
      }
    }
    return earliest <= second && second <= latest;
  }

  private static final long UNREAD = Long.MIN_VALUE;

  /**
   * The epoch second of a time written `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)` with a
   * real date and time, read by position (DateTimeFormatter's parse was most of this check's
   * time); UNREAD for any other text, which the full parser decides.
   */
  private static long epochSecond(String t) {
    int n = t.length();
    if (n < 20 || t.charAt(4) != '-' || t.charAt(7) != '-' || t.charAt(10) != 'T'
        || t.charAt(13) != ':' || t.charAt(16) != ':') return UNREAD;
    int year = number(t, 0, 4), month = number(t, 5, 2), day = number(t, 8, 2);
    int hour = number(t, 11, 2), minute = number(t, 14, 2), second = number(t, 17, 2);
    int i = 19;
    if (t.charAt(i) == '.') {
      int end = i + 1;
      while (end < n && t.charAt(end) >= '0' && t.charAt(end) <= '9') end++;
      if (end == i + 1 || end - i - 1 > 9) return UNREAD;
      i = end;
    }
    int offset;
    if (i == n - 1 && t.charAt(i) == 'Z') {
      offset = 0;
    } else if (i == n - 6 && (t.charAt(i) == '+' || t.charAt(i) == '-') && t.charAt(i + 3) == ':') {
      int hours = number(t, i + 1, 2), minutes = number(t, i + 4, 2);
      if (hours < 0 || hours > 18 || minutes < 0 || minutes > 59) return UNREAD;
      offset = (hours * 3600 + minutes * 60) * (t.charAt(i) == '-' ? -1 : 1);
      if (Math.abs(offset) > 18 * 3600) return UNREAD;
    } else {
      return UNREAD;
    }
    if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0
        || minute > 59 || second < 0 || second > 59
        || day > YearMonth.of(year, month).lengthOfMonth()) return UNREAD;
    return LocalDate.of(year, month, day).toEpochDay() * 86400 + hour * 3600 + minute * 60
        + second - offset;
  }

  /** The decimal number of `length` ASCII digits at `start`, or -1. */
  private static int number(String t, int start, int length) {
    int value = 0;
    for (int i = start; i < start + length; i++) {
      char c = t.charAt(i);
      if (c < '0' || c > '9') return -1;
      value = value * 10 + (c - '0');
    }
    return value;
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
