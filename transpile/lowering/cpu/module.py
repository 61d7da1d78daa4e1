"""Numba CPU backend: specialized, fused core Python -> a Python module of @njit functions.

Every value's shape and dtype is known (transpile/optimize/specialize.py), so the lowered
source is plain loops and the subset of NumPy that Numba compiles:

* each `FusedGroup` (transpile/optimize/fusion.py) becomes one kernel (lowering/cpu/kernels.py): a
  loop nest over the group's shape (prange over the outer axis, or over chunks for full
  reductions, when the array is large), one scalar expression per elementwise equation,
  accumulators for the reductions; inputs are read once per element, only values needed
  later are written out;
* other equations become Numba-supported NumPy calls (np.dot, np.transpose, np.reshape, ...)
  with shapes written in sizes read from the arguments at the function's start
  (`x__n0 = x.shape[0]`; text.SizeNamer), so the text, and the compiled code, serve
  every batch size; sizes no argument has stay constants;
* values whose length depends on the data (x[mask], np.argwhere, x[:i]) and what reads
  them: Numba's own forms, their lengths read at run time (lowering/cpu/unsized.py);
* Python control flow (if / for range / while) is printed as is (the statements control flow
  brings, assign / setitem / tapes, in lowering/cpu/control.py; functions with collectives are
  split into compiled parts, lowering/cpu/segments.py).

Here: the Lowerer (statements and expressions of the main function), the module's assembly
(`lower`) and loading (`compile_module`). `Unlowerable` and the text of dtypes, constants and
shapes (lowering/cpu/text.py) are importable from here as well.

The module is written next to the generated NumPy code (content-hashed file name) and compiled
with cache=True, so Numba's on-disk cache (checked by runtime/diskcache.py) serves the next
process. A construct with no lowering raises `Unlowerable`; jit then runs the NumPy code.
"""
import sys
import linecache
import os
import re
import warnings

import numpy as np

from transpile.core import ir
from transpile.core.ir import Const, Eqn, IndexArg, SliceArg, TupleArg, Var
from transpile.lowering.cpu import advanced, checks as numba_checks
from transpile.lowering.cpu.control import check_conflicts, lower_stmt, pushed_tapes
from transpile.lowering.cpu.kernels import (kernel, describe, weak_int_checks,
                                            _promoted as promoted)
from transpile.lowering.cpu.unsized import lower_unsized, reads_unsized
from transpile.lowering.cpu.unsized_shapes import batched_product
from transpile.lowering.cpu.segments import has_collectives, segmented_main, compile_parts
from transpile.optimize.fusion import FusedGroup, scalar_template
from transpile.core.codegen import deferred_writes_last
from transpile.primitives.internal.adjoint_helpers import clip_mask, getitem_vjp, log_base, select_weight
from transpile.primitives.numpy.arrays import linspace
from transpile.primitives.internal.control import assign, write_back
from transpile.primitives.internal.debugging import debug_print, debug_printf
from transpile.primitives.numpy.linalg import det, inv, solve
from transpile.primitives.numpy.products import dot, matmul, outer
from transpile.primitives.numpy.nondiff import (arange, argmax, argmin, empty, empty_like, eye, full,
                                          full_like, identity_matrix, ones, ones_like, zeros,
                                          zeros_like)
from transpile.primitives.numpy.reductions import max_, mean, min_, prod, sum_
from transpile.primitives.numpy.structure import (array, astype, atleast_1d, atleast_2d, concatenate,
                                            copy, expand_dims, getitem, moveaxis, ravel, reshape,
                                            squeeze, stack, swapaxes, transpose)
from transpile.optimize.specialize_rewrites import BCAST
from transpile.lowering.cpu.text import (SizeNamer, Unlowerable, atom_const_text,
                                          dtype_ctor, shape_text)
from transpile.lowering.cpu.text import typed, unsigned_operand
from transpile_runtime.compile_worker import execute_module, module_name

PARALLEL_MIN_SIZE = 1 << 18


class Lowerer:
    def __init__(self, name, params, avals, core, parallel_min=PARALLEL_MIN_SIZE, threads=2,
                 in_place=()):
        self.name = name
        self.in_place = set(in_place)     # id() of setitems that may store in place
        self.core_body = []               # the body main() lowers (for same_buffer)
        self.owned = []                   # arguments written in place (alias_checks)
        self.params = params
        self.avals = avals
        # values whose length is read at run time (rank and dtype: their stand-in shape is
        # never written): lowering/cpu/unsized.py
        self.unsized = getattr(avals, "unsized", {})
        self.core = core
        self.kernels = []
        self.shared_kernels = {}    # a kernel's text with canonical names -> its name
        self.parallel_min = parallel_min
        self.threads = max(1, threads)
        self.last_loc = None
        self.breaks = []        # Unlowerable of each top-level statement run in NumPy
        self.allow_breaks = False
        self.pending_checks = []  # checks the expression being lowered needs before it

    # -- atoms ---------------------------------------------------------------------------------

    def av(self, a):
        return self.avals.get(a.name) if isinstance(a, Var) else None

    def fmt(self, a, dtype=None):
        if isinstance(a, Var):
            return a.name
        if isinstance(a, Const):
            return atom_const_text(a, dtype)
        if isinstance(a, TupleArg):
            inner = ", ".join(self.fmt(x) for x in a.items)
            return f"({inner},)" if len(a.items) == 1 else f"({inner})"
        raise Unlowerable(None, f"argument {a!r}")

    def same_buffer(self, value, dest):
        """Is `value` certainly `dest` itself: every binding of it (and of the names it comes
        from, around loops too) a copy of `dest` or of such a name, or a write into one in
        place (an argument written in place, optimize/no_raise.py)?"""
        if not isinstance(value, Var) or not isinstance(dest, Var):
            return False
        defs = {}
        for st in ir.walk_eqns(self.core_body):
            defs.setdefault(st.out, []).append(st)
        same = set(defs)        # the largest set closed under "comes from dest or the set"
        changed = True
        while changed:
            changed = False
            for name in list(same):
                if not all(self._from_one_of(st, same | {dest.name}) for st in defs[name]):
                    same.discard(name)
                    changed = True
        return value.name == dest.name or value.name in same

    def _from_one_of(self, st, names):
        if st.prim is assign:
            x = st.args["x"]
        elif id(st) in self.in_place or st.prim.returns_arg is not None:
            x = st.args["x" if st.prim.returns_arg is None else st.prim.returns_arg]
        else:
            return False
        return isinstance(x, Var) and x.name in names

    # -- main function -----------------------------------------------------------------------------

    def comment(self, loc, indent, out):
        if loc is None or loc == self.last_loc:
            return
        self.last_loc = loc
        text = self.core.source_lines.get((loc[0], loc[1]), "")
        tag = loc[2] + " " if len(loc) > 2 and loc[2] else ""
        where = f"line {loc[1]}" if loc[0] == self.core.filename else \
            f"{os.path.basename(loc[0])}:{loc[1]}"
        out.append(f"{indent}# {tag}{where}: {text}".rstrip())

    def block(self, stmts, indent, out):
        start = len(out)
        self._block(stmts, indent, out)
        if all(line.lstrip().startswith("#") for line in out[start:]):
            out.append(f"{indent}pass")     # (a body of comments only is no block)

    def shared_result(self, text, out):
        """(name, lines): a name holding the value of the call `text`, and the lines binding it.
        The statement right before this one in the same block made the same call (np.linalg.lstsq's
        solution, residuals and rank are three equations of one call): its name, no lines."""
        pos = getattr(self, "block_pos", None)
        shared = self.__dict__.setdefault("shared_calls", {})
        prev = shared.get(text)
        if pos is not None and prev is not None and prev[0] == pos[0] and prev[1] == pos[1] - 1:
            shared[text] = (pos[0], pos[1], prev[2])
            return prev[2], []
        name = f"{out}_all"
        if pos is not None:
            shared[text] = (pos[0], pos[1], name)
        return name, [f"{name} = {text}"]

    def _block(self, stmts, indent, out):
        for k, st in enumerate(stmts):
            self.block_pos = (id(stmts), k)     # (shared_result: the statement before)
            if isinstance(st, Eqn) and reads_unsized(self, st):
                lines = lower_unsized(self, st)     # a length read at run time
                if lines is not None:
                    self.comment(st.loc, indent, out)
                    out += [indent + line for line in lines]
                    continue
            if lower_stmt(self, st, indent, out):
                continue
            if isinstance(st, FusedGroup):
                self.comment(st.loc, indent, out)
                out.append(f"{indent}# {describe(st)}")
                out += [indent + l for l in kernel(self, st)]
            elif isinstance(st, Eqn) and st.prim is getitem_vjp:
                # zeros shaped like x with the cotangent written at a basic index
                self.comment(st.loc, indent, out)
                av = self.avals.get(st.out)
                if av is None:
                    raise Unlowerable(st, "unknown result shape")
                index = st.args["index"]
                if isinstance(index, IndexArg) and any(it is None for it in index.items):
                    out += self.newaxis_vjp(st, index, av, indent)
                    continue
                p = advanced.plan(self, st.args["x"], index, st)
                if p is not None:     # integer arrays broadcast together: np.add.at's loops
                    ct = st.args["ct"]
                    if isinstance(ct, Var) and self.av(ct) is None:
                        raise Unlowerable(st, "a cotangent of run-time length")
                    out.append(f"{indent}{st.out} = np.zeros({shape_text(av.shape)}, "
                               f"{dtype_ctor(av.dtype)})")
                    out += [indent + line for line in advanced.scatter(
                        self, st, st.out, p, self.fmt(ct), self.av(ct), op="+=")]
                    continue
                ix = self.index(index, st)
                out.append(f"{indent}{st.out} = np.zeros({shape_text(av.shape)}, "
                           f"{dtype_ctor(av.dtype)})")
                k = self.array_index(index)
                if k is None:
                    out.append(f"{indent}{st.out}[{ix}] = {self.fmt(st.args['ct'])}")
                else:
                    out += self.scatter_add(st, k, indent)
            elif isinstance(st, Eqn) and st.prim is write_back:
                # the caller's array receives what the function wrote into it
                dest, value = st.args["dest"], st.args["value"]
                if self.av(dest) is None or not self.av(dest).shape:
                    raise Unlowerable(st, "a write into a scalar argument")
                if not self.same_buffer(value, dest):    # (written in place: nothing to copy)
                    self.comment(st.loc, indent, out)
                    out.append(f"{indent}{self.fmt(dest)}[...] = {self.fmt(value)}")
            elif isinstance(st, Eqn) and st.prim is debug_print:
                # print() in the user's function: Numba prints scalars, arrays and strings
                self.comment(st.loc, indent, out)
                a = st.args
                if (a["sep"].value, a["end"].value) != (" ", "\n"):
                    raise Unlowerable(st, "print with sep= or end=")
                out.append(f"{indent}print({', '.join(self.fmt(v) for v in a['values'].items)})")
            elif isinstance(st, Eqn) and st.prim is debug_printf:
                # print(f"..."): str.format in object mode (Numba's print has no format)
                self.comment(st.loc, indent, out)
                a = st.args
                vals = "".join(f", {self.fmt(v)}" for v in a["values"].items)
                out.append(f"{indent}with objmode():")
                out.append(f"{indent}    print({a['template'].value!r}.format({vals[2:]}), "
                           f"end={a['end'].value!r})")
            elif isinstance(st, Eqn) and st.prim.check:
                self.comment(st.loc, indent, out)      # assert / raise
                numba_checks.lower_check(self, st, indent, out)
            elif isinstance(st, Eqn) and (stacked := batched_product(self, st)) is not None:
                self.comment(st.loc, indent, out)     # a stack of matrix products
                out += [indent + line for line in stacked]
            elif isinstance(st, Eqn):
                self.comment(st.loc, indent, out)
                form = self.row_form(st)
                if isinstance(form, list):      # statements that bind st.out
                    out += [indent + line for line in form]
                else:
                    self.pending_checks = []
                    text = form or self.expr(st)
                    out += [indent + line for line in self.pending_checks]
                    out.append(f"{indent}{st.out} = {text}")
            elif isinstance(st, ir.Comment):
                out.append(f"{indent}# {st.text}")
            elif isinstance(st, ir.If):
                out.append(f"{indent}if {self.fmt(st.cond)}:")
                self.block(st.body, indent + "    ", out)
                if st.orelse:
                    out.append(f"{indent}else:")
                    self.block(st.orelse, indent + "    ", out)
            elif isinstance(st, ir.ForRange):
                out.append(f"{indent}for {st.var} in range({self.fmt(st.start)}, "
                           f"{self.fmt(st.stop)}, {self.fmt(st.step)}):")
                self.block(st.body, indent + "    ", out)
            elif isinstance(st, ir.While):
                out.append(f"{indent}while True:")
                self.block(st.cond_body, indent + "    ", out) if st.cond_body else None
                out.append(f"{indent}    if not {self.fmt(st.cond)}:")
                out.append(f"{indent}        break")
                self.block(st.body, indent + "    ", out)
            elif isinstance(st, ir.Break):
                out.append(f"{indent}break")
            elif isinstance(st, ir.Continue):
                out.append(f"{indent}continue")
            else:
                raise Unlowerable(None, f"statement {type(st).__name__}")

    def row_form(self, e):
        """The row's own Numba form of this call (transpile/primitives/numba_forms.py), or
        None when it has none (the generic lowering below then decides)."""
        if e.prim.numba is None:
            return None
        if self.avals.get(e.out) is None or any(
                isinstance(a, Var) and self.av(a) is None for a in e.args.values()):
            raise Unlowerable(e, "unknown result shape")
        form = e.prim.numba(self, e)
        if form is None:
            raise Unlowerable(e, "no Numba form for these arguments")
        return form

    def expr(self, e):
        prim = e.prim
        name = prim.name         # spelled in the text: np.{name}
        out_av = self.avals.get(e.out)
        if out_av is None:
            raise Unlowerable(e, "unknown result shape")
        a = e.args
        x = a.get("x")
        if not out_av.shape:
            # scalar arithmetic (0-d values are scalars in the lowered code)
            tmpl = scalar_template(e) if (prim.elementwise or prim in (
                astype, BCAST, clip_mask, select_weight, log_base)) else None
            if tmpl is not None and prim.lower_py is not None and out_av.weak and all(
                    (self.av(v) is not None and self.av(v).weak) if isinstance(v, Var) else
                    isinstance(v, Const) and type(v.value) in (int, float, bool)
                    for v in a.values()):
                tmpl = prim.lower_py      # Python scalars: Python's errors (7 // 0 raises)
            if prim in (sum_, mean, max_, min_, prod) and self.av(x) is None:
                # every element of an array whose length is known only at run time
                return f"{dtype_ctor(out_av.dtype)}(np.{name}({self.fmt(x)}))"
            if prim in (sum_, mean, max_, min_, prod) and not self.av(x).shape:
                tmpl = "{x}"
            if tmpl is not None and all(isinstance(v, (Var, Const)) for v in a.values()
                                        if not isinstance(v, Const) or True):
                cdt = out_av.dtype if np.issubdtype(out_av.dtype, np.inexact) else None
                # number operands in the float result's dtype (NumPy computes int32 with
                # float32 in float64), except those read as they are (where's condition)
                cast = {k for k, v in a.items() if isinstance(v, Var) and cdt is not None and
                        k not in prim.uncast and self.av(v) is not None and
                        self.av(v).dtype != cdt and promoted(self.av(v).dtype, cdt)}
                vals = {k: (f"{dtype_ctor(cdt)}({v.name})" if k in cast else
                            f"np.uint64({v.name})" if unsigned_operand(v, self.av(v), out_av.dtype)
                            else v.name)
                        if isinstance(v, Var) else
                        atom_const_text(v, (cdt if k not in prim.uncast else None) or
                                        unsigned_operand(v, None, out_av.dtype))
                        for k, v in a.items() if isinstance(v, (Var, Const))}
                text = tmpl.replace("T(", f"{dtype_ctor(out_av.dtype)}(").format(**vals)
                checks = weak_int_checks([e], self.avals, self.fmt)
                if checks:          # (a Python int out of the integer result's range)
                    self.pending_checks = checks
                if np.issubdtype(out_av.dtype, np.number):
                    text = typed(text, tmpl, out_av.dtype, [
                        np.dtype(cdt) if k in cast else
                        (self.av(v).dtype if self.av(v) is not None else None)
                        if isinstance(v, Var) else _const_dtype(v, cdt) for k, v in a.items()])
                return text
        if prim in (matmul, dot):
            y = a["y"]
            xs, ys = self.av(x), self.av(y)
            if xs is None or ys is None or xs.ndim > 2 or ys.ndim > 2:
                raise Unlowerable(e, "matmul of arrays with more than 2 dimensions")
            dt = dtype_ctor(out_av.dtype)
            xt = self._cast(x, out_av.dtype)
            yt = self._cast(y, out_av.dtype)
            if out_av.dtype.kind in "iu":         # (Numba's np.dot: floats and complex only)
                if xs.ndim == 0 or ys.ndim == 0:
                    return f"{xt} * {yt}"
                helper = {(1, 1): "int_vecdot", (2, 1): "int_matvec", (1, 2): "int_vecmat",
                          (2, 2): "int_matmat"}[(xs.ndim, ys.ndim)]
                text = f"{helper}({xt}, {yt})"
                return f"{dt}({text})" if not out_av.shape else text
            if not out_av.shape:
                return f"{dt}(np.dot({xt}, {yt}))"
            if out_av.dtype.kind in "fc":         # (large products: NumPy's threaded BLAS)
                return f"blas_dot({xt}, {yt})"
            return f"np.dot({xt}, {yt})"
        if prim is outer:
            return f"np.outer({self._cast(x, out_av.dtype)}, {self._cast(a['y'], out_av.dtype)})"
        if prim is transpose:
            axes = a.get("axes", Const(None))
            if isinstance(axes, Const) and axes.value is not None:
                return f"np.transpose({self.fmt(x)}, {shape_text(axes.value)})"
            return f"np.transpose({self.fmt(x)})"
        if prim in (swapaxes, moveaxis):
            xs = self.av(x)
            perm = list(range(xs.ndim))
            if prim is swapaxes:
                i, j = a["axis1"].value % xs.ndim, a["axis2"].value % xs.ndim
                perm[i], perm[j] = perm[j], perm[i]
            else:
                perm = list(np.moveaxis(np.empty((1,) * 0 + tuple(range(1, xs.ndim + 1))),
                                        a["source"].value, a["destination"].value).shape)
                perm = [p - 1 for p in perm]
            return f"np.transpose({self.fmt(x)}, {shape_text(perm)})"
        if prim in (reshape, ravel, expand_dims, squeeze, atleast_1d, atleast_2d):
            xs = self.av(x)
            if xs is None:
                raise Unlowerable(e)
            if not xs.shape:
                return f"np.full({shape_text(out_av.shape)}, {self.fmt(x)})" if out_av.shape \
                    else self.fmt(x)
            if not out_av.shape:
                return f"{self.fmt(x)}.ravel()[0]"
            return f"np.ascontiguousarray({self.fmt(x)}).reshape({shape_text(out_av.shape)})"
        if prim in (zeros, ones, empty, zeros_like, ones_like, empty_like, full, full_like):
            fn = name.replace("_like", "")
            if not out_av.shape:      # shape (): a scalar, as every 0-d value is here (a
                # 0-d array would not join the scalars a loop carries: zeros_like(x[0]))
                fill = {"zeros": "0", "ones": "1", "empty": "0"}.get(fn) or \
                    self.fmt(a["fill_value"])
                return f"{dtype_ctor(out_av.dtype)}({fill})"
            if fn == "full":
                return f"np.full({shape_text(out_av.shape)}, {self.fmt(a['fill_value'])}, " \
                       f"{dtype_ctor(out_av.dtype)})"
            if fn == "zeros":     # large: NumPy's lazily zeroed pages (numba_memory.py)
                return f"zeros_lazy({shape_text(out_av.shape)}, {dtype_ctor(out_av.dtype)})"
            return f"np.{fn}({shape_text(out_av.shape)}, {dtype_ctor(out_av.dtype)})"
        if prim in (arange, linspace, eye, identity_matrix):
            keys = {arange: ("start", "stop", "step"), linspace: ("start", "stop", "num"),
                    eye: ("N", "M", "k"), identity_matrix: ("n",)}[prim]
            given = {k: a[k] for k in keys if k in a and not (isinstance(a[k], Const) and
                                                              a[k].value is None)}
            if prim is arange and "stop" not in given:      # np.arange(n, step=s): 0 .. n
                given = {"start": Const(0), "stop": given["start"],
                         **({"step": given["step"]} if "step" in given else {})}
            if prim is eye and "M" not in given:            # np.eye(n, k=1): n by n
                given = {"N": given["N"], "M": given["N"], **{k: v for k, v in given.items()
                                                              if k == "k"}}
            vals = [given[k] for k in keys if k in given]
            fn = "np.eye" if prim is identity_matrix else f"np.{name}"
            if prim is linspace and "num" not in a:
                vals = vals + [Const(50)]
            endpoint = a.get("endpoint", Const(True))
            if prim is linspace and not (isinstance(endpoint, Const) and endpoint.value):
                if not isinstance(vals[2], Const) or not isinstance(endpoint, Const):
                    raise Unlowerable(e, "endpoint=False with a traced num")
                # endpoint=False: the first num points of num + 1 with the endpoint
                return (f"np.linspace({self.fmt(vals[0])}, {self.fmt(vals[1])}, "
                        f"{int(vals[2].value) + 1})[:-1].astype({dtype_ctor(out_av.dtype)})")
            return f"{fn}({', '.join(self.fmt(v) for v in vals)}).astype({dtype_ctor(out_av.dtype)})"
        if prim is copy:
            xs = self.av(x)
            if xs is not None and xs.shape and xs.size * xs.dtype.itemsize >= (1 << 22):
                return f"fresh_copy({self.fmt(x)})"     # backed by huge pages, as NumPy's
            return f"{self.fmt(x)}.copy()" if xs is None or xs.shape else self.fmt(x)
        if prim is astype:
            return f"{self.fmt(x)}.astype({dtype_ctor(out_av.dtype)})"
        if prim is array:
            xs = self.av(x)
            if xs is not None and xs.dtype == out_av.dtype:
                return self.fmt(x)
            raise Unlowerable(e)
        if prim is getitem:
            index = a["index"]
            if isinstance(index, IndexArg) and (not index.items or (
                    len(index.items) == 1 and isinstance(index.items[0], TupleArg) and
                    not index.items[0].items)) and (
                    isinstance(x, Const) and np.ndim(x.value) == 0 or
                    isinstance(x, Var) and self.av(x) is not None and not self.av(x).shape):
                return self.fmt(x)          # a number read at (): the number itself
            if isinstance(index, IndexArg) and index.items == (Ellipsis,) and \
                    self.av(x) is not None:         # x[...]: Numba reads x[:, :] instead
                nd = self.av(x).ndim
                return f"{self.fmt(x)}[{', '.join([':'] * nd)}]" if nd else self.fmt(x)
            if isinstance(index, IndexArg) and any(it is None for it in index.items):
                # x[:, None]: Numba has no np.newaxis; the axes without it, then a reshape
                # (of a view, where the parts read are contiguous)
                rest = IndexArg(tuple(it for it in index.items if it is not None))
                part = f"{self.fmt(x)}[{self.index(rest, e)}]" \
                    if rest.items not in ((), (Ellipsis,)) else self.fmt(x)
                return f"np.ascontiguousarray({part}).reshape({shape_text(out_av.shape)})"
            return f"{self.fmt(x)}[{self.index(index, e)}]"
        if prim in (concatenate, stack):
            arrs = a["arrays"]
            if not isinstance(arrs, TupleArg):
                raise Unlowerable(e)
            axis = a.get("axis", Const(0)).value
            if prim is stack and all(not (self.av(v).shape if isinstance(v, Var) else
                                            np.shape(v.value)) for v in arrs.items):
                # scalars (Numba's np.stack takes arrays only): a 1-D array of them
                items = ", ".join(self._cast(v, out_av.dtype) for v in arrs.items)
                return f"np.array([{items}], dtype={dtype_ctor(out_av.dtype)})"
            items = ", ".join(self._cast(v, out_av.dtype) for v in arrs.items)
            return f"np.{name}(({items},), axis={axis})"
        if prim in (inv, det, solve):
            args = ", ".join(self.fmt(v) for v in a.values())
            return f"np.linalg.{name}({args})"
        if prim in (argmax, argmin):
            axis = a.get("axis", Const(None))
            if isinstance(axis, Const) and axis.value is None:
                return f"np.{name}({self.fmt(x)})"
            if isinstance(axis, Const) and isinstance(axis.value, (int, np.integer)) and \
                    not isinstance(axis.value, bool) and self.av(x) is not None and \
                    -self.av(x).ndim <= axis.value < self.av(x).ndim:
                return f"np.{name}({self.fmt(x)}, axis={int(axis.value) % self.av(x).ndim})"
        if prim in (sum_, mean, max_, min_, prod) and self.av(x) is not None \
                and not self.av(x).shape:
            return self.fmt(x)
        raise Unlowerable(e, "no Numba lowering")

    def _cast(self, a, dtype):
        av = self.av(a)
        if av is not None and av.dtype != np.dtype(dtype) and av.shape:
            return f"{self.fmt(a)}.astype({dtype_ctor(dtype)})"
        if isinstance(a, Var):
            return a.name
        return atom_const_text(a, dtype)

    def index(self, index, e):
        if not isinstance(index, IndexArg):
            raise Unlowerable(e, "index")
        if len(index.items) == 1 and isinstance(index.items[0], TupleArg) and \
                index.items[0].kind == "tuple":
            index = IndexArg(index.items[0].items)     # x[idx], idx = (i, j): x[i, j]
        parts = []
        arrays = 0
        for it in index.items:
            if it is None:
                raise Unlowerable(e, "np.newaxis in an index")
            if it is Ellipsis:
                parts.append("...")
            elif isinstance(it, SliceArg):
                lo = "" if it.lower is None else self.fmt(it.lower)
                hi = "" if it.upper is None else self.fmt(it.upper)
                parts.append(f"{lo}:{hi}" + (f":{self.fmt(it.step)}" if it.step is not None else ""))
            elif isinstance(it, Var):
                av = self.av(it) or self.unsized.get(it.name)   # (np.flatnonzero(m))
                if av is None or not np.issubdtype(av.dtype, np.integer) or len(av.shape) > 1:
                    raise Unlowerable(e, "advanced (array) indexing")
                if av.shape:
                    # Numba takes one 1-d integer array among basic indices (x[idx], x[:, idx]),
                    # and puts its axis where NumPy does
                    arrays += 1
                    if arrays > 1:
                        raise Unlowerable(e, "advanced indexing with more than one array")
                parts.append(it.name)
            elif isinstance(it, Const):
                if isinstance(it.value, tuple):
                    raise Unlowerable(e, "index")
                parts.append(atom_const_text(it))
        if arrays:
            # NumPy puts the array's axis where Numba does only when the integers and the
            # array stand side by side (x[1, idx], not x[1, :, idx]: that axis goes first)
            at = [k for k, it in enumerate(index.items) if not isinstance(it, SliceArg)
                  and it is not Ellipsis]
            if at[-1] - at[0] != len(at) - 1:
                raise Unlowerable(e, "an index array apart from the integer indices")
        if len(parts) == 1 and parts[0] != "...":
            return parts[0]
        return ", ".join(parts)

    def scatter_add(self, st, k, indent):
        """out[..., idx, ...] += ct as np.add.at does: one index at a time (an index that
        appears twice adds twice)."""
        items = st.args["index"].items
        idx = items[k].name
        j = f"j_{st.out}"
        at, ct_at = [], []
        for m, it in enumerate(items):
            if m == k:
                at.append(f"{idx}[{j}]")
                ct_at.append(j)
            elif it is Ellipsis:
                at.append("...")
                ct_at.append("...")
            elif isinstance(it, SliceArg):
                lo = "" if it.lower is None else self.fmt(it.lower)
                hi = "" if it.upper is None else self.fmt(it.upper)
                at.append(f"{lo}:{hi}" + (f":{self.fmt(it.step)}" if it.step is not None
                                          else ""))
                ct_at.append(":")
            else:
                at.append(self.fmt(it))
        ct = self.fmt(st.args["ct"])
        return [f"{indent}for {j} in range({idx}.shape[0]):",
                f"{indent}    {st.out}[{', '.join(at)}] += {ct}[{', '.join(ct_at)}]"]

    def newaxis_vjp(self, st, index, av, indent):
        """The cotangent of x[..., None, ...]: the cotangent without its new (length-1) axes,
        written at the index without them."""
        ct, ct_av = st.args["ct"], self.av(st.args["ct"])
        if ct_av is None or self.array_index(index) is not None:
            raise Unlowerable(st, "np.newaxis in an index")
        fixed = sum(1 for it in index.items if it is not None and it is not Ellipsis)
        new_axes, at = set(), 0
        for it in index.items:
            if it is None:
                new_axes.add(at)
                at += 1
            elif it is Ellipsis:
                at += av.ndim - fixed
            elif isinstance(it, SliceArg):
                at += 1
        shape = tuple(n for i, n in enumerate(ct_av.shape) if i not in new_axes)
        rest = IndexArg(tuple(it for it in index.items if it is not None))
        if rest.items in ((), (Ellipsis,)):
            if not av.ndim:
                raise Unlowerable(st, "np.newaxis of a scalar")
            ix = ", ".join([":"] * av.ndim)         # (Numba reads no x[...])
        else:
            ix = self.index(rest, st)
        return [f"{indent}{st.out} = np.zeros({shape_text(av.shape)}, {dtype_ctor(av.dtype)})",
                f"{indent}{st.out}[{ix}] = np.ascontiguousarray({self.fmt(ct)})"
                f".reshape({shape_text(shape)})"]

    def array_index(self, index):
        """The position of the 1-d index array in `index` (an IndexArg), or None."""
        for k, it in enumerate(index.items if isinstance(index, IndexArg) else ()):
            if isinstance(it, Var) and self.av(it) is not None and self.av(it).shape:
                return k
        return None

    def alias_checks(self):
        """Arguments written in place (optimize/no_raise.py) must not share memory with another
        array argument: the code would read what it already wrote. Checked before any write;
        where they do, the call raises ALIASED and runs the NumPy version instead."""
        arrays = [p for p in self.params if self.avals.get(p) is not None and self.avals[p].shape]
        lines = []
        for p in self.owned:
            others = [q for q in arrays if q != p]
            if p in arrays and others:
                test = " or ".join(f"overlaps({p}, {q})" for q in others)
                lines += ["    # written in place: another argument must not share its memory",
                          f"    if {test}:",
                          f"        raise ValueError(ALIASED)"]
        return lines

    def main(self, body, outs, origin, signature, header):
        half = sorted(n for n, av in self.avals.items()
                      if av is not None and getattr(av, "dtype", None) == np.float16)
        if half:            # Numba has no float16 (NumPy computes each op in float32, rounds)
            eqns = [e for st in body for e in (st.eqns + st.reductions if isinstance(
                st, FusedGroup) else ir.walk_eqns([st]))]
            loc = next((e.loc for e in eqns if e.loc and (e.out in half or any(
                isinstance(v, Var) and v.name in half for v in e.args.values()))), None)
            raise Unlowerable(None, "Numba has no float16", loc=loc,
                              construct=f"a float16 value ({half[0]})")
        check_conflicts(self, body)
        self.pushed_tapes = pushed_tapes(body)
        self.core_body = body
        if has_collectives(body):      # under pmap: compiled parts between the barriers
            return segmented_main(self, deferred_writes_last(body), outs, signature, header,
                                  "@njit(nogil=True, cache=True, error_model='numpy', boundscheck=True)")
        lines = []
        # sizes read from the arguments at run time (lowering/cpu/text.py), where the function is
        # one compiled function (the parts of a segmented one are left with constants)
        sizes = SizeNamer([(p, self.avals[p].shape) for p in self.params
                           if self.avals.get(p) is not None], local=True)
        try:
            with sizes:
                self.block(deferred_writes_last(body), "    ", lines)
        except Unlowerable:
            if self.pushed_tapes or not self.allow_breaks:   # (a tape lives in compiled code)
                raise
            # compiled parts with the statements Numba cannot compile run in NumPy between
            self.kernels, self.shared_kernels, self.last_loc = [], {}, None
            return segmented_main(self, deferred_writes_last(body), outs, signature, header,
                                  "@njit(nogil=True, cache=True, error_model='numpy', "
                                  "boundscheck=True)", self.breaks)
        with sizes:
            rets = [self.fmt(o) for o in outs]
        lines.append(f"    return ({', '.join(rets)},)" if rets else "    return ()")
        lines[:0] = sizes.prologue("    ") + self.alias_checks()
        text = header
        for k in self.kernels:
            text += "\n\n" + k
        # print(f"...") runs in object mode, which needs the GIL (as do rows' object-mode
        # forms: np.random.default_rng(seed))
        nogil = "" if any(e.prim is debug_printf or numba_checks.needs_gil(e)
                          for e in ir.walk_eqns(body)) or \
            any(line.lstrip().startswith("with objmode(") for line in lines) else \
            "nogil=True, "
        text += f"\n\n@njit({nogil}cache=True, error_model='numpy', boundscheck=True)\n"
        text += f"def {self.name}({', '.join(self.params)}):\n"
        text += f'    """{self.core.name} lowered for Numba; {signature}"""\n'
        text += "\n".join(lines) + "\n"
        return text


def _const_dtype(c, cdt):
    """The dtype a constant operand is written with (`const_text(v, cdt)`), None if unknown."""
    v = c.value if isinstance(c, Const) else None
    ok = isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_))
    return cdt if ok and cdt is not None else None


HEADER = """\
# Lowered by transpile.jit for Numba (CPU) from {origin}.
# {signature}
# versions: {versions}
# Regenerated whenever the source changes; edits here are not kept.
import numpy as np
from numba import njit, objmode, prange
from transpile_runtime.backends.numba_math import exp32, exp64, tanh32, tanh64
from transpile_runtime.backends.numba_int import (
    as_inexact, float_max_of, float_min_of, ldexp_exponent, nan_to_num_scalar, negative_power_base,
    np_floor_divide, np_fmod, np_left_shift, np_mod, np_power, np_reciprocal, np_right_shift,
    np_rint_keep_int, np_round_down, np_round_up, np_sign, py_divide, py_floor_divide, py_mod,
    py_power)
from transpile_runtime.backends.numba_arrays import triangle
from transpile_runtime.backends.numba_memory import (
    ALIASED, fresh_copy, large_pages, overlaps, zeros_lazy)
from transpile_runtime.backends.numba_sort import (
    NUMPY_SORT_MIN, argsort_stable, numpy_argsort, sort2, sort2_int, sort_lines)
from transpile_runtime.backends.numba_index import (
    c_ordered, distinct_sorted, same_value, same_values)
from transpile_runtime import prng
import math
from transpile_runtime.backends.numba_special import (
    digamma_scalar, erfinv_scalar, log_ndtr_scalar, logsumexp_all, norm_cdf_scalar,
    norm_logcdf_scalar, norm_logpdf_scalar, norm_logsf_scalar, norm_sf_scalar, t_logpdf_scalar,
    trigamma_scalar)
from transpile_runtime.backends.numba_linalg import eigh_lapack, svd_values_lapack
from transpile_runtime.backends.numba_products import blas_dot
from transpile_runtime.backends.numba_products import int_matmat, int_matvec
from transpile_runtime.backends.numba_products import int_vecdot, int_vecmat

FASTMATH = {{"reassoc", "contract"}}   # reductions may reorder sums (as XLA does); NaN/inf kept
"""


def lower(core, body, outs, avals, params, origin, signature, versions, threads=2,
          parallel_min=PARALLEL_MIN_SIZE, in_place=(), allow_breaks=False, owned=()):
    """The lowered module's source text; the entry function is named core.name + '__jit'.
    `allow_breaks`: statements Numba cannot compile run in NumPy between compiled parts."""
    name = core.name + "__jit"
    lw = Lowerer(name, params, avals, core, parallel_min=parallel_min, threads=threads,
                 in_place=in_place)
    lw.allow_breaks = allow_breaks
    lw.owned = sorted(owned)
    header = HEADER.format(origin=origin, signature=signature, versions=versions)
    text = lw.main(body, outs, origin, signature, header)
    return name, used_imports(text), lw.breaks


def used_imports(text):
    """The module with the header's imports cut to the names its code uses (and FASTMATH
    only where a kernel uses it). The header ends with the FASTMATH line (a module split at
    its collectives adds imports of its own before it)."""
    at = text.index("\nFASTMATH = ") + 1
    header_end = text.index("\n", at) + 1
    head, rest = text[:header_end], text[header_end:]

    def used(names):
        return [n for n in names if re.search(rf"\b{n}\b", rest)]

    out = []
    lines = head.split("\n")
    k = 0
    while k < len(lines):
        line = lines[k]
        m = re.match(r"from ([\w.]+) import \(?(.*)", line)
        if m:
            names_text = m.group(2)
            if line.endswith("("):             # a parenthesized list over several lines
                while not lines[k].rstrip().endswith(")"):
                    k += 1
                    names_text += " " + lines[k]
            names = [n.strip(" ()") for n in names_text.split(",") if n.strip(" ()")]
            keep = used(names)
            if keep:
                out.append(_import_line(m.group(1), keep))
        elif line == "import math":
            if used(["math"]):
                out.append(line)
        elif line.startswith("FASTMATH = "):
            if used(["FASTMATH"]):
                out.append(line)
        else:
            out.append(line)
        k += 1
    return "\n".join(out) + rest


def _import_line(module, names):
    line = f"from {module} import {', '.join(names)}"
    if len(line) <= 99:
        return line
    body, width = [], 4
    row = []
    for n in names:
        if row and width + len(", ".join(row + [n])) > 95:
            body.append("    " + ", ".join(row) + ",")
            row = []
        row.append(n)
    body.append("    " + ", ".join(row) + ")")
    return f"from {module} import (\n" + "\n".join(body)


_BLAS_DONE = False


def limit_numba_blas_threads():
    """Numba's np.dot calls SciPy's OpenBLAS. With prange loops already using the cores, and
    the small matrices of typical jit code, a threaded BLAS mostly spins (50x slower on a busy
    2-core machine), so compiled code uses it single-threaded, as XLA's CPU dot does.
    TRANSPILE_BLAS_THREADS=n overrides; NumPy's own BLAS is left alone."""
    global _BLAS_DONE
    if _BLAS_DONE:
        return
    _BLAS_DONE = True
    n = int(os.environ.get("TRANSPILE_BLAS_THREADS", "1") or 1)
    try:
        import scipy.linalg.cython_blas  # noqa: F401  (load it so it can be limited)
        from threadpoolctl import ThreadpoolController   # (lazy: with the first compiled call)
        for lib in ThreadpoolController().lib_controllers:
            if "scipy.libs" in (lib.filepath or "") or "scipy/" in (lib.filepath or ""):
                lib.set_num_threads(n)
    except Exception:       # threadpoolctl or scipy missing: leave BLAS as it is
        pass


def loaded(path, name):
    """The entry dispatcher of the module at `path` when this process has loaded it already
    (the file name hashes the text: another batch size whose lowered text is the same gets
    the same dispatcher, and Numba's own dispatch serves it without compiling), else None."""
    mod = sys.modules.get(module_name(path))
    if mod is not None and getattr(mod, "__file__", None) == path:
        return getattr(mod, name, None)
    return None


def quiet_performance_hints(path):
    """Numba's NumbaPerformanceWarning on generated code (np.dot of a non-contiguous slice) is
    about lines transpile wrote, which the user cannot change: not shown for the modules of
    this cache folder (a warning's module is its file's path). Installed again where a
    `warnings.catch_warnings()` block of the caller dropped it."""
    from numba.core.errors import NumbaPerformanceWarning   # (lazy: Numba is loaded by now)
    folder = re.escape(os.path.dirname(os.path.abspath(path)) + os.sep)
    for action, _, category, module, _ in warnings.filters:
        if action == "ignore" and category is NumbaPerformanceWarning and \
                getattr(module, "pattern", None) == folder:
            return
    warnings.filterwarnings("ignore", category=NumbaPerformanceWarning, module=folder)


def compile_module(text, path, name):
    """Exec the lowered module from its file; returns the entry dispatcher."""
    fn = loaded(path, name)
    if fn is not None:
        return fn
    if "np.dot(" in text or "blas_dot(" in text:
        limit_numba_blas_threads()
    # as a background compile's worker process executes it (the same module name: Numba
    # rebuilds a cached function's environment by importing its module by name)
    quiet_performance_hints(path)
    ns = execute_module(text, path)
    linecache.cache[path] = (len(text), None, text.splitlines(True), path)
    if compile_parts(ns):
        ns[name].precompiled = True       # parts split at collectives, compiled already
    return ns[name]

