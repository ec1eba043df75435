#!/bin/bash
# Runs the Go kubelet v1.20.2 standalone on a static pod directory against the containerd at $KTS_CRI_ENDPOINT and prints
# "<file>\t<uid>" as the kubelet generated them (its V(5) "Generated UID" log line), plus the
# io.kubernetes.pod.uid label of every sandbox it created; then stops it and removes what it ran.
set -u
MANIFESTS="$1"; NODE="${2:-gonode12}"
ROOT=${TMPDIR:-/tmp}/gok-uids-root
EP="${KTS_CRI_ENDPOINT:-unix:///run/kubelet-ts-containerd/containerd.sock}"
SOCK="${EP#unix://}"
mkdir -p $ROOT
cat > ${TMPDIR:-/tmp}/gok-uids-config.yaml <<CFG
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
staticPodPath: $MANIFESTS
fileCheckFrequency: 2s
healthzPort: 0
readOnlyPort: 0
port: 10350
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
evictionHard: {}
CFG
/var/cache/kubelet-ts/kubernetes-1.20.2/bin/kubelet --config ${TMPDIR:-/tmp}/gok-uids-config.yaml --root-dir $ROOT \
  --container-runtime=remote --container-runtime-endpoint=$EP --pod-infra-container-image docker.io/kubelet-ts/pause:1.0 \
  --hostname-override $NODE --v=5 > ${TMPDIR:-/tmp}/gok-uids.log 2>&1 &
PID=$!
N=$(ls $MANIFESTS | grep -cE '\.(yaml|yml|json)$')
for i in $(seq 1 60); do
  sleep 1
  G=$(grep -o 'Generated UID "[0-9a-f]*" pod "[^"]*" from [^ ]*' ${TMPDIR:-/tmp}/gok-uids.log | sort -u | wc -l)
  [ "$G" -ge "$N" ] && break
done
sleep "${SANDBOX_WAIT:-10}"
grep -o 'Generated UID "[0-9a-f]*" pod "[^"]*" from [^ ]*' ${TMPDIR:-/tmp}/gok-uids.log | sort -u | sed -E 's/Generated UID "([0-9a-f]*)" pod "[^"]*" from (.*)/\2\t\1/'
for id in $(ctr -a "$SOCK" -n k8s.io containers ls -q 2>/dev/null); do
  ctr -a "$SOCK" -n k8s.io containers info $id 2>/dev/null | jq -r 'select(.Labels["io.cri-containerd.kind"]=="sandbox") | "sandbox\t\(.Labels["io.kubernetes.pod.name"])\t\(.Labels["io.kubernetes.pod.uid"])"'
done | sort -u
kill $PID; wait $PID 2>/dev/null
mount | grep -q " $ROOT " && umount $ROOT
node "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/cri-cleanup.mjs" $EP >/dev/null 2>&1
