package io.dollymp.yarn.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.proto.v1.Placement;
import io.dollymp.proto.v1.PlacementOutcome;
import io.dollymp.proto.v1.PlacementOutcomeKind;
import io.dollymp.proto.v1.Plan;
import java.util.List;
import org.junit.jupiter.api.Test;

class PlanBookTest {
  private static Plan plan(long epoch, String... nodes) {
    Plan.Builder b = Plan.newBuilder().setEpoch(epoch);
    for (int i = 0; i < nodes.length; i++) {
      b.addPlacements(Placement.newBuilder().setPlacementId("p" + epoch + "-" + i).setNodeId(nodes[i]).setCount(1));
    }
    return b.build();
  }

  @Test
  void proposalsAreKeptPerNodeUntilTaken() {
    PlanBook book = new PlanBook();
    assertTrue(book.add(plan(1, "n1", "n2", "n1"), 0).isEmpty());
    assertEquals(2, book.take("n1").size());
    assertEquals(0, book.take("n1").size());
    assertEquals(1, book.take("n2").size());
  }

  @Test
  void olderEpochsAreDroppedWithAReason() {
    PlanBook book = new PlanBook();
    book.add(plan(5, "n1"), 0);
    List<PlacementOutcome> out = book.add(plan(4, "n1"), 0);
    assertEquals(1, out.size());
    assertEquals(PlacementOutcomeKind.PLACEMENT_DROPPED_STALE_EPOCH, out.get(0).getKind());
  }

  @Test
  void proposalsExpire() {
    PlanBook book = new PlanBook();
    book.add(plan(1, "n1"), 1_000);
    assertTrue(book.expire(1_500, 1_000).isEmpty());
    List<PlacementOutcome> out = book.expire(2_001, 1_000);
    assertEquals(PlacementOutcomeKind.PLACEMENT_DROPPED_EXPIRED, out.get(0).getKind());
    assertTrue(book.take("n1").isEmpty());
  }

  @Test
  void aLostSessionVoidsProposalsAndResetsEpochs() {
    PlanBook book = new PlanBook();
    book.add(plan(7, "n1"), 0);
    PlanBook.Proposal old = book.take("n1").get(0);
    book.invalidate();
    assertFalse(book.isCurrent(old));
    assertTrue(book.add(plan(1, "n1"), 0).isEmpty(), "a new session starts its epochs afresh");
    assertTrue(book.isCurrent(book.take("n1").get(0)));
  }

  @Test
  void killRequestsOfCurrentPlansAreKeptStaleOnesRefused() {
    PlanBook book = new PlanBook();
    book.add(Plan.newBuilder().setEpoch(3).addKillContainerIds("c1").addKillContainerIds("c2")
        .addKillApplicationIds("a1").build(), 0);
    book.add(Plan.newBuilder().setEpoch(2).addKillContainerIds("c3").build(), 0);
    // c2 names no application: its kill is refused on commit (the owner cannot be checked)
    assertEquals(List.of(new PlanBook.Kill("c1", "a1"), new PlanBook.Kill("c2", "")), book.takeKills());
    assertTrue(book.takeKills().isEmpty(), "taken once");
    assertEquals(1, book.killsRefused.get(), "the stale plan's kill is refused");
    book.add(Plan.newBuilder().setEpoch(4).addKillContainerIds("c4").build(), 0);
    book.invalidate();
    assertTrue(book.takeKills().isEmpty(), "a lost session's kills are void");
    assertEquals(2, book.killsRefused.get());
  }
}
