package io.dollymp.yarn.scheduler.queue;

import java.util.Collection;

/**
 * One entry of {@code yarn.scheduler.capacity.queue-mappings}: {@code u:<user>:<queue>} or
 * {@code g:<group>:<queue>}; {@code %user} as the user matches everyone, as the queue names the user's own.
 */
final class QueueMapping {
  static final String USER = "%user";

  final boolean group;
  final String source;
  final String target;

  QueueMapping(boolean group, String source, String target) {
    this.group = group;
    this.source = source;
    this.target = target;
  }

  /** The queue this mapping places {@code user} (member of {@code groups}) in, or null when it does not apply. */
  String place(String user, Collection<String> groups) {
    boolean matches = group ? groups != null && groups.contains(source) : USER.equals(source) || source.equals(user);
    if (!matches) {
      return null;
    }
    return USER.equals(target) ? user : target;
  }
}
