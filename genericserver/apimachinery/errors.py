"""Port of k8s.io/apimachinery/pkg/util/errors/errors.go (v1.36.0).

An :class:`Aggregate` is one exception standing for several: the pre-shutdown hooks' failures
come back as one. Its message is Go's: a single error reads as itself; several read as
``[a, b]`` with repeated messages shown once (nested aggregates are looked into); an empty list
is no error at all, so :func:`new_aggregate` returns ``None`` for it.

Go's ``errors.Is`` becomes :func:`is_`: an error matches a target that is the same object, that
compares equal, or (for an exception class) that it is an instance of; an error may also answer
for itself with an ``is_(target)`` method, and Go's ``%w`` wrapping is Python's ``raise ... from``
(``__cause__``).
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional, Sequence

from genericserver import runtime as rt

Matcher = Callable[[BaseException], bool]


class Aggregate(Exception):
    """Several errors as one. Build it with :func:`new_aggregate`, which never makes an empty one."""

    def __init__(self, errs: Sequence[BaseException]):
        self._errs = list(errs)
        super().__init__(*self._errs)

    def errors(self) -> list[BaseException]:
        return list(self._errs)

    def __str__(self) -> str:
        if not self._errs:
            return ""  # cannot come from new_aggregate
        if len(self._errs) == 1:
            return str(self._errs[0])
        seen: list[str] = []

        def note(err: BaseException) -> bool:
            msg = str(err)
            if msg not in seen:
                seen.append(msg)
            return False

        self._visit(note)
        if len(seen) == 1:
            return seen[0]
        return "[" + ", ".join(seen) + "]"

    def __repr__(self) -> str:
        return f"Aggregate({self._errs!r})"

    def is_(self, target: object) -> bool:
        """True if any error inside (nested aggregates included) matches ``target``; stops at the first."""
        return self._visit(lambda err: is_(err, target))

    def _visit(self, fn: Matcher) -> bool:
        # Our own aggregates are walked all the way down; another Aggregate-like error only one level.
        for err in self._errs:
            if isinstance(err, Aggregate):
                if err._visit(fn):
                    return True
            elif callable(getattr(err, "errors", None)):
                if any(fn(nested) for nested in err.errors()):  # type: ignore[attr-defined]
                    return True
            elif fn(err):
                return True
        return False


def new_aggregate(errlist: Optional[Iterable[Optional[BaseException]]]) -> Optional[Aggregate]:
    """An Aggregate of the non-``None`` errors, or ``None`` when there are none."""
    errs = [e for e in (errlist or ()) if e is not None]
    if not errs:
        return None
    return Aggregate(errs)


def is_(err: Optional[BaseException], target: object) -> bool:
    """Go's ``errors.Is``, following ``__cause__`` the way Go follows ``Unwrap``."""
    while err is not None:
        if err is target:
            return True
        if isinstance(target, type) and isinstance(err, target):
            return True
        try:
            if err == target:
                return True
        except Exception:
            pass
        own = getattr(err, "is_", None)
        if callable(own) and own(target):
            return True
        err = err.__cause__
    return False


def filter_out(err: Optional[BaseException], *fns: Matcher) -> Optional[BaseException]:
    """Drop the errors any matcher accepts; aggregates are filtered recursively (and may vanish)."""
    if err is None:
        return None
    if isinstance(err, Aggregate):
        return new_aggregate(_filter_errors(err.errors(), *fns))
    if any(fn(err) for fn in fns):
        return None
    return err


def _filter_errors(errs: Iterable[BaseException], *fns: Matcher) -> list[BaseException]:
    kept = []
    for err in errs:
        r = filter_out(err, *fns)
        if r is not None:
            kept.append(r)
    return kept


def flatten(agg: Optional[Aggregate]) -> Optional[Aggregate]:
    """One flat Aggregate out of nested ones (``None`` if nothing is left)."""
    if agg is None:
        return None
    flat: list[BaseException] = []
    for err in agg.errors():
        if isinstance(err, Aggregate):
            inner = flatten(err)
            if inner is not None:
                flat.extend(inner.errors())
        elif err is not None:
            flat.append(err)
    return new_aggregate(flat)


def reduce(err: Optional[BaseException]) -> Optional[BaseException]:
    """An Aggregate of one error becomes that error; of none, ``None``; anything else is kept."""
    if isinstance(err, Aggregate):
        errs = err.errors()
        if len(errs) == 1:
            return errs[0]
        if not errs:
            return None
    return err


def create_aggregate_from_message_count_map(m: Optional[dict[str, int]]) -> Optional[Aggregate]:
    """Deprecated in Go too: one error per message, ``" (repeated N times)"`` when N > 1."""
    if m is None:
        return None
    errs: list[BaseException] = []
    for msg, count in m.items():
        suffix = f" (repeated {count} times)" if count > 1 else ""
        errs.append(Exception(f"{msg}{suffix}"))
    return new_aggregate(errs)


def aggregate_goroutines(*funcs: Callable[[], Optional[BaseException]]) -> Optional[Aggregate]:
    """Run each function in its own goroutine; aggregate the errors they return (or raise)."""
    results: list[Optional[BaseException]] = [None] * len(funcs)
    done = []

    def run(i: int, fn: Callable[[], Optional[BaseException]]) -> None:
        try:
            results[i] = fn()
        except Exception as exc:  # Go's funcs return errors; a raised one counts the same
            results[i] = exc

    for i, fn in enumerate(funcs):
        done.append(rt.go(run, i, fn, name=f"aggregate-goroutines-{i}").done)
    rt.wait_all(done)
    return new_aggregate(results)
