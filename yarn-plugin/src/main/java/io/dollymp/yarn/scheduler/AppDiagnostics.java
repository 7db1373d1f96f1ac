package io.dollymp.yarn.scheduler;

import io.dollymp.proto.v1.Deferral;
import io.dollymp.proto.v1.Placement;
import io.dollymp.proto.v1.Plan;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

/**
 * Each application's latest decision reason from the service, written as its attempt's diagnostics
 * ({@code RMAppAttempt#updateAMLaunchDiagnostics}, which {@code yarn application -status} and the RM UI
 * show while the application has no diagnostics of its own), with a link to the service's page for the
 * application when {@code yarn.scheduler.dollymp.ui.address} is set. Written only when the text changes.
 */
final class AppDiagnostics {
  static final int MAX_REMEMBERED = 100_000;
  private static final int MAX_DETAIL = 300;

  private final String uiAddress;
  private final BiConsumer<String, String> write; // (attempt id, text)
  private final Map<String, String> last = new ConcurrentHashMap<>();

  AppDiagnostics(String uiAddress, BiConsumer<String, String> write) {
    this.uiAddress = uiAddress;
    this.write = write;
  }

  /** The service's page for one application, or "" when no address is configured. */
  static String pageUrl(String uiAddress, String applicationId) {
    return uiAddress.isEmpty() ? "" : uiAddress + "/ui/#app=" + applicationId;
  }

  /** "REASON_WAITING_FOR_RESOURCES" -> "waiting_for_resources" (the decision log's spelling). */
  static String reasonName(String protoName) {
    String n = protoName.startsWith("REASON_") ? protoName.substring("REASON_".length()) : protoName;
    return n.toLowerCase(Locale.ROOT);
  }

  static String text(String what, String reason, String detail, String uiAddress, String applicationId) {
    StringBuilder b = new StringBuilder("DollyMP: ").append(what).append(" (").append(reason).append(')');
    String d = detail.length() > MAX_DETAIL ? detail.substring(0, MAX_DETAIL) + "..." : detail;
    if (!d.isEmpty() && !d.equals(reason)) {
      b.append(": ").append(d);
    }
    String url = pageUrl(uiAddress, applicationId);
    if (!url.isEmpty()) {
      b.append(". Decisions: ").append(url);
    }
    return b.toString();
  }

  static String applicationOf(String attemptId) {
    // appattempt_<cluster ts>_<app seq>_<attempt seq> -> application_<cluster ts>_<app seq>
    if (!attemptId.startsWith("appattempt_")) {
      return attemptId;
    }
    String rest = attemptId.substring("appattempt_".length());
    int cut = rest.lastIndexOf('_');
    return cut > 0 ? "application_" + rest.substring(0, cut) : attemptId;
  }

  void onPlan(Plan plan) {
    for (Placement p : plan.getPlacementsList()) {
      String what = p.getIsClone() ? "clone placed on " + p.getNodeId() : "placed on " + p.getNodeId();
      update(p.getAttemptId(), what, reasonName(p.getReason().name()), p.getDetail());
    }
    for (Deferral d : plan.getDeferralsList()) {
      update(d.getAttemptId(), "waiting", reasonName(d.getReason().name()), d.getDetail());
    }
  }

  private void update(String attemptId, String what, String reason, String detail) {
    if (attemptId.isEmpty()) {
      return;
    }
    String text = text(what, reason, detail, uiAddress, applicationOf(attemptId));
    if (text.equals(last.get(attemptId))) {
      return;
    }
    if (last.size() >= MAX_REMEMBERED) {
      last.clear(); // bounded: at worst one more write per attempt
    }
    last.put(attemptId, text);
    write.accept(attemptId, text);
  }

  void forget(String attemptId) {
    last.remove(attemptId);
  }

  String latest(String attemptId) {
    return last.get(attemptId);
  }
}
