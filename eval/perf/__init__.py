"""Performance benchmarks (issue 7): embedding throughput, search latency at scale, answer latency, cold start
and benchmark concurrency. Each module measures one thing and stores its section in eval/results/performance.json;
`python -m eval.perf` (`make bench`) runs them all and writes performance.md. Nothing here asserts a time.
"""
