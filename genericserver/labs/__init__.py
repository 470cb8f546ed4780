"""The workshop in a box: bug hunts from the real history of the shutdown, and a what-if exercise (no Go twin).

``genericserver lab list`` shows the labs; ``genericserver lab start NAME`` switches one lab's bug
in for everything run from the current directory; the learner finds it with the tools of the
project and writes a test (or a replay file) that catches it; ``genericserver lab check FILE``
says whether it does. docs/workshop.md is the two-hour route through them.

The pieces:

* :mod:`.registry`: the labs, as data (:class:`Lab`). Each bug hunt names the upstream issues
  and pull requests of kube-apiserver, apimachinery, the kubelet, kubectl or Contour it comes
  from, the Go file and function to open (a v1.36.0 link) and its Python twin, the tools that
  find it, the task, a hint, its bug and the project's answer (``answers/``);
* the bugs are variants of :mod:`genericserver.testing.variants` - the sixteen known-bad ones
  where one of them is a real historical bug, and the historical ones of its ``history`` and
  ``cluster`` modules - switched in by :meth:`~genericserver.testing.variants.Variant.switched_in`
  through seams the code already has: no file is ever edited;
* :mod:`.state`: ``.genericserver-lab``, the state file ``start`` writes and ``stop`` removes;
  the ``genericserver`` command, ``python -m genericserver.testing.replay`` and the pytest plugin
  :mod:`.pytest_plugin` read it at start-up and run with the bug switched in;
* :mod:`.check`: an answer fails with the bug and passes without it (a what-if answer: its
  rollout loses nothing); a test file runs in :mod:`.forkrun`'s pytest processes, with the bug
  disguised as what it replaces (:mod:`.disguise`), so that only its behaviour tells the runs
  apart;
* :mod:`.cli`: ``genericserver lab``.
"""

from __future__ import annotations

from genericserver.labs.registry import LABS, Lab, lab, names

__all__ = ["LABS", "Lab", "lab", "names"]
