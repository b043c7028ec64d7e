"""Repository-level pytest configuration.

The bundled sample codebase under fixtures/ is data for the benchmark, not tests: never
collect it, whatever its file names look like.
"""

collect_ignore = ["fixtures"]
