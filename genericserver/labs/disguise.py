"""A lab's bug switched in so that a test cannot tell it is there but by what it does (no Go twin).

``genericserver lab check`` runs a pair's test once with the bug and once without, and the
test must judge behaviour, not the switch. A variant (:mod:`genericserver.testing.variants`)
swaps a function for one written in ``testing/variants/``, and that function says so to anyone
who asks: its ``__module__``, its source file (``inspect.getsourcefile``), its code's file and
name in every stack frame it runs in. So in the check's runs (:mod:`genericserver.labs.forkrun`)
each replacement is :func:`disguised` as the function it replaces first:

* its ``__module__``, ``__name__``, ``__qualname__`` and ``__doc__`` are the original's;
* its code (and the code of the functions it defines inside) names the original's file,
  function name and first line, so ``inspect.getsourcefile`` and ``inspect.getsource`` give the
  original's, and so do the frames it runs in (``f_code.co_filename``, ``co_name``);
* its globals are a copy of its own module's with the original's ``__name__`` and ``__file__``
  (what a frame's ``f_globals`` says about the module).

Only the bytecode differs, which is the bug. What a test can still tell apart is what it can
only see by reading the bug's own workings: the bytecode (``co_code``), closure cells, the
objects a bug adds (the audit wrapper's class, the goroutine a bug starts and its name), the
line numbers inside the replaced function (a log line's ``file:line``, a traceback through the
bug: the original's file, at the bug's own count of lines). Such a test is not looking at
behaviour either, and the workshop says so. A function that replaces a *value* (Contour's
backoff) is left as it is: the value is the behaviour.

One of those is refused: a test that compares the live function's bytecode with the code
compiled from its source file. Once a test is caught, the check runs it once more on the server
as it is, with each function the bug replaces :func:`recompiled` from its own source with one
unused local variable more (the same behaviour, other bytecode): a test that fails there looks
at the bytecode (:func:`recompile_for_good`).

The disguise is for the check's runs only. Elsewhere (``lab start``, the pytest plugin, the
replay debugger) the replacement keeps its own file and line, so that pdb shows a pair the code
that really runs when they step into it.
"""

from __future__ import annotations

import ast
import inspect
import pathlib
import types
from typing import Any, Optional

from genericserver.testing.variants import Variant


def switch_in_for_good(bug: Variant) -> None:
    """Swap ``bug``'s pieces in, each disguised as the one it replaces, for the rest of the
    process (a forked child that exits when its one pytest run is over), keeping nothing that
    names the bug: no context manager, no saved originals. A class the bug defines for its own
    use (the audit wrapper of audit-shutdown-before-drain) is said to come from where the first
    function it replaces comes from, and so are its methods' frames."""
    patches = [(owner, attr, replacement, inspect.getattr_static(owner, attr)) for owner, attr, replacement in bug.patches()]
    for owner, attr, replacement, original in patches:
        setattr(owner, attr, disguised(replacement, original))
    model = next((_function(original) for *_, original in patches if _function(original) is not None), None)
    if model is not None:
        for helper in vars(type(bug)).values():
            if inspect.isclass(helper):
                _disguise_helper_class(helper, model)


def disguised(replacement: Any, original: Any) -> Any:
    """``replacement`` made to look like ``original`` to introspection (see the module
    docstring); anything but a function (or a static method of one) is returned as it is."""
    fn, model = _function(replacement), _function(original)
    if fn is None or model is None:
        return replacement
    twin = _rehomed(fn, model)
    twin.__code__ = twin.__code__.replace(co_name=model.__code__.co_name, co_qualname=model.__code__.co_qualname,
                                          co_firstlineno=model.__code__.co_firstlineno)
    twin.__name__, twin.__qualname__, twin.__doc__ = model.__name__, model.__qualname__, model.__doc__
    twin.__annotations__ = dict(model.__annotations__)
    return type(replacement)(twin) if isinstance(replacement, (staticmethod, classmethod)) else twin


def _function(value: Any) -> Optional[types.FunctionType]:
    """The plain function ``value`` is, or wraps as a static or class method; else None."""
    fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
    return fn if isinstance(fn, types.FunctionType) else None


def _rehomed(fn: types.FunctionType, model: types.FunctionType) -> types.FunctionType:
    """A copy of ``fn`` whose code (and the code inside it) names ``model``'s file, whose
    ``__module__`` is ``model``'s, and whose globals are its own with ``model``'s module name."""
    namespace = dict(fn.__globals__, __name__=model.__globals__.get("__name__"), __file__=model.__globals__.get("__file__"))
    twin = types.FunctionType(_recode(fn.__code__, model.__code__.co_filename), namespace, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    twin.__kwdefaults__, twin.__doc__ = fn.__kwdefaults__, fn.__doc__
    twin.__qualname__, twin.__module__ = fn.__qualname__, model.__module__
    return twin


def _disguise_helper_class(cls: type, model: types.FunctionType) -> None:
    cls.__module__, cls.__qualname__ = model.__module__, cls.__name__
    for name, value in list(vars(cls).items()):
        fn = _function(value)
        if fn is not None:
            twin = _rehomed(fn, model)
            twin.__qualname__ = f"{cls.__name__}.{fn.__name__}"
            setattr(cls, name, type(value)(twin) if fn is not value else twin)


def _recode(code: types.CodeType, filename: str) -> types.CodeType:
    """``code``, and every function and class body compiled inside it, naming ``filename``."""
    consts = tuple(_recode(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


UNUSED_LOCAL = "_recompiled_by_lab_check"
RECOMPILED = "recompiled:"  # a forked check run's name for Recompiled(the bug of the lab named after it)


class Recompiled(Variant):
    """The server as it is, with each function ``bug`` replaces swapped for itself
    :func:`recompiled`: the same behaviour, other bytecode."""

    def __init__(self, bug: Variant):
        self.bug = bug

    def patches(self) -> list[tuple[Any, str, Any]]:
        patches = []
        for owner, attr, _ in self.bug.patches():
            original = inspect.getattr_static(owner, attr)
            fn = _function(original)
            if fn is not None:
                twin = recompiled(fn)
                patches.append((owner, attr, type(original)(twin) if isinstance(original, (staticmethod, classmethod)) else twin))
        return patches


def recompile_for_good(bug: Variant) -> None:
    """:class:`Recompiled` switched in for the rest of a forked child's life (as
    :func:`switch_in_for_good` does a bug)."""
    for owner, attr, twin in Recompiled(bug).patches():
        setattr(owner, attr, twin)


def recompiled(fn: types.FunctionType) -> types.FunctionType:
    """``fn`` compiled again from its source file with one more statement, an assignment to an
    unused local before its first (after its docstring), on that statement's line: it does what
    ``fn`` does, its file, name and lines are ``fn``'s, and its ``co_code`` is not."""
    code = fn.__code__
    tree = ast.parse(pathlib.Path(code.co_filename).read_text(), code.co_filename)
    node = next(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                and n.name == code.co_name and min([n.lineno, *(d.lineno for d in n.decorator_list)]) == code.co_firstlineno)
    docstring = isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant) and len(node.body) > 1
    first = node.body[1 if docstring else 0]
    unused = ast.copy_location(ast.Assign(targets=[ast.Name(UNUSED_LOCAL, ast.Store())], value=ast.Constant(None)), first)
    node.body.insert(1 if docstring else 0, ast.fix_missing_locations(unused))
    futures = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    module = compile(ast.Module(body=[*futures, node], type_ignores=[]), code.co_filename, "exec", dont_inherit=True)
    body = next(c for c in module.co_consts if isinstance(c, types.CodeType) and c.co_name == code.co_name)
    twin = types.FunctionType(_requalified(body, code.co_name, code.co_qualname), fn.__globals__, fn.__name__,
                              fn.__defaults__, fn.__closure__)
    twin.__kwdefaults__, twin.__doc__, twin.__qualname__, twin.__module__ = fn.__kwdefaults__, fn.__doc__, fn.__qualname__, fn.__module__
    twin.__annotations__, twin.__dict__ = dict(fn.__annotations__), dict(fn.__dict__)
    return twin


def _requalified(code: types.CodeType, old: str, new: str) -> types.CodeType:
    """``code`` and the code inside it with qualified names under ``new`` instead of ``old``
    (compiled alone, a method's code is named as a module's function)."""
    consts = tuple(_requalified(c, old, new) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_qualname=new + code.co_qualname[len(old):] if code.co_qualname.startswith(old) else code.co_qualname,
                        co_consts=consts)
