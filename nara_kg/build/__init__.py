"""What the graph-wide assets call: each stage computes what the graph should hold, compares it
with what it holds, and writes only the difference, so re-runs are cheap and converge to the same
graph after any interruption. One module per asset group."""
