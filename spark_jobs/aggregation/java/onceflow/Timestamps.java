package onceflow;

import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.YearMonth;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;

/** The timestamp rule: a time with a zone whose instant lies within the definition's years. */
final class Timestamps {
  private Timestamps() {}

  /** Whether the text is an RFC 3339 time whose instant's whole second is within the bounds. */
  static boolean within(String text, long earliest, long latest) {
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
}
