"""The normalizer: gast -> core Python, one primitive per statement."""
