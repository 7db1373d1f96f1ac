package io.dollymp.yarn.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.proto.v1.DecisionReason;
import io.dollymp.proto.v1.Deferral;
import io.dollymp.proto.v1.Placement;
import io.dollymp.proto.v1.Plan;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

class AppDiagnosticsTest {
  private static final String ATTEMPT = "appattempt_1700000000000_0007_000001";
  private static final String APP = "application_1700000000000_0007";

  @Test
  void theLatestReasonIsWrittenOnceWithALinkToTheServicesPage() {
    List<String> written = new ArrayList<>();
    AppDiagnostics d = new AppDiagnostics("http://svc:8080", (attempt, text) -> written.add(attempt + "|" + text));
    Plan waiting = Plan.newBuilder().addDeferrals(Deferral.newBuilder().setAttemptId(ATTEMPT)
        .setReason(DecisionReason.REASON_WAITING_FOR_RESOURCES).setDetail("no node has room for it now")).build();
    d.onPlan(waiting);
    d.onPlan(waiting); // unchanged: not written again
    assertEquals(List.of(ATTEMPT + "|DollyMP: waiting (waiting_for_resources): no node has room for it now. "
        + "Decisions: http://svc:8080/ui/#app=" + APP), written);
    d.onPlan(Plan.newBuilder().addPlacements(Placement.newBuilder().setAttemptId(ATTEMPT).setNodeId("h1:8041")
        .setIsClone(true).setReason(DecisionReason.REASON_CLONE_IDLE_CAPACITY)).build());
    assertEquals(2, written.size());
    assertTrue(written.get(1).contains("DollyMP: clone placed on h1:8041 (clone_idle_capacity)"), written.get(1));
    assertEquals(written.get(1).substring(ATTEMPT.length() + 1), d.latest(ATTEMPT));
    d.forget(ATTEMPT);
    d.onPlan(waiting); // forgotten: written again
    assertEquals(3, written.size());
  }

  @Test
  void withoutAnAddressThereIsNoLinkAndLongDetailsAreCut() {
    String text = AppDiagnostics.text("waiting", "lower_priority", "x".repeat(1000), "", APP);
    assertTrue(text.startsWith("DollyMP: waiting (lower_priority): xxx") && text.endsWith("..."), text);
    assertTrue(text.length() < 400 && !text.contains("Decisions:"), text);
    assertEquals(APP, AppDiagnostics.applicationOf(ATTEMPT));
    assertEquals("", AppDiagnostics.pageUrl("", APP));
  }

  @Test
  void theUiAddressKeyIsValidated() {
    Configuration ok = new Configuration(false);
    ok.set(ShimConfig.UI_ADDRESS, "https://dollymp.example:8080/");
    assertEquals("https://dollymp.example:8080", ShimConfig.from(ok).uiAddress());
    assertEquals("", ShimConfig.from(new Configuration(false)).uiAddress());
    for (String bad : new String[] {"svc:8080", "http://a b", "http://x\"><script>", "http://" + "a".repeat(600)}) {
      Configuration c = new Configuration(false);
      c.set(ShimConfig.UI_ADDRESS, bad);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ShimConfig.from(c));
      assertTrue(e.getMessage().contains(ShimConfig.UI_ADDRESS), e.getMessage());
    }
  }
}
