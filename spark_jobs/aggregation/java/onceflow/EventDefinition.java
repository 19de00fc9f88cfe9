package onceflow;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * The one event definition (onceflow/event_definition.py) as the data
 * spark_jobs/aggregation/event_check.py exports: its fields and their rules, the relations
 * between the value's fields, the reasons, the limits and the Spark schema. Data only; EventCheck
 * holds the procedure.
 */
final class EventDefinition implements Serializable {
  private static final long serialVersionUID = 1L;

  enum Kind { STRING, INTEGER, OBJECT, ARRAY }

  /** One declared field: its JSON type, its rule and its reasons (`steps`: its path). */
  static final class Field implements Serializable {
    private static final long serialVersionUID = 1L;
    String path, parent, name, reason, missing, wrongType, elementsWrongType;
    int position; // among its object's fields
    int column; // in its object's Spark struct
    String[] steps;
    boolean[] arraySteps; // a step into an array: each element's value
    Kind kind;
    boolean required, timestamp;
    Set<String> oneOf;
    int maxLength = -1;
    Pattern pattern;
    Long minimum, maximum;
    private transient ThreadLocal<Matcher> matcher; // one per thread, reset per value

    /** Whether a value of the field's JSON type breaks its rule (for an array: its elements). */
    boolean breaks(Object value, long earliest, long latest) {
      if (kind == Kind.ARRAY) value = (long) ((List<?>) value).size();
      if (oneOf != null && !oneOf.contains(value)) return true;
      if (maxLength >= 0) {
        String text = (String) value;
        if (text.length() > maxLength && text.codePointCount(0, text.length()) > maxLength) {
          return true;
        }
      }
      if (pattern != null && !matches((String) value)) return true;
      if (timestamp && !Timestamps.within((String) value, earliest, latest)) return true;
      if (minimum != null && (Long) value < minimum) return true;
      return maximum != null && (Long) value > maximum;
    }

    private boolean matches(String text) {
      ThreadLocal<Matcher> local = matcher;
      if (local == null) {
        local = ThreadLocal.withInitial(() -> pattern.matcher(""));
        matcher = local;
      }
      return local.get().reset(text).matches();
    }
  }

  /** A relation between the value's fields: "implies" or "sum_of_products". */
  static final class Relation implements Serializable {
    private static final long serialVersionUID = 1L;
    String kind, reason;
    Path field, source, array;
    Path[] factors; // within each element of `array`
    Map<String, String> mapping;
  }

  /** A path through objects, from the root or from an array's element: its keys in the tree,
   * its column positions in the Spark rows. */
  static final class Path implements Serializable {
    private static final long serialVersionUID = 1L;
    final String[] keys;
    final int[] columns;

    Path(String[] keys, int[] columns) {
      this.keys = keys;
      this.columns = columns;
    }
  }

  final Map<String, String> messages = new HashMap<>();
  final Map<String, List<Field>> children = new HashMap<>(); // by object path, in order
  final Map<String, Set<String>> names = new HashMap<>(); // the declared keys by object path
  final Map<String, Map<String, Field>> byName = new HashMap<>(); // by object path and key
  final Map<String, StructType> structs = new HashMap<>(); // each object path's Spark struct
  final Map<String, String> unknownPrefix = new HashMap<>();
  final List<Field> valueOrder = new ArrayList<>();
  final List<Relation> relations = new ArrayList<>();
  final Field version;
  final String escapeMark, escapedBackslash, backslashReplacement;
  final Pattern loneSurrogate, nul;
  final int maxDepth, maxNumberDigits;
  final long earliest, latest; // epoch seconds
  final StructType event;

  EventDefinition(String definition) throws IOException {
    JsonNode d = new ObjectMapper().readTree(definition);
    d.get("messages").properties().forEach(e -> messages.put(e.getKey(), e.getValue().asText()));
    Map<String, Field> byPath = new HashMap<>();
    for (JsonNode f : d.get("fields")) {
      Field field = field(f);
      byPath.put(field.path, field);
      List<Field> siblings = children.computeIfAbsent(field.parent, k -> new ArrayList<>());
      field.position = siblings.size();
      siblings.add(field);
      names.computeIfAbsent(field.parent, k -> new HashSet<>()).add(field.name);
      byName.computeIfAbsent(field.parent, k -> new HashMap<>()).put(field.name, field);
    }
    d.get("unknown").properties().forEach(e -> unknownPrefix.put(e.getKey(), e.getValue().asText()));
    for (JsonNode path : d.get("value_order")) valueOrder.add(byPath.get(path.asText()));
    event = (StructType) DataType.fromJson(d.get("event_schema").asText());
    structs.put("", event);
    for (JsonNode f : d.get("fields")) place(byPath.get(f.get("path").asText()));
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

  /** The field's column in its object's struct, and the struct of an object it holds. */
  private void place(Field field) {
    StructType parent = structs.get(field.parent);
    field.column = parent.fieldIndex(field.name);
    DataType type = parent.fields()[field.column].dataType();
    if (field.kind == Kind.OBJECT) structs.put(field.path, (StructType) type);
    if (field.kind == Kind.ARRAY) {
      structs.put(field.path + "[]", (StructType) ((ArrayType) type).elementType());
    }
  }

  /** The dotted path from the object at `base` (the root, "", or an array's element). */
  private Path path(String base, String dotted) {
    String[] keys = dotted.split("\\.");
    int[] columns = new int[keys.length];
    String at = base;
    for (int i = 0; i < keys.length; i++) {
      columns[i] = structs.get(at).fieldIndex(keys[i]);
      at = at.isEmpty() ? keys[i] : at + "." + keys[i];
    }
    return new Path(keys, columns);
  }

  private static Field field(JsonNode f) {
    Field field = new Field();
    field.path = f.get("path").asText();
    field.parent = f.get("parent").asText();
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

  private Relation relation(JsonNode r) {
    Relation relation = new Relation();
    relation.kind = r.get("kind").asText();
    relation.reason = r.get("reason").asText();
    relation.field = path("", r.get("field").asText());
    if (r.has("source")) relation.source = path("", r.get("source").asText());
    if (r.has("array")) {
      relation.array = path("", r.get("array").asText());
      String element = r.get("array").asText() + "[]";
      relation.factors = new Path[r.get("factors").size()];
      for (int i = 0; i < relation.factors.length; i++) {
        relation.factors[i] = path(element, r.get("factors").get(i).asText());
      }
    }
    if (r.has("mapping")) {
      relation.mapping = new HashMap<>();
      r.get("mapping").properties().forEach(e -> relation.mapping.put(e.getKey(), e.getValue().asText()));
    }
    return relation;
  }
}
