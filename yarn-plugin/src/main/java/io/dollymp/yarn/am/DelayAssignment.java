package io.dollymp.yarn.am;

import java.util.List;
import java.util.Objects;

/**
 * Which copy of a map's output a reduce copy reads (Dolly, paper 001, Section 4.4, "delay
 * assignment"; DollyMP, paper 000, Section 5.2). Reduce copy {@code k} (its attempt number modulo the
 * task's number of copies) prefers map copy {@code k}; it waits up to ω from the moment the first map
 * copy finished, then reads any finished copy. When the map has fewer copies than the reduce task,
 * every reduce copy reads the first finished copy (the paper's "contention" case).
 *
 * <p>Choices where the paper is silent: ω counts from when this reducer first learns that some copy
 * of the map finished; a preferred copy that failed or was killed means "read the first copy" at once;
 * a reduce task without clones never waits.
 */
public final class DelayAssignment {
  /** What to do for one map. */
  public enum Kind { OWN_COPY, FIRST_COPY, WAIT }

  /** The decision; {@code attemptId} is the copy to read for OWN_COPY. */
  public static final class Choice {
    private final Kind kind;
    private final String attemptId;
    private final String url;
    private final String reason;

    public Choice(Kind kind, String attemptId, String url, String reason) {
      this.kind = kind;
      this.attemptId = attemptId;
      this.url = url;
      this.reason = reason;
    }

    public Kind kind() {
      return kind;
    }

    public String attemptId() {
      return attemptId;
    }

    public String url() {
      return url;
    }

    public String reason() {
      return reason;
    }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof Choice)) {
        return false;
      }
      Choice c = (Choice) o;
      return kind == c.kind && Objects.equals(attemptId, c.attemptId) && Objects.equals(url, c.url)
          && Objects.equals(reason, c.reason);
    }

    @Override
    public int hashCode() {
      return Objects.hash(kind, attemptId, url, reason);
    }

    @Override
    public String toString() {
      return "Choice[" + kind + " " + attemptId + " " + url + ": " + reason + "]";
    }
  }

  private DelayAssignment() {}

  public static Choice decide(MapCopies copies, int mapIndex, int reduceIndex, int reduceAttemptNo, long waitedMs) {
    int family = copies.reduceCopies(reduceIndex);
    if (family <= 1) {
      return new Choice(Kind.FIRST_COPY, null, null, "no reduce clones");
    }
    List<MapCopies.Copy> mapCopies = copies.copies(mapIndex);
    if (mapCopies.size() < family) {
      return new Choice(Kind.FIRST_COPY, null, null, "fewer upstream copies than downstream clones");
    }
    int k = reduceAttemptNo % family;
    MapCopies.Copy own = mapCopies.stream().filter(c -> c.attemptNo() % family == k && !lost(c)).findFirst()
        .orElse(null);
    if (own == null) {
      return new Choice(Kind.FIRST_COPY, null, null, "own copy lost");
    }
    if ("SUCCEEDED".equals(own.state()) && !own.url().isEmpty()) {
      return new Choice(Kind.OWN_COPY, own.attemptId(), own.url(), "own copy " + k);
    }
    if (waitedMs >= copies.omegaMs()) {
      return new Choice(Kind.FIRST_COPY, null, null, "omega elapsed");
    }
    return new Choice(Kind.WAIT, null, null, "waiting for copy " + k);
  }

  private static boolean lost(MapCopies.Copy c) {
    return "FAILED".equals(c.state()) || "KILLED".equals(c.state());
  }
}
