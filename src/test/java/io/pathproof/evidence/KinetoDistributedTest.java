package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Issue 12: a CPU (gloo) trace's collectives, distributedInfo as distributed[], memcpy/memset as copies[]. */
class KinetoDistributedTest {
    private static final String GLOO_TRACE = """
      {"schemaVersion": 1,
       "distributedInfo": {"backend": "gloo", "rank": 1, "world_size": 2, "pg_count": 2,
         "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cpu:gloo", "pg_size": 2,
                        "ranks": [0, 1]},
                       {"pg_name": "1", "pg_desc": "undefined", "backend_config": "cpu:gloo", "pg_size": 1,
                        "ranks": [1]}]},
       "traceEvents": [
        {"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "pid": 7, "tid": 7, "ts": 10.5, "dur": 2.25},
        {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 7, "tid": 7, "ts": 10.6, "dur": 2,
         "args": {"Collective name": "allreduce", "Process Group Name": "0"}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 7, "tid": 7, "ts": 20, "dur": 1}
      ]}
      """;

    @Test
    void glooCollectivesAreRangesAndDistributedInfoIsAFact() {
        Evidence ev = Read.evidence(FileKind.KINETO, "trace.json", GLOO_TRACE);
        assertThat(ev.ranges()).extracting(Evidence.Range::name).containsExactly("gloo:all_reduce");
        Evidence.Range r = ev.ranges().get(0);
        assertThat(r.rank()).isEqualTo(1);
        assertThat(r.startNs()).isEqualTo(10_500L);
        assertThat(r.durNs()).isEqualTo(2_250L);
        Evidence.Distributed d = ev.distributed().get(0);
        assertThat(d.rank()).isEqualTo(1);
        assertThat(d.worldSize()).isEqualTo(2);
        assertThat(d.backend()).isEqualTo("gloo");
        assertThat(d.torchNcclBuild()).isNull();
        assertThat(d.processGroups())
                .containsExactly(
                        new Evidence.ProcessGroup("0", "default_pg", 2, List.of(0, 1)),
                        new Evidence.ProcessGroup("1", "undefined", 1, List.of(1)));
        assertThat(d.source().line()).isEqualTo(2);
        // A gloo run launches no NCCL kernel: no "missing kernels" alarm.
        assertThat(ev.findings()).isEmpty();
    }

    @Test
    void theH200TracesDistributedInfoAndItsDeviceToDeviceCopies() {
        Evidence ev = Ingest.read(List.of(Read.res("h200-1rank/kineto-trace.json")));
        Evidence.Distributed d = ev.distributed().get(0);
        assertThat(d.backend()).isEqualTo("nccl");
        assertThat(d.torchNcclBuild()).isEqualTo("2.28.9");
        assertThat(d.processGroups()).containsExactly(new Evidence.ProcessGroup("0", "default_pg", 1, List.of(0)));
        assertThat(ev.copies()).isNotEmpty();
        Evidence.Copy c = ev.copies().get(0);
        assertThat(c.kind()).isEqualTo("DtoD");
        assertThat(c.bytes()).isEqualTo(67_108_864L);
        assertThat(c.durNs()).isEqualTo(33_247L);
        assertThat(c.device()).isZero();
        assertThat(c.stream()).isEqualTo(7);
        assertThat(c.rank()).isZero();
    }

    @Test
    void aTracesNcclVersionIsTorchsBuildNotTheLibraryThatRan() {
        // torch's profiler writes torch.cuda.nccl.version(), a compile-time constant (torch/csrc/cuda/nccl.cpp): a run
        // of torch 2.11 (built with 2.28.9) that loaded NCCL 2.30.7 (an H200 run of 5 Dec 2026, emulated cluster) has
        // a trace saying 2.28.9 and a log saying 2.30.7. The log is the run's version, and the two do not disagree.
        String trace = """
          {"distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2, "nccl_version": "2.28.9"},
           "traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 7, "tid": 7, "ts": 20, "dur": 1}]}
          """;
        String log = "vm:21675:21675 [0] NCCL INFO Bootstrap: Using lo:127.0.0.1<0>\n"
                + "vm:21675:21675 [0] NCCL INFO NCCL version 2.30.7+cuda13.0\n";
        Evidence ev = Read.files(
                Read.facts(FileKind.KINETO, "trace-rank0.json", trace.getBytes(StandardCharsets.UTF_8)),
                Read.facts(FileKind.NCCL_LOG, "nccl-rank0.log", log.getBytes(StandardCharsets.UTF_8)));
        assertThat(ev.nccl().version()).isEqualTo("2.30.7");
        assertThat(ev.nccl().versionSource().file()).isEqualTo("nccl-rank0.log");
        assertThat(ev.distributed().get(0).torchNcclBuild()).isEqualTo("2.28.9");
        assertThat(ev.findings()).extracting(Evidence.Finding::kind).doesNotContain("nccl-version-mismatch");
    }

    @Test
    void memsetsAreCopiesOfKindMemset() {
        String t = """
        {"traceEvents": [
          {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 1, "dur": 0.5,
           "args": {"device": 0, "stream": 7, "bytes": 4096}},
          {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 7, "ts": 2, "dur": 1,
           "args": {"device": 0, "stream": 7, "bytes": 8}}]}
        """;
        Evidence ev = Read.evidence(FileKind.KINETO, "trace_rank2.json", t);
        assertThat(ev.copies()).extracting(Evidence.Copy::kind).containsExactly("memset", "HtoD");
        assertThat(ev.copies()).extracting(Evidence.Copy::bytes).containsExactly(4096L, 8L);
        assertThat(ev.copies()).extracting(Evidence.Copy::rank).containsOnly(2);
    }
}
