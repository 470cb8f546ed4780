// An etcd for the reference kube-apiserver: go.etcd.io/etcd/server/v3/embed on a data directory of
// the caller's, serving clients on one loopback URL. It prints "etcd ready" when it serves and stops
// on SIGTERM or SIGINT.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dataDir := flag.String("data-dir", "", "the data directory (required; a fresh temp dir per run)")
	clientURL := flag.String("listen-client-url", "http://127.0.0.1:2379", "the client URL to serve")
	peerURL := flag.String("listen-peer-url", "http://127.0.0.1:2380", "the peer URL to serve")
	flag.Parse()
	if *dataDir == "" {
		fmt.Fprintln(os.Stderr, "etcd: --data-dir is required")
		os.Exit(2)
	}
	cfg := embed.NewConfig()
	cfg.Dir = *dataDir
	cfg.LogLevel = "error"
	client, err := url.Parse(*clientURL)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: --listen-client-url: %v\n", err)
		os.Exit(2)
	}
	peer, err := url.Parse(*peerURL)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: --listen-peer-url: %v\n", err)
		os.Exit(2)
	}
	cfg.ListenClientUrls = []url.URL{*client}
	cfg.AdvertiseClientUrls = []url.URL{*client}
	cfg.ListenPeerUrls = []url.URL{*peer}
	cfg.AdvertisePeerUrls = []url.URL{*peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		os.Exit(1)
	}
	<-e.Server.ReadyNotify()
	fmt.Println("etcd ready")
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-stop:
	case err := <-e.Err():
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
	}
	e.Close()
}
