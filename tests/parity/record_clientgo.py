"""Records client-go's run against kube-apiserver v1.36.0 (`make parity`; tests/parity/README.md).

reference/clientgo (client-go v0.36.0, built by `make reference`) runs its main phase in JSON, then
in protobuf, through the recording proxy of clientgo.py, against one fresh kube-apiserver; then
its sigterm phase, in each encoding, against a kube-apiserver of its own started with
`--shutdown-send-retry-after=true --shutdown-delay-duration=2s --v=1`, signalled once the program
holds its POST, and told to go on once the server has logged NotAcceptingNewRequest. The
transcripts and exchanges go to `go-clientgo.json`.

    python tests/parity/record_clientgo.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent / "reference"))

import pair  # noqa: E402
from parity import clientgo  # noqa: E402

OUT = HERE / "go-clientgo.json"
SIGTERM_FLAGS = ("--shutdown-send-retry-after=true", "--shutdown-delay-duration=2s", "--v=1")
NOT_ACCEPTING = 'name="NotAcceptingNewRequest"'


def wait_for_line(program: pair.Program, text: str, timeout: float = 60.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not any(text in line for line in program.lines):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{program.name} logged no {text!r}:\n" + "\n".join(program.lines[-30:]))
        time.sleep(0.05)  # a Go program's log, read by another thread: polled (the recorder, not make test)


def main() -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", type=Path, default=clientgo.BINARY, help="the built reference/clientgo")
    args = p.parse_args()
    doc: dict = {"about": ["What reference/clientgo (client-go v0.36.0) saw of kube-apiserver v1.36.0 and the exchanges "
                           "it made, recorded by tests/parity/record_clientgo.py, compared by tests/test_parity_clientgo.py. "
                           "Generated: do not edit."], "main": {}, "sigterm": {}}
    with pair.KubeAPIServer() as kube, clientgo.Proxy(kube.port) as proxy:
        for encoding in clientgo.ENCODINGS:
            doc["main"][encoding] = clientgo.run_main(proxy.url, pair.TOKEN, encoding, args.binary)
            print(f"main {encoding}: {len(doc['main'][encoding])} lines", flush=True)
        doc["exchanges"] = sorted(proxy.exchanges.list, key=lambda e: e["start"])
    print(f"{len(doc['exchanges'])} exchanges", flush=True)
    for encoding in clientgo.ENCODINGS:
        with pair.KubeAPIServer(*SIGTERM_FLAGS) as kube:
            doc["sigterm"][encoding] = clientgo.run_sigterm(kube.url, pair.TOKEN, encoding, kube.signal,
                                                            lambda: wait_for_line(kube, NOT_ACCEPTING), args.binary)
            kube.wait()
        print(f"sigterm {encoding}: {doc['sigterm'][encoding]}", flush=True)
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
