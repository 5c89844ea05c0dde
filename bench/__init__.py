"""Benchmarks: each bench_<area>.py has a main() that times goldset beside its peer tool, in one process,
prints the ratios and writes bench/results/<area>.json. Run them all with `python -m bench` (`make bench`)."""
