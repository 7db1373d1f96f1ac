package io.dollymp.yarn.testkit;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

/** Reads what the decision service recorded: its decision log file and its HTTP state endpoint. */
public final class ServiceQueries {
  private ServiceQueries() {}

  /**
   * Every row of every table of the decision log (a real SQLite file), one per line, read with
   * Python's stdlib sqlite3 so the test depends on no schema detail.
   */
  public static String dumpDecisions(Path db) throws IOException, InterruptedException {
    String script = String.join("\n",
        "import sqlite3, sys",
        "con = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)",
        "for (t,) in con.execute(\"select name from sqlite_master where type='table'\").fetchall():",
        "    for row in con.execute('select * from \"%s\"' % t):",
        "        print(t, row)");
    Process p = new ProcessBuilder(System.getProperty("dollymp.python", "python3"), "-c", script, db.toString())
        .directory(new File(System.getProperty("dollymp.root", ".."))).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      throw new IOException("reading the decision log failed: " + out);
    }
    return out;
  }

  /** GET /v1/state from the service's HTTP API. */
  public static String dumpState(int httpPort) throws IOException, InterruptedException {
    return get("http://127.0.0.1:" + httpPort + "/v1/state", "application/json");
  }

  /** GET a URL; anything but 200 is an IOException carrying the status and body. */
  public static String get(String url, String accept) throws IOException, InterruptedException {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    HttpResponse<String> resp = http.send(HttpRequest.newBuilder(URI.create(url)).header("Accept", accept)
        .timeout(Duration.ofSeconds(20)).GET().build(), HttpResponse.BodyHandlers.ofString());
    if (resp.statusCode() != 200) {
      throw new IOException(url + " answered " + resp.statusCode() + ": " + resp.body());
    }
    return resp.body();
  }
}
