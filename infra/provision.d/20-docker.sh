# Docker engine for the sandbox service: installed from Debian when missing, started when no
# engine answers. Sourced by infra/provision.sh (runs as root, `apt_install` available).
# e2fsprogs: session volumes (mkfs.ext4); iproute2: the network tests' stand-in namespace.
apt_install docker.io iptables e2fsprogs iproute2

if ! docker info >/dev/null 2>&1; then
  # overlay2 needs the overlay filesystem on an ext4/xfs backing store; anything else (overlay
  # inside overlay, a container's own root) gets vfs, slower but always works.
  drael_storage=vfs
  if grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null; then
    case "$(stat -f -c %T /var/lib 2>/dev/null)" in ext2/ext3|xfs|btrfs) drael_storage=overlay2 ;; esac
  fi
  mkdir -p /var/log
  echo "provision: starting dockerd (storage driver $drael_storage)"
  # setsid: the engine must outlive this shell and not receive its signals.
  setsid dockerd --host unix:///var/run/docker.sock --storage-driver "$drael_storage" \
    >/var/log/dockerd.log 2>&1 </dev/null &
  for _ in $(seq 1 150); do docker info >/dev/null 2>&1 && break; sleep 0.2; done
  if ! docker info >/dev/null 2>&1; then
    echo "provision: dockerd did not start; see /var/log/dockerd.log" >&2
    tail -n 20 /var/log/dockerd.log >&2 || true
    return 1
  fi
fi
