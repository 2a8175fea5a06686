"""Search: query checks and shorthand expansion, methods, rank fusion, the contradiction rule and second stages."""
