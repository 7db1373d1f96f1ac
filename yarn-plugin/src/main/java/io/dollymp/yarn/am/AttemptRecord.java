package io.dollymp.yarn.am;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The AM's own record of every attempt: one TSV row per attempt with its clone flag, container,
 * final state, times and whether it won its task. Written to {@code dollymp.am.record.dir/<app>.tsv}
 * (any Hadoop file system) when the job ends, replaced atomically as late kills come in.
 */
public final class AttemptRecord {
  public static final String HEADER =
      "task_id\tphase\tattempt_id\tis_clone\tcontainer_id\tnode_id\tstate\tlaunch_ms\tfinish_ms\twinner";
  private static final Logger LOG = LoggerFactory.getLogger(AttemptRecord.class);
  private final Configuration conf;
  private final String dir;
  private String lastText = "";

  public AttemptRecord(Configuration conf) {
    this.conf = conf;
    this.dir = conf.getTrimmed(AmConfig.RECORD_DIR, "");
  }

  public static String render(java.util.List<TaskView> views, CloneBook book, String jobState) {
    StringBuilder sb = new StringBuilder("# job_state=").append(jobState).append('\n').append(HEADER).append('\n');
    for (TaskView t : views) {
      String winner = book.winner(t.taskId());
      for (AttemptView a : t.attempts()) {
        sb.append(t.taskId()).append('\t').append(t.phase()).append('\t').append(a.attemptId()).append('\t')
            .append(book.isClone(t.taskId(), a.attemptId())).append('\t').append(a.containerId()).append('\t')
            .append(a.nodeId()).append('\t').append(a.state()).append('\t').append(a.launchMs()).append('\t')
            .append(a.finishMs()).append('\t').append(a.attemptId().equals(winner)).append('\n');
      }
    }
    return sb.toString();
  }

  void write(String appId, java.util.List<TaskView> views, CloneBook book, String jobState) {
    String text = render(views, book, jobState);
    if (text.equals(lastText)) {
      return;
    }
    if (dir.isEmpty()) {
      lastText = text;
      LOG.info("DollyMP AM helper record for {}:\n{}", appId, text);
      return;
    }
    try {
      AtomicFiles.replace(conf, new Path(new Path(dir), appId + ".tsv"), text);
      lastText = text; // only once written: a failed write is tried again on the next tick
    } catch (IOException e) {
      LOG.warn("DollyMP AM helper: could not write the attempt record to {}", dir, e);
    }
  }
}
