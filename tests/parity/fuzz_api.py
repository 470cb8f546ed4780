"""The differential fuzzer (`make parity-fuzz`): kube-apiserver v1.36.0 as the oracle for requests
nobody picked.

Hypothesis draws sequences from the grammar of api_grammar.py; each runs in a fresh namespace on
kube-apiserver (reference/pair.py, built by `make reference`, on its own etcd) and on one
`genericserver serve`, both started once and kept up across examples. The answers are compared
as the recorded corpora compare them (api.py's masking rule, then api_rules.py: LEFT_OUT, ASIDES,
and the RULES that classify each known cause). The first exchange that differs and matches no rule
fails the example; Hypothesis shrinks the sequence to the smallest that still fails, and the
result is printed side by side and appended to tests/parity/fuzz-findings.md.

    python tests/parity/fuzz_api.py [--requests 5000] [--seed N] [--findings PATH]

It runs in rounds of Hypothesis examples (each round its own seed, from --seed on) until
--requests requests went to each server; it ends with a summary: requests, examples, the
differences each rule classified, and the time taken.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent / "reference"))

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.errors import FlakyFailure  # noqa: E402

import pair  # noqa: E402
from parity import api, api_grammar, generated, lifecycle  # noqa: E402

FINDINGS = HERE / "fuzz-findings.md"


class Difference(AssertionError):
    """An exchange that differs and matches no rule; its text is the side-by-side report."""


class Serve:
    """`genericserver serve` as the recorders start kube-apiserver: TLS with the test certificate and
    the same token file."""

    def __init__(self) -> None:
        self.dir = tempfile.TemporaryDirectory()
        tokens = Path(self.dir.name) / "tokens.csv"
        tokens.write_text(pair.TOKENS)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "genericserver", "serve", "--secure-port", "0", "--bind-address=127.0.0.1",
             f"--tls-cert-file={api.CERT}", f"--tls-private-key-file={api.CERT.with_name('localhost-key.pem')}",
             f"--token-auth-file={tokens}"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            cwd=str(HERE.parent.parent))
        self.target = lifecycle.ProcessTarget(self.proc)
        self.port = self.target.port

    def stop(self) -> None:
        self.target.signal(15)
        try:
            self.target.wait(lifecycle.WAIT)
        finally:
            self.target.kill()
            self.dir.cleanup()


class Fuzzer:
    def __init__(self, kube_port: int, our_port: int) -> None:
        self.kube, self.ours = generated.Client(kube_port), generated.Client(our_port)
        self.namespaces = 0
        self.requests = 0
        self.examples = 0
        self.classified: collections.Counter = collections.Counter()

    def check(self, steps: list[dict]) -> None:
        """One sequence on both servers, in a fresh namespace; a Difference if an exchange differs
        and no rule says why."""
        self.namespaces += 1
        ns = f"fz-{self.namespaces}"
        generated.make_namespace(self.kube, ns)
        kube_answers = generated.run(self.kube, steps, ns)
        our_answers = generated.run(self.ours, steps, ns)
        self.requests += len(steps)
        self.examples += 1
        compared = generated.compare_sequence(steps, kube_answers, our_answers, ns)
        for i, c in enumerate(compared):
            if c.differs and c.rule is None:
                before = "\n".join(f"  {j + 1}. {p.request['method']} {p.request['path']}"
                                   + (f"\n       body: {p.request['body'][:600]}" if p.request.get("body") else "")
                                   + f"\n       kube-apiserver {p.kube['status']}, serve {p.ours['status']}"
                                   + (f" (differs: rule {p.rule})" if p.differs else " (the same answer)")
                                   for j, p in enumerate(compared[:i]))
                raise Difference(f"sequence of {len(steps)} in namespace {ns}; exchange {i + 1} differs, matching no rule"
                                 + (f"\nbefore it:\n{before}" if before else "") + "\n" + generated.show(c))
        for c in compared:
            if c.differs:
                self.classified[c.rule] += 1

    def round(self, round_seed: int, examples: int) -> None:
        @seed(round_seed)
        @settings(max_examples=examples, deadline=None, database=None, derandomize=False, print_blob=False,
                  phases=[Phase.generate, Phase.shrink], report_multiple_bugs=False,
                  suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
        @given(st.data())
        def example(data: st.DataObject) -> None:
            self.check(api_grammar.sequence(api_grammar.HypothesisDrawer(data.draw)))

        example()


def append_finding(text: str, args: argparse.Namespace) -> None:
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    with FINDINGS.open("a") as f:
        f.write(f"\n## Found {stamp} (seed {args.seed}, `make parity-fuzz`), shrunk\n\n```\n{text}\n```\n\n"
                "Resolution: (to be written: fixed in ..., or the rule that now classifies it)\n")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--requests", type=int, default=5000, help="requests to send each server (default 5000)")
    p.add_argument("--seed", type=int, default=int(os.environ.get("PARITY_FUZZ_SEED", "1")))
    p.add_argument("--round", type=int, default=100, help="examples per Hypothesis round")
    p.add_argument("--no-findings", action="store_true", help="print a finding, do not append it to the file")
    args = p.parse_args()
    started = time.monotonic()
    serve = Serve()
    try:
        with pair.KubeAPIServer() as kube:
            fuzzer = Fuzzer(kube.port, serve.port)
            print(f"kube-apiserver on {kube.port}, serve on {serve.port}; ready in {time.monotonic() - started:.1f} s", flush=True)
            n = 0
            try:
                while fuzzer.requests < args.requests:
                    fuzzer.round(args.seed * 100_000 + n, args.round)
                    n += 1
                    print(f"  {fuzzer.requests} requests, {fuzzer.examples} sequences, "
                          f"{time.monotonic() - started:.0f} s", flush=True)
            except (Difference, FlakyFailure) as d:
                # FlakyFailure: the difference did not come back when the example was run again
                # (an answer that depends on timing); its text holds the first one seen
                text = str(d) if isinstance(d, Difference) else "NOT REPRODUCED ON A SECOND RUN (flaky):\n" + "\n".join(
                    str(e) for e in d.exceptions)
                print("\nFIRST DIFFERENCE OUTSIDE THE RULES (shrunk):\n" + text, flush=True)
                if not args.no_findings:
                    append_finding(text, args)
                    print(f"\nappended to {FINDINGS.relative_to(HERE.parent.parent)}")
                return 1
            finally:
                fuzzer.kube.close()
                fuzzer.ours.close()
    finally:
        serve.stop()
    print(f"\n{fuzzer.requests} requests to each server in {fuzzer.examples} sequences (shrinking included), "
          f"{time.monotonic() - started:.0f} s; no difference outside the rules.")
    for rule, count in fuzzer.classified.most_common():
        print(f"  {count:5d}  {rule}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
