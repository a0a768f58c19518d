"""The rerunnable benchmark suite (`nara-kg bench`, `make bench`); see BENCHMARKS.md."""
