"""Rows for what generated code calls: adjoint and batching helpers, copies and writes, the tape, collectives, print."""
