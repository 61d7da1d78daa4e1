"""What every stage shares: core Python (ir), code generation, abstract values, renaming, errors at the user's line."""
