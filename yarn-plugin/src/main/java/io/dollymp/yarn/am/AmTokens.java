package io.dollymp.yarn.am;

import java.io.IOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;

/**
 * The AM's proof of which application it is: the hex SHA-256 of the password of the AMRMToken in its
 * credentials, the digest the shim forwards for the attempt (ApplicationInfo.amrm_token_sha256). Read
 * on each call: when the RM rolls the token over, the AM's allocator puts the new one in the same
 * credentials.
 */
public final class AmTokens {
  private AmTokens() {}

  /** The digest of the current user's AMRMToken (else the login user's); "" when neither has one. */
  static String digestHex() {
    try {
      String d = digestHex(UserGroupInformation.getCurrentUser());
      return d.isEmpty() ? digestHex(UserGroupInformation.getLoginUser()) : d;
    } catch (IOException e) {
      return "";
    }
  }

  static String digestHex(UserGroupInformation ugi) {
    for (Token<?> t : ugi.getTokens()) {
      if (AMRMTokenIdentifier.KIND_NAME.equals(t.getKind())) {
        return sha256Hex(t.getPassword());
      }
    }
    return "";
  }

  public static String sha256Hex(byte[] password) {
    try {
      StringBuilder hex = new StringBuilder(64);
      for (byte b : MessageDigest.getInstance("SHA-256").digest(password)) {
        hex.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
      }
      return hex.toString();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every Java platform", e);
    }
  }
}
