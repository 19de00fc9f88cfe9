package onceflow;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import onceflow.EventDefinition.Field;
import onceflow.EventDefinition.Path;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.StructType;

/**
 * One streaming pass that accepts a value only when it is plainly a valid event, building its row
 * as it reads: every key declared and met once, every value of its type and within its rule,
 * the value's relations holding. Anything else, also a valid event it is not sure of, is left to
 * EventCheck's phases, which decide it and give the reason (the Python reader's fast path,
 * onceflow/event_reader_fast.py, does the same). Phase 1 has passed before it is asked.
 */
final class FastPath {
  private static final JsonFactory JSON = new JsonFactory();

  private static final class NotSure extends Exception {
    private static final long serialVersionUID = 1L;
    static final NotSure INSTANCE = new NotSure();

    private NotSure() {
      super(null, null, false, false);
    }
  }

  private FastPath() {}

  /** The event's row in the definition's Spark schema, or null: ask the phases. */
  static Row read(EventDefinition d, byte[] value) {
    if (value.length < 4 || value[0] != '{' || !JsonTree.utf8Start(value)) return null;
    try (JsonParser p = JSON.createParser(value)) {
      if (p.nextToken() != JsonToken.START_OBJECT) return null;
      Row event = object(d, p, "");
      if (p.nextToken() != null || Relations.broken(d.relations, event, FastPath::at) != null) {
        return null;
      }
      return event;
    } catch (IOException | NotSure | RuntimeException e) {
      return null;
    }
  }

  /** The object whose START_OBJECT was just read, at `path`, as a row of its struct. */
  private static Row object(EventDefinition d, JsonParser p, String path)
      throws IOException, NotSure {
    Map<String, Field> declared = d.byName.get(path);
    List<Field> fields = d.children.get(path);
    StructType struct = d.structs.get(path);
    Object[] values = new Object[struct.size()];
    long seen = 0;
    for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
      Field field = declared.get(p.currentName());
      if (field == null || field.position >= 64 || (seen & (1L << field.position)) != 0) {
        throw NotSure.INSTANCE;
      }
      seen |= 1L << field.position;
      values[field.column] = value(d, p, p.nextToken(), field);
    }
    for (Field field : fields) {
      if (field.required && (seen & (1L << field.position)) == 0) throw NotSure.INSTANCE;
    }
    return RowFactory.create(values);
  }

  private static Object value(EventDefinition d, JsonParser p, JsonToken t, Field field)
      throws IOException, NotSure {
    Object value;
    switch (field.kind) {
      case STRING -> {
        if (t != JsonToken.VALUE_STRING) throw NotSure.INSTANCE;
        value = p.getText();
      }
      case INTEGER -> {
        if (t != JsonToken.VALUE_NUMBER_INT
            || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) throw NotSure.INSTANCE;
        value = p.getLongValue();
      }
      case OBJECT -> {
        if (t != JsonToken.START_OBJECT) throw NotSure.INSTANCE;
        value = object(d, p, field.path);
      }
      default -> {
        if (t != JsonToken.START_ARRAY) throw NotSure.INSTANCE;
        List<Row> elements = new ArrayList<>();
        for (JsonToken e = p.nextToken(); e != JsonToken.END_ARRAY; e = p.nextToken()) {
          if (e != JsonToken.START_OBJECT) throw NotSure.INSTANCE;
          elements.add(object(d, p, field.path + "[]"));
        }
        value = elements;
      }
    }
    if (field.breaks(value, d.earliest, d.latest)) throw NotSure.INSTANCE;
    return value;
  }

  private static Object at(Object from, Path path) {
    Object value = from;
    for (int column : path.columns) value = ((Row) value).get(column);
    return value;
  }
}
