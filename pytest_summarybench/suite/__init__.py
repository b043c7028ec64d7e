"""The code-summary benchmark module the ``summarybench`` command runs (the same test as
``benchmarks/summary/test_summary.py``, shipped inside the package)."""
