"""The function docs/how_it_works.md transforms (its generated code is produced from this file
by `python -m transpile.doc_tables`)."""
import numpy as np


def loss(x):
    y = np.tanh(x) * x
    return np.sum(y ** 2) / 2.0
