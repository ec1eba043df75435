#!/usr/bin/env bash
# A local Kubernetes cluster of kubelet-ts nodes, in one command (as kind and k3s give one):
# the real control plane (scripts/control-plane.sh: built once, reused when already up), and for
# each node its own containerd (scripts/containerd.sh, own dirs, bridge and pod subnet: a kubelet
# kills the pods it does not know, so nodes never share a runtime) and its own kubelet-ts agent,
# a detached process with a pid file and a log.
#
#   scripts/cluster.sh up [--nodes N]   start (or complete) the cluster; prints the kubeconfig and kubectl line
#   scripts/cluster.sh down             remove everything `up` made: agents, containerds (pods, mounts,
#                                       bridges, state), node directories and cgroupRoots, Node objects, and the control
#                                       plane when `up` started it
#   scripts/cluster.sh status           what runs; exit 0 when every node is Ready
#
# `npm run cluster -- up` runs this. Runs as root. See docs/cluster.md ("A local cluster").
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PROJECT_DIR="$(cd "$SCRIPT_DIR/.." && pwd)"

# The cluster's own state (node directories, pid files, logs) and its containerds.
KTS_CLUSTER_DIR="${KTS_CLUSTER_DIR:-/var/lib/kubelet-ts-cluster}"
KTS_CLUSTER_DIR="${KTS_CLUSTER_DIR%/}"
KTS_CLUSTER_RUN="${KTS_CLUSTER_RUN:-/run/kubelet-ts-cluster}" # node i's containerd socket dir is $KTS_CLUSTER_RUN/i
KTS_CLUSTER_RUN="${KTS_CLUSTER_RUN%/}"
KTS_CLUSTER_BRIDGE="${KTS_CLUSTER_BRIDGE:-ktscl}"             # node i's pod bridge is ${KTS_CLUSTER_BRIDGE}i
KTS_CLUSTER_POD_CIDR="${KTS_CLUSTER_POD_CIDR:-10.89.0.0/16}"  # a /16: node i gets its i-th /20
KTS_CLUSTER_NODE_PREFIX="${KTS_CLUSTER_NODE_PREFIX:-kubelet-ts-node}"
KTS_CLUSTER_PORT_BASE="${KTS_CLUSTER_PORT_BASE:-11240}"       # node i: kubelet port base+10i, healthz base+10i+8
# The control plane's variables (KTS_CP_DIR, KTS_APISERVER_PORT, KTS_ETCD_PORT, ...) pass through to
# scripts/control-plane.sh.

STATE="$KTS_CLUSTER_DIR/cluster.state"
NODES_DIR="$KTS_CLUSTER_DIR/nodes"
IMAGES=(docker.io/kubelet-ts/busybox:1.0 docker.io/kubelet-ts/pause:1.0)

log() { printf '[cluster.sh] %s\n' "$*" >&2; }
warn() { printf '[cluster.sh] WARNING: %s\n' "$*" >&2; }
die() {
  printf '[cluster.sh] ERROR: %s\n' "$*" >&2
  exit 1
}

require_root() {
  [ "$(id -u)" -eq 0 ] || die "'$1' must run as root (it starts containerd and the control plane): run it as root"
}

take_lock() {
  mkdir -p "$KTS_CLUSTER_DIR"
  command -v flock >/dev/null 2>&1 || return 0
  exec 8>"$KTS_CLUSTER_DIR/.lock"
  flock -w 900 8 || die "timed out waiting for $KTS_CLUSTER_DIR/.lock (another up/down running?)"
}

# 8>&-: the daemons these scripts start must not inherit the cluster lock.
cp_() { bash "$SCRIPT_DIR/control-plane.sh" "$@" 8>&-; }
cp_env() { cp_ env | sed -n "s/^$1=//p"; }

node_name() { printf '%s-%s\n' "$KTS_CLUSTER_NODE_PREFIX" "$1"; }

# node i's pod subnet: the i-th /20 of the cluster's /16.
node_cidr() {
  local i="$1" base="${KTS_CLUSTER_POD_CIDR%/16}" a b
  [ "$base" != "$KTS_CLUSTER_POD_CIDR" ] || die "KTS_CLUSTER_POD_CIDR must be a /16 (got $KTS_CLUSTER_POD_CIDR)"
  IFS=. read -r a b _ _ <<<"$base"
  printf '%s.%s.%s.0/20\n' "$a" "$b" "$(((i - 1) * 16))"
}

# Runs scripts/containerd.sh for node i (its own dirs, socket, bridge and subnet).
ctrd_() {
  local i="$1"
  shift
  KTS_CONTAINERD_DIR="$NODES_DIR/$(node_name "$i")/containerd" KTS_CONTAINERD_RUN="$KTS_CLUSTER_RUN/$i" \
    KTS_CNI_BRIDGE="$KTS_CLUSTER_BRIDGE$i" KTS_POD_CIDR="$(node_cidr "$i")" bash "$SCRIPT_DIR/containerd.sh" "$@" 8>&-
}

state_get() { [ -f "$STATE" ] && sed -n "s/^$1=//p" "$STATE" | tail -1; }
state_set() {
  mkdir -p "$KTS_CLUSTER_DIR"
  { grep -v "^$1=" "$STATE" 2>/dev/null || true; } >"$STATE.tmp"
  printf '%s=%s\n' "$1" "$2" >>"$STATE.tmp"
  mv -f "$STATE.tmp" "$STATE"
}

agent_pid() {
  local f="$NODES_DIR/$1/agent.pid" pid
  [ -f "$f" ] || return 1
  pid="$(tr -dc '0-9' <"$f")"
  [ -n "$pid" ] || return 1
  # Still our agent: its command line names its node directory.
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "--root-dir=$NODES_DIR/$1/root" || return 1
  [ "$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)" != Z ] || return 1
  printf '%s\n' "$pid"
}

kubectl_() { kubectl --kubeconfig "$(cp_env KTS_KUBECONFIG)" "$@"; }

# Node i's cgroupRoot: cgroupsPerQOS is on (upstream's default), and agents sharing one /kubepods would
# remove each other's pod cgroups, so each node's kubepods goes under a root of its own.
node_cgroup_root() { printf '/%s\n' "$1"; }

# Every cgroup hierarchy (v1: each mount under /sys/fs/cgroup, named ones included; v2: the root).
cgroup_hierarchies() {
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    echo /sys/fs/cgroup
  else
    find /sys/fs/cgroup -mindepth 1 -maxdepth 1 -type d
  fi
}

# Makes a node's cgroupRoot in every hierarchy (upstream requires it to exist).
make_cgroup_root() {
  local h
  for h in $(cgroup_hierarchies); do mkdir -p "$h$1"; done
}

# Removes a node's cgroupRoot bottom-up in every hierarchy, killing what is left in it first.
remove_cgroup_root() {
  local h d try
  for h in $(cgroup_hierarchies); do
    [ -d "$h$1" ] || continue
    while IFS= read -r d; do
      for try in 1 2 3 4 5 6 7 8 9 10; do
        xargs -r kill -KILL <"$d/cgroup.procs" 2>/dev/null || true
        rmdir "$d" 2>/dev/null && break
        sleep 0.2
      done
      [ ! -d "$d" ] || warn "cannot remove cgroup $d"
    done < <(find "$h$1" -depth -type d)
  done
}

node_ready() {
  [ "$(kubectl_ get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

start_agent() {
  local i="$1" name dir endpoint port
  name="$(node_name "$i")"
  dir="$NODES_DIR/$name"
  if agent_pid "$name" >/dev/null; then
    log "$name: agent already running (pid $(agent_pid "$name"))"
    return 0
  fi
  mkdir -p "$dir"
  make_cgroup_root "$(node_cgroup_root "$name")"
  cp_ kubeconfig "$name" "$dir/kubeconfig" >/dev/null
  endpoint="unix://$KTS_CLUSTER_RUN/$i/containerd.sock"
  port=$((KTS_CLUSTER_PORT_BASE + 10 * i))
  log "$name: starting its agent (log $dir/agent.log)"
  # setsid: its own session, so a Ctrl-C in this terminal does not reach it. 8>&-: not the lock.
  setsid nohup "$PROJECT_DIR/bin/kubelet-ts.js" \
    --kubeconfig="$dir/kubeconfig" --hostname-override="$name" --container-runtime-endpoint="$endpoint" \
    --root-dir="$dir/root" --pod-logs-dir="$dir/pod-logs" --container-logs-dir="$dir/containers" \
    --port="$port" --healthz-port=$((port + 8)) --read-only-port=0 --cgroup-root="$(node_cgroup_root "$name")" \
    </dev/null >>"$dir/agent.log" 2>&1 8>&- &
  echo $! >"$dir/agent.pid"
}

cmd_up() {
  require_root up
  local n=1 t0=$SECONDS
  while [ $# -gt 0 ]; do
    case "$1" in
      --nodes) n="${2:?--nodes needs a number}" && shift 2 ;;
      --nodes=*) n="${1#--nodes=}" && shift ;;
      *) die "unknown argument $1 (usage: $0 up [--nodes N])" ;;
    esac
  done
  [[ "$n" =~ ^[1-9][0-9]*$ ]] && [ "$n" -le 16 ] || die "--nodes must be 1 to 16 (got $n)"
  command -v kubectl >/dev/null 2>&1 || die "kubectl is not on PATH (apt-get install kubernetes-client)"
  take_lock
  node "$SCRIPT_DIR/prepare-run.mjs" 8>&-

  if cp_ status >/dev/null 2>&1; then
    log "reusing the control plane at $(cp_env KTS_APISERVER)"
  else
    cp_ build
    cp_ up
    state_set made-control-plane 1
  fi

  local i name
  for ((i = 1; i <= n; i++)); do
    name="$(node_name "$i")"
    state_set "node.$i" "$name"
    log "$name: containerd (pod subnet $(node_cidr "$i"), bridge $KTS_CLUSTER_BRIDGE$i)"
    ctrd_ "$i" up >/dev/null
    start_agent "$i"
  done
  local nodes
  nodes="$(state_get nodes || true)"
  [ -n "$nodes" ] && [ "$nodes" -ge "$n" ] || state_set nodes "$n"

  local deadline=$((SECONDS + 120)) waiting
  while :; do
    waiting=()
    for ((i = 1; i <= n; i++)); do
      name="$(node_name "$i")"
      agent_pid "$name" >/dev/null || die "$name: its agent exited; the end of $NODES_DIR/$name/agent.log:
$(tail -n 20 "$NODES_DIR/$name/agent.log" 2>/dev/null)"
      node_ready "$name" || waiting+=("$name")
    done
    [ "${#waiting[@]}" -gt 0 ] || break
    [ "$SECONDS" -lt "$deadline" ] || die "not Ready after 120 s: ${waiting[*]} (logs in $NODES_DIR/<node>/agent.log)"
    sleep 1
  done
  local kubeconfig
  kubeconfig="$(cp_env KTS_KUBECONFIG)"
  log "up in $((SECONDS - t0))s: $n node(s) Ready"
  cat <<EOF
kubeconfig: $kubeconfig
kubectl:    kubectl --kubeconfig $kubeconfig get nodes
images:     ${IMAGES[*]} (imported on every node; nothing is pulled from a registry)
nodes:      $(for ((i = 1; i <= n; i++)); do printf '%s ' "$(node_name "$i")"; done)(logs: $NODES_DIR/<node>/agent.log)
down:       npm run cluster -- down
EOF
}

# Unmounts everything below a directory, deepest first (volumes an agent left mounted: it does not unmount on stop).
unmount_below() {
  local mp
  awk -v d="$1/" '{ mp = $5; gsub(/\\040/, " ", mp); if (index(mp, d) == 1) print length(mp) "\t" mp }' /proc/self/mountinfo |
    sort -rn | cut -f2- | while IFS= read -r mp; do
    umount "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null || warn "could not unmount $mp"
  done
}

stop_agent() {
  local name="$1" pid deadline
  pid="$(agent_pid "$name")" || return 0
  log "$name: stopping its agent (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  deadline=$((SECONDS + 30))
  while agent_pid "$name" >/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.2
  done
}

cmd_down() {
  require_root down
  local t0=$SECONDS
  [ -d "$KTS_CLUSTER_DIR" ] || {
    log "nothing to do: no $KTS_CLUSTER_DIR"
    return 0
  }
  take_lock
  local i name n cp_up=0 kubeconfig
  n="$(state_get nodes || true)"
  n="${n:-0}"
  if cp_ status >/dev/null 2>&1; then cp_up=1; fi
  kubeconfig="$(cp_env KTS_KUBECONFIG)"
  local cp_dir
  cp_dir="$(cp_env KTS_CP_DIR)"
  for ((i = n; i >= 1; i--)); do
    name="$(state_get "node.$i")"
    [ -n "$name" ] || name="$(node_name "$i")"
    stop_agent "$name"
    ctrd_ "$i" down || warn "$name: containerd down failed; see above"
    remove_cgroup_root "$(node_cgroup_root "$name")"
    if [ -d "$NODES_DIR/$name" ]; then
      unmount_below "$NODES_DIR/$name"
      rm -rf --one-file-system "$NODES_DIR/$name"
    fi
    if [ "$cp_up" -eq 1 ]; then
      kubectl --kubeconfig "$kubeconfig" delete node "$name" --ignore-not-found --wait=false >/dev/null 2>&1 || true
      kubectl --kubeconfig "$kubeconfig" -n kube-node-lease delete lease "$name" --ignore-not-found --wait=false >/dev/null 2>&1 || true
    fi
    rm -f "$cp_dir/pki/node-$name.crt" "$cp_dir/pki/node-$name.key"
  done
  if [ "$(state_get made-control-plane || true)" = 1 ]; then
    cp_ down
    rm -f "$cp_dir/.lock"
    rmdir "$cp_dir" 2>/dev/null || true
  fi
  rmdir "$KTS_CLUSTER_RUN" 2>/dev/null || true
  rm -rf --one-file-system "$KTS_CLUSTER_DIR"
  log "down in $((SECONDS - t0))s: agents, containerds, bridges, node directories and Node objects removed"
}

cmd_status() {
  local n i name rc=0 pid
  n="$(state_get nodes || true)"
  if [ -z "$n" ]; then
    echo "no cluster (no $STATE)"
    return 1
  fi
  cp_ status || rc=1
  for ((i = 1; i <= n; i++)); do
    name="$(state_get "node.$i")"
    if pid="$(agent_pid "$name")"; then echo "$name: agent running (pid $pid)"; else
      echo "$name: agent not running"
      rc=1
    fi
    ctrd_ "$i" status | sed -n '1p' | sed "s/^/$name: /" || rc=1
    if node_ready "$name"; then echo "$name: Ready"; else
      echo "$name: not Ready"
      rc=1
    fi
  done
  echo "kubeconfig: $(cp_env KTS_KUBECONFIG)"
  return "$rc"
}

case "${1:-}" in
  up)
    shift
    cmd_up "$@"
    ;;
  down) cmd_down ;;
  status) cmd_status ;;
  *)
    echo "usage: $0 {up [--nodes N]|down|status}" >&2
    exit 2
    ;;
esac
