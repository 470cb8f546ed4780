"""A starter test for a lab whose answer is a test file (no Go twin).

``genericserver lab new-test FILE`` writes it and ``lab start`` says so. The starter is the
project's answer with the answer taken out: the same imports and set-up (the API a pair needs, the
simulation, the scenario the task describes), the module docstring replaced by the lab's task,
comments gone, and every ``assert`` written directly in a test function replaced by one
placeholder that fails with the bug and without it. What such an assertion ran (``Simulation().
run(main)``, a request) stays, its value named ``result`` (``result_2``...) to assert on; only
the value it was compared with goes. A pair fills the placeholder with what the
task asks, runs the file with the bug (``pytest -p genericserver.labs.pytest_plugin FILE``) and
checks it (``genericserver lab check FILE``).
"""

from __future__ import annotations

import ast
import textwrap

from genericserver.labs.registry import Lab

PLACEHOLDER = "PLACEHOLDER: replace this line with the assertion the task asks for"


def has_starter(lab: Lab) -> bool:
    return lab.answer_path.suffix == ".py"


def _placeholder() -> ast.stmt:
    return ast.parse(f"assert False, {PLACEHOLDER!r}").body[0]


class _TakeOutAssertions(ast.NodeTransformer):
    """In each ``test_*`` function, the asserts at its own level become one placeholder at its
    end; asserts inside the helpers it defines (set-up that waits, say) stay."""

    def __init__(self) -> None:
        self.taken: list[list[str]] = []

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        if not node.name.startswith("test"):
            return node
        kept: list[ast.stmt] = []
        taken: list[str] = []
        for stmt in node.body:
            if not isinstance(stmt, ast.Assert):
                kept.append(stmt)
                continue
            test = stmt.test
            if isinstance(test, ast.Compare) and any(isinstance(n, ast.Call) for n in ast.walk(test.left)):
                # what the assertion runs stays (the simulation, the request): its value gets a
                # name to assert on; the value it was compared with goes
                name = f"result_{len(taken) + 1}" if taken else "result"
                kept.append(ast.Assign(targets=[ast.Name(name, ast.Store())], value=test.left, lineno=0))
                test = ast.Compare(left=ast.Name(name, ast.Load()), ops=test.ops, comparators=test.comparators)
                stmt = ast.Assert(test=test, msg=stmt.msg)
            taken.append(ast.unparse(stmt))
        if taken:  # one placeholder, last: every name the set-up defines is there to assert on
            kept.append(_placeholder())
        node.body = kept
        self.taken.append(taken)
        return node


def starter(lab: Lab) -> str:
    """The starter test of ``lab`` (its answer must be a ``.py`` file)."""
    tree = ast.parse(lab.answer_path.read_text())
    if ast.get_docstring(tree) is not None:
        tree.body = tree.body[1:]
    _TakeOutAssertions().visit(tree)
    task = textwrap.fill(lab.task, 92)
    head = f'"""Starter for lab {lab.name}: {lab.title}.\n\n{task}\n"""\n\n'
    return head + ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def answer_assertions(lab: Lab) -> list[list[str]]:
    """The assertions the starter took out of each test function, in order (for the tests)."""
    taker = _TakeOutAssertions()
    taker.visit(ast.parse(lab.answer_path.read_text()))
    return taker.taken


def fill(source: str, assertions: list[list[str]]) -> str:
    """``source`` with its placeholders, in order, replaced by ``assertions`` (the test functions'
    own, in the order :func:`answer_assertions` gives them)."""
    lines = source.splitlines()
    out, n = [], 0
    for line in lines:
        if PLACEHOLDER in line:
            indent = line[: len(line) - len(line.lstrip())]
            while not assertions[n]:  # (a test function with nothing taken out has no placeholder)
                n += 1
            out += [indent + a for a in assertions[n]]
            n += 1
        else:
            out.append(line)
    return "\n".join(out) + "\n"
