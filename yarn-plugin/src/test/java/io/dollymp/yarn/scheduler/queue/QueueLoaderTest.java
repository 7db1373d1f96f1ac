package io.dollymp.yarn.scheduler.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which value wins when the RM's configuration and the queue file both have a key. */
class QueueLoaderTest {
  private static final String AM = "yarn.scheduler.capacity.maximum-am-resource-percent";
  private static final String ULF = "yarn.scheduler.capacity.root.default.user-limit-factor";

  private static String xml(String... kv) {
    StringBuilder b = new StringBuilder("<?xml version=\"1.0\"?>\n<configuration>\n");
    for (int i = 0; i < kv.length; i += 2) {
      b.append("<property><name>").append(kv[i]).append("</name><value>").append(kv[i + 1])
          .append("</value></property>\n");
    }
    return b.append("</configuration>\n").toString();
  }

  @Test
  void theQueueFileWinsOverFileKeysButNotOverKeysSetInCode(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("capacity-scheduler.xml");
    Files.write(file, xml(AM, "0.1", ULF, "3").getBytes(StandardCharsets.UTF_8));

    Configuration inCode = new Configuration(false);
    inCode.set(QueueLoader.QUEUES_FILE, file.toString());
    inCode.set(AM, "0.5");
    Configuration layered = QueueLoader.layered(inCode, null, null);
    assertEquals("0.5", layered.get(AM), "set in code, as CapacityScheduler's overlay");
    assertEquals("3", layered.get(ULF), "only in the file");

    Configuration fromSite = new Configuration(false);
    fromSite.addResource(new ByteArrayInputStream(xml(AM, "0.5").getBytes(StandardCharsets.UTF_8)), "yarn-site.xml");
    fromSite.set(QueueLoader.QUEUES_FILE, file.toString());
    assertEquals("0.1", QueueLoader.layered(fromSite, null, null).get(AM), "a site file's key: the queue file wins");
  }
}
