package io.pathproof.evidence;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The lines of pathproof's NCCL emulator patch in an NCCL log (one family of {@link NcclLogReader}): the real and the
 * reported busId and compute capability of each rank, and each kernel launch's shape.
 */
final class EmulatorLines {
    private final NcclLogReader r;

    EmulatorLines(NcclLogReader r) {
        this.r = r;
    }

    private static final Pattern EMU_BUSID =
            Pattern.compile("^(?:EMULATOR: cudaDev \\d+ real busId ([0-9a-fA-F]+) reported as ([0-9a-fA-F]+)"
                    + "|ORACLE: real busId ([0-9a-fA-F:.]+) reported as ([0-9a-fA-F:.]+))\\s*$");
    private static final Pattern EMU_CC =
            Pattern.compile("^EMULATOR: compute capability (\\d+) reported as (\\d+)\\s*$");
    private static final Pattern EMU_LAUNCH = Pattern.compile(
            "^(?:EMULATOR|ORACLE) launch:(?: rank (\\d+))? grid (\\d+) block (\\d+) smem (-?\\d+) cluster (\\d+)\\s*$");

    /**
     * Lines of pathproof's NCCL emulator patch (native/nccl-emulator/emulator-2.28.patch): "EMULATOR: cudaDev %d real
     * busId %lx reported as %lx" and "EMULATOR: compute capability %d reported as %d" (nvmlwrap.cc, inside
     * commAlloc), "EMULATOR launch: rank %d grid %u block %u smem %d cluster %u" (enqueue.cc, just before
     * cuLaunchKernelEx); and the first patch's "ORACLE: real busId %s reported as %s" (PCI form) and "ORACLE launch:
     * grid … " (rank 0 only, no rank printed).
     */
    void emulator(String msg) {
        Matcher m = EMU_LAUNCH.matcher(msg);
        if (m.find()) {
            launch(m);
            return;
        }
        m = EMU_BUSID.matcher(msg);
        if (m.find()) {
            String real = m.group(1) != null ? m.group(1) : busIdHex(m.group(3));
            String reported = m.group(2) != null ? m.group(2) : busIdHex(m.group(4));
            if (real == null || reported == null) {
                r.out.problem(r.lineNo, "emulator busId line not understood");
                return;
            }
            CommRank cr = r.context();
            cr.realBusId = real.toLowerCase(java.util.Locale.ROOT);
            cr.reportedBusId = reported.toLowerCase(java.util.Locale.ROOT);
            cr.emulatedSource = Source.line(r.file, r.lineNo);
            emulated();
            return;
        }
        m = EMU_CC.matcher(msg);
        if (m.find()) {
            CommRank cr = r.context();
            r.setInt(m.group(1), v -> cr.realCompCap = v);
            r.setInt(m.group(2), v -> cr.reportedCompCap = v);
            if (cr.emulatedSource == null) {
                cr.emulatedSource = Source.line(r.file, r.lineNo);
            }
            emulated();
            return;
        }
        r.out.problem(r.lineNo, "emulator line not understood");
    }

    private void emulated() {
        if (r.emulationLines++ == 0) {
            r.emulationFirst = Source.line(r.file, r.lineNo);
        }
        r.counted();
    }

    /** "0000:41:00.0" → "41000", NCCL's busIdToInt64 (hex digits only) printed with %lx. */
    static String busIdHex(String pci) {
        StringBuilder hex = new StringBuilder();
        for (int i = 0; i < pci.length(); i++) {
            char c = pci.charAt(i);
            if (Character.digit(c, 16) >= 0) {
                hex.append(c);
            } else if (c != ':' && c != '.') {
                return null;
            }
        }
        if (hex.length() == 0 || hex.length() > 16) {
            return null;
        }
        return Long.toHexString(Long.parseUnsignedLong(hex.toString(), 16));
    }

    /**
     * A launch line → an NCCL kernel fact of the log (grid.x = channels, block.x = threads, as NCCL passed them to the
     * driver). The rank is the one printed, else that of the communicator of this thread; the kernel is named after the
     * collective of the thread's last TUNING line, when there is one.
     */
    private void launch(Matcher m) {
        long g = Long.parseLong(m.group(2).length() > 10 ? "-1" : m.group(2));
        long bl = Long.parseLong(m.group(3).length() > 10 ? "-1" : m.group(3));
        long sm = m.group(4).length() > 10 ? Integer.MIN_VALUE : Long.parseLong(m.group(4));
        long cl = Long.parseLong(m.group(5).length() > 10 ? "-1" : m.group(5));
        if (g < 0
                || g > Integer.MAX_VALUE
                || bl < 0
                || bl > Integer.MAX_VALUE
                || sm < Integer.MIN_VALUE + 1
                || sm > Integer.MAX_VALUE
                || cl < 0
                || cl > Integer.MAX_VALUE) {
            r.out.problem(r.lineNo, "emulator launch line has a number out of range");
            return;
        }
        Integer rank;
        if (m.group(1) != null) {
            rank = m.group(1).length() > 9 ? null : Integer.valueOf(m.group(1));
        } else {
            CommRank cr = r.colls.lastCollByThread.get(r.prefix.threadKey);
            if (cr == null) {
                cr = r.currentOrNull();
            }
            rank = cr != null ? cr.effectiveRank(r.fileRank) : r.fileRank;
        }
        String op = r.colls.lastTuneThread == r.prefix.threadKey ? r.colls.lastTuneOp : null;
        java.util.Map<String, String> coll = null;
        if (r.colls.lastEnqueueThread == r.prefix.threadKey && r.colls.lastEnqueueOp != null) {
            // The COLL line before it on this thread (printed on every rank) names the collective and its element
            // count.
            op = r.colls.lastEnqueueOp;
            coll = java.util.Map.of(
                    "op",
                    r.colls.lastEnqueueOp,
                    "nelems",
                    Long.toString(r.colls.lastEnqueueCount),
                    "datatype",
                    Integer.toString(r.colls.lastEnqueueDatatype));
            r.colls.lastEnqueueThread = Long.MIN_VALUE; // one launch per enqueued collective
        }
        r.launches.add(new Evidence.Kernel(
                rank,
                op == null ? Evidence.Kernel.LAUNCH_LINE : Evidence.Kernel.LAUNCH_LINE + " " + op,
                new int[] {(int) g, 1, 1},
                new int[] {(int) bl, 1, 1},
                null,
                null,
                null,
                r.prefix.cudaDev >= 0 ? r.prefix.cudaDev : null,
                null,
                true,
                coll,
                Source.line(r.file, r.lineNo),
                (int) sm,
                (int) cl));
        emulated();
    }
}
