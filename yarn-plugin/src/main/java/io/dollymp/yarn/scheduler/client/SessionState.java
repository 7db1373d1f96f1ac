package io.dollymp.yarn.scheduler.client;

/**
 * The shim's session with the decision service. Transitions (see {@link SessionStateMachine}):
 *
 * <pre>
 *   NEW --register ok--> REGISTERED --full resync sent--> RECOVERING --plan accepted--> RUNNING
 *   REGISTERED/RECOVERING/RUNNING --stream error | plan stale | resync required--> FALLBACK
 *   NEW/FALLBACK --register failed--> FALLBACK
 *   FALLBACK --register ok--> REGISTERED
 * </pre>
 *
 * Only RUNNING accepts the service's plans for commit; in every other state the shim's built-in
 * fallback policy may schedule (after the configured grace period).
 */
public enum SessionState {
  NEW,
  REGISTERED,
  RECOVERING,
  RUNNING,
  FALLBACK
}
