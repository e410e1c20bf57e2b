#!/usr/bin/env bash
# Starts a real etcd + kube-apiserver (and, when asked, kube-controller-manager) on loopback in a temp dir,
# writes a kubeconfig, and stops them all on exit.
#
# Usage:
#   scripts/apiserver/start.sh -- <command> [args...]   run the command with KUBECONFIG etc. set, then stop
#   scripts/apiserver/start.sh                          print the connection details, serve until Ctrl-C
#   scripts/apiserver/start.sh --until-stdin-closes     as above, but also stop when stdin reaches EOF
#                                                       (what test/apiserver/harness.ts uses, so a crashed
#                                                       test runner cannot leave the servers behind)
#
# Everything lives in one `mktemp -d` directory: the etcd data dir, a CA and the apiserver's serving
# certificate (openssl, SANs 127.0.0.1 and localhost), the service-account key pair, a static bearer token
# for a `system:masters` user, the logs and `kubeconfig`. Ports are free loopback ports picked at start.
# On any exit — success, failure, Ctrl-C, SIGTERM — both servers get SIGTERM (SIGKILL after a grace
# period) and the directory is removed (kept when KUBE_INFORMER_KEEP_DIR=1).
#
# Once ready, stdout gets one line `KUBE_INFORMER_APISERVER_READY <json>` with kubeConfigPath, server,
# token, caFile, etcdEndpoint and dir, and `<dir>/env` holds the same as shell assignments
# (KUBECONFIG, KUBE_APISERVER_URL, KUBE_APISERVER_TOKEN, ETCD_ENDPOINT). A command run with `--` sees
# those variables in its environment.
#
# Environment:
#   KUBE_APISERVER_BIN / ETCD_BIN   use these binaries instead of scripts/apiserver/build.sh's
#   KUBE_APISERVER_EXTRA_ARGS       extra kube-apiserver flags, space-separated (e.g. --watch-cache=false)
#   KUBE_INFORMER_READY_TIMEOUT     seconds to wait for etcd and /readyz (default 180)
#   KUBE_INFORMER_CONTROLLER_MANAGER=1   also run kube-controller-manager (deployment, replicaset,
#                                   endpointslice, garbage collector, namespace, … : its `*` set), with the
#                                   kubeconfig's user, the service-account key and the CA; its pid is
#                                   controllerManagerPid in the ready line (0 when not asked for)
#   KUBE_CONTROLLER_MANAGER_BIN     its binary instead of build.sh's
#   KUBE_CONTROLLER_MANAGER_EXTRA_ARGS   extra flags, space-separated (e.g. --controllers=deployment,replicaset)
#   KUBE_INFORMER_KEEP_DIR=1        keep the temp dir (logs, certs) after exit
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lifeline=stdin-ignored
if [ "${1-}" = "--until-stdin-closes" ]; then lifeline=stdin; shift; fi
if [ "${1-}" = "--" ]; then shift; elif [ $# -gt 0 ]; then echo "start.sh: unknown argument $1 (see the header)" >&2; exit 2; fi

timeout=${KUBE_INFORMER_READY_TIMEOUT:-180}
token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
user=kube-informer-admin

dir=$(mktemp -d "${TMPDIR:-/tmp}/kube-informer-apiserver.XXXXXX")
etcd_pid=""
api_pid=""
kcm_pid=""
with_kcm=${KUBE_INFORMER_CONTROLLER_MANAGER:-0}

log() { echo "start.sh: $*" >&2; }

# Stops one process: SIGTERM, then SIGKILL if it is still there after the grace period.
stop_pid() {
  local pid=$1 name=$2 i
  [ -n "$pid" ] || return 0
  kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  # An arithmetic loop: bash 5.2 can crash on a command substitution inside an EXIT trap after `wait`.
  for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then log "$name did not stop after SIGTERM; sending SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; fi
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  local status=$?
  trap - EXIT INT TERM HUP
  if [ "$status" -ne 0 ] && [ "$status" -ne 130 ] && [ "$status" -ne 143 ] && [ "$status" -ne 129 ]; then
    for f in controller-manager apiserver etcd; do
      [ -s "$dir/$f.log" ] && { log "last lines of $f.log:"; tail -n 30 "$dir/$f.log" >&2; }
    done
  fi
  stop_pid "$kcm_pid" kube-controller-manager   # the clients of the apiserver first
  stop_pid "$api_pid" kube-apiserver   # the apiserver before etcd, so it does not spin on a vanished etcd
  stop_pid "$etcd_pid" etcd
  if [ "${KUBE_INFORMER_KEEP_DIR:-0}" = 1 ]; then log "kept $dir"; else rm -rf "$dir"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# Binaries: built (or found in the cache) by build.sh unless given.
if [ -z "${KUBE_APISERVER_BIN-}" ] || [ -z "${ETCD_BIN-}" ] || { [ "$with_kcm" = 1 ] && [ -z "${KUBE_CONTROLLER_MANAGER_BIN-}" ]; }; then
  bin=$("$here/build.sh")
  KUBE_APISERVER_BIN=${KUBE_APISERVER_BIN:-$bin/kube-apiserver}
  KUBE_CONTROLLER_MANAGER_BIN=${KUBE_CONTROLLER_MANAGER_BIN:-$bin/kube-controller-manager}
  ETCD_BIN=${ETCD_BIN:-$bin/etcd}
fi

# Three distinct free loopback ports, held open together while they are picked.
read -r etcd_port peer_port api_port kcm_port < <(node -e '
  const net = require("node:net");
  const servers = [0, 1, 2, 3].map(() => net.createServer());
  Promise.all(servers.map((s) => new Promise((r) => s.listen(0, "127.0.0.1", r)))).then(() => {
    console.log(servers.map((s) => s.address().port).join(" "));
    servers.forEach((s) => s.close());
  });')

# Certificates and keys.
pki="$dir/pki"
mkdir -p "$pki"
(
  cd "$pki"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -keyout ca.key -out ca.crt -subj "/CN=kube-informer-test-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout serving.key -out serving.csr -subj "/CN=kube-apiserver" 2>/dev/null
  printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" "extendedKeyUsage=serverAuth" \
    "keyUsage=critical,digitalSignature,keyEncipherment" > serving.ext
  openssl x509 -req -in serving.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile serving.ext \
    -out serving.crt 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  printf '%s,%s,%s,"system:masters"\n' "$token" "$user" "$user" > tokens.csv
  chmod 600 ./*.key tokens.csv
)

# etcd. --unsafe-no-fsync only exists from 3.5 on; it makes a throwaway etcd much faster on slow disks.
etcd_endpoint="http://127.0.0.1:$etcd_port"
etcd_args=(
  --name=kube-informer --data-dir="$dir/etcd" --log-level=warn
  --listen-client-urls="$etcd_endpoint" --advertise-client-urls="$etcd_endpoint"
  --listen-peer-urls="http://127.0.0.1:$peer_port" --initial-advertise-peer-urls="http://127.0.0.1:$peer_port"
  --initial-cluster="kube-informer=http://127.0.0.1:$peer_port"
)
etcd_version=$("$ETCD_BIN" --version)
case "$etcd_version" in *"etcd Version: 3.4."*) ;; *) etcd_args+=(--unsafe-no-fsync) ;; esac
start_etcd() { "$ETCD_BIN" "${etcd_args[@]}" >> "$dir/etcd.log" 2>&1 & etcd_pid=$!; }

# Fails unless $1 (a pid) is alive; used while waiting so a crash is reported at once, not at the timeout.
alive() { kill -0 "$1" 2>/dev/null || { log "$2 exited during start-up"; exit 1; }; }

wait_etcd() {
  until curl -fsS --max-time 2 "$etcd_endpoint/health" 2>/dev/null | grep -q '"health":"true"'; do
    alive "$etcd_pid" etcd
    [ "$SECONDS" -lt "$deadline" ] || { log "etcd not healthy after ${timeout}s"; exit 1; }
    sleep 0.2
  done
}

deadline=$((SECONDS + timeout))
start_etcd
wait_etcd

# kube-apiserver. The etcd compaction loop is off so that tests decide when history is compacted.
server="https://127.0.0.1:$api_port"
api_args=(
  --etcd-servers="$etcd_endpoint" --etcd-compaction-interval=0
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$api_port"
  --cert-dir="$dir/apiserver-certs"
  --tls-cert-file="$pki/serving.crt" --tls-private-key-file="$pki/serving.key"
  --token-auth-file="$pki/tokens.csv" --authorization-mode=RBAC --anonymous-auth=false
  --service-account-issuer=https://kubernetes.default.svc.cluster.local
  --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key"
  --service-cluster-ip-range=10.96.0.0/16
  --endpoint-reconciler-type=none   # 1.37 refuses a loopback advertise address for the kubernetes Service's endpoints
)
# Server-side sharded list and watch (KEP-5866, alpha since 1.36; docs/sharding.md), when the binary knows
# the gate: `--version` prints e.g. "Kubernetes v1.37.2".
api_minor=$("$KUBE_APISERVER_BIN" --version 2>/dev/null | sed -n 's/^Kubernetes v1\.\([0-9]*\)\..*/\1/p')
[ "${api_minor:-0}" -ge 36 ] && api_args+=(--feature-gates=ShardedListAndWatch=true)
# shellcheck disable=SC2206 # word splitting of the extra flags is intended
[ -z "${KUBE_APISERVER_EXTRA_ARGS-}" ] || api_args+=(${KUBE_APISERVER_EXTRA_ARGS})
start_api() { "$KUBE_APISERVER_BIN" "${api_args[@]}" >> "$dir/apiserver.log" 2>&1 & api_pid=$!; }
wait_api() {
  until curl -fsS --max-time 2 --cacert "$pki/ca.crt" -H "Authorization: Bearer $token" "$server/readyz" 2>/dev/null | grep -q '^ok$'; do
    alive "$api_pid" kube-apiserver
    alive "$etcd_pid" etcd
    [ "$SECONDS" -lt "$deadline" ] || { log "kube-apiserver /readyz not ok after ${timeout}s"; exit 1; }
    sleep 0.2
  done
}
start_api
wait_api

kubeconfig="$dir/kubeconfig"
cat > "$kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kube-informer
  cluster:
    server: $server
    certificate-authority-data: $(base64 -w0 < "$pki/ca.crt")
users:
- name: $user
  user:
    token: $token
contexts:
- name: kube-informer
  context:
    cluster: kube-informer
    user: $user
current-context: kube-informer
EOF
chmod 600 "$kubeconfig"
cat > "$dir/env" <<EOF
export KUBECONFIG='$kubeconfig'
export KUBE_APISERVER_URL='$server'
export KUBE_APISERVER_TOKEN='$token'
export ETCD_ENDPOINT='$etcd_endpoint'
EOF
# shellcheck disable=SC1091
. "$dir/env"

if [ "$with_kcm" = 1 ]; then
  kcm_args=(
    --kubeconfig="$kubeconfig" --controllers='*' --leader-elect=false
    --bind-address=127.0.0.1 --secure-port="$kcm_port" --cert-dir="$dir/controller-manager-certs"
    --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt"
    --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key"
    --use-service-account-credentials=false --service-cluster-ip-range=10.96.0.0/16
    --kube-api-qps=100 --kube-api-burst=200
  )
  [ -z "${KUBE_CONTROLLER_MANAGER_EXTRA_ARGS-}" ] || kcm_args+=(${KUBE_CONTROLLER_MANAGER_EXTRA_ARGS})
  "$KUBE_CONTROLLER_MANAGER_BIN" "${kcm_args[@]}" > "$dir/controller-manager.log" 2>&1 &
  kcm_pid=$!
  until curl -fsSk --max-time 2 "https://127.0.0.1:$kcm_port/healthz" 2>/dev/null | grep -q '^ok$'; do
    alive "$kcm_pid" kube-controller-manager
    alive "$api_pid" kube-apiserver
    [ "$SECONDS" -lt "$deadline" ] || { log "kube-controller-manager /healthz not ok after ${timeout}s"; exit 1; }
    sleep 0.2
  done
fi
log "ready in ${SECONDS}s: $server (etcd $etcd_endpoint)${kcm_pid:+, kube-controller-manager pid $kcm_pid}, KUBECONFIG=$kubeconfig"
printf 'KUBE_INFORMER_APISERVER_READY {"kubeConfigPath":"%s","server":"%s","token":"%s","caFile":"%s","etcdEndpoint":"%s","dir":"%s","apiServerPid":%d,"etcdPid":%d,"controllerManagerPid":%d}\n' \
  "$kubeconfig" "$server" "$token" "$pki/ca.crt" "$etcd_endpoint" "$dir" "$api_pid" "$etcd_pid" "${kcm_pid:-0}"

if [ $# -gt 0 ]; then
  status=0
  "$@" || status=$?
  exit "$status"
fi

# Faults on request (the harness's restart()): SIGUSR1 kills kube-apiserver with SIGKILL and starts it
# again, SIGUSR2 does the same to etcd (same data dir); each prints `KUBE_INFORMER_RESTARTED <name>`
# once the server is back (the apiserver's /readyz ok).
restart=""
trap 'restart=kube-apiserver' USR1
trap 'restart=etcd' USR2
restart_now() {
  local what=$restart
  restart=""
  deadline=$((SECONDS + timeout))
  if [ "$what" = kube-apiserver ]; then
    kill -KILL "$api_pid" 2>/dev/null || true; wait "$api_pid" 2>/dev/null || true
    start_api
  else
    kill -KILL "$etcd_pid" 2>/dev/null || true; wait "$etcd_pid" 2>/dev/null || true
    start_etcd
    wait_etcd
  fi
  wait_api
  log "restarted $what"
  echo "KUBE_INFORMER_RESTARTED $what"
}

# Serve until a signal, a server dies, or (with --until-stdin-closes) stdin reaches EOF.
while kill -0 "$api_pid" 2>/dev/null && kill -0 "$etcd_pid" 2>/dev/null && { [ -z "$kcm_pid" ] || kill -0 "$kcm_pid" 2>/dev/null; }; do
  if [ "$lifeline" = stdin ]; then
    rc=0; read -r -t 1 _ || rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -gt 128 ] || exit 0   # EOF: whoever started us is gone or done
  else
    sleep 1
  fi
  [ -z "$restart" ] || restart_now
done
log "a server exited on its own"
exit 1
