# e2e/node/node.sh - the test bed's node, sourced by e2e/cluster for `up NAME --node`.
#
# One node per cluster: containerd v2 (CRI) with Debian's runc, a kubelet, and the pods, all
# in a network namespace this file creates:
#
#   host netns                                  netns tg-NAME (the node)
#   tgnodeN 10.250.N.1/24  <--- veth --->  eth0 10.250.N.200/24, default route via .1
#     kube-apiserver listens here, :443         kubelet, containerd, bridge cni0 10.251.N.1/24
#     route 10.251.N.0/24 via 10.250.N.200        pods 10.251.N.2-254 (bridge + host-local CNI)
#
# The apiserver's Service range is 10.250.N.0/25, so the `kubernetes` Service's ClusterIP
# (the range's first address) is the apiserver's own address and port: pods reach it through
# the in-cluster config without kube-proxy.  Nothing talks to any address outside these two
# subnets and loopback.  State: $dir/node/ (config, kubelet root, containerd root and state,
# pod logs, CNI IPAM) plus these things outside it, which `node_down` removes:
#   the netns and the veth pair; the containers' cgroups /sys/fs/cgroup/*/k8s.io/ID; the sysctls the
#   kubelet sets (saved in node/sysctl.saved, written back); CNI cache files of network tg-NAME.
# Functions here use e2e/cluster's helpers: log, die, start, stop_group, pid_of, gone, alive,
# is_ours, issue, write_kubeconfig.

node_sysctls=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes)
node_cgroup_controllers=(cpu cpuacct cpuset memory devices freezer blkio pids systemd)

# node_load: read $dir/node/env (the addresses picked at `up`) into node_* variables.
node_load() {
  [ -f "$dir/node/env" ] || return 1
  # shellcheck disable=SC1091
  . "$dir/node/env"
}

node_enabled() { [ -f "$dir/node/env" ]; }

# node_pick_subnet: the first N in 1..250 whose 10.250.N.0/24 no interface uses yet.
node_pick_subnet() {
  local n used
  used=$(ip -4 -o addr show | awk '{ print $4 }')
  for ((n = 1; n <= 250; n++)); do
    grep -q "^10\.250\.$n\." <<<"$used" || { ip link show "tgnode$n" >/dev/null 2>&1 || { echo "$n"; return 0; }; }
  done
  return 1
}

# node_plan: pick the addresses and write $dir/node/env; sets node_* for start_apiserver.
node_plan() {
  local n
  mkdir -p "$dir/node"
  n=$(node_pick_subnet) || die "no free 10.250.N.0/24 for the node"
  cat > "$dir/node/env" <<EOF
node_n=$n
node_netns=tg-$name
node_veth=tgnode$n
node_host_ip=10.250.$n.1
node_ip=10.250.$n.200
node_service_range=10.250.$n.0/25
node_pod_subnet=10.251.$n.0/24
node_name=$name-node
EOF
  node_load
}

# node_net_up: the netns, the veth pair, addresses, routes.  Forwarding is switched on
# inside the node's netns only (pods <-> apiserver); the host's own settings are untouched.
node_net_up() {
  ip netns add "$node_netns"
  ip link add "$node_veth" type veth peer name eth0 netns "$node_netns"
  ip addr add "$node_host_ip/24" dev "$node_veth"
  ip link set "$node_veth" up
  ip -n "$node_netns" link set lo up
  ip -n "$node_netns" addr add "$node_ip/24" dev eth0
  ip -n "$node_netns" link set eth0 up
  ip -n "$node_netns" route add default via "$node_host_ip"
  ip route add "$node_pod_subnet" via "$node_ip" dev "$node_veth"
  nsenter --net="/run/netns/$node_netns" sysctl -q -w net.ipv4.ip_forward=1
}

node_net_down() {
  ip netns pids "$node_netns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
  ip link del "$node_veth" 2>/dev/null || true
  ip netns del "$node_netns" 2>/dev/null || true
}

# node_pki: the kubelet's client cert (system:node:NAME in system:nodes, for the Node
# authorizer) and serving cert, and the apiserver's client cert for the kubelet, all from
# the cluster CA with openssl: no CSR, so nothing has to approve anything.
node_pki() {
  local client="basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
  issue kubelet "/O=system:nodes/CN=system:node:$node_name" "$client"
  issue kubelet-serving "/CN=$node_name" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=IP:$node_ip,DNS:$node_name"
  issue apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "$client"
  issue scheduler "/CN=system:kube-scheduler" "$client"
  chmod 600 "$pki"/*.key
}

# node_apiserver_flags: what a node needs from the apiserver, appended by start_apiserver.
node_apiserver_flags() {
  node_apiserver_args=(
    --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt"
    --kubelet-client-key "$pki/apiserver-kubelet-client.key"
    --kubelet-certificate-authority "$pki/ca.crt"
    # The node's name does not resolve; its InternalIP does.
    --kubelet-preferred-address-types InternalIP
    # No kube-proxy: webhooks and aggregated APIs behind a Service are dialled at an endpoint.
    --enable-aggregator-routing=true
  )
}

# With cgroupsPerQOS false the kubelet gives no cgroup parent, so runc puts every container
# of this node at /k8s.io/<container id> in each hierarchy (shared with any other containerd
# using that namespace).  Ours are the ids in our containerd's task state: kill what is left
# in their cgroups and remove them, whatever the runtime did or did not clean up.
node_cgroups_down() {
  local ids id c i pids
  ids=$(ls "$dir/node/containerd/state/io.containerd.runtime.v2.task/k8s.io" 2>/dev/null || true)
  [ -n "$ids" ] || return 0
  for id in $ids; do
    for ((i = 0; i < 50; i++)); do
      pids=$(cat "/sys/fs/cgroup/pids/k8s.io/$id/cgroup.procs" 2>/dev/null || true)
      [ -z "$pids" ] && break
      # shellcheck disable=SC2086
      kill -KILL $pids 2>/dev/null || true
      sleep 0.1
    done
    for c in "${node_cgroup_controllers[@]}"; do
      rmdir "/sys/fs/cgroup/$c/k8s.io/$id" 2>/dev/null || true
    done
  done
  # The parents runc made, unless another containerd uses them.
  for c in "${node_cgroup_controllers[@]}"; do rmdir "/sys/fs/cgroup/$c/k8s.io" 2>/dev/null || true; done
  return 0
}

# A shim killed before it could clean up leaves its socket in /run/containerd/s, named by a
# hash of containerd's address, the namespace and the task id.  IDS: the node's task ids.
node_shim_sockets_down() {
  local id
  for id in "$@"; do
    rm -f "/run/containerd/s/$(printf '%s' "$dir/node/containerd.sock/k8s.io/$id" | sha256sum | cut -c1-64)"
  done
  rmdir /run/containerd/s /run/containerd 2>/dev/null || true
}

node_sysctls_save() {
  local k
  for k in "${node_sysctls[@]}"; do
    echo "$k=$(sysctl -n "$k")"
  done > "$dir/node/sysctl.saved"
}

node_sysctls_restore() {
  [ -f "$dir/node/sysctl.saved" ] || return 0
  local line
  while read -r line; do
    sysctl -q -w "$line" >/dev/null 2>&1 || log "could not restore $line"
  done < "$dir/node/sysctl.saved"
}

node_write_configs() {
  local nd=$dir/node pause_image
  pause_image=$(cat "$node_bin/pause.image")
  mkdir -p "$nd/cni/net.d" "$nd/cni/ipam" "$nd/kubelet" "$nd/pod-logs" "$nd/containerd/root" \
    "$nd/containerd/state" "$nd/runc"
  cat > "$nd/cni/net.d/10-tenantgate.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "tg-$name",
  "plugins": [
    {
      "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
      "ipam": {
        "type": "host-local", "dataDir": "$nd/cni/ipam",
        "ranges": [[{"subnet": "$node_pod_subnet"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
EOF
  cat > "$nd/containerd.toml" <<EOF
version = 3
root = "$nd/containerd/root"
state = "$nd/containerd/state"
disabled_plugins = ["io.containerd.nri.v1.nri"]

[grpc]
  address = "$nd/containerd.sock"

[ttrpc]
  address = "$nd/containerd.sock.ttrpc"

[debug]
  address = ""

[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = "$pause_image"

  [plugins.'io.containerd.cri.v1.runtime']
    netns_mounts_under_state_dir = true
    # The kubelet asks for oom_score_adj -998 for sandboxes; lowering it needs
    # CAP_SYS_RESOURCE, which this kind of machine does not give even to root.
    restrict_oom_score_adj = true
    enable_cdi = false
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        Root = "$nd/runc"
        SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ["/usr/lib/cni"]
      conf_dir = "$nd/cni/net.d"
      # containerd brings each pod's lo up itself: no loopback plugin, whose results
      # cache would outlive the node in /var/lib/cni.
      use_internal_loopback = true

  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = "127.0.0.1"
EOF
  # Workarounds for this kind of machine (cgroup v1 in hybrid mode, swap not checked):
  # failCgroupV1 false, cgroupfs driver, no per-QoS cgroups (so no node-allocatable
  # enforcement), failSwapOn false.  resolvConf "": pods get no nameserver, so nothing
  # leaves the bed's two subnets.  Eviction thresholds low: the disk is shared.
  # syncFrequency 10m: each periodic pod sync rewrites projected volumes with the kubelet's
  # own token; test_deploy.py rotates tokens in them by hand and needs them to stay put.
  cat > "$nd/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
syncFrequency: 10m
containerRuntimeEndpoint: unix://$nd/containerd.sock
address: $node_ip
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: $pki/kubelet-serving.crt
tlsPrivateKeyFile: $pki/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization:
  mode: Webhook
podLogsDir: $nd/pod-logs
resolvConf: ""
maxPods: 40
serializeImagePulls: true
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 50Mi
  nodefs.available: 1%
  imagefs.available: 1%
  nodefs.inodesFree: 1%
EOF
}

# node_start: containerd, the pause image, the kubelet; wait for the Node to be Ready.
node_start() {
  local nd=$dir/node i
  node_bin=$(cat "$nd/bindir")
  node_write_configs
  node_sysctls_save
  write_kubeconfig "$nd/kubelet.kubeconfig" "system:node:$node_name" "$pki/kubelet.crt" "$pki/kubelet.key"

  # The shim (containerd-shim-runc-v2) is found on PATH; runc is Debian's.
  start containerd env PATH="$node_bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    nsenter --net="/run/netns/$node_netns" "$node_bin/containerd" --config "$nd/containerd.toml"
  for ((i = 0; i < 300; i++)); do
    gone "$(pid_of containerd)" && die "containerd exited during startup"
    node_ctr version >/dev/null 2>&1 && break
    sleep 0.1
  done
  node_ctr version >/dev/null 2>&1 || die "containerd did not answer in 30 s"
  node_ctr images import "$node_bin/pause.oci.tar" >/dev/null || die "could not import the pause image"

  start kubelet nsenter --net="/run/netns/$node_netns" "$node_bin/kubelet" \
    --config "$nd/kubelet.yaml" --kubeconfig "$nd/kubelet.kubeconfig" \
    --root-dir "$nd/kubelet" --hostname-override "$node_name" --node-ip "$node_ip" --v 1
  for ((i = 0; i < ready_timeout * 2; i++)); do
    gone "$(pid_of kubelet)" && die "kubelet exited during startup"
    [ "$("$kubectl" --kubeconfig "$dir/kubeconfig" get node "$node_name" \
      -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ] && return 0
    sleep 0.5
  done
  die "node $node_name did not become Ready in ${ready_timeout}s"
}

# node_ctr ARGS: ctr against this node's containerd, in the CRI's namespace.
node_ctr() {
  "$(cat "$dir/node/bindir")/ctr" --address "$dir/node/containerd.sock" --namespace k8s.io "$@"
}

# node_import ARCHIVE...: load oci-archives into the node, where the kubelet finds them.
node_import() {
  local a
  for a in "$@"; do
    node_ctr images import "$a" >/dev/null || die "could not import $a"
    log "imported $a"
  done
}

# node_down: everything node_plan/node_net_up/node_start made, in reverse.  Best effort at
# each step, so a half-started node is removed too.  Called after the kubelet is stopped.
node_down() {
  node_load || return 0
  local id sock=$dir/node/containerd.sock ids
  ids=$(ls "$dir/node/containerd/state/io.containerd.runtime.v2.task/k8s.io" 2>/dev/null || true)
  if [ -S "$sock" ] && alive containerd; then
    for id in $(node_ctr tasks ls -q 2>/dev/null); do
      node_ctr tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
    done
  fi
  node_cgroups_down
  if [ -S "$sock" ] && alive containerd; then
    for id in $(node_ctr tasks ls -q 2>/dev/null); do
      node_ctr tasks delete -f "$id" >/dev/null 2>&1 || true
    done
    for id in $(node_ctr containers ls -q 2>/dev/null); do
      node_ctr containers delete "$id" >/dev/null 2>&1 || true
    done
  fi
  stop_group "$(pid_of containerd)" 10
  node_kill_strays
  # shellcheck disable=SC2086
  node_shim_sockets_down $ids
  node_unmount
  node_net_down
  node_sysctls_restore
  rm -f /var/lib/cni/results/"tg-$name"-* 2>/dev/null || true
}

# Shims re-parent themselves away from containerd: find them by their -address argument.
node_kill_strays() {
  local p
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    is_ours "$p" || continue
    case $(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null) in
      *containerd-shim*) kill -KILL "$p" 2>/dev/null || true ;;
    esac
  done
}

# Every mount under our state dir (container rootfs, secret tmpfs volumes, pod netns), deepest
# first.  /proc/self/mountinfo escapes spaces as \040; our paths have none.
node_unmount() {
  local m
  for m in $(awk -v d="$dir/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
    umount -l "$m" 2>/dev/null || log "could not unmount $m"
  done
}
