package io.dollymp.yarn.am;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AtomicFilesTest {
  @TempDir
  Path dir;

  @Test
  void replacesAnExistingFileAndCreatesMissingParents() throws Exception {
    Configuration conf = new Configuration();
    Path file = dir.resolve("records/app.tsv");
    org.apache.hadoop.fs.Path target = new org.apache.hadoop.fs.Path(file.toUri());
    AtomicFiles.replace(conf, target, "one\n");
    assertEquals("one\n", Files.readString(file, StandardCharsets.UTF_8));
    AtomicFiles.replace(conf, target, "two\n");
    assertEquals("two\n", Files.readString(file, StandardCharsets.UTF_8), "the second write must replace the first");
    assertFalse(Files.exists(dir.resolve("records/.app.tsv.tmp")), "the temporary file is renamed away");
  }

  @Test
  void aPathWithoutSchemeOnTheLocalFileSystemIsReplacedInOneRename() throws Exception {
    // mapreduce.job.dir has no scheme on a local default file system. The java.nio path (one atomic
    // rename) writes no checksum file; FileContext's local file system would write one, and its
    // OVERWRITE rename deletes the old file first (readers then find none).
    Configuration conf = new Configuration();
    Path file = dir.resolve("staging/dollymp-copies.tsv");
    org.apache.hadoop.fs.Path target = new org.apache.hadoop.fs.Path(file.toAbsolutePath().toString());
    AtomicFiles.replace(conf, target, "one\n");
    AtomicFiles.replace(conf, target, "two\n");
    assertEquals("two\n", Files.readString(file, StandardCharsets.UTF_8));
    assertFalse(Files.exists(dir.resolve("staging/.dollymp-copies.tsv.crc")), "written through java.nio");
  }

  @Test
  void attemptRecordRewritesAfterAFailedWrite() throws Exception {
    Path blocker = dir.resolve("blocked");
    Files.writeString(blocker, "a file where the record directory should be");
    Configuration conf = new Configuration();
    conf.set(AmConfig.RECORD_DIR, blocker.toUri().toString());
    AttemptRecord rec = new AttemptRecord(conf);
    CloneBook book = new CloneBook(1);
    java.util.List<TaskView> views = java.util.List.of();
    rec.write("application_1_0001", views, book, "SUCCEEDED"); // fails: the directory is a file
    Files.delete(blocker);
    rec.write("application_1_0001", views, book, "SUCCEEDED"); // same text: must still be written now
    assertEquals(AttemptRecord.render(views, book, "SUCCEEDED"),
        Files.readString(blocker.resolve("application_1_0001.tsv"), StandardCharsets.UTF_8));
  }
}
