package io.dollymp.yarn.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A test CA and a server certificate for 127.0.0.1, made with the openssl command. */
public final class TestCerts {
  public final Path ca;
  public final Path serverCert;
  public final Path serverKey;

  private TestCerts(Path dir) {
    this.ca = dir.resolve("ca.crt");
    this.serverCert = dir.resolve("server.crt");
    this.serverKey = dir.resolve("server.key");
  }

  public static TestCerts make(Path dir) throws IOException, InterruptedException {
    Files.createDirectories(dir);
    openssl(dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=dollymp-test-ca",
        "-keyout", "ca.key", "-out", "ca.crt");
    openssl(dir, "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=dollymp-server", "-keyout", "server.key",
        "-out", "server.csr");
    Files.writeString(dir.resolve("server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    openssl(dir, "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "2", "-extfile", "server.ext", "-out", "server.crt");
    return new TestCerts(dir);
  }

  private static void openssl(Path dir, String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of("openssl"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
        .redirectOutput(dir.resolve("openssl.log").toFile()).start();
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IOException("openssl " + args[0] + " failed: " + Files.readString(dir.resolve("openssl.log")));
    }
  }
}
