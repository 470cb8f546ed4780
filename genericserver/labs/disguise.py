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
from typing import Any

from genericserver.testing.variants import Variant


def switch_in_for_good(bug: Variant) -> None:
    """Swap ``bug``'s pieces in, each disguised as the one it replaces, for the rest of the
    process (a forked child that exits when its one pytest run is over), keeping nothing that
    names the bug: no context manager, no saved originals."""
    for owner, attr, replacement in bug.patches():
        setattr(owner, attr, disguised(replacement, inspect.getattr_static(owner, attr)))


def disguised(replacement: Any, original: Any) -> Any:
    """``replacement`` made to look like ``original`` to introspection (see the module
    docstring); anything but a function (or a static method of one) is returned as it is."""
    wrapper = type(replacement) if isinstance(replacement, (staticmethod, classmethod)) else None
    fn = replacement.__func__ if wrapper is not None else replacement
    model = original.__func__ if isinstance(original, (staticmethod, classmethod)) else original
    if not isinstance(fn, types.FunctionType) or not isinstance(model, types.FunctionType):
        return replacement
    model_code = model.__code__
    code = _recode(fn.__code__, model_code.co_filename).replace(
        co_name=model_code.co_name, co_qualname=model_code.co_qualname, co_firstlineno=model_code.co_firstlineno)
    namespace = dict(fn.__globals__, __name__=model.__globals__.get("__name__"), __file__=model.__globals__.get("__file__"))
    twin = types.FunctionType(code, namespace, model.__name__, fn.__defaults__, fn.__closure__)
    twin.__kwdefaults__ = fn.__kwdefaults__
    twin.__module__, twin.__qualname__, twin.__doc__ = model.__module__, model.__qualname__, model.__doc__
    twin.__annotations__ = dict(model.__annotations__)
    return wrapper(twin) if wrapper is not None else twin


def _recode(code: types.CodeType, filename: str) -> types.CodeType:
    """``code``, and every function and class body compiled inside it, naming ``filename``."""
    consts = tuple(_recode(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)
