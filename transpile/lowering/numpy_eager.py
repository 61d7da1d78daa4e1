"""NumPy backend: run the generated NumPy code as is (also jit's fallback)."""


def compile_plan(plan):
    return plan.eager_callable()
