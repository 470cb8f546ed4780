// The HTTP/2 shutdown corpus's recorder (tests/parity/README.md). Standard library only, and ../shutdownkit.
// The go line is Kubernetes v1.36.0's: GODEBUG defaults follow it, for every toolchain that builds this.
module genericserver.test/parity/h2shutdown

go 1.26.0

// what both recorders share, from the folder beside them (no network: GOPROXY=off)
require genericserver.test/parity/shutdownkit v0.0.0

replace genericserver.test/parity/shutdownkit => ../shutdownkit
