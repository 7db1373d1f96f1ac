package io.dollymp.yarn.scheduler;

import com.google.protobuf.ByteString;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;

/**
 * The AMRMToken digests the shim forwards (ApplicationInfo.amrm_token_sha256): SHA-256 of the password
 * of each attempt's AMRMToken as the RM holds it. The AM helper presents the same digest, computed from
 * the token in its own credentials, so the service can tell which application an AM call comes from.
 * The RM issues the token when the AM container is allocated and replaces it when the master key rolls
 * over; {@link #changed} finds the attempts whose token is not the one last sent. Client thread only.
 */
final class AmTokenDigests {
  private final Map<ApplicationAttemptId, byte[]> sent = new HashMap<>();

  static ByteString sha256(byte[] password) {
    try {
      return ByteString.copyFrom(MessageDigest.getInstance("SHA-256").digest(password));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every Java platform", e);
    }
  }

  private static byte[] password(RMContext context, ApplicationAttemptId attemptId) {
    RMApp app = context.getRMApps().get(attemptId.getApplicationId());
    RMAppAttempt attempt = app == null ? null : app.getRMAppAttempt(attemptId);
    Token<AMRMTokenIdentifier> token = attempt == null ? null : attempt.getAMRMToken();
    return token == null ? null : token.getPassword();
  }

  /** The digest of the attempt's current token (empty before the RM issued one), remembered as sent. */
  ByteString digestFor(RMContext context, ApplicationAttemptId attemptId) {
    byte[] password = password(context, attemptId);
    if (password == null) {
      sent.remove(attemptId);
      return ByteString.EMPTY;
    }
    sent.put(attemptId, password);
    return sha256(password);
  }

  /** Of {@code attempts}, those whose token was issued or rolled over since its digest was last sent. */
  List<ApplicationAttemptId> changed(RMContext context, List<ApplicationAttemptId> attempts) {
    List<ApplicationAttemptId> out = new ArrayList<>();
    for (ApplicationAttemptId id : attempts) {
      byte[] now = password(context, id);
      if (now != null && !Arrays.equals(now, sent.get(id))) {
        out.add(id);
      }
    }
    return out;
  }

  void forget(ApplicationId appId) {
    sent.keySet().removeIf(a -> a.getApplicationId().equals(appId));
  }

  void clear() {
    sent.clear();
  }
}
