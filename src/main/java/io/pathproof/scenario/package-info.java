/**
 * The scenario room: what a prediction is made for — the workload (parameters and DDP flags), the topology, the
 * versions, the rank count, the backend and the environment — with presets (JSON resources under
 * {@code io/pathproof/scenario/presets/}) and readers. Formats and the versions they were checked against:
 *
 * <ul>
 *   <li>workload JSON and topology JSON: this project's own formats (the records' shapes);
 *   <li>parameter dump: one JSON object per line with {@code name, shape, dtype, requires_grad}, as the snippet in
 *       the README writes it from {@code model.named_parameters()} (dtype as torch prints it, e.g. {@code
 *       torch.float32});
 *   <li>NCCL topology dump ({@code NCCL_TOPO_DUMP_FILE}): {@code <system version="1">}, attributes as written by
 *       graph/xml.cc and read by graph/topo.cc of NCCL v2.28.9-1, checked on a real dump from NCCL 2.28.9;
 *   <li>{@code nvidia-smi topo -m}: the matrix with legend X, SYS, NODE, PHB, PXB, PIX, NV#, checked on the output of
 *       driver 580.159 (with its terminal underline escapes).
 * </ul>
 *
 * Entry: {@link io.pathproof.scenario.Scenarios}.
 */
package io.pathproof.scenario;
