"""Statistics over per-unit scores: significance tests, intervals, correlations, and
(``ir``) the ranking metrics of retrieval and contrastive matching."""
