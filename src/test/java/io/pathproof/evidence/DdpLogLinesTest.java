package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * DDP's own debug log (TORCH_DISTRIBUTED_DEBUG=DETAIL and INFO), as torch 1.13 printed it for two gloo ranks of
 * ddp-debug/make_ddp_debug.py (each rank's stderr in a file of its own, and both in one file), and the other shapes
 * of the same lines: c10's own prefix (builds without glog), a launcher's tag, among NCCL's lines.
 */
class DdpLogLinesTest {
    static final Path DIR = Read.RES.resolve("ddp-debug");

    private static List<Evidence.DdpLogMessage> log(Evidence e) {
        assertThat(e.ddp()).isNotNull();
        return e.ddp().log();
    }

    private static List<Evidence.DdpLogMessage> of(List<Evidence.DdpLogMessage> log, String message) {
        return log.stream().filter(m -> m.message().equals(message)).toList();
    }

    @Test
    void eachRanksDetailLogIsReadMessageByMessageWithFileAndLine() {
        Path f = DIR.resolve("torch-1.13-detail/train-0.log");
        Evidence e = Ingest.read(List.of(f));
        assertThat(e.problems()).isEmpty();
        assertThat(e.files()).singleElement().satisfies(r -> assertThat(r.kind())
                .isEqualTo(FileKind.DDP_LOG));
        List<Evidence.DdpLogMessage> log = log(e);
        assertThat(log)
                .extracting(Evidence.DdpLogMessage::message)
                .containsExactly(
                        "debug-level",
                        "reducer-initialized",
                        "ddp-initialized",
                        "runtime-stats",
                        "buckets-rebuilt",
                        "buckets-rebuilt-notice",
                        "runtime-stats",
                        "runtime-stats");
        assertThat(log).allSatisfy(m -> assertThat(m.rank()).as(m.toString()).isZero());

        Evidence.DdpLogMessage level = log.get(0);
        assertThat(level.value("level")).isEqualTo("DETAIL");
        assertThat(level.printedAt()).isEqualTo("debug.cpp:49");

        Evidence.DdpLogMessage reducer = log.get(1);
        assertThat(reducer.values())
                .containsExactly(
                        Map.entry("bucket_bytes_cap", "262144"), Map.entry("first_bucket_bytes_cap", "1048576"));
        assertThat(reducer.printedAt()).isEqualTo("reducer.cpp:126");
        assertThat(reducer.source()).isEqualTo(Source.line(f.toString(), 18));

        Evidence.DdpLogMessage init = log.get(2);
        assertThat(init.printedAt()).isEqualTo("logger.cpp:213");
        assertThat(init.source()).isEqualTo(Source.line(f.toString(), 19));
        assertThat(init.values())
                .hasSize(24)
                .containsEntry("bucket_sizes", "1877536")
                .containsEntry("world_size", "2")
                .containsEntry("rank", "0")
                .containsEntry("backend_name", "gloo")
                .containsEntry("device_ids", "")
                .containsEntry("total_parameter_size_bytes", "1877536")
                .containsEntry("torch_distributed_debug", "DETAIL");

        Evidence.DdpLogMessage stats = log.get(3);
        assertThat(stats.printedAt()).isEqualTo("logger.cpp:377");
        assertThat(stats.values())
                .containsEntry("iteration", "1")
                .containsEntry("world_size", "2")
                .containsEntry("module_name", "Sequential")
                .containsKeys(
                        "avg_forward_compute_time",
                        "avg_backward_compute_time",
                        "avg_backward_comm_time",
                        "avg_backward_compute_comm_overlap_time");

        Evidence.DdpLogMessage rebuilt = log.get(4);
        assertThat(rebuilt.values())
                .containsExactly(Map.entry("buckets", "3"), Map.entry("size_limits", "1048576, 262144, 262144"));
        assertThat(rebuilt.printedAt()).isEqualTo("reducer.cpp:1724");
        assertThat(rebuilt.source()).isEqualTo(Source.line(f.toString(), 49));

        Evidence.DdpLogMessage notice = log.get(5);
        assertThat(notice.printedAt()).isNull();
        assertThat(notice.source()).isEqualTo(Source.line(f.toString(), 50));
        assertThat(log.get(7).value("iteration")).isEqualTo("3");
        assertThat(e.files().get(0).facts()).isEqualTo(8);
    }

    @Test
    void theInfoLevelHasNoRuntimeStats() {
        List<Evidence.DdpLogMessage> log = log(Ingest.read(List.of(DIR.resolve("torch-1.13-info/train-1.log"))));
        assertThat(log)
                .extracting(Evidence.DdpLogMessage::message)
                .containsExactly(
                        "debug-level",
                        "reducer-initialized",
                        "ddp-initialized",
                        "buckets-rebuilt",
                        "buckets-rebuilt-notice");
        assertThat(log).allSatisfy(m -> assertThat(m.rank()).isEqualTo(1));
        assertThat(log.get(2).value("torch_distributed_debug")).isEqualTo("INFO");
    }

    @Test
    void twoRanksInOneFileAreToldApartByThreadNeverByOrder() {
        Path f = DIR.resolve("torch-1.13-detail-one-log/train.log");
        List<Evidence.DdpLogMessage> log = log(Ingest.read(List.of(f)));
        List<Evidence.DdpLogMessage> reducers = of(log, "reducer-initialized");
        assertThat(reducers).extracting(Evidence.DdpLogMessage::rank).containsExactlyInAnyOrder(0, 1);
        assertThat(of(log, "ddp-initialized"))
                .allSatisfy(m -> assertThat(m.value("rank")).isEqualTo(String.valueOf(m.rank())));
        assertThat(of(log, "buckets-rebuilt"))
                .extracting(Evidence.DdpLogMessage::rank)
                .containsExactlyInAnyOrder(0, 1);
        assertThat(of(log, "runtime-stats")).hasSize(6).allSatisfy(m -> assertThat(m.value("rank"))
                .isEqualTo(String.valueOf(m.rank())));
        // Python's own line names no thread and no rank: two ranks wrote into this file, so its rank is unknown.
        assertThat(of(log, "buckets-rebuilt-notice")).hasSize(2).allSatisfy(m -> assertThat(m.rank())
                .isNull());
    }

    @Test
    void torch211PrefixesTheRankOnAMessagesFirstLineOnly() {
        // torch 2.11.0+cu130: c10's own prefix (a time, no thread), "[rank0]:" before it once the process group exists,
        // and the lines of "DDP Initialized with" without it.
        Path f = DIR.resolve("torch-2.11-info/train-0.log");
        Evidence e = Ingest.read(List.of(f));
        assertThat(e.problems()).isEmpty();
        List<Evidence.DdpLogMessage> log = log(e);
        assertThat(log)
                .extracting(Evidence.DdpLogMessage::message)
                .containsExactly("debug-level", "reducer-initialized", "ddp-initialized", "buckets-rebuilt");
        assertThat(log)
                .extracting(Evidence.DdpLogMessage::printedAt)
                .containsExactly("debug.cpp:48", "reducer.cpp:129", "logger.cpp:223", "reducer.cpp:1980");
        assertThat(log).allSatisfy(m -> assertThat(m.rank()).isZero());
        assertThat(log.get(1).values()).containsEntry("first_bucket_bytes_cap", "262144");
        assertThat(log.get(2).values())
                .hasSize(24)
                .containsEntry("bucket_sizes", "1877536")
                .containsEntry("rank", "0")
                .containsEntry("torch_distributed_debug", "INFO");
        assertThat(log.get(3).values())
                .containsEntry("buckets", "4")
                .containsEntry("size_limits", "262144, 262144, 262144, 262144");
        assertThat(log.get(3).source()).isEqualTo(Source.line(f.toString(), 35));
    }

    @Test
    void torch211UnderTorchrunBothRanksInOneFile() {
        List<Evidence.DdpLogMessage> log =
                log(Ingest.read(List.of(DIR.resolve("torch-2.11-info-torchrun/command.stderr"))));
        assertThat(of(log, "reducer-initialized"))
                .extracting(Evidence.DdpLogMessage::rank)
                .containsExactly(0, 1);
        assertThat(of(log, "ddp-initialized"))
                .extracting(Evidence.DdpLogMessage::rank)
                .containsExactly(0, 1);
        assertThat(of(log, "ddp-initialized"))
                .allSatisfy(m -> assertThat(m.values()).hasSize(24).containsEntry("rank", String.valueOf(m.rank())));
        assertThat(of(log, "buckets-rebuilt"))
                .extracting(Evidence.DdpLogMessage::rank)
                .containsExactly(1, 0);
        // The launcher's and each worker's debug-level lines come before any process group: no rank says whose they
        // are.
        assertThat(of(log, "debug-level")).hasSize(3).allSatisfy(m -> assertThat(m.rank())
                .isNull());
    }

    @Test
    void c10sOwnPrefixATorchrunTagAndNcclLinesAroundThem() {
        String text = String.join(
                "\n",
                "host:100:100 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
                "[rank1]:[I reducer.cpp:126] Reducer initialized with bucket_bytes_cap: 26214400 first_bucket_bytes_cap: 1048576",
                "[rank0]:[I1203 11:17:47.053013123 logger.cpp:213] [Rank 0]: DDP Initialized with: ",
                "[rank1]:[I1203 11:17:47.053013456 logger.cpp:213] [Rank 1]: DDP Initialized with: ",
                "[rank0]:bucket_sizes: 1048576, 26214400",
                "[rank1]:bucket_sizes: 1048576, 26214400",
                "[rank0]:world_size: 2",
                "host:100:100 [0] NCCL INFO Channel 00/02 : 0 1",
                "[rank1]:world_size: 2",
                "[rank1]:[I1203 11:17:48.000000000 reducer.cpp:1854] 2 buckets rebuilt with size limits: 1048576, 26214400 bytes.",
                "");
        Evidence e = Read.evidence(FileKind.NCCL_LOG, "mixed.log", text);
        List<Evidence.DdpLogMessage> log = log(e);
        assertThat(log)
                .extracting(Evidence.DdpLogMessage::message)
                .containsExactly("reducer-initialized", "ddp-initialized", "ddp-initialized", "buckets-rebuilt");
        assertThat(log).extracting(Evidence.DdpLogMessage::rank).containsExactly(1, 0, 1, 1);
        assertThat(log.get(1).values()).containsOnlyKeys("bucket_sizes", "world_size");
        // The NCCL line between ends rank 1's message: its "world_size" after it is not read into it.
        assertThat(log.get(2).values()).containsOnlyKeys("bucket_sizes");
        assertThat(log.get(3).printedAt()).isEqualTo("reducer.cpp:1854");
        assertThat(log.get(3).source().line()).isEqualTo(10);
        assertThat(e.nccl().version()).isNull();
    }

    @Test
    void aLogOfOtherLinesHasNoDdpMessages() {
        Evidence e = Read.evidence(
                FileKind.NCCL_LOG, "train.log", "epoch 1 loss 0.3\nI1203 12:00:00.000 1 socket.cpp:624] x\n");
        assertThat(e.ddp()).isNull();
    }
}
