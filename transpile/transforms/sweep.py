"""What reverse and forward mode share: the SSA form of the function, which names carry a
derivative, and a builder for the statements a sweep emits."""
from transpile.normalize import Builder
from transpile.transforms.rename import ssa


class Sweep:
    def __init__(self, core, wrt, namer):
        from transpile.transforms.reverse import active_vars
        self.namer = namer
        self.body, self.outs = ssa(core, self.namer)
        self.params = core.params
        self.wrt = [core.params[i] for i in wrt]
        self.active = active_vars(self.body, self.wrt)
        self.b = Builder(self.namer)

    def sub(self, fn):
        """Run fn with a fresh statement list; return what it emitted."""
        saved = self.b.body
        self.b.body = []
        try:
            fn()
        finally:
            body, self.b.body = self.b.body, saved
        return body
