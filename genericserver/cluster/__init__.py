"""The pod-termination world around the apiserver: store, kubectl, kubelet, endpoints, kube-proxy, Envoy (no Go twin) (package).

The apiserver's ``ShutdownDelayDuration`` only makes sense next to the rest of a pod's deletion:
kubectl asks the API for a graceful delete, the object store sets a deletion timestamp, the
kubelet runs preStop hooks and stops containers within the grace period, the endpoints
controller and kube-proxy learn about it late, and Contour's shutdown-manager drains an Envoy.
Each piece is one small module here, on the same runtime seam as the server, and the pods are
replicas of our own server:

* :mod:`.store` - objects with graceful deletion (rest/delete.go's ``BeforeDelete``) and watch;
* :mod:`.kubectl` - ``kubectl delete`` flag rules and ``kubectl get``'s STATUS column;
* :mod:`.handlers`, :mod:`.containers`, :mod:`.kubelet` - preStop hooks, the container runtime,
  the kubelet's kill sequence and the checks before the final delete;
* :mod:`.deployment` - a Deployment's rolling update (the deployment and ReplicaSet controllers);
* :mod:`.endpoints`, :mod:`.proxy`, :mod:`.loadclient`, :mod:`.losses` - endpoint slices, the
  routing table, a client that sends steady traffic through it on real loopback sockets, and
  the cause of each request it lost;
* :mod:`.envoy`, :mod:`.shutdownmanager`, :mod:`.backoff` - an Envoy stand-in and Contour's
  shutdown-manager;
* :mod:`.scenario`, :mod:`.timeline`, :mod:`.sweep`, :mod:`.pictures`, :mod:`.cli` -
  ``genericserver cluster``;
* :mod:`.manifest`, :mod:`.loadcmd` - ``deploy/``'s manifests read into the simulation and
  checked, and ``genericserver load``, the load client of a real cluster.

Durations: Kubernetes counts grace periods in whole seconds. Every component takes a ``scale``
(runtime seconds per cluster second, see :class:`.clock.ClusterClock`) so a 30 s grace period can
run in 3 s of real time; the simulation runtime needs no scaling at all.
"""
