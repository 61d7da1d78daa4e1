"""User source -> core Python: parsing, the source check, and the normalizer."""
