"""Answer to the lab audit-finished-before-flush: the buffered audit backend loses nothing at shutdown (no Go twin).

lincheck runs two goroutines against one buffered backend - g0 sends two events and shuts it
down, g1 sends one - under a schedule with one preemption, and checks that some order of the
calls fits the model "every event accepted before shutdown() returned has been handed over"
(kubernetes/kubernetes#50026, #50577). The schedule is the one the lincheck hunt shrinks to.
"""

from genericserver.testing import lincheck
from genericserver.testing.choosers import expand
from genericserver.testing.lincheck import LinScenario, Op
from genericserver.testing.lincheck_targets import TARGETS


def test_shutdown_returns_only_after_every_accepted_event_is_handed_over():
    scenario = LinScenario(((Op("process", (0,)), Op("process", (0,)), Op("shutdown")), (Op("process", (0,)),)))
    target = TARGETS["AuditBuffered"]
    history = lincheck.run_history(target, scenario, expand({20: 1}))
    why = lincheck.verdict(target, history)
    assert why is None, why + "\n" + lincheck.format_history(history)
