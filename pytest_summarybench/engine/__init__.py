"""The engine: a run without pytest. ``pipeline`` extracts and samples once per
configuration, ``plan`` makes the selected items' model calls, ``warmup`` starts the
work that reads only the code, ``estimate`` prices the plan instead of making it, and
``finish`` turns a session's records into its report, gate outcome and files.

The pytest adapter (``pytest_summarybench.plugin``) and the command line drive it; it
imports nothing of pytest."""
