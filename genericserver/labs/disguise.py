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

The disguise is for the check's runs only. Elsewhere (``lab start``, the pytest plugin, the
replay debugger) the replacement keeps its own file and line, so that pdb shows a pair the code
that really runs when they step into it.
"""

from __future__ import annotations

import inspect
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
