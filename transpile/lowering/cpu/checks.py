"""`assert` and `raise` of transformed code, lowered for Numba (CPU): Numba raises built-in
exceptions itself; a message with run-time values is formatted in object mode first
(str.format, the same text as the NumPy version)."""

from transpile.primitives.internal.debugging import batch_check_assert, raise_error


def needs_gil(eqn):
    """A message with run-time values is formatted in object mode (which takes the GIL)."""
    return eqn.prim.check and bool(eqn.args["values"].items)


def lower_check(low, st, indent, out):
    """Append the lines of one raise_error / check_assert equation to `out`."""
    a = st.args
    exc = "AssertionError" if st.prim is not raise_error else a["exc"].value
    template = a["template"].value
    values = [low.fmt(v) for v in a["values"].items]
    body = indent
    if st.prim is not raise_error:
        cond = low.fmt(a["cond"])
        test = f"np.all({cond})" if st.prim is batch_check_assert else cond
        out.append(f"{indent}if not {test}:")
        body = indent + "    "
    if template is None:
        out.append(f"{body}raise {exc}")
    elif not values:
        out.append(f"{body}raise {exc}({template.format()!r})")
    else:
        out.append(f"{body}with objmode(msg_text='unicode_type'):")
        out.append(f"{body}    msg_text = {template!r}.format({', '.join(values)})")
        out.append(f"{body}raise {exc}(msg_text)")
