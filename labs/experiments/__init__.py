"""GPU lab experiments: pure torch/triton code, no Django.

Each experiment is a module (fused_vs_unfused, launch_overhead, attention, flash_tiling_trace,
roofline) with its variants, a correctness check, a measurement and a
`run(params, progress, device) -> Result`. Callers import from the module that defines a name:
the catalog and parameter validation from `catalog` (torch-free, for the web process),
`run_experiment` from `runner` (imports torch). `python -m labs.experiments` is the command line.
How the labs measure, and what the kernels measured, is in NOTES.md.
"""
