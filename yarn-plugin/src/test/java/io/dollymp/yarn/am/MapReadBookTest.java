package io.dollymp.yarn.am;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.proto.v1.AttemptReport;
import io.dollymp.proto.v1.MapRead;
import io.dollymp.proto.v1.MapReadKind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MapReadBookTest {
  private static final String R1 = "attempt_1700000000000_0001_r_000000_1";
  private static final String R1_TASK = "task_1700000000000_0001_r_000000";

  private static MapReads.Read own(int map) {
    return new MapReads.Read(map, "attempt_1700000000000_0001_m_00000" + map + "_1", "own copy 1", 1500,
        DelayAssignment.Kind.OWN_COPY, 1_700_000_001_000L);
  }

  private static MapReads.Read first(int map) {
    return new MapReads.Read(map, "attempt_1700000000000_0001_m_00000" + map + "_0", "omega elapsed", 20_000,
        DelayAssignment.Kind.FIRST_COPY, 1_700_000_020_000L);
  }

  private static AttemptReport report(String attemptId) {
    return AttemptReport.newBuilder().setTaskId(R1_TASK).setAttemptId(attemptId).setPhaseId("reduce").build();
  }

  @Test
  void readsFileRoundTripsAndNamesTheMapTask() {
    Map<Integer, MapReads.Read> reads = new TreeMap<>(Map.of(0, own(0), 1, first(1)));
    String text = MapReads.render(reads);
    assertTrue(text.startsWith(MapReads.HEADER + "\n"), text);
    assertEquals(List.of(own(0), first(1)), MapReads.parse(text));
    assertEquals("task_1700000000000_0001_m_000001", first(1).mapTaskId());
    // a row cut short, or of an unknown kind, is no read
    assertEquals(List.of(own(0)), MapReads.parse(text.replace("FIRST_COPY", "SOMETHING")));
    assertEquals(List.of(), MapReads.parse("0\tattempt_x_m_000000_1\town copy 1\n"));
  }

  @Test
  void eachReadGoesOnceOnItsAttemptsNextReport() {
    MapReadBook book = new MapReadBook();
    assertTrue(book.offer(R1, List.of(own(0))));
    assertEquals(Set.of(R1), book.pending());
    List<AttemptReport> sent = book.attach(List.of(report(R1), report("attempt_1700000000000_0001_r_000000_0")));
    MapRead wire = sent.get(0).getMapReads(0);
    assertEquals("task_1700000000000_0001_m_000000", wire.getMapTaskId());
    assertEquals("attempt_1700000000000_0001_m_000000_1", wire.getMapAttemptId());
    assertEquals(MapReadKind.MAP_READ_OWN_COPY, wire.getKind());
    assertEquals(1.5, wire.getWaitedS(), 1e-9);
    assertEquals("own copy 1", wire.getReason());
    assertEquals(0, sent.get(1).getMapReadsCount(), "another attempt's report carries none");
    assertTrue(book.pending().isEmpty());

    // the file again, one read more: only the new read goes, and a map keeps its first read
    assertFalse(book.offer(R1, List.of(own(0))));
    assertTrue(book.offer(R1, List.of(own(0), first(1))));
    List<AttemptReport> next = book.attach(List.of(report(R1)));
    assertEquals(1, next.get(0).getMapReadsCount());
    assertEquals(MapReadKind.MAP_READ_FIRST_COPY, next.get(0).getMapReads(0).getKind());
    assertEquals(20.0, next.get(0).getMapReads(0).getWaitedS(), 1e-9);
  }

  @Test
  void aFailedReportOrALostJobSendsTheReadsAgain() {
    MapReadBook book = new MapReadBook();
    book.offer(R1, List.of(own(0), first(1)));
    List<AttemptReport> failed = book.attach(List.of(report(R1)));
    book.unreport(failed);
    assertEquals(Set.of(R1), book.pending());
    assertEquals(2, book.attach(List.of(report(R1))).get(0).getMapReadsCount());
    book.unreportAll();
    assertEquals(2, book.attach(List.of(report(R1))).get(0).getMapReadsCount());
  }

  @Test
  void pollReadsTheReduceCopiesFilesOnceEach(@TempDir Path dir) throws Exception {
    Configuration conf = new Configuration(false);
    conf.set("fs.defaultFS", "file:///");
    conf.set(MRJobConfig.MAPREDUCE_JOB_DIR, dir.toUri().toString());
    MapReadBook book = new MapReadBook();
    assertFalse(book.poll(conf), "no reads directory yet");
    MapReads.write(conf, R1, MapReads.render(new TreeMap<>(Map.of(0, own(0)))));
    Files.writeString(dir.resolve(MapReads.DIR).resolve(".attempt_x.tsv.tmp"), "half a file");
    assertTrue(book.poll(conf));
    assertFalse(book.poll(conf), "an unchanged file is not read again");
    assertEquals(Set.of(R1), book.pending());
    assertEquals(1, book.attach(List.of(report(R1))).get(0).getMapReadsCount());
  }
}
