#!/usr/bin/env bash
# A real Kubernetes control plane for kubelet-ts development, tests and benchmarks:
# etcd + kube-apiserver + kube-controller-manager + kube-scheduler v1.20.2, built
# from Debian's `kubernetes` source package (which also gives the Go kubelet, the
# project's peer in benchmarks).
#
#   scripts/control-plane.sh build             apt deps, fetch the source, build the binaries (cached)
#   scripts/control-plane.sh build-e2e         upstream's e2e suite from the same tree: e2e.test, ginkgo, agnhost,
#                                              nonewprivs' nnp (cached in $KTS_K8S_CACHE/e2e; needs `build` first)
#   scripts/control-plane.sh up                certificates, etcd, apiserver, controller-manager, scheduler
#   scripts/control-plane.sh down              stop what `up` started (by PID) and remove its state
#   scripts/control-plane.sh status            exit 0 if the apiserver is ready
#   scripts/control-plane.sh env               KTS_KUBECONFIG=... lines for eval (admin kubeconfig, server, bin dir)
#   scripts/control-plane.sh kubeconfig NODE [FILE]
#                                              a node kubeconfig (client cert O=system:nodes, CN=system:node:NODE)
#   scripts/control-plane.sh bootstrap-kubeconfig [FILE]
#                                              a TLS-bootstrap kubeconfig (bootstrap token; CSRs auto-approved)
#
# See docs/control-plane.md.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

K8S_VERSION=1.20.2
KTS_K8S_CACHE="${KTS_K8S_CACHE:-/var/cache/kubelet-ts/kubernetes-$K8S_VERSION}"
KTS_CP_DIR="${KTS_CP_DIR:-/var/lib/kubelet-ts-control-plane}"
KTS_CP_DIR="${KTS_CP_DIR%/}"
# Ports on loopback, clear of a kubelet's (10248/10250/10255) and of the defaults of
# another control plane on the machine (2379/2380/6443).
KTS_ETCD_PORT="${KTS_ETCD_PORT:-23790}"
KTS_ETCD_PEER_PORT="${KTS_ETCD_PEER_PORT:-23800}"
KTS_APISERVER_PORT="${KTS_APISERVER_PORT:-16443}"
KTS_SERVICE_CIDR="${KTS_SERVICE_CIDR:-10.96.0.0/16}"
# The bootstrap token `up` creates (id.secret, as kubeadm's format); not a secret: loopback only.
BOOTSTRAP_TOKEN_ID=ktsboo
BOOTSTRAP_TOKEN_SECRET=0123456789abcdef

BIN="$KTS_K8S_CACHE/bin"
PKI="$KTS_CP_DIR/pki"
LOGS="$KTS_CP_DIR/logs"
PIDS="$KTS_CP_DIR/pids"
ADMIN_KUBECONFIG="$KTS_CP_DIR/admin.kubeconfig"
SERVER="https://127.0.0.1:$KTS_APISERVER_PORT"
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler)

log() { printf '[control-plane.sh] %s\n' "$*" >&2; }
die() {
  printf '[control-plane.sh] ERROR: %s\n' "$*" >&2
  exit 1
}

require_root() {
  [ "$(id -u)" -eq 0 ] || die "'$1' must run as root (it installs packages). Try: sudo $0 $1"
}

take_lock() {
  mkdir -p "$KTS_CP_DIR"
  command -v flock >/dev/null 2>&1 || return 0
  exec 9>"$KTS_CP_DIR/.lock"
  flock -w 900 9 || die "timed out waiting for $KTS_CP_DIR/.lock (another build/up/down running?)"
}

# ------------------------------------------------------------------ build
binaries_present() {
  local b
  for b in kube-apiserver kube-controller-manager kube-scheduler kubelet; do
    [ -x "$BIN/$b" ] || return 1
  done
}

ensure_packages() {
  local missing=()
  command -v go >/dev/null 2>&1 || missing+=(golang-go)
  command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
  command -v etcdctl >/dev/null 2>&1 || missing+=(etcd-client)
  command -v rsync >/dev/null 2>&1 || missing+=(rsync)
  command -v jq >/dev/null 2>&1 || missing+=(jq)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  [ "${#missing[@]}" -gt 0 ] || return 0
  log "installing ${missing[*]}"
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
}

# A deb-src entry derived from the system's own Debian sources (first stanza: the main archive).
ensure_deb_src() {
  local list=/etc/apt/sources.list.d/kubelet-ts-src.sources src=/etc/apt/sources.list.d/debian.sources
  if [ -f "$list" ]; then return 0; fi
  if [ -f "$src" ]; then
    awk 'BEGIN { RS = ""; ORS = "\n\n" } NR == 1 { print }' "$src" |
      sed -e 's/^Types:.*/Types: deb-src/' >"$list"
  elif [ -f /etc/apt/sources.list ]; then
    grep -E '^deb ' /etc/apt/sources.list | head -1 | sed 's/^deb /deb-src /' >/etc/apt/sources.list.d/kubelet-ts-src.list
    list=/etc/apt/sources.list.d/kubelet-ts-src.list
  else
    die "no Debian sources file found to derive a deb-src entry from"
  fi
  log "added $list"
  apt-get update
}

cmd_build() {
  require_root build
  take_lock
  if binaries_present; then
    log "binaries present in $BIN (v$K8S_VERSION); nothing to build"
    return 0
  fi
  ensure_packages
  ensure_deb_src
  local t0=$SECONDS tree
  tree="$(fetch_source)"
  mkdir -p "$BIN"
  log "building kube-apiserver kube-controller-manager kube-scheduler kubelet (about 7 minutes on 2 cores)"
  (
    go_env "$tree"
    make WHAT="cmd/kube-apiserver cmd/kube-controller-manager cmd/kube-scheduler cmd/kubelet" >&2
  )
  local b
  for b in kube-apiserver kube-controller-manager kube-scheduler kubelet; do
    install -m 0755 "$tree/_output/bin/$b" "$BIN/$b"
  done
  rm -rf "$tree/_output" "$tree/.go/pkg"
  log "built in $((SECONDS - t0))s: $BIN"
}

# In a subshell: cd into the tree and set the environment its offline build needs.
go_env() {
  cd "$1"
  export GOPATH="$1/.go" CGO_ENABLED=0 HOME="$KTS_K8S_CACHE/src/home" GOFLAGS=-mod=vendor GOTOOLCHAIN=local
}

# The source tree (fetched once), with its GOPATH link; prints its path.
fetch_source() {
  local work="$KTS_K8S_CACHE/src"
  mkdir -p "$work"
  if [ ! -d "$work/kubernetes-$K8S_VERSION" ]; then
    # Debian's version string is 1.20.5+really1.20.2; the tree inside is kubernetes-1.20.2.
    (cd "$work" && apt-get source --download-only kubernetes >&2)
    local orig=""
    for orig in "$work"/kubernetes_*.orig.tar.*; do break; done
    [ -f "$orig" ] || die "apt-get source kubernetes fetched no orig tarball into $work"
    tar -C "$work" -xf "$orig"
    [ -d "$work/kubernetes-$K8S_VERSION" ] ||
      die "$orig does not hold kubernetes-$K8S_VERSION (Debian's kubernetes package has moved on; pin a snapshot)"
  fi
  local tree="$work/kubernetes-$K8S_VERSION"
  mkdir -p "$tree/.go/src/k8s.io" "$work/home"
  ln -sfn ../../.. "$tree/.go/src/k8s.io/kubernetes"
  printf '%s\n' "$tree"
}

E2E_BIN="$KTS_K8S_CACHE/e2e"
E2E_BINARIES=(e2e.test ginkgo agnhost nnp)

cmd_build_e2e() {
  require_root build-e2e
  take_lock
  local b missing=0
  for b in "${E2E_BINARIES[@]}"; do [ -x "$E2E_BIN/$b" ] || missing=1; done
  if [ "$missing" -eq 0 ]; then
    log "e2e binaries present in $E2E_BIN; nothing to build"
    return 0
  fi
  ensure_packages
  ensure_deb_src
  local t0=$SECONDS tree
  tree="$(fetch_source)"
  mkdir -p "$E2E_BIN"
  log "building e2e.test, ginkgo, agnhost and nnp (about 4 minutes after 'build', longer on a cold cache)"
  (
    go_env "$tree"
    make WHAT="test/e2e/e2e.test vendor/github.com/onsi/ginkgo/ginkgo" >&2
    # agnhost and nnp build in GOPATH mode only (module mode wants go.mod updates), as make does.
    cd "$tree/.go/src/k8s.io/kubernetes"
    GO111MODULE=off GOFLAGS= go build -o "$E2E_BIN/agnhost" ./test/images/agnhost >&2
    GO111MODULE=off GOFLAGS= go build -o "$E2E_BIN/nnp" ./test/images/nonewprivs >&2
  )
  install -m 0755 "$tree/_output/bin/e2e.test" "$E2E_BIN/e2e.test"
  install -m 0755 "$tree/_output/bin/ginkgo" "$E2E_BIN/ginkgo"
  rm -rf "$tree/_output" "$tree/.go/pkg"
  log "built in $((SECONDS - t0))s: $E2E_BIN"
}

# ------------------------------------------------------------------ certificates
# sign NAME SUBJECT EXT_SECTION [SAN]: a key and a cert signed by the CA.
sign() {
  local name="$1" subj="$2" ext="$3" san="${4:-}"
  [ -f "$PKI/$name.crt" ] && return 0
  openssl genrsa -out "$PKI/$name.key" 2048 2>/dev/null
  openssl req -new -key "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr" 2>/dev/null
  {
    echo "[client]"
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=clientAuth"
    echo "[server]"
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=serverAuth,clientAuth"
    [ -z "$san" ] || echo "subjectAltName=$san"
  } >"$PKI/$name.ext"
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "$PKI/$name.ext" -extensions "$ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}

ensure_pki() {
  mkdir -p "$PKI"
  chmod 0700 "$PKI"
  if [ ! -f "$PKI/ca.crt" ]; then
    openssl genrsa -out "$PKI/ca.key" 2048 2>/dev/null
    openssl req -x509 -new -key "$PKI/ca.key" -subj "/CN=kubelet-ts-ca" -days 3650 -sha256 \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
      -out "$PKI/ca.crt" 2>/dev/null
  fi
  sign apiserver "/CN=kube-apiserver" server \
    "IP:127.0.0.1,IP:${KTS_SERVICE_CIDR%.0/*}.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
  sign apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" client
  sign admin "/O=system:masters/CN=kubelet-ts-admin" client
  sign controller-manager "/CN=system:kube-controller-manager" client
  sign scheduler "/CN=system:kube-scheduler" client
  if [ ! -f "$PKI/sa.key" ]; then
    openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
    openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  fi
}

# write_kubeconfig FILE USER [CERT KEY | token TOKEN]. Names are quoted: Go's YAML reads n/y/no/on as booleans.
write_kubeconfig() {
  local file="$1" user="$2" mode="$3" a="$4" b="${5:-}" cred
  if [ "$mode" = token ]; then
    cred="    token: \"$a\""
  else
    cred="    client-certificate-data: $(base64 -w0 <"$a")
    client-key-data: $(base64 -w0 <"$b")"
  fi
  umask 077
  cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: "kubelet-ts"
  cluster:
    server: "$SERVER"
    certificate-authority-data: $(base64 -w0 <"$PKI/ca.crt")
users:
- name: "$user"
  user:
$cred
contexts:
- name: "$user@kubelet-ts"
  context:
    cluster: "kubelet-ts"
    user: "$user"
current-context: "$user@kubelet-ts"
EOF
}

# ------------------------------------------------------------------ processes
pid_of() {
  local f="$PIDS/$1.pid" pid
  [ -f "$f" ] || return 1
  pid="$(tr -dc '0-9' <"$f")"
  [ -n "$pid" ] || return 1
  # The PID must still be our process: its command line names our state dir.
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$KTS_CP_DIR" || return 1
  printf '%s\n' "$pid"
}

start() {
  local name="$1"
  shift
  if pid_of "$name" >/dev/null; then return 0; fi
  log "starting $name (log $LOGS/$name.log)"
  setsid nohup "$@" </dev/null >>"$LOGS/$name.log" 2>&1 9>&- &
  echo $! >"$PIDS/$name.pid"
}

apiserver_ready() {
  curl -fsS --max-time 3 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
    "$SERVER/readyz" >/dev/null 2>&1
}

kubectl_() { kubectl --kubeconfig "$ADMIN_KUBECONFIG" "$@"; }

wait_for() {
  local what="$1" deadline=$((SECONDS + $2))
  shift 2
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.5
  done
  log "$what"
}

default_sa_present() { kubectl_ -n default get serviceaccount default >/dev/null 2>&1; }

etcd_ready() { ETCDCTL_API=3 etcdctl --endpoints "http://127.0.0.1:$KTS_ETCD_PORT" endpoint health >/dev/null 2>&1; }

# What TLS bootstrap needs: a bootstrap token, and RBAC for its group to create CSRs that the
# controller-manager approves (system:bootstrappers) and for nodes to renew theirs.
apply_bootstrap_rbac() {
  kubectl_ apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Secret
metadata:
  name: bootstrap-token-$BOOTSTRAP_TOKEN_ID
  namespace: kube-system
type: bootstrap.kubernetes.io/token
stringData:
  token-id: "$BOOTSTRAP_TOKEN_ID"
  token-secret: "$BOOTSTRAP_TOKEN_SECRET"
  usage-bootstrap-authentication: "true"
  usage-bootstrap-signing: "true"
  auth-extra-groups: "system:bootstrappers:kubelet-ts"
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: kubelet-ts-bootstrap }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:node-bootstrapper" }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:bootstrappers" }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: kubelet-ts-autoapprove-bootstrap }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:certificates.k8s.io:certificatesigningrequests:nodeclient" }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:bootstrappers" }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: kubelet-ts-autoapprove-renewal }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient" }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:nodes" }]
EOF
}

cmd_up() {
  require_root up
  binaries_present || die "binaries missing in $BIN: run '$0 build' first (about 7 minutes)"
  command -v etcd >/dev/null 2>&1 || die "etcd is not installed: run '$0 build'"
  command -v kubectl >/dev/null 2>&1 || die "kubectl is not on PATH (apt-get install kubernetes-client)"
  take_lock
  local t0=$SECONDS
  mkdir -p "$LOGS" "$PIDS" "$KTS_CP_DIR/etcd"
  ensure_pki
  write_kubeconfig "$ADMIN_KUBECONFIG" admin cert "$PKI/admin.crt" "$PKI/admin.key"
  write_kubeconfig "$KTS_CP_DIR/controller-manager.kubeconfig" "system:kube-controller-manager" cert \
    "$PKI/controller-manager.crt" "$PKI/controller-manager.key"
  write_kubeconfig "$KTS_CP_DIR/scheduler.kubeconfig" "system:kube-scheduler" cert \
    "$PKI/scheduler.crt" "$PKI/scheduler.key"

  # Metadata-level audit of every request: who called what (benchmarks attribute apiserver traffic by user).
  cat >"$KTS_CP_DIR/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
EOF
  start etcd etcd --name kubelet-ts --data-dir "$KTS_CP_DIR/etcd" \
    --listen-client-urls "http://127.0.0.1:$KTS_ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$KTS_ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$KTS_ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$KTS_ETCD_PEER_PORT" \
    --initial-cluster "kubelet-ts=http://127.0.0.1:$KTS_ETCD_PEER_PORT"
  wait_for "etcd ready" 60 etcd_ready || die "etcd did not become healthy; see $LOGS/etcd.log"

  start kube-apiserver "$BIN/kube-apiserver" --bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
    --secure-port "$KTS_APISERVER_PORT" --insecure-port 0 \
    --etcd-servers "http://127.0.0.1:$KTS_ETCD_PORT" \
    --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --client-ca-file "$PKI/ca.crt" --enable-bootstrap-token-auth \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local --api-audiences https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range "$KTS_SERVICE_CIDR" \
    --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types InternalIP,Hostname \
    --allow-privileged=true --cert-dir "$KTS_CP_DIR/apiserver-certs" \
    --audit-policy-file "$KTS_CP_DIR/audit-policy.yaml" --audit-log-path "$LOGS/audit.log" \
    --audit-log-maxsize 200 --audit-log-maxbackup 1
  wait_for "kube-apiserver ready" 120 apiserver_ready || die "kube-apiserver did not become ready; see $LOGS/kube-apiserver.log"

  start kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig "$KTS_CP_DIR/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$KTS_CP_DIR/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$KTS_CP_DIR/controller-manager.kubeconfig" \
    --controllers '*,bootstrapsigner,tokencleaner' \
    --use-service-account-credentials --service-account-private-key-file "$PKI/sa.key" \
    --root-ca-file "$PKI/ca.crt" --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
    --leader-elect=false --port 0 --secure-port 0
  start kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$KTS_CP_DIR/scheduler.kubeconfig" \
    --authentication-kubeconfig "$KTS_CP_DIR/scheduler.kubeconfig" \
    --authorization-kubeconfig "$KTS_CP_DIR/scheduler.kubeconfig" \
    --leader-elect=false --port 0 --secure-port 0

  apply_bootstrap_rbac
  # Ready for pods: the default service account exists (created by the controller-manager).
  wait_for "default service account present" 120 default_sa_present ||
    die "the controller-manager did not create the default service account; see $LOGS/kube-controller-manager.log"
  log "up in $((SECONDS - t0))s: $SERVER (admin kubeconfig $ADMIN_KUBECONFIG)"
}

stop_pid() {
  local name="$1" pid deadline
  pid="$(pid_of "$name")" || {
    rm -f "$PIDS/$name.pid"
    return 0
  }
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  deadline=$((SECONDS + 20))
  while kill -0 "$pid" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.2
  done
  rm -f "$PIDS/$name.pid"
}

cmd_down() {
  take_lock
  local i
  for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do stop_pid "${COMPONENTS[i]}"; done
  rm -rf --one-file-system "$KTS_CP_DIR/etcd" "$KTS_CP_DIR/pki" "$KTS_CP_DIR/pids" "$KTS_CP_DIR/logs" \
    "$KTS_CP_DIR/apiserver-certs" "$KTS_CP_DIR/audit-policy.yaml" "$KTS_CP_DIR"/*.kubeconfig
  log "down: control plane stopped and its state removed"
}

cmd_status() {
  local c rc=0 pid
  for c in "${COMPONENTS[@]}"; do
    if pid="$(pid_of "$c")"; then echo "$c: running (pid $pid)"; else
      echo "$c: not running"
      rc=1
    fi
  done
  if [ -f "$PKI/admin.crt" ] && apiserver_ready; then echo "apiserver: ready at $SERVER"; else
    echo "apiserver: not ready"
    rc=1
  fi
  return "$rc"
}

cmd_env() {
  printf 'KTS_KUBECONFIG=%s\n' "$ADMIN_KUBECONFIG"
  printf 'KTS_APISERVER=%s\n' "$SERVER"
  printf 'KTS_K8S_BIN=%s\n' "$BIN"
  printf 'KTS_CP_DIR=%s\n' "$KTS_CP_DIR"
  printf 'KTS_AUDIT_LOG=%s\n' "$LOGS/audit.log"
}

cmd_kubeconfig() {
  local node="${1:?usage: $0 kubeconfig NODE [FILE]}" file="${2:-$KTS_CP_DIR/node-$1.kubeconfig}"
  [ -f "$PKI/ca.key" ] || die "no CA: run '$0 up' first"
  sign "node-$node" "/O=system:nodes/CN=system:node:$node" client
  write_kubeconfig "$file" "system:node:$node" cert "$PKI/node-$node.crt" "$PKI/node-$node.key"
  printf '%s\n' "$file"
}

cmd_bootstrap_kubeconfig() {
  local file="${1:-$KTS_CP_DIR/bootstrap.kubeconfig}"
  [ -f "$PKI/ca.crt" ] || die "no CA: run '$0 up' first"
  write_kubeconfig "$file" "kubelet-bootstrap" token "$BOOTSTRAP_TOKEN_ID.$BOOTSTRAP_TOKEN_SECRET"
  printf '%s\n' "$file"
}

case "${1:-}" in
  build) cmd_build ;;
  build-e2e) cmd_build_e2e ;;
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) cmd_env ;;
  kubeconfig) cmd_kubeconfig "${2:-}" "${3:-}" ;;
  bootstrap-kubeconfig) cmd_bootstrap_kubeconfig "${2:-}" ;;
  *)
    echo "usage: $0 {build|build-e2e|up|down|status|env|kubeconfig NODE [FILE]|bootstrap-kubeconfig [FILE]}" >&2
    exit 2
    ;;
esac
