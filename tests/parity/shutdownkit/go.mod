// What the two shutdown recorders share (tests/parity/README.md). Standard library only.
// The go line is Kubernetes v1.36.0's, as the recorders' own.
module genericserver.test/parity/shutdownkit

go 1.26.0
