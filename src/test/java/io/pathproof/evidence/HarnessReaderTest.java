package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HarnessReaderTest {
  static Path testdata(String name) throws URISyntaxException {
    return Path.of(HarnessReaderTest.class.getResource("/io/pathproof/run/testdata/" + name).toURI());
  }

  @Test
  void readsTheRealH200RunWithProvenance() throws Exception {
    Path dir = testdata("h200-1rank");
    HarnessFacts h = HarnessReader.read(dir);
    assertThat(h.problems()).isEmpty();

    List<Evidence.BucketRecord> b = h.ddp().buckets();
    assertThat(b).hasSize(53);
    Evidence.BucketRecord tenth = b.get(10);
    assertThat(tenth.rank()).isZero();
    assertThat(tenth.iteration()).isEqualTo(10);
    assertThat(tenth.index()).isZero();
    assertThat(tenth.isLast()).isTrue();
    assertThat(tenth.bytes()).isEqualTo(67108864L);
    assertThat(tenth.params()).containsExactly("p");
    assertThat(tenth.readyNs()).isEqualTo(1796215479119064487L);
    assertThat(tenth.futureDoneNs()).isEqualTo(1796215479119316829L);
    assertThat(tenth.gpuDoneNs()).isEqualTo(1796215479119307598L);
    assertThat(tenth.source()).isEqualTo(Source.line(dir.resolve("hook-rank0.jsonl").toString(), 11));

    assertThat(h.ddp().logging()).containsOnlyKeys("0");
    assertThat(h.ddp().logging().get("0").path("rebuilt_bucket_sizes").asText()).isEqualTo("67108864");
    assertThat(h.ddp().logging().get("0").path("backend_name").asText()).isEqualTo("nccl");

    assertThat(h.steps()).hasSize(53);
    assertThat(h.steps().stream().filter(Evidence.Step::measured).count()).isEqualTo(48);
    Evidence.Step last = h.steps().get(52);
    assertThat(last.iteration()).isEqualTo(52);
    assertThat(last.ms()).isEqualTo(1.694111943244934);
    assertThat(last.source().line()).isEqualTo(53);

    assertThat(h.replicas().equal()).isTrue();
    assertThat(h.replicas().digests()).singleElement().satisfies(d -> {
      assertThat(d.sha256()).isEqualTo("d2c841f44670037b56e13827aab1249927f5e294831fb1811d909502698c4b74");
      assertThat(d.samples()).hasSize(3);
    });
    assertThat(h.peerAccess()).isEmpty();
    assertThat(h.manifest().path("versions").path("nccl").asText()).isEqualTo("2.28.9");
    assertThat(h.manifest().path("complete").asBoolean()).isTrue();
  }

  @Test
  void badLinesBecomeProblemsNamingFileAndLineAndTheRestIsKept() throws Exception {
    Path dir = testdata("bad");
    HarnessFacts h = HarnessReader.read(dir);
    String hook = dir.resolve("hook-rank1.jsonl").toString();
    String steps = dir.resolve("steps-rank1.jsonl").toString();
    String replicas = dir.resolve("replicas.json").toString();
    String peers = dir.resolve("peer-access-rank0.json").toString();

    assertThat(h.ddp().buckets()).singleElement().satisfies(x -> {
      assertThat(x.params()).containsExactly("fc2.bias", "fc2.weight");
      assertThat(x.gpuDoneNs()).isEqualTo(3000L);
      assertThat(x.source()).isEqualTo(Source.line(hook, 1));
    });
    assertThat(h.steps()).extracting(Evidence.Step::iteration).containsExactly(0, 3);
    assertThat(h.peerAccess()).hasSize(2);
    assertThat(h.peerAccess().get(0).copyGBs()).isEqualTo(48.3);
    assertThat(h.peerAccess().get(1).canAccess()).isFalse();
    assertThat(h.peerAccess().get(1).copyGBs()).isNull();
    assertThat(h.peerAccess().get(1).source()).isEqualTo(Source.event(peers, 1));
    // the file claims equal, the digests disagree: the digests win
    assertThat(h.replicas().equal()).isFalse();
    assertThat(h.replicas().digests()).hasSize(2);
    assertThat(h.manifest()).isNull();

    assertThat(h.problems()).extracting(Problem::file, Problem::line).contains(
        org.assertj.core.groups.Tuple.tuple(hook, 2L),
        org.assertj.core.groups.Tuple.tuple(hook, 3L),
        org.assertj.core.groups.Tuple.tuple(hook, 5L),
        org.assertj.core.groups.Tuple.tuple(steps, 2L),
        org.assertj.core.groups.Tuple.tuple(steps, 3L),
        org.assertj.core.groups.Tuple.tuple(peers, 0L),
        org.assertj.core.groups.Tuple.tuple(replicas, 0L));
    assertThat(h.problems()).anySatisfy(p -> {
      assertThat(p.file()).isEqualTo(hook);
      assertThat(p.line()).isEqualTo(3);
      assertThat(p.message()).isEqualTo("field bytes: missing");
    });
    assertThat(h.problems()).anySatisfy(p -> assertThat(p.message()).isEqualTo("field isLast: not true/false"));
    assertThat(h.problems()).anySatisfy(p -> assertThat(p.message()).isEqualTo("field phase: 'plain' is neither measured nor warmup"));
    assertThat(h.problems()).anySatisfy(p -> assertThat(p.message()).isEqualTo("equal: file says true but the digests say false"));
    assertThat(h.problems()).anySatisfy(p -> assertThat(p.message()).isEqualTo("digests[2].sha256: not a SHA-256 hex digest"));
    assertThat(h.problems()).anySatisfy(p -> {
      assertThat(p.file()).isEqualTo(dir.resolve("manifest.json").toString());
      assertThat(p.message()).startsWith("not JSON");
    });
  }

  @Test
  void aDirectoryWithoutHarnessOutputGivesNull(@TempDir Path tmp) throws Exception {
    assertThat(HarnessReader.read(tmp)).isNull();
    Files.writeString(tmp.resolve("nccl-rank0.log"), "x\n");
    assertThat(HarnessReader.read(tmp)).isNull();
    assertThat(HarnessReader.read(tmp.resolve("absent"))).isNull();
  }
}
