"""A real one-node Kubernetes v1.36.0 on this machine, contained, with `genericserver serve` as its pods
(no Go twin: a launcher, like pair.py).

`python reference/node.py up` (what `make cluster-real` does) brings up etcd, kube-apiserver,
containerd, the kubelet, kube-proxy, kube-controller-manager and kube-scheduler inside a network
namespace of its own (`genericserver-node`: loopback and one bridge, no default route, no veth to the
host, no DNS server), in a mount namespace of its own (so every mount dies with it), with their cgroups
under one cgroup (`genericserver-node`) and everything they write under one folder (`.cluster-real/`,
ignored). It prints a kubeconfig and `.cluster-real/kubectl`, the bundled kubectl run inside the
namespace. `python reference/node.py down` stops it all, removes what it made and checks that nothing
is left: no process, mount, interface, iptables rule, cgroup or sysctl change (exit 1 if there is).
It is safe to repeat, and `make cluster-real` runs it from a trap when the up fails.

How the host stays untouched (reference/node.md has the why of each):
- the node's address, 10.244.0.1, is the bridge's (cni0), the pods' gateway; the Service range
  10.96.0.0/24 is routed to the bridge so that a client in the namespace reaches ClusterIPs through
  kube-proxy's rules, which (like the sysctls under /proc/sys/net) belong to the namespace;
- /run, /var/log, /var/lib and /etc/resolv.conf are the state folder's inside the mount namespace
  (containerd's pod network namespaces, iptables' lock, the kubelet's /var/log/containers links and
  device-plugin socket, the CNI library's result cache: fixed paths), and the resolver file names only
  127.0.0.1; the pods run with dnsPolicy None, nameserver 127.0.0.1;
- the kubelet's six kernel tunables (vm.overcommit_memory, kernel.panic...) read, inside the mount
  namespace, files holding the values it wants, so it changes none of the host's;
- containerd with restrict_oom_score_adj (this VM's root lacks CAP_SYS_RESOURCE);
- the kubelet's cgroupRoot and the launcher's own cgroup are under /genericserver-node in each cgroup
  v1 hierarchy, so that `down` finds every process the node started, containers included.

Runs as root, with PyYAML (the project's venv) for the Deployment variant it writes.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tarfile
import time
import urllib.request
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BIN = ROOT / ".reference-bin"
NETNS = "genericserver-node"
CGROUP = "genericserver-node"
NODE_NAME = "genericserver-node"
NODE_IP = "10.244.0.1"
POD_CIDR = "10.244.0.0/24"
SERVICE_CIDR = "10.96.0.0/24"
BRIDGE = "cni0"
API_PORT = 6443
TOKEN = "genericserver-node-admin"
PAUSE_IMAGE = "localhost/genericserver-pause:1"
SERVE_IMAGE = "localhost/genericserver:node"
PROGRAMS = ("etcd", "kube-apiserver", "kubelet", "kube-proxy", "kube-controller-manager", "kube-scheduler",
            "genericserver-pause")
CNI_BIN = Path("/usr/lib/cni")
# what the kubelet sets at start unless protectKernelDefaults (then it refuses to start): its wanted values
KERNEL_TUNABLES = {"vm/overcommit_memory": "1", "vm/panic_on_oom": "0", "kernel/panic": "10",
                   "kernel/panic_on_oops": "1", "kernel/keys/root_maxkeys": "1000000",
                   "kernel/keys/root_maxbytes": "25000000"}
# host sysctls the components would touch outside a namespace: checked unchanged by `down`
HOST_SYSCTLS = [*KERNEL_TUNABLES, "net/ipv4/ip_forward", "net/ipv4/conf/all/route_localnet",
                "net/bridge/bridge-nf-call-iptables", "net/netfilter/nf_conntrack_max"]
# host paths the components write by default: none may appear
HOST_PATHS = ["/var/lib/kubelet", "/var/lib/containerd", "/run/containerd", "/var/log/pods", "/var/log/containers",
              "/etc/cni/net.d", "/var/lib/cni", "/etc/kubernetes", "/opt/containerd",
              "/usr/libexec/kubernetes", "/var/lib/kube-proxy", "/run/netns/" + NETNS]
READY_WAIT = 180.0


class Layout:
    """The state folder: `cache/` survives a down (the python3 rootfs), `node/` does not."""

    def __init__(self, state: Path) -> None:
        self.state = state.resolve()
        self.cache = self.state / "cache"
        self.node = self.state / "node"
        self.pki = self.node / "pki"
        self.logs = self.node / "logs"
        self.images = self.node / "images"
        self.mnt = self.node / "mnt"
        self.containerd = self.node / "containerd"
        self.sock = self.containerd / "containerd.sock"
        self.kubeconfig = self.node / "admin.kubeconfig"
        self.kubectl = self.state / "kubectl"
        self.before = self.state / "host-before.json"
        self.ready = self.node / "ready"
        self.failed = self.node / "failed"
        self.pid = self.node / "supervisor.pid"


def run(*cmd: str, check: bool = True, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(list(cmd), check=check, capture_output=True, text=True, **kw)


def in_netns(*cmd: str) -> list[str]:
    return ["ip", "netns", "exec", NETNS, *cmd]


# --- the host's state before and after ------------------------------------------------------------

def read_sysctl(name: str) -> Optional[str]:
    try:
        return Path("/proc/sys", name).read_text().strip()
    except OSError:
        return None


def cgroup_hierarchies() -> list[Path]:
    """The mount points of the cgroup v1 hierarchies (and a v2 one, if any)."""
    out = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fstype = right.split()[0]
        if fstype in ("cgroup", "cgroup2"):
            out.append(Path(left.split()[4]))
    return sorted(set(out))


def host_iptables() -> str:
    rules = []
    for tool in ("iptables-save", "ip6tables-save"):
        if shutil.which(tool):
            rules.append(run(tool, check=False).stdout)
    return "\n".join(rules)


def host_snapshot() -> dict:
    return {
        "sysctls": {name: read_sysctl(name) for name in HOST_SYSCTLS},
        "paths": {p: os.path.lexists(p) for p in HOST_PATHS},
        "links": sorted(line.split(":")[1].strip().split("@")[0]
                        for line in run("ip", "-o", "link", "show", check=False).stdout.strip().splitlines()),
        "kube_rules": sum(1 for line in host_iptables().splitlines() if "KUBE-" in line or "CNI-" in line),
    }


# --- certificates, tokens, configs ----------------------------------------------------------------

def make_pki(lay: Layout) -> None:
    lay.pki.mkdir(parents=True, exist_ok=True)
    p = lay.pki
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=genericserver-node-ca",
        "-keyout", str(p / "ca.key"), "-out", str(p / "ca.crt"))
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=kube-apiserver",
        "-keyout", str(p / "apiserver.key"), "-out", str(p / "apiserver.csr"))
    sans = (f"subjectAltName=IP:{NODE_IP},IP:10.96.0.1,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,"
            "DNS:kubernetes.default.svc,DNS:localhost")
    (p / "san.ext").write_text(sans + "\n")
    run("openssl", "x509", "-req", "-in", str(p / "apiserver.csr"), "-CA", str(p / "ca.crt"), "-CAkey", str(p / "ca.key"),
        "-CAcreateserial", "-days", "2", "-extfile", str(p / "san.ext"), "-out", str(p / "apiserver.crt"))
    run("openssl", "genrsa", "-out", str(p / "sa.key"), "2048")
    # token,user,uid,"groups": every component uses the admin's (authorization is AlwaysAllow, as pair.py's)
    (p / "tokens.csv").write_text(f'{TOKEN},admin,admin-uid,"system:masters"\n')


def kubeconfig(lay: Layout) -> dict:
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": "genericserver-node",
        "clusters": [{"name": "genericserver-node",
                      "cluster": {"server": f"https://{NODE_IP}:{API_PORT}", "certificate-authority": str(lay.pki / "ca.crt")}}],
        "users": [{"name": "admin", "user": {"token": TOKEN}}],
        "contexts": [{"name": "genericserver-node", "context": {"cluster": "genericserver-node", "user": "admin"}}],
    }


def containerd_config(lay: Layout) -> str:
    c = lay.containerd
    return f"""version = 2
root = "{c / 'root'}"
state = "{c / 'state'}"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing"]

[grpc]
  address = "{lay.sock}"

[ttrpc]
  address = "{c / 'containerd.sock.ttrpc'}"

[plugins."io.containerd.internal.v1.opt"]
  path = "{c / 'opt'}"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{PAUSE_IMAGE}"
  # this VM's root lacks CAP_SYS_RESOURCE: runc could not lower a sandbox's oom_score_adj below ours
  restrict_oom_score_adj = true
  enable_selinux = false
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{CNI_BIN}"
    conf_dir = "{lay.node / 'cni' / 'net.d'}"
"""


def cni_config(lay: Layout) -> dict:
    return {
        "cniVersion": "0.4.0", "name": "genericserver-node",
        "plugins": [{
            "type": "bridge", "bridge": BRIDGE, "isGateway": True, "ipMasq": False, "hairpinMode": True,
            "ipam": {"type": "host-local", "dataDir": str(lay.node / "cni" / "ipam"),
                     "ranges": [[{"subnet": POD_CIDR, "rangeStart": "10.244.0.10", "gateway": NODE_IP}]],
                     "routes": [{"dst": "0.0.0.0/0"}]},
        }],
    }


def kubelet_config(lay: Layout) -> dict:
    k = lay.node / "kubelet"
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
        "failCgroupV1": False,  # this machine's cgroups are v1
        "cgroupDriver": "cgroupfs", "cgroupRoot": "/" + CGROUP, "cgroupsPerQOS": True,
        "containerRuntimeEndpoint": f"unix://{lay.sock}",
        "authentication": {"anonymous": {"enabled": True}, "webhook": {"enabled": False}},
        "authorization": {"mode": "AlwaysAllow"},
        "address": NODE_IP, "port": 10250, "readOnlyPort": 0, "healthzBindAddress": "127.0.0.1", "healthzPort": 10248,
        "resolvConf": "",  # pods get no resolver from the host (theirs: dnsPolicy None, 127.0.0.1)
        "podLogsDir": str(k / "pod-logs"),
        "volumePluginDir": str(k / "volume-plugins"),
        "failSwapOn": False,
        "oomScoreAdj": 0,  # lowering it needs CAP_SYS_RESOURCE
        "protectKernelDefaults": False,
        "shutdownGracePeriod": "0s", "shutdownGracePeriodCriticalPods": "0s",
        "evictionHard": {"memory.available": "1Mi", "nodefs.available": "1%", "imagefs.available": "1%"},
        "imageGCHighThresholdPercent": 100, "imageGCLowThresholdPercent": 99,
        "registerNode": True,
        "serializeImagePulls": False,
    }


def kube_proxy_config(lay: Layout) -> dict:
    return {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1", "kind": "KubeProxyConfiguration",
        "mode": "iptables", "clientConnection": {"kubeconfig": str(lay.kubeconfig)},
        "hostnameOverride": NODE_NAME, "bindAddress": NODE_IP, "clusterCIDR": POD_CIDR,
        "healthzBindAddress": "127.0.0.1:10256", "metricsBindAddress": "127.0.0.1:10249",
        "oomScoreAdj": 0,
        # leave the conntrack table's host-wide size and the timeouts alone
        "conntrack": {"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
    }


def write_state(lay: Layout) -> None:
    for d in (lay.logs, lay.images, lay.mnt / "run", lay.mnt / "var-log", lay.mnt / "var-lib", lay.mnt / "sysctl", lay.containerd,
              lay.node / "cni" / "net.d", lay.node / "cni" / "ipam", lay.node / "kubelet" / "root",
              lay.node / "kubelet" / "pod-logs", lay.node / "kubelet" / "volume-plugins", lay.node / "etcd",
              lay.node / "kube-controller-manager", lay.node / "kube-scheduler", lay.node / "kube-apiserver"):
        d.mkdir(parents=True, exist_ok=True)
    make_pki(lay)
    lay.kubeconfig.write_text(json.dumps(kubeconfig(lay), indent=2) + "\n")
    (lay.containerd / "config.toml").write_text(containerd_config(lay))
    (lay.node / "cni" / "net.d" / "10-genericserver.conflist").write_text(json.dumps(cni_config(lay), indent=2) + "\n")
    (lay.node / "kubelet" / "config.yaml").write_text(json.dumps(kubelet_config(lay), indent=2) + "\n")
    (lay.node / "kube-proxy.yaml").write_text(json.dumps(kube_proxy_config(lay), indent=2) + "\n")
    (lay.mnt / "resolv.conf").write_text("# the node's namespace has no resolver: nothing is looked up outside\n"
                                         "nameserver 127.0.0.1\n")
    for name, value in KERNEL_TUNABLES.items():
        (lay.mnt / "sysctl" / name.replace("/", ".")).write_text(value + "\n")
    lay.kubectl.write_text(f"#!/bin/sh\n# the bundled kubectl, inside the node's network namespace\n"
                           f"exec ip netns exec {NETNS} {ROOT / '.venv' / 'bin' / 'kubectl'} "
                           f"--kubeconfig {lay.kubeconfig} \"$@\"\n")
    lay.kubectl.chmod(0o755)


# --- images ---------------------------------------------------------------------------------------

def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def docker_archive(out: Path, tag: str, layers: list[Path], config: dict) -> None:
    """A `docker save`-style tar (manifest.json, the image config, the layers), what `ctr images import` reads."""
    diff_ids = [f"sha256:{sha256_file(layer)}" for layer in layers]
    image_config = {"architecture": "amd64", "os": "linux", "config": config,
                    "rootfs": {"type": "layers", "diff_ids": diff_ids},
                    "history": [{"created_by": "reference/node.py"} for _ in layers]}
    blob = json.dumps(image_config).encode()
    config_name = hashlib.sha256(blob).hexdigest() + ".json"
    layer_names = [f"{d.split(':')[1]}/layer.tar" for d in diff_ids]
    manifest = json.dumps([{"Config": config_name, "RepoTags": [tag], "Layers": layer_names}]).encode()
    with tarfile.open(out, "w") as tar:
        for name, data in ((config_name, blob), ("manifest.json", manifest)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for layer, name in zip(layers, layer_names):
            tar.add(layer, arcname=name)


def tar_of(folder: Path, out: Path) -> Path:
    with tarfile.open(out, "w") as tar:
        for path in sorted(folder.rglob("*")):
            info = tar.gettarinfo(path, arcname=str(path.relative_to(folder)))
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.mtime = 0
            if info.isfile():
                with open(path, "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
    return out


def python3_rootfs(lay: Layout) -> Path:
    """Debian bookworm's minbase with python3, from mmdebstrap (about 3 minutes; cached across downs)."""
    out = lay.cache / "python3-rootfs.tar"
    if out.exists():
        return out
    lay.cache.mkdir(parents=True, exist_ok=True)
    part = lay.cache / "python3-rootfs.part.tar"
    print("building the python3 rootfs with mmdebstrap (cached in .cluster-real/cache)...", flush=True)
    # its own mount namespace: the chroot's /proc and /dev mounts die with it
    subprocess.run(["unshare", "--mount", "--propagation", "private", "mmdebstrap", "--variant=minbase",
                    "--include=python3", "--format=tar", "--dpkgopt=path-exclude=/usr/share/doc/*",
                    "--dpkgopt=path-exclude=/usr/share/man/*", "--dpkgopt=path-exclude=/usr/share/locale/*",
                    "bookworm", str(part), "deb http://deb.debian.org/debian bookworm main"], check=True)
    part.rename(out)
    return out


def app_layer(lay: Layout) -> Path:
    """/app/site: the project's package and its dependencies at the venv's versions, and a launcher."""
    folder = lay.images / "app"
    shutil.rmtree(folder, ignore_errors=True)
    site = folder / "app" / "site"
    site.mkdir(parents=True)
    venv = ROOT / ".venv"
    freeze = run(str(venv / "uv" / "bin" / "uv"), "pip", "freeze", "--python", str(venv / "bin" / "python")).stdout
    pins = [line for line in freeze.splitlines() if line and not line.startswith(("-e", "genericserver"))]
    (lay.images / "constraints.txt").write_text("\n".join(pins) + "\n")
    requires = []
    in_block = False
    for line in (ROOT / "setup.cfg").read_text().splitlines():
        if line.startswith("install_requires"):
            in_block = True
            continue
        if in_block:
            if not line.startswith((" ", "\t")):
                break
            line = line.strip()
            if line and not line.startswith("#"):
                requires.append(line)
    run(str(venv / "uv" / "bin" / "uv"), "pip", "install", "--quiet", "--python", "/usr/bin/python3", "--target", str(site),
        "--no-compile", "-c", str(lay.images / "constraints.txt"), *requires)
    shutil.copytree(ROOT / "genericserver", site / "genericserver",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    bin_dir = folder / "usr" / "local" / "bin"
    bin_dir.mkdir(parents=True)
    launcher = bin_dir / "genericserver"
    launcher.write_text("#!/usr/bin/python3\nimport sys\nfrom genericserver.__main__ import main\nsys.exit(main())\n")
    launcher.chmod(0o755)
    return tar_of(folder, lay.images / "app-layer.tar")


def build_images(lay: Layout) -> list[Path]:
    pause_dir = lay.images / "pause"
    (pause_dir).mkdir(parents=True, exist_ok=True)
    shutil.copy2(BIN / "genericserver-pause", pause_dir / "pause")
    pause = lay.images / "pause.tar"
    docker_archive(pause, PAUSE_IMAGE, [tar_of(pause_dir, lay.images / "pause-layer.tar")],
                   {"Entrypoint": ["/pause"], "User": "65535:65535"})
    serve = lay.images / "genericserver.tar"
    docker_archive(serve, SERVE_IMAGE, [python3_rootfs(lay), app_layer(lay)], {
        "Entrypoint": ["/usr/local/bin/genericserver", "serve"],
        "Cmd": ["--bind-address=0.0.0.0", "--secure-port=8443"],
        "Env": ["PATH=/usr/local/bin:/usr/bin:/bin", "PYTHONPATH=/app/site", "PYTHONDONTWRITEBYTECODE=1",
                "PYTHONUNBUFFERED=1"],
        "User": "10001", "WorkingDir": "/", "ExposedPorts": {"8443/tcp": {}},
    })
    return [pause, serve]


# --- inside the namespaces: the supervisor ---------------------------------------------------------

def mount(*args: str) -> None:
    run("mount", *args)


def enter_cgroup(name: str) -> None:
    """Put this process (and so all it starts) into /genericserver-node/<name> of every hierarchy."""
    for h in cgroup_hierarchies():
        if h.name == "unified":
            continue
        top = h / CGROUP
        d = top / name
        d.mkdir(parents=True, exist_ok=True)
        if (h / "cpuset.cpus").exists():
            for f in ("cpuset.cpus", "cpuset.mems"):
                for level in (top, d):
                    if not (level / f).read_text().strip():
                        (level / f).write_text((h / f).read_text())
        (d / "cgroup.procs").write_text(str(os.getpid()))


class Supervisor:
    def __init__(self, lay: Layout) -> None:
        self.lay = lay
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.stopping = False

    def setup_mounts(self) -> None:
        lay = self.lay
        mount("--make-rprivate", "/")
        mount("--bind", str(lay.mnt / "run"), "/run")
        mount("--bind", str(lay.mnt / "var-log"), "/var/log")
        # the kubelet's device-plugin socket (/var/lib/kubelet/device-plugins) and the CNI library's
        # result cache (/var/lib/cni) are fixed paths
        mount("--bind", str(lay.mnt / "var-lib"), "/var/lib")
        mount("--bind", str(lay.mnt / "resolv.conf"), "/etc/resolv.conf")
        for name in KERNEL_TUNABLES:
            mount("--bind", str(lay.mnt / "sysctl" / name.replace("/", ".")), f"/proc/sys/{name}")

    def start(self, name: str, *cmd: str) -> subprocess.Popen:
        log = open(self.lay.logs / f"{name}.log", "ab")
        proc = subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        self.procs.append((name, proc))
        print(f"{time.strftime('%H:%M:%S')} started {name} (PID {proc.pid})", flush=True)
        return proc

    def wait_for(self, what: str, check, timeout: float = READY_WAIT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, proc in self.procs:
                if proc.poll() is not None:
                    tail = (self.lay.logs / f"{name}.log").read_text(errors="replace").splitlines()[-25:]
                    raise RuntimeError(f"{name} exited with {proc.returncode} while waiting for {what}:\n" + "\n".join(tail))
            try:
                if check():
                    print(f"{time.strftime('%H:%M:%S')} {what}", flush=True)
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"timed out waiting for {what}")

    def api_get(self, path: str) -> tuple[int, bytes]:
        ctx = ssl.create_default_context(cafile=str(self.lay.pki / "ca.crt"))
        req = urllib.request.Request(f"https://{NODE_IP}:{API_PORT}{path}", headers={"Authorization": f"Bearer {TOKEN}"})
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=3) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def node_ready(self) -> bool:
        code, body = self.api_get(f"/api/v1/nodes/{NODE_NAME}")
        if code != 200:
            return False
        conditions = json.loads(body)["status"].get("conditions", [])
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

    def run(self) -> None:
        lay = self.lay
        enter_cgroup("runtime")
        self.setup_mounts()
        pki, k = lay.pki, lay.node
        self.start("etcd", str(BIN / "etcd"), "--data-dir", str(k / "etcd" / "data"),
                   "--listen-client-url", "http://127.0.0.1:2379", "--listen-peer-url", "http://127.0.0.1:2380")
        self.wait_for("etcd serving", lambda: urllib.request.urlopen("http://127.0.0.1:2379/health", timeout=2).status == 200)
        self.start("kube-apiserver", str(BIN / "kube-apiserver"),
                   "--etcd-servers=http://127.0.0.1:2379", "--bind-address=0.0.0.0", f"--advertise-address={NODE_IP}",
                   f"--secure-port={API_PORT}", f"--tls-cert-file={pki / 'apiserver.crt'}",
                   f"--tls-private-key-file={pki / 'apiserver.key'}", f"--client-ca-file={pki / 'ca.crt'}",
                   f"--token-auth-file={pki / 'tokens.csv'}", "--authorization-mode=AlwaysAllow",
                   f"--service-account-key-file={pki / 'sa.key'}", f"--service-account-signing-key-file={pki / 'sa.key'}",
                   "--service-account-issuer=https://kubernetes.default.svc", f"--service-cluster-ip-range={SERVICE_CIDR}",
                   # the kubelet by its address: resolving the node's name went to the host's resolver
                   "--kubelet-preferred-address-types=InternalIP", "--profiling=false",
                   f"--cert-dir={k / 'kube-apiserver'}")
        self.wait_for("kube-apiserver ready", lambda: self.api_get("/readyz")[0] == 200)
        self.start("containerd", "containerd", "--config", str(lay.containerd / "config.toml"))
        self.wait_for("containerd serving", lambda: run("ctr", "--address", str(lay.sock), "version", check=False).returncode == 0)
        for image in sorted(lay.images.glob("*.tar")):
            if image.name.endswith("-layer.tar"):
                continue
            started = time.monotonic()
            run("ctr", "--address", str(lay.sock), "-n", "k8s.io", "images", "import", "--all-platforms", str(image))
            print(f"{time.strftime('%H:%M:%S')} imported {image.name} in {time.monotonic() - started:.1f} s", flush=True)
        kubeconfig = str(lay.kubeconfig)
        self.start("kubelet", str(BIN / "kubelet"), f"--config={k / 'kubelet' / 'config.yaml'}",
                   f"--kubeconfig={kubeconfig}", f"--root-dir={k / 'kubelet' / 'root'}",
                   f"--cert-dir={k / 'kubelet' / 'certs'}", f"--hostname-override={NODE_NAME}", f"--node-ip={NODE_IP}",
                   "--v=3")  # 3: the preStop hook's start and end (the recorder's prestop events)
        self.start("kube-proxy", str(BIN / "kube-proxy"), f"--config={k / 'kube-proxy.yaml'}", "--v=2")
        self.start("kube-controller-manager", str(BIN / "kube-controller-manager"), f"--kubeconfig={kubeconfig}",
                   f"--authentication-kubeconfig={kubeconfig}", f"--authorization-kubeconfig={kubeconfig}",
                   f"--service-account-private-key-file={pki / 'sa.key'}", f"--root-ca-file={pki / 'ca.crt'}",
                   "--leader-elect=false", "--bind-address=127.0.0.1", f"--cert-dir={k / 'kube-controller-manager'}",
                   f"--cluster-cidr={POD_CIDR}", f"--service-cluster-ip-range={SERVICE_CIDR}",
                   f"--flex-volume-plugin-dir={k / 'kubelet' / 'volume-plugins'}", "--v=2")
        self.start("kube-scheduler", str(BIN / "kube-scheduler"), f"--kubeconfig={kubeconfig}",
                   f"--authentication-kubeconfig={kubeconfig}", f"--authorization-kubeconfig={kubeconfig}",
                   "--leader-elect=false", "--bind-address=127.0.0.1", f"--cert-dir={k / 'kube-scheduler'}")
        self.wait_for("node Ready", self.node_ready)
        self.wait_for("default service account", lambda: self.api_get("/api/v1/namespaces/default/serviceaccounts/default")[0] == 200)
        lay.ready.write_text(str(time.time()))

    def stop(self) -> None:
        if self.stopping:
            return
        self.stopping = True
        for name, proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        print(f"{time.strftime('%H:%M:%S')} stopped", flush=True)


def supervise(lay: Layout) -> int:
    sup = Supervisor(lay)
    stop = {"now": False}

    def on_signal(*_: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        sup.run()
        while not stop["now"]:
            time.sleep(0.5)
            for name, proc in sup.procs:
                if proc.poll() is not None:
                    print(f"{name} exited with {proc.returncode}", flush=True)
                    stop["now"] = True
    except BaseException as e:  # noqa: BLE001 - the reason goes to the log the up prints
        lay.failed.write_text(f"{type(e).__name__}: {e}\n")
        print(f"failed: {e}", flush=True)
    finally:
        sup.stop()
    return 0


# --- up and down ----------------------------------------------------------------------------------

def make_netns() -> None:
    run("ip", "netns", "add", NETNS)
    for cmd in (["ip", "link", "set", "lo", "up"],
                ["ip", "link", "add", BRIDGE, "type", "bridge"],
                ["ip", "addr", "add", f"{NODE_IP}/24", "dev", BRIDGE],
                ["ip", "link", "set", BRIDGE, "up"],
                # ClusterIPs are kube-proxy's DNAT in this namespace's OUTPUT chain: a route must exist to get there
                ["ip", "route", "add", SERVICE_CIDR, "dev", BRIDGE]):
        run(*in_netns(*cmd))


def up(lay: Layout) -> int:
    if os.geteuid() != 0:
        raise SystemExit("reference/node.py up: needs root (network and mount namespaces, cgroups, containerd)")
    for p in PROGRAMS:
        if not (BIN / p).exists():
            raise SystemExit(f"{BIN / p} is missing: run `make reference reference-node` first")
    for tool in ("containerd", "runc", "ctr", "iptables", "conntrack", "mmdebstrap", "openssl"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is missing: `make cluster-real` installs Debian's packages")
    if not (CNI_BIN / "bridge").exists():
        raise SystemExit(f"{CNI_BIN}/bridge is missing: install containernetworking-plugins")
    if lay.node.exists() or Path("/run/netns", NETNS).exists():
        print("a node is up or was left behind: taking it down first", flush=True)
        if down(lay) != 0:
            return 1
    started = time.monotonic()
    lay.state.mkdir(parents=True, exist_ok=True)
    lay.before.write_text(json.dumps(host_snapshot(), indent=2) + "\n")
    write_state(lay)
    build_images(lay)
    print(f"state and images ready in {time.monotonic() - started:.0f} s", flush=True)
    make_netns()
    log = open(lay.logs / "supervisor.log", "ab")
    proc = subprocess.Popen(["nsenter", f"--net=/run/netns/{NETNS}", "unshare", "--mount", "--propagation", "private",
                             sys.executable, str(Path(__file__).resolve()), "supervise", "--state", str(lay.state)],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    lay.pid.write_text(str(proc.pid))
    while not lay.ready.exists():
        if lay.failed.exists() or proc.poll() is not None:
            print((lay.logs / "supervisor.log").read_text(errors="replace"), flush=True)
            print("the node did not come up (the logs are in .cluster-real/node/logs/)", flush=True)
            return 1
        time.sleep(0.3)
    print((lay.logs / "supervisor.log").read_text(errors="replace"), end="")
    print(f"\none-node Kubernetes v1.36.0 up in {time.monotonic() - started:.0f} s, in network namespace {NETNS} "
          f"(node {NODE_NAME} at {NODE_IP}); supervisor PID {proc.pid}")
    print(f"kubeconfig: {lay.kubeconfig}\n")
    print(lay.kubeconfig.read_text())
    print(f"try: {lay.kubectl.relative_to(ROOT) if lay.kubectl.is_relative_to(ROOT) else lay.kubectl} get nodes,pods -A")
    print(f"     (the bundled kubectl inside the namespace: ip netns exec {NETNS} .venv/bin/kubectl --kubeconfig {lay.kubeconfig} ...)")
    print("stop it with: make cluster-real-down", flush=True)
    return 0


def pids_in_cgroups() -> set[int]:
    pids = set()
    for h in cgroup_hierarchies():
        top = h / CGROUP
        if top.exists():
            for procs in top.rglob("cgroup.procs"):
                try:
                    pids.update(int(p) for p in procs.read_text().split())
                except OSError:
                    pass
    return pids


def pids_in_netns() -> set[int]:
    if not Path("/run/netns", NETNS).exists():
        return set()
    out = run("ip", "netns", "pids", NETNS, check=False).stdout
    return {int(p) for p in out.split()}


def node_pids(lay: Layout) -> set[int]:
    """Everything the node started: in its network namespace or its cgroups (containers are only there)."""
    pids = pids_in_netns() | pids_in_cgroups()
    pids.discard(os.getpid())
    return pids


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:100]
    except OSError:
        return "(gone)"


def remove_cgroups() -> list[str]:
    failed = []
    for h in cgroup_hierarchies():
        top = h / CGROUP
        if not top.exists():
            continue
        for d in sorted((p for p in top.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True) + [top]:
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                failed.append(str(d))
    return failed


def host_mounts(lay: Layout) -> list[str]:
    return [line for line in Path("/proc/self/mountinfo").read_text().splitlines()
            if str(lay.state) in line or f"/run/netns/{NETNS}" in line]


def down(lay: Layout) -> int:
    if os.geteuid() != 0:
        raise SystemExit("reference/node.py down: needs root")
    # the supervisor stops the components in reverse order (the kubelet before containerd...)
    try:
        pid = int(lay.pid.read_text())
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            os.kill(pid, 0)
            time.sleep(0.2)
    except (OSError, ValueError):
        pass
    # then whatever is left (containers, shims) by cgroup and namespace, until nothing is
    for _ in range(100):
        pids = node_pids(lay)
        if not pids:
            break
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.1)
    left_cgroups = remove_cgroups()
    if Path("/run/netns", NETNS).exists():
        run("ip", "netns", "del", NETNS, check=False)
    problems = []
    mounts = host_mounts(lay)
    if mounts:
        problems += [f"mount left: {m}" for m in mounts]
    elif lay.node.exists():
        shutil.rmtree(lay.node)
    if lay.kubectl.exists():
        lay.kubectl.unlink()
    # the check: nothing of the node is left on the host
    problems += [f"process left: {p} {command_line(p)}" for p in node_pids(lay)]
    problems += [f"cgroup left: {c}" for c in left_cgroups]
    problems += [f"cgroup left: {h / CGROUP}" for h in cgroup_hierarchies() if (h / CGROUP).exists()]
    if Path("/run/netns", NETNS).exists() or NETNS in run("ip", "netns", "list", check=False).stdout:
        problems.append(f"network namespace left: {NETNS}")
    before = json.loads(lay.before.read_text()) if lay.before.exists() else None
    now = host_snapshot()
    if before is not None:
        for name, value in before["sysctls"].items():
            if now["sysctls"].get(name) != value:
                problems.append(f"sysctl changed: {name} {value} -> {now['sysctls'].get(name)}")
        for path, existed in before["paths"].items():
            if os.path.lexists(path) and not existed and not path.startswith("/run/netns/"):
                print(f"cluster-real-down: removing {path}, which a component made outside the state folder", flush=True)
                shutil.rmtree(path, ignore_errors=True)
            if os.path.lexists(path) and not existed:
                problems.append(f"host path left: {path}")
        for link in set(now["links"]) - set(before["links"]):
            problems.append(f"interface left: {link}")
        if now["kube_rules"] > before["kube_rules"]:
            problems.append(f"iptables rules left on the host: {now['kube_rules'] - before['kube_rules']} KUBE-/CNI- lines")
    else:
        problems += [f"host path left: {p}" for p, exists in now["paths"].items() if exists and p.endswith(NETNS)]
        if any(BRIDGE == link or link.startswith("veth") for link in now["links"]):
            problems.append("a cni0 or veth interface on the host")
    if problems:
        print("cluster-real-down: left behind:\n  " + "\n  ".join(problems), flush=True)
        return 1
    if lay.before.exists():
        lay.before.unlink()
    print(f"cluster-real-down: nothing left (no process in {NETNS} or the {CGROUP} cgroups, no mount, no network "
          f"namespace, interface or KUBE-/CNI- iptables rule on the host, {len(HOST_SYSCTLS)} sysctls as before, "
          f"none of the components' default folders)", flush=True)
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("command", choices=("up", "down", "supervise"))
    parser.add_argument("--state", default=str(ROOT / ".cluster-real"), help="the state folder (default .cluster-real)")
    args = parser.parse_args(argv)
    lay = Layout(Path(args.state))
    if args.command == "up":
        return up(lay)
    if args.command == "down":
        return down(lay)
    return supervise(lay)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
