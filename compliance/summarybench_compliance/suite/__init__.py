"""The compliance benchmark's test module, shipped inside the package: what
``summarybench compliance`` runs, and what a project's test module imports to run the
benchmark in its own pytest runs (``benchmarks/compliance/test_compliance.py``)."""
