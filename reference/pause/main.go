// pause: the sandbox process of the real node's pods (reference/node.py), written for this project
// because no registry is reachable: it holds the pod's namespaces, reaps the orphans it inherits as
// PID 1, and exits on SIGINT or SIGTERM. Built static (CGO_ENABLED=0) into an image of one file.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
