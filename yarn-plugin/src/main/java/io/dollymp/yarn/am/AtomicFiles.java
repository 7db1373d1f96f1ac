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
    // Qualified first: a path without a scheme (MapReduce's mapreduce.job.dir on a local default file
    // system) is local too, and FileContext's OVERWRITE rename there deletes the old file before the
    // rename, a window in which a reducer can find no map-copies file.
    Path qualified = file.getFileSystem(conf).makeQualified(file);
    if ("file".equals(qualified.toUri().getScheme())) {
      replaceLocal(java.nio.file.Paths.get(qualified.toUri()), text);
      return;
    }
    FileContext fc = FileContext.getFileContext(file.toUri(), conf);
    Path tmp = new Path(file.getParent(), "." + file.getName() + ".tmp");
    try (OutputStream out = fc.create(tmp, EnumSet.of(CreateFlag.CREATE, CreateFlag.OVERWRITE),
        Options.CreateOpts.createParent())) {
      out.write(text.getBytes(StandardCharsets.UTF_8));
    }
    fc.rename(tmp, file, Options.Rename.OVERWRITE);
  }

  /**
   * The same on a local disk through java.nio: one atomic rename, and no child process (Hadoop's local
   * file system forks {@code readlink} on rename, which is slow on a loaded node and fails when the AM
   * is stopping) and no checksum file to keep in step.
   */
  static void replaceLocal(java.nio.file.Path file, String text) throws IOException {
    java.nio.file.Path dir = file.toAbsolutePath().getParent();
    java.nio.file.Files.createDirectories(dir);
    java.nio.file.Path tmp = dir.resolve("." + file.getFileName() + ".tmp");
    java.nio.file.Files.write(tmp, text.getBytes(StandardCharsets.UTF_8));
    java.nio.file.Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
  }
}
