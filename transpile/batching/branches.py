"""An `if` on a batched value whose two sides give a name different per-example shapes.

Per example, NumPy keeps each example's own value: `y = 1.0` on one path and
`y = np.outer(x, x)` on the other make `np.sum(y)` a sum of one number or of nine. A batched
array cannot hold both (a select with np.where would broadcast the scalar to 3x3, and the
sum would be wrong). When the sweep sees the two sides give a live name different
per-example ranks, each example runs the whole function on its own (the documented last
resort: a loop over the batch), which keeps NumPy's semantics exactly."""
from transpile.batching.names import writes


class RaggedBranches(Exception):
    """The sides of an `if` on a batched value give a name different per-example ranks."""

    def __init__(self, reason, loc):
        super().__init__(reason)
        self.reason, self.loc = reason, loc


def _state(sweep):
    return (dict(sweep.bat), dict(sweep.rk), dict(sweep.tlen), set(sweep.bools),
            {k: list(v) for k, v in sweep.tapes.items()}, set(sweep.batched_tapes),
            set(sweep.own_any), sweep.bld.body, sweep.bld.loc, sweep.cur,
            getattr(sweep, "cur_rank", None), dict(sweep.weak))


def _restore(sweep, s):
    (sweep.bat, sweep.rk, sweep.tlen, sweep.bools, sweep.tapes, sweep.batched_tapes,
     sweep.own_any, sweep.bld.body, sweep.bld.loc, sweep.cur, sweep.cur_rank, sweep.weak) = \
        (dict(s[0]), dict(s[1]), dict(s[2]), set(s[3]), {k: list(v) for k, v in s[4].items()},
         set(s[5]), set(s[6]), s[7], s[8], s[9], s[10], dict(s[11]))


def side_ranks(sweep, st, live):
    """Per-example ranks after each side of `st` (an ir.If), from a dry run of the sweep over
    each side (its code is thrown away); None where the dry run cannot tell."""
    saved = _state(sweep)
    out = []
    try:
        for body in (st.body, st.orelse):
            _restore(sweep, saved)
            sweep.bld.body = []
            sweep.run(body, live)
            out.append(dict(sweep.rk))
    except Exception:
        return None
    finally:
        _restore(sweep, saved)
    return out


def check_sides(sweep, st, live, then_ranks, else_ranks, rename=None, unknown=False):
    """Raise RaggedBranches when a live name written by `st` has known, different per-example
    ranks on its two sides (unknown: also when one side's rank is known and the other's not,
    as for `y = 1.0` against `y = 2 * x` where x's rank is not known when code is generated).
    rename: {side: {name: name holding that side's value}}."""
    before = sweep.rk
    for v in sorted(writes([st]) & set(live)):
        if v not in before and not (v in writes(st.body) and v in writes(st.orelse)):
            continue                         # bound on one side only: read only under it
        sides = []
        for tag, ranks in (("then", then_ranks), ("else", else_ranks)):
            name = (rename or {}).get(tag, {}).get(v, v)
            sides.append(ranks.get(name))
        if sides[0] != sides[1] and (None not in sides or unknown):
            loc = st.loc or (None, None)
            where = f"{loc[0]}:{loc[1]}" if loc[0] else "an `if`"
            verb = "may give" if None in sides else "give"
            raise RaggedBranches(
                f"the two sides of the `if` at {where} {verb} `{v}` a different shape per "
                f"example (rank {_rank(sides[0])} and rank {_rank(sides[1])}), which one "
                "batched array "
                "cannot hold: each example runs the whole function in a loop over the batch",
                loc)


def _rank(r):
    return "unknown" if r is None else r
