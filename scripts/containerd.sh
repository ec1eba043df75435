#!/usr/bin/env bash
# Real-containerd harness for kubelet-ts: runs a private containerd (own root,
# state, socket, CNI config) in the background, with two local images.
#
#   scripts/containerd.sh up       install (if needed), configure, start, import images
#   scripts/containerd.sh down     remove all pods, stop containerd, remove its bridge, state and run dirs
#   scripts/containerd.sh status   print state; exit 0 if healthy, 1 otherwise
#   scripts/containerd.sh env      print KTS_CRI_ENDPOINT=unix://... (for eval)
#
# See docs/containerd.md.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PROJECT_DIR="$(cd "$SCRIPT_DIR/.." && pwd)"

KTS_CONTAINERD_DIR="${KTS_CONTAINERD_DIR:-/var/lib/kubelet-ts-containerd}"
KTS_CONTAINERD_RUN="${KTS_CONTAINERD_RUN:-/run/kubelet-ts-containerd}"
KTS_POD_CIDR="${KTS_POD_CIDR:-10.88.0.0/16}"
KTS_CNI_BRIDGE="${KTS_CNI_BRIDGE:-ktsbr0}"
KTS_CNI_BIN_DIR="${KTS_CNI_BIN_DIR:-/usr/lib/cni}"
CNI_NETWORK="kubelet-ts-$KTS_CNI_BRIDGE" # also tags the bridge plugin's iptables rules
KTS_CONTAINERD_SNAPSHOTTER="${KTS_CONTAINERD_SNAPSHOTTER:-}" # empty: auto (overlayfs, else native)
KTS_CONTAINERD_LOG_LEVEL="${KTS_CONTAINERD_LOG_LEVEL:-info}"
# 1: no CNI configuration at start, but a conf_template containerd renders with the node's pod CIDR
# when the kubelet sends it (CRI UpdateRuntimeConfig); until then the runtime's network is not ready.
KTS_CNI_CONF_TEMPLATE="${KTS_CNI_CONF_TEMPLATE:-0}"

# Strip trailing slashes so prefix matching on mount points is exact.
KTS_CONTAINERD_DIR="${KTS_CONTAINERD_DIR%/}"
KTS_CONTAINERD_RUN="${KTS_CONTAINERD_RUN%/}"

SOCK="$KTS_CONTAINERD_RUN/containerd.sock"
ENDPOINT="unix://$SOCK"
PIDFILE="$KTS_CONTAINERD_RUN/containerd.pid"
CONFIG="$KTS_CONTAINERD_DIR/config.toml"
CNI_TEMPLATE="$KTS_CONTAINERD_DIR/cni-conf-template.json"
LOGFILE="$KTS_CONTAINERD_DIR/containerd.log"
NETD="$KTS_CONTAINERD_DIR/net.d"
IMAGES_DIR="$KTS_CONTAINERD_DIR/images"
RUNC_ROOT="$KTS_CONTAINERD_RUN/runc"

PAUSE_IMAGE="docker.io/kubelet-ts/pause:1.0"
BUSYBOX_IMAGE="docker.io/kubelet-ts/busybox:1.0"

log() { printf '[containerd.sh] %s\n' "$*" >&2; }
warn() { printf '[containerd.sh] WARNING: %s\n' "$*" >&2; }
die() {
  printf '[containerd.sh] ERROR: %s\n' "$*" >&2
  exit 1
}

require_root() {
  if [ "$(id -u)" -ne 0 ]; then
    die "'$1' must run as root (it installs packages, mounts overlayfs, creates network namespaces): run it as root"
  fi
}

check_sock_len() {
  # sun_path is 108 bytes including the NUL; containerd also creates "$SOCK.ttrpc".
  if [ "${#SOCK}" -gt 100 ]; then
    die "socket path too long (${#SOCK} bytes, max ~100): $SOCK; set a shorter KTS_CONTAINERD_RUN"
  fi
}

# Serialize up/down (e.g. several test runners calling "up" at once).
take_lock() {
  mkdir -p "$KTS_CONTAINERD_DIR"
  command -v flock >/dev/null 2>&1 || return 0
  exec 9>"$KTS_CONTAINERD_DIR/.lock"
  if ! flock -w 120 9; then die "timed out waiting for $KTS_CONTAINERD_DIR/.lock (another up/down running?)"; fi
}

ctr_() { timeout 30 ctr --address "$SOCK" "$@"; }

# ------------------------------------------------------------------ process
pid_from_file() {
  [ -f "$PIDFILE" ] || return 1
  local pid
  pid="$(tr -dc '0-9' <"$PIDFILE")"
  [ -n "$pid" ] || return 1
  printf '%s\n' "$pid"
}

# Is $1 a live containerd started with our config?
is_our_containerd() {
  local pid="$1" i
  local -a argv=()
  [ -r "/proc/$pid/cmdline" ] || return 1
  mapfile -d '' -t argv 2>/dev/null <"/proc/$pid/cmdline" || return 1
  [ "${#argv[@]}" -ge 3 ] || return 1
  [ "${argv[0]##*/}" = containerd ] || return 1
  for ((i = 1; i < ${#argv[@]} - 1; i++)); do
    if [ "${argv[i]}" = --config ] && [ "${argv[i + 1]}" = "$CONFIG" ]; then return 0; fi
  done
  return 1
}

running_pid() {
  local pid
  pid="$(pid_from_file)" || return 1
  is_our_containerd "$pid" || return 1
  printf '%s\n' "$pid"
}

# Find a containerd running with our config even if the pidfile is gone.
find_our_containerd() {
  local p
  for p in /proc/[0-9]*; do
    p="${p#/proc/}"
    if is_our_containerd "$p"; then
      printf '%s\n' "$p"
      return 0
    fi
  done
  return 1
}

# Alive and not a zombie (PID 1 here may reap orphans late; kill -0 succeeds on zombies).
alive() {
  local state
  state="$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

healthy() {
  [ -S "$SOCK" ] && timeout 5 ctr --address "$SOCK" version >/dev/null 2>&1
}

wait_healthy() {
  local pid="$1" deadline=$((SECONDS + ${2:-30}))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if healthy; then return 0; fi
    if [ -n "$pid" ] && ! alive "$pid"; then return 2; fi
    sleep 0.2
  done
  return 1
}

# ------------------------------------------------------------------ install
ensure_packages() {
  local missing=()
  command -v containerd >/dev/null 2>&1 || missing+=(containerd)
  command -v ctr >/dev/null 2>&1 || missing+=(containerd)
  command -v runc >/dev/null 2>&1 || missing+=(runc)
  [ -x "$KTS_CNI_BIN_DIR/bridge" ] || missing+=(containernetworking-plugins)
  [ -x /bin/busybox ] || missing+=(busybox-static)
  if [ "${#missing[@]}" -eq 0 ]; then return 0; fi
  command -v apt-get >/dev/null 2>&1 || die "missing ${missing[*]} and apt-get is not available; install containerd, runc, CNI plugins (bin dir $KTS_CNI_BIN_DIR) and busybox-static yourself"
  log "installing containerd runc containernetworking-plugins busybox-static (missing: ${missing[*]})"
  local t0=$SECONDS
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y containerd runc containernetworking-plugins busybox-static
  log "packages installed in $((SECONDS - t0))s"
  command -v containerd >/dev/null 2>&1 || die "containerd still missing after apt-get install"
  [ -x "$KTS_CNI_BIN_DIR/bridge" ] || die "CNI bridge plugin not found in $KTS_CNI_BIN_DIR after install"
  [ -x /bin/busybox ] || die "/bin/busybox still missing after install"
}

# ------------------------------------------------------------------ config
overlay_works() {
  local t="$KTS_CONTAINERD_DIR/overlay-test.$$" ok=1
  rm -rf "$t"
  mkdir -p "$t/lower" "$t/upper" "$t/work" "$t/merged"
  echo x >"$t/lower/f"
  if mount -t overlay overlay -o "lowerdir=$t/lower,upperdir=$t/upper,workdir=$t/work" "$t/merged" 2>/dev/null; then
    if [ "$(cat "$t/merged/f" 2>/dev/null)" = x ] && echo y >"$t/merged/g" 2>/dev/null; then ok=0; fi
    umount "$t/merged" 2>/dev/null || umount -l "$t/merged" 2>/dev/null || true
  fi
  rm -rf "$t"
  return "$ok"
}

pick_snapshotter() {
  if [ -n "$KTS_CONTAINERD_SNAPSHOTTER" ]; then
    printf '%s\n' "$KTS_CONTAINERD_SNAPSHOTTER"
  elif overlay_works; then
    printf 'overlayfs\n'
  else
    warn "overlayfs mount test failed under $KTS_CONTAINERD_DIR; falling back to the native snapshotter (slower, uses more disk)"
    printf 'native\n'
  fi
}

write_if_changed() {
  # write_if_changed FILE (content on stdin)
  local f="$1" tmp="$1.tmp.$$"
  cat >"$tmp"
  if [ -f "$f" ] && cmp -s "$tmp" "$f"; then
    rm -f "$tmp"
  else
    mv -f "$tmp" "$f"
  fi
}

write_config() {
  local snapshotter="$1" template_line=""
  [ "$KTS_CNI_CONF_TEMPLATE" = 1 ] && template_line=$'\n'"      conf_template = \"$CNI_TEMPLATE\""
  mkdir -p "$KTS_CONTAINERD_DIR/root" "$KTS_CONTAINERD_DIR/opt" "$NETD" "$IMAGES_DIR" \
    "$KTS_CONTAINERD_RUN/state" "$KTS_CONTAINERD_RUN/cni"
  chmod 0711 "$KTS_CONTAINERD_DIR" "$KTS_CONTAINERD_RUN"
  write_if_changed "$CONFIG" <<EOF
# Generated by scripts/containerd.sh; edits are overwritten on "up".
version = 2
root = "$KTS_CONTAINERD_DIR/root"
state = "$KTS_CONTAINERD_RUN/state"
oom_score = 0

[grpc]
  address = "$SOCK"
  uid = 0
  gid = 0
  max_recv_message_size = 16777216
  max_send_message_size = 16777216

[ttrpc]
  address = "$SOCK.ttrpc"

[debug]
  level = "$KTS_CONTAINERD_LOG_LEVEL"

[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "$KTS_CONTAINERD_DIR/opt"

  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$PAUSE_IMAGE"
    # Required here: lowering oom_score_adj is forbidden, and the pause container asks for -998.
    restrict_oom_score_adj = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    disable_tcp_service = true
    enable_selinux = false
    # Keep pod network namespaces under our state dir so "down" can clean them.
    netns_mounts_under_state_dir = true
    max_container_log_line_size = 16384

    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "$snapshotter"
      default_runtime_name = "runc"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          Root = "$RUNC_ROOT"
          SystemdCgroup = false

    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "$KTS_CNI_BIN_DIR"
      conf_dir = "$NETD"
      max_conf_num = 1${template_line}
EOF

  # containerd 1.6 adds loopback itself (the "loopback" plugin from bin_dir).
  if [ "$KTS_CNI_CONF_TEMPLATE" = 1 ]; then
    # Go text/template over containerd's cniConfigTemplate (PodCIDRRanges: the CIDRs the kubelet sent).
    rm -f "$NETD"/*.conflist
    cni_conflist '[{{range $i, $range := .PodCIDRRanges}}{{if $i}}, {{end}}[{ "subnet": "{{$range}}" }]{{end}}]' |
      write_if_changed "$CNI_TEMPLATE"
  else
    rm -f "$CNI_TEMPLATE"
    cni_conflist "[[{ \"subnet\": \"$KTS_POD_CIDR\" }]]" | write_if_changed "$NETD/10-kubelet-ts.conflist"
  fi
}

# cni_conflist RANGES: the bridge network's configuration, with RANGES as its IPAM ranges.
cni_conflist() {
  cat <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NETWORK",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$KTS_CNI_BRIDGE",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": $1,
        "routes": [{ "dst": "0.0.0.0/0" }],
        "dataDir": "$KTS_CONTAINERD_RUN/cni/networks"
      }
    },
    {
      "type": "portmap",
      "capabilities": { "portMappings": true }
    }
  ]
}
EOF
}

# ------------------------------------------------------------------ images
image_listed() {
  # Not `ctr ... | grep -q`: with pipefail, grep quitting early can fail the pipeline (SIGPIPE).
  local list
  list="$(ctr_ -n k8s.io images ls -q 2>/dev/null)" || return 1
  grep -qxF "$1" <<<"$list"
}

ensure_image() {
  local kind="$1" ref="$2" snapshotter="$3"
  if image_listed "$ref"; then
    log "image $ref already present"
    return 0
  fi
  command -v node >/dev/null 2>&1 || die "node is required to build $ref"
  local tar="$IMAGES_DIR/$kind.tar" t0=$SECONDS
  node "$SCRIPT_DIR/build-oci-image.mjs" --kind "$kind" --ref "$ref" --out "$tar" >/dev/null
  ctr_ -n k8s.io images import --snapshotter "$snapshotter" "$tar" >&2
  image_listed "$ref" || die "import of $ref did not produce that image name (check $tar)"
  log "imported $ref in $((SECONDS - t0))s"
}

# ------------------------------------------------------------------ commands
cmd_up() {
  require_root up
  check_sock_len
  local t0=$SECONDS
  take_lock
  ensure_packages
  mkdir -p "$KTS_CONTAINERD_DIR" "$KTS_CONTAINERD_RUN"

  local pid=""
  if pid="$(running_pid)"; then
    :
  elif pid="$(find_our_containerd)"; then
    log "found our containerd (pid $pid) without a pidfile; adopting it"
    echo "$pid" >"$PIDFILE"
  else
    pid=""
  fi

  local snapshotter
  if [ -n "$pid" ]; then
    if ! wait_healthy "$pid" 30; then
      die "containerd (pid $pid) is running but not answering on $SOCK; see $LOGFILE, or run '$0 down' then '$0 up'"
    fi
    snapshotter="$(sed -n 's/^ *snapshotter = "\(.*\)"/\1/p' "$CONFIG" | head -1)"
    log "containerd already running (pid $pid)"
  else
    if healthy; then
      die "something else answers on $SOCK (not our containerd); stop it or set KTS_CONTAINERD_RUN"
    fi
    snapshotter="$(pick_snapshotter)"
    write_config "$snapshotter"
    rm -f "$SOCK" "$SOCK.ttrpc" "$PIDFILE"
    log "starting containerd (snapshotter $snapshotter, log $LOGFILE)"
    {
      echo "=== $(date -u +%FT%TZ) starting containerd --config $CONFIG"
    } >>"$LOGFILE"
    # setsid: own session, so a Ctrl-C in the caller's terminal does not reach it.
    # 9>&-: do not let the daemon inherit the lock fd.
    setsid nohup containerd --config "$CONFIG" </dev/null >>"$LOGFILE" 2>&1 9>&- &
    pid=$!
    echo "$pid" >"$PIDFILE"
    local rc=0
    wait_healthy "$pid" 30 || rc=$?
    if [ "$rc" -ne 0 ]; then
      tail -n 30 "$LOGFILE" >&2 || true
      if [ "$rc" -eq 2 ]; then die "containerd exited during startup; see $LOGFILE"; fi
      die "containerd (pid $pid) did not become ready on $SOCK within 30s; see $LOGFILE"
    fi
    log "containerd ready (pid $pid) after $((SECONDS - t0))s"
  fi

  ensure_image pause "$PAUSE_IMAGE" "${snapshotter:-overlayfs}"
  ensure_image busybox "$BUSYBOX_IMAGE" "${snapshotter:-overlayfs}"
  log "up done in $((SECONDS - t0))s"
  printf '%s\n' "$ENDPOINT"
}

# Kill leftover containers (runc root) and shims for our socket.
kill_leftovers() {
  # Containers first: runc delete --force kills them and removes their cgroups.
  if command -v runc >/dev/null 2>&1 && [ -d "$RUNC_ROOT" ]; then
    local ns id
    for ns in "$RUNC_ROOT"/*; do
      [ -d "$ns" ] || continue
      for id in $(runc --root "$ns" list -q 2>/dev/null); do
        warn "force-deleting leftover container ${id:0:13} (runc root $ns)"
        runc --root "$ns" delete --force "$id" >/dev/null 2>&1 || true
      done
    done
  fi
  local p cmd found=()
  for p in /proc/[0-9]*; do
    p="${p#/proc/}"
    cmd="$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline")" || continue
    case "$cmd" in
      *containerd-shim*-address\ "$SOCK"\ * | *containerd-shim*-address\ "$SOCK") found+=("$p") ;;
    esac
  done
  [ "${#found[@]}" -gt 0 ] || return 0
  warn "killing ${#found[@]} leftover containerd-shim process(es): ${found[*]}"
  kill -KILL "${found[@]}" 2>/dev/null || true
  sleep 0.2
}

# Remove ipMasq NAT rules/chains the bridge plugin left behind for pods whose
# CNI DEL never ran (containerd killed). Only called once all our pods are gone.
cleanup_iptables() {
  command -v iptables >/dev/null 2>&1 || return 0
  local rules rule chain n=0
  rules="$(iptables -t nat -S POSTROUTING 2>/dev/null | grep -F "name: \\\"$CNI_NETWORK\\\" id:")" || return 0
  while IFS= read -r rule; do
    [ -n "$rule" ] || continue
    chain="${rule##* -j }"
    # iptables -S output is shell-quoted (the comment); eval re-parses it.
    eval "iptables -t nat -D ${rule#-A }" 2>/dev/null || continue
    iptables -t nat -F "$chain" 2>/dev/null || true
    iptables -t nat -X "$chain" 2>/dev/null || true
    n=$((n + 1))
  done <<<"$rules"
  if [ "$n" -gt 0 ]; then log "removed $n stale CNI masquerade rule(s) for network $CNI_NETWORK"; fi
}

unmount_under() {
  # Unmount everything mounted under the given dirs, deepest first.
  local pass mp list
  for pass in 1 2 3; do
    list="$(awk -v a="$1/" -v b="$2/" '
      { mp = $5; gsub(/\\040/, " ", mp); if (index(mp, a) == 1 || index(mp, b) == 1) print mp }
    ' /proc/self/mountinfo | awk '{ print length($0) "\t" $0 }' | sort -rn | cut -f2-)"
    [ -n "$list" ] || return 0
    while IFS= read -r mp; do
      [ -n "$mp" ] || continue
      umount "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null || warn "could not unmount $mp"
    done <<<"$list"
  done
  awk -v a="$1/" -v b="$2/" '{ if (index($5, a) == 1 || index($5, b) == 1) found = 1 } END { exit !found }' \
    /proc/self/mountinfo && return 1
  return 0
}

# The pod bridge the CNI bridge plugin made for our network (a link that is a bridge, by our name).
remove_bridge() {
  [ -d "/sys/class/net/$KTS_CNI_BRIDGE/bridge" ] || return 0
  if ip link delete "$KTS_CNI_BRIDGE" 2>/dev/null; then
    log "removed bridge $KTS_CNI_BRIDGE"
  else
    warn "could not remove bridge $KTS_CNI_BRIDGE (ip link delete $KTS_CNI_BRIDGE)"
  fi
}

# True when every entry of the state dir is one this script makes (so removing it removes nothing else).
state_dir_is_ours() {
  local e name
  for e in "$KTS_CONTAINERD_DIR"/* "$KTS_CONTAINERD_DIR"/.[!.]*; do
    [ -e "$e" ] || continue
    name="${e##*/}"
    case "$name" in
      config.toml | containerd.log | root | opt | net.d | images | .lock | overlay-test.* | *.tmp.* | cni-conf-template.json) ;;
      *) return 1 ;;
    esac
  done
  return 0
}

cmd_down() {
  require_root down
  local t0=$SECONDS pid=""
  take_lock
  pid="$(running_pid)" || pid="$(find_our_containerd)" || pid=""

  if [ -n "$pid" ] && healthy; then
    if command -v node >/dev/null 2>&1; then
      log "removing all pod sandboxes via CRI"
      timeout 900 node "$SCRIPT_DIR/cri-cleanup.mjs" "$ENDPOINT" >&2 ||
        warn "cri-cleanup failed (exit $?); continuing with forced cleanup"
    else
      warn "node not found; skipping CRI cleanup, continuing with forced cleanup"
    fi
  elif [ -n "$pid" ]; then
    warn "containerd (pid $pid) is not answering; skipping CRI cleanup"
  fi

  if [ -n "$pid" ]; then
    log "stopping containerd (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + 20))
    while alive "$pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
    if alive "$pid"; then
      warn "containerd did not exit within 20s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.5
    fi
  fi

  kill_leftovers
  cleanup_iptables
  remove_bridge
  if [ -d "$KTS_CONTAINERD_RUN" ] || [ -d "$KTS_CONTAINERD_DIR" ]; then
    if unmount_under "$KTS_CONTAINERD_DIR" "$KTS_CONTAINERD_RUN"; then
      # --one-file-system: never descend into anything still mounted.
      rm -rf --one-file-system "$KTS_CONTAINERD_RUN"
      if state_dir_is_ours; then
        rm -rf --one-file-system "$KTS_CONTAINERD_DIR"
      else
        warn "$KTS_CONTAINERD_DIR holds files this script did not make; not removing it"
      fi
    else
      warn "mounts remain under $KTS_CONTAINERD_DIR or $KTS_CONTAINERD_RUN; not removing them"
    fi
  fi
  log "down done in $((SECONDS - t0))s (bridge, state and run dirs removed; the next up imports the images again)"
}

cmd_status() {
  local pid="" rc=0
  if pid="$(running_pid)" || pid="$(find_our_containerd)"; then
    if healthy; then
      echo "containerd: running (pid $pid), healthy"
    else
      echo "containerd: running (pid $pid), NOT answering on $SOCK"
      rc=1
    fi
  else
    echo "containerd: not running"
    rc=1
  fi
  echo "endpoint:   $ENDPOINT"
  echo "config:     $CONFIG"
  echo "log:        $LOGFILE"
  if [ "$rc" -eq 0 ]; then
    echo "version:    $(ctr_ version 2>/dev/null | awk '/Server:/{s=1} s && /Version:/{print $2; exit}')"
    echo "images (k8s.io):"
    ctr_ -n k8s.io images ls -q 2>/dev/null | sed 's/^/  /' || true
    local n
    n="$(ctr_ -n k8s.io containers ls -q 2>/dev/null | wc -l)" || n="?"
    echo "containers: $n"
  fi
  return "$rc"
}

cmd_env() {
  printf 'KTS_CRI_ENDPOINT=%s\n' "$ENDPOINT"
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) cmd_env ;;
  *)
    echo "usage: $0 {up|down|status|env}" >&2
    exit 2
    ;;
esac
