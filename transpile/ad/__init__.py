"""Automatic differentiation over core Python: forward mode, reverse mode, the tape."""
