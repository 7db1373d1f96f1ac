package io.dollymp.yarn.am;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dollymp.yarn.am.DelayAssignment.Kind;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DelayAssignmentTest {
  private static MapCopies.Copy c(int no, String state) {
    return new MapCopies.Copy(0, no, "m0_" + no, state, "SUCCEEDED".equals(state) ? "http://h" + no + ":1" : "");
  }

  private static MapCopies copies(int reduceCopies, MapCopies.Copy... cs) {
    return new MapCopies(5000, Map.of(0, List.of(cs)), Map.of(0, reduceCopies));
  }

  @Test
  void reduceCloneKPrefersMapCopyKWithinOmegaThenAny() {
    MapCopies m = copies(2, c(0, "SUCCEEDED"), c(1, "RUNNING"));
    assertEquals(Kind.OWN_COPY, DelayAssignment.decide(m, 0, 0, 0, 0).kind());
    assertEquals(Kind.WAIT, DelayAssignment.decide(m, 0, 0, 1, 4999).kind());
    assertEquals(Kind.FIRST_COPY, DelayAssignment.decide(m, 0, 0, 1, 5000).kind());
    MapCopies done = copies(2, c(0, "SUCCEEDED"), c(1, "SUCCEEDED"));
    DelayAssignment.Choice own = DelayAssignment.decide(done, 0, 0, 1, 100);
    assertEquals(Kind.OWN_COPY, own.kind());
    assertEquals("m0_1", own.attemptId());
    assertEquals("http://h1:1", own.url());
  }

  @Test
  void fewerUpstreamCopiesThanDownstreamClonesMeansFirstCopyForAll() {
    MapCopies m = copies(3, c(0, "SUCCEEDED"), c(1, "RUNNING"));
    for (int k = 0; k < 3; k++) {
      assertEquals(Kind.FIRST_COPY, DelayAssignment.decide(m, 0, 0, k, 0).kind());
    }
  }

  @Test
  void noReduceClonesOrLostOwnCopyNeverWait() {
    assertEquals(Kind.FIRST_COPY, DelayAssignment.decide(copies(1, c(0, "SUCCEEDED"), c(1, "RUNNING")), 0, 0, 0, 0)
        .kind());
    assertEquals("own copy lost",
        DelayAssignment.decide(copies(2, c(0, "SUCCEEDED"), c(1, "KILLED")), 0, 0, 1, 0).reason());
  }

  @Test
  void copiesFileRoundTrips() {
    MapCopies m = copies(2, c(0, "SUCCEEDED"), c(1, "RUNNING"));
    MapCopies back = MapCopies.parse(m.render());
    assertEquals(5000, back.omegaMs());
    assertEquals(m.copies(0), back.copies(0));
    assertEquals(2, back.reduceCopies(0));
    assertEquals(1, back.reduceCopies(7), "a reduce task the AM did not list has one copy");
  }
}
