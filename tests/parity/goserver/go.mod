// The reference server of the parity corpus (tests/parity/README.md). Standard library only.
// The go line is Kubernetes v1.36.0's: GODEBUG defaults follow it, for every toolchain that builds this.
module genericserver.test/parity/goserver

go 1.26.0
