package io.dollymp.yarn.scheduler.client;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The explicit recovery state machine of the shim. Thread-safe: the client thread drives it, the
 * RM's event thread reads it on every heartbeat.
 */
public final class SessionStateMachine {
  private static final Logger LOG = LoggerFactory.getLogger(SessionStateMachine.class);

  private static final Map<SessionState, Map<SessionEvent, SessionState>> TABLE = new EnumMap<>(SessionState.class);

  private static void allow(SessionState from, SessionEvent on, SessionState to) {
    TABLE.computeIfAbsent(from, k -> new EnumMap<>(SessionEvent.class)).put(on, to);
  }

  static {
    allow(SessionState.NEW, SessionEvent.REGISTER_OK, SessionState.REGISTERED);
    allow(SessionState.NEW, SessionEvent.REGISTER_FAILED, SessionState.FALLBACK);
    allow(SessionState.REGISTERED, SessionEvent.RESYNC_SENT, SessionState.RECOVERING);
    allow(SessionState.RECOVERING, SessionEvent.PLAN_ACCEPTED, SessionState.RUNNING);
    allow(SessionState.RUNNING, SessionEvent.PLAN_ACCEPTED, SessionState.RUNNING);
    for (SessionState s : new SessionState[] {SessionState.REGISTERED, SessionState.RECOVERING, SessionState.RUNNING}) {
      allow(s, SessionEvent.STREAM_ERROR, SessionState.FALLBACK);
      allow(s, SessionEvent.PLAN_STALE, SessionState.FALLBACK);
      allow(s, SessionEvent.RESYNC_REQUIRED, SessionState.FALLBACK);
    }
    allow(SessionState.FALLBACK, SessionEvent.REGISTER_FAILED, SessionState.FALLBACK);
    allow(SessionState.FALLBACK, SessionEvent.REGISTER_OK, SessionState.REGISTERED);
    allow(SessionState.FALLBACK, SessionEvent.STREAM_ERROR, SessionState.FALLBACK);
    allow(SessionState.FALLBACK, SessionEvent.PLAN_STALE, SessionState.FALLBACK);
  }

  private final LongSupplier clockMs;
  private SessionState state = SessionState.NEW;
  /** Last time the session was RUNNING (or the machine was created): the fallback grace anchor. */
  private long lastHealthyMs;
  private long fallbackSinceMs = -1;
  private long fallbackMsTotal;

  public SessionStateMachine(LongSupplier clockMs) {
    this.clockMs = clockMs;
    this.lastHealthyMs = clockMs.getAsLong();
  }

  /** Applies {@code event}; returns the new state. Throws IllegalStateException on an illegal transition. */
  public synchronized SessionState fire(SessionEvent event) {
    SessionState next = TABLE.getOrDefault(state, Collections.<SessionEvent, SessionState>emptyMap()).get(event);
    if (next == null) {
      throw new IllegalStateException("illegal session transition: " + state + " on " + event);
    }
    long now = clockMs.getAsLong();
    if (next != state) {
      LOG.info("DollyMP session {} -> {} on {}", state, next, event);
      if (next == SessionState.FALLBACK) {
        fallbackSinceMs = now;
      } else if (state == SessionState.FALLBACK && fallbackSinceMs >= 0) {
        fallbackMsTotal += now - fallbackSinceMs;
        fallbackSinceMs = -1;
      }
    }
    if (next == SessionState.RUNNING || state == SessionState.RUNNING) {
      lastHealthyMs = now;
    }
    state = next;
    return next;
  }

  public synchronized SessionState state() {
    return state;
  }

  /** True when the service's plans may be committed. */
  public synchronized boolean acceptsPlans() {
    return state == SessionState.RUNNING;
  }

  /** True when the built-in policy should schedule: not RUNNING for longer than {@code graceMs}. */
  public synchronized boolean fallbackDue(long graceMs) {
    return state != SessionState.RUNNING && clockMs.getAsLong() - lastHealthyMs >= graceMs;
  }

  /** Milliseconds spent in FALLBACK so far (including the current stretch). */
  public synchronized long fallbackMs() {
    long open = fallbackSinceMs >= 0 ? clockMs.getAsLong() - fallbackSinceMs : 0;
    return fallbackMsTotal + open;
  }
}
