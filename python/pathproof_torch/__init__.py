"""pathproof's instrumentation of a PyTorch DDP job, in the job's own processes.

`pathproof run --out DIR -- COMMAND...` puts this package and a `sitecustomize.py` first on every rank's PYTHONPATH;
frameworks that start their own processes call `pathproof_torch.instrument(out=DIR)` before they wrap the model in
DistributedDataParallel. Either way each rank writes the run directory's files (docs/run-directory.md).
"""
