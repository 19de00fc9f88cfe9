package onceflow;

import java.math.BigInteger;
import java.util.List;
import onceflow.EventDefinition.Path;
import onceflow.EventDefinition.Relation;

/**
 * Phase 6's relations between the value's fields, held once for both readings of a value: the
 * phases' tree (maps by key) and FastPath's row (columns by position).
 */
final class Relations {
  /** How one reading of the value finds what is at a path (present: the shape was checked). */
  @FunctionalInterface
  interface Reading {
    Object at(Object from, Path path);
  }

  private Relations() {}

  /** The reason of the first relation that does not hold in `value`, or null when all hold. */
  static String broken(List<Relation> relations, Object value, Reading reading) {
    for (Relation relation : relations) {
      boolean holds = relation.kind.equals("implies")
          ? reading.at(value, relation.field)
              .equals(relation.mapping.get(reading.at(value, relation.source)))
          : sumOfProductsHolds(relation, value, reading);
      if (!holds) return relation.reason;
    }
    return null;
  }

  /** The field equals the sum over the elements of their factors' product, exactly. */
  private static boolean sumOfProductsHolds(Relation relation, Object value, Reading reading) {
    List<?> elements = (List<?>) reading.at(value, relation.array);
    long expected = (Long) reading.at(value, relation.field);
    Path a = relation.factors[0];
    Path b = relation.factors[1];
    try {
      long total = 0;
      for (Object e : elements) {
        total = Math.addExact(total,
            Math.multiplyExact((Long) reading.at(e, a), (Long) reading.at(e, b)));
      }
      return total == expected;
    } catch (ArithmeticException overflow) {
      BigInteger exact = BigInteger.ZERO;
      for (Object e : elements) {
        exact = exact.add(BigInteger.valueOf((Long) reading.at(e, a))
            .multiply(BigInteger.valueOf((Long) reading.at(e, b))));
      }
      return exact.equals(BigInteger.valueOf(expected));
    }
  }
}
