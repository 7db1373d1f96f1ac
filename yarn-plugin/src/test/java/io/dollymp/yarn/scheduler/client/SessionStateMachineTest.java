package io.dollymp.yarn.scheduler.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SessionStateMachineTest {
  private final AtomicLong clock = new AtomicLong(1_000);
  private final SessionStateMachine sm = new SessionStateMachine(clock::get);

  private void toRunning() {
    sm.fire(SessionEvent.REGISTER_OK);
    sm.fire(SessionEvent.RESYNC_SENT);
    sm.fire(SessionEvent.PLAN_ACCEPTED);
  }

  @Test
  void newToRegisteredToRecoveringToRunning() {
    assertEquals(SessionState.NEW, sm.state());
    assertEquals(SessionState.REGISTERED, sm.fire(SessionEvent.REGISTER_OK));
    assertFalse(sm.acceptsPlans());
    assertEquals(SessionState.RECOVERING, sm.fire(SessionEvent.RESYNC_SENT));
    assertFalse(sm.acceptsPlans(), "plans are not committed before the resync is acknowledged");
    assertEquals(SessionState.RUNNING, sm.fire(SessionEvent.PLAN_ACCEPTED));
    assertTrue(sm.acceptsPlans());
  }

  @Test
  void newToFallbackWhenRegistrationFails() {
    assertEquals(SessionState.FALLBACK, sm.fire(SessionEvent.REGISTER_FAILED));
    assertEquals(SessionState.FALLBACK, sm.fire(SessionEvent.REGISTER_FAILED));
  }

  @Test
  void runningToFallbackOnStreamErrorStalePlanOrResync() {
    for (SessionEvent e : new SessionEvent[] {SessionEvent.STREAM_ERROR, SessionEvent.PLAN_STALE,
        SessionEvent.RESYNC_REQUIRED}) {
      SessionStateMachine m = new SessionStateMachine(clock::get);
      m.fire(SessionEvent.REGISTER_OK);
      m.fire(SessionEvent.RESYNC_SENT);
      m.fire(SessionEvent.PLAN_ACCEPTED);
      assertEquals(SessionState.FALLBACK, m.fire(e), "RUNNING on " + e);
    }
  }

  @Test
  void registeredAndRecoveringFailToFallback() {
    sm.fire(SessionEvent.REGISTER_OK);
    assertEquals(SessionState.FALLBACK, sm.fire(SessionEvent.STREAM_ERROR));
    sm.fire(SessionEvent.REGISTER_OK);
    sm.fire(SessionEvent.RESYNC_SENT);
    assertEquals(SessionState.FALLBACK, sm.fire(SessionEvent.PLAN_STALE));
  }

  @Test
  void fallbackToRegisteredOnReconnectThenFullResyncAgain() {
    toRunning();
    sm.fire(SessionEvent.STREAM_ERROR);
    assertEquals(SessionState.REGISTERED, sm.fire(SessionEvent.REGISTER_OK));
    assertThrows(IllegalStateException.class, () -> sm.fire(SessionEvent.PLAN_ACCEPTED),
        "a plan cannot be accepted before the resync is sent");
  }

  @Test
  void illegalTransitionsAreRejected() {
    assertThrows(IllegalStateException.class, () -> sm.fire(SessionEvent.PLAN_ACCEPTED));
    assertThrows(IllegalStateException.class, () -> sm.fire(SessionEvent.RESYNC_SENT));
  }

  @Test
  void fallbackIsDueOnlyAfterTheGracePeriodAndIsTimed() {
    toRunning();
    clock.addAndGet(500);
    sm.fire(SessionEvent.STREAM_ERROR);
    assertFalse(sm.fallbackDue(1_000));
    clock.addAndGet(999);
    assertFalse(sm.fallbackDue(1_000));
    clock.addAndGet(1);
    assertTrue(sm.fallbackDue(1_000));
    assertEquals(1_000, sm.fallbackMs());
    sm.fire(SessionEvent.REGISTER_OK);
    clock.addAndGet(5_000);
    assertEquals(1_000, sm.fallbackMs(), "time after leaving FALLBACK is not fallback time");
  }
}
