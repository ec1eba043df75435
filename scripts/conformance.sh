#!/usr/bin/env bash
# Upstream's [NodeConformance] e2e tests (e2e.test v1.20.2, from the same source
# tree as the control plane) against ONE node agent, the only node of the
# project's cluster: kubelet-ts (--agent ts, the default) or the Go kubelet
# v1.20.2 (--agent go), on the project's containerd.
#
#   scripts/conformance.sh [run] [--agent ts|go] [--subset ci] [--focus RE] [--skip RE] [--nodes N] [--out DIR]
#                      builds what is missing (e2e binaries, test images), brings containerd and the
#                      control plane up if they are not, runs the suite; JUnit and a summary under
#                      .run/conformance/<agent>/ (or --out)
#   scripts/conformance.sh images   builds the stand-in test images and imports them into the project's containerd
#
# No registry is reachable: the images the tests name are built here from local
# binaries (busybox-static, upstream's agnhost and nonewprivs built from the tree,
# Debian's curl, nc.openbsd and dash) under localhost/e2e/, and e2e.test is pointed
# at them with KUBE_TEST_REPO_LIST. See docs/conformance.md.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
KTS_K8S_CACHE="${KTS_K8S_CACHE:-/var/cache/kubelet-ts/kubernetes-1.20.2}"
E2E_BIN="$KTS_K8S_CACHE/e2e"
IMAGES_DIR="${KTS_CONFORMANCE_IMAGES:-$KTS_K8S_CACHE/e2e-images}"
REPO="localhost/e2e"
REPO_LIST="$IMAGES_DIR/repo-list.yaml"

log() { printf '[conformance.sh] %s\n' "$*" >&2; }
die() {
  printf '[conformance.sh] ERROR: %s\n' "$*" >&2
  exit 1
}

ensure_packages() {
  local missing=()
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  command -v nc.openbsd >/dev/null 2>&1 || missing+=(netcat-openbsd)
  [ -x /bin/dash ] || missing+=(dash)
  [ -x /bin/busybox ] || missing+=(busybox-static)
  [ "${#missing[@]}" -gt 0 ] || return 0
  log "installing ${missing[*]} (for the agnhost stand-in image)"
  apt-get update >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >&2
}

# Copies a dynamically linked binary and the shared libraries it loads into a rootfs.
copy_with_libs() {
  local bin="$1" rootfs="$2" dest="$3" lib
  mkdir -p "$rootfs/$(dirname "$dest")"
  cp -L "$bin" "$rootfs/$dest"
  for lib in $(ldd "$bin" | grep -o '/[^ ]*' | sort -u); do
    [ -e "$rootfs$lib" ] && continue
    mkdir -p "$rootfs$(dirname "$lib")"
    cp -L "$lib" "$rootfs$lib"
  done
}

# A rootfs with busybox and its applets in /bin, /etc/passwd and the usual directories.
busybox_rootfs() {
  local r="$1" a
  rm -rf "$r"
  mkdir -p "$r"/{bin,dev,etc,proc,root,sys,tmp,usr/bin,var}
  chmod 1777 "$r/tmp"
  chmod 700 "$r/root"
  cp /bin/busybox "$r/bin/busybox"
  for a in $(/bin/busybox --list); do
    [ "$a" = busybox ] || ln -sf busybox "$r/bin/$a"
  done
  ln -sf ../../bin/busybox "$r/usr/bin/env"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$r/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' >"$r/etc/group"
}

ctr_() { ctr -a "${KTS_CRI_ENDPOINT#unix://}" -n k8s.io "$@"; }

# build_image NAME:TAG CONFIG_JSON: the rootfs in $work/NAME is packed and imported.
build_image() {
  local ref="$REPO/$1" config="$2" name="${1%%:*}" tar
  tar="$IMAGES_DIR/${1//[:\/]/_}.tar"
  printf '%s\n' "$config" >"$work/$name.json"
  node "$SCRIPT_DIR/build-oci-image.mjs" --kind dir --rootfs "$work/$name" --config "$work/$name.json" --ref "$ref" --out "$tar" >/dev/null
  ctr_ images import "$tar" >/dev/null
  log "imported $ref"
}

PATH_ENV='"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"'

cmd_images() {
  [ "$(id -u)" -eq 0 ] || die "'images' must run as root (it imports into containerd)"
  ensure_packages
  [ -x "$E2E_BIN/agnhost" ] && [ -x "$E2E_BIN/nnp" ] || bash "$SCRIPT_DIR/control-plane.sh" build-e2e
  eval "$(bash "$SCRIPT_DIR/containerd.sh" env)"
  mkdir -p "$IMAGES_DIR"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN

  # busybox:1.29 (docker.io/library): busybox, Cmd sh.
  busybox_rootfs "$work/busybox"
  build_image busybox:1.29 "{\"Env\":[$PATH_ENV],\"Cmd\":[\"sh\"]}"

  # agnhost:2.21: upstream's agnhost from the tree laid out as the real image (test/images/agnhost/Dockerfile:
  # Entrypoint /agnhost, Cmd pause, /agnhost-2 linking to it, /uploads, porter's certificate), on busybox with
  # Debian's curl, nc (openbsd: the networking tests use nc -u) and dash as /bin/sh.
  busybox_rootfs "$work/agnhost"
  cp "$E2E_BIN/agnhost" "$work/agnhost/agnhost"
  copy_with_libs "$(command -v curl)" "$work/agnhost" usr/bin/curl
  rm -f "$work/agnhost/bin/nc" "$work/agnhost/bin/sh"
  copy_with_libs "$(command -v nc.openbsd)" "$work/agnhost" bin/nc
  copy_with_libs /bin/dash "$work/agnhost" bin/sh
  mkdir -p "$work/agnhost/etc/ssl/certs" "$work/agnhost/uploads"
  ln -s agnhost "$work/agnhost/agnhost-2"
  local porter="$KTS_K8S_CACHE/src/kubernetes-1.20.2/test/images/agnhost/porter"
  [ -f "$porter/localhost.crt" ] && cp "$porter/localhost.crt" "$porter/localhost.key" "$work/agnhost/"
  build_image agnhost:2.21 "{\"Env\":[$PATH_ENV],\"Entrypoint\":[\"/agnhost\"],\"Cmd\":[\"pause\"]}"

  # nginx and httpd: busybox httpd serving a page on port 80 stands in for the real servers.
  local tag dirpath
  for tag in nginx:1.14-alpine nginx:1.15-alpine httpd:2.4.38-alpine httpd:2.4.39-alpine; do
    busybox_rootfs "$work/${tag%%:*}"
    dirpath=/usr/share/nginx/html
    [ "${tag%%:*}" = httpd ] && dirpath=/usr/local/apache2/htdocs
    mkdir -p "$work/${tag%%:*}$dirpath"
    printf '<html><body>kubelet-ts stand-in for %s</body></html>\n' "$tag" >"$work/${tag%%:*}$dirpath/index.html"
    build_image "$tag" "{\"Env\":[$PATH_ENV],\"Cmd\":[\"httpd\",\"-f\",\"-p\",\"80\",\"-h\",\"$dirpath\"]}"
  done

  # pause:3.2: sleeps until TERM, as the kubelet's pause.
  busybox_rootfs "$work/pause"
  build_image pause:3.2 "{\"Env\":[$PATH_ENV],\"Entrypoint\":[\"/bin/sh\",\"-c\",\"trap 'exit 0' TERM INT; while :; do sleep 3600 & wait; done\"]}"

  # nonewprivs:1.0: upstream's nnp, setuid root, prints its effective uid (Cmd nnp).
  busybox_rootfs "$work/nonewprivs"
  mkdir -p "$work/nonewprivs/usr/local/bin"
  install -m 4755 "$E2E_BIN/nnp" "$work/nonewprivs/usr/local/bin/nnp"
  build_image nonewprivs:1.0 "{\"Env\":[$PATH_ENV],\"Cmd\":[\"nnp\"]}"

  # nonroot:1.0: busybox, USER 1234.
  busybox_rootfs "$work/nonroot"
  build_image nonroot:1.0 "{\"Env\":[$PATH_ENV],\"Cmd\":[\"sh\"],\"User\":\"1234\"}"

  # Every registry the tests name maps to the local images, but invalidRegistry: a loopback port that refuses
  # at once (no DNS query leaves the machine), for the tests that expect a pull to fail.
  cat >"$REPO_LIST" <<EOF
dockerLibraryRegistry: $REPO
e2eRegistry: $REPO
e2eVolumeRegistry: $REPO
promoterE2eRegistry: $REPO
buildImageRegistry: $REPO
gcRegistry: $REPO
sigStorageRegistry: $REPO
gcrReleaseRegistry: $REPO
sampleRegistry: $REPO
invalidRegistry: 127.0.0.1:1/invalid
gcAuthenticatedRegistry: 127.0.0.1:1/authenticated
privateRegistry: 127.0.0.1:1/private
EOF
  log "images ready; KUBE_TEST_REPO_LIST=$REPO_LIST"
}

cmd_run() {
  [ "$(id -u)" -eq 0 ] || die "conformance runs must be root (containerd, the agent's mounts)"
  bash "$SCRIPT_DIR/control-plane.sh" build
  bash "$SCRIPT_DIR/control-plane.sh" build-e2e
  bash "$SCRIPT_DIR/containerd.sh" status >/dev/null 2>&1 || bash "$SCRIPT_DIR/containerd.sh" up >/dev/null
  bash "$SCRIPT_DIR/control-plane.sh" status >/dev/null 2>&1 || bash "$SCRIPT_DIR/control-plane.sh" up
  cmd_images
  (cd "$ROOT" && node scripts/prepare-run.mjs)
  eval "$(bash "$SCRIPT_DIR/containerd.sh" env)"
  eval "$(bash "$SCRIPT_DIR/control-plane.sh" env)"
  export KTS_CRI_ENDPOINT KTS_KUBECONFIG KTS_APISERVER KTS_K8S_BIN KTS_CP_DIR
  export KTS_E2E_BIN="$E2E_BIN" KUBE_TEST_REPO_LIST="$REPO_LIST"
  cd "$ROOT"
  exec node --import tsx test/conformance/node-conformance.ts "$@"
}

case "${1:-run}" in
  images) cmd_images ;;
  run)
    [ $# -gt 0 ] && shift
    cmd_run "$@"
    ;;
  --*) cmd_run "$@" ;;
  *)
    echo "usage: $0 [run] [--agent ts|go] [--subset ci] [--focus RE] [--skip RE] [--nodes N] [--out DIR] | images" >&2
    exit 2
    ;;
esac
