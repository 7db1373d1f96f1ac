package io.dollymp.yarn.scheduler.client;

/** What happened to the session; drives {@link SessionStateMachine}. */
public enum SessionEvent {
  REGISTER_OK,
  REGISTER_FAILED,
  RESYNC_SENT,
  PLAN_ACCEPTED,
  STREAM_ERROR,
  PLAN_STALE,
  RESYNC_REQUIRED
}
