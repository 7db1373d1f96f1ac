package io.dollymp.yarn.am;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;

/** Small text files the AM publishes (its attempt record, the map copies) on any Hadoop file system. */
final class AtomicFiles {
  private AtomicFiles() {}

  /**
   * Writes {@code text} to a hidden temporary file beside {@code file}, then renames it over
   * {@code file} in one step: readers see the old or the new text, never a missing file, and a JVM
   * exit between the two steps leaves the old file in place.
   */
  static void replace(Configuration conf, Path file, String text) throws IOException {
    FileContext fc = FileContext.getFileContext(file.toUri(), conf);
    Path tmp = new Path(file.getParent(), "." + file.getName() + ".tmp");
    try (OutputStream out = fc.create(tmp, EnumSet.of(CreateFlag.CREATE, CreateFlag.OVERWRITE),
        Options.CreateOpts.createParent())) {
      out.write(text.getBytes(StandardCharsets.UTF_8));
    }
    fc.rename(tmp, file, Options.Rename.OVERWRITE);
  }
}
