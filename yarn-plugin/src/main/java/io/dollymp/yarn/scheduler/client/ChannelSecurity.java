package io.dollymp.yarn.scheduler.client;

import io.grpc.ChannelCredentials;
import io.grpc.ClientInterceptor;
import io.grpc.InsecureChannelCredentials;
import io.grpc.Metadata;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.MetadataUtils;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;

/**
 * How the Java clients (the shim's {@link DecisionClient}, the AM helper's AmServiceClient) reach the
 * decision service: plaintext, or TLS trusting a CA file, with a client certificate for mutual TLS; and
 * the metadata keys the service's pyscheduler.service.rmproxy.auth reads.
 */
public final class ChannelSecurity {
  /** Call metadata carrying the shim's shared secret. */
  public static final Metadata.Key<String> SECRET_HEADER =
      Metadata.Key.of("x-dollymp-secret", Metadata.ASCII_STRING_MARSHALLER);
  /** Call metadata carrying the hex SHA-256 of the AM's AMRMToken password. */
  public static final Metadata.Key<String> AM_TOKEN_HEADER =
      Metadata.Key.of("x-dollymp-amrm-sha256", Metadata.ASCII_STRING_MARSHALLER);
  public static final int MIN_SECRET_BYTES = 16;
  public static final int MAX_SECRET_BYTES = 4096;

  private ChannelSecurity() {}

  /**
   * Plaintext when {@code caFile} is empty; else TLS trusting the CA in {@code caFile} (PEM), presenting
   * the client certificate {@code certFile} with its PKCS#8 key {@code keyFile} when both are set.
   */
  public static ChannelCredentials credentials(String caFile, String certFile, String keyFile) throws IOException {
    if (caFile == null || caFile.isEmpty()) {
      return InsecureChannelCredentials.create();
    }
    TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder().trustManager(new File(caFile));
    if (certFile != null && !certFile.isEmpty()) {
      b.keyManager(new File(certFile), new File(keyFile));
    }
    return b.build();
  }

  /** The shared secret in {@code path}, surrounding whitespace stripped; throws naming what is wrong. */
  public static String readSecret(String path) throws IOException {
    String s = new String(Files.readAllBytes(Paths.get(path)), StandardCharsets.US_ASCII).trim();
    if (s.length() < MIN_SECRET_BYTES || s.length() > MAX_SECRET_BYTES) {
      throw new IOException(path + " holds " + s.length() + " bytes; the secret must be " + MIN_SECRET_BYTES + ".."
          + MAX_SECRET_BYTES);
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x21 || c > 0x7e) {
        throw new IOException(path + ": the secret must be printable ASCII without spaces");
      }
    }
    return s;
  }

  /** An interceptor adding {@code value} under {@code key} to every call. */
  public static ClientInterceptor header(Metadata.Key<String> key, String value) {
    Metadata md = new Metadata();
    md.put(key, value);
    return MetadataUtils.newAttachHeadersInterceptor(md);
  }
}
