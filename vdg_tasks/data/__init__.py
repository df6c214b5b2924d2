"""Benchmark data: the benchmarks vdg declares, local copies of their data, question sets, the upstream task configs
read as data, and InfiniBench's questions and rosters.
"""
