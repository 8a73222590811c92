# kubectl (with its built-in kustomize): the manifest test renders every overlay with
# `kubectl kustomize`. Installed from the distribution's packages when missing; a machine without
# it still provisions, and the manifest test then fails saying kubectl is missing.
if ! command -v kubectl >/dev/null; then
  apt_install kubectl 2>/dev/null || apt_install kubernetes-client 2>/dev/null || echo "provision: kubectl not available from apt; the k8s manifest test will fail" >&2
fi
# bubblewrap: the pod-conditions boot test starts each app as its pod runs it (its uid/gid, a
# read-only root with only the pod's declared volumes writable).
apt_install bubblewrap
# prometheus (brings promtool): the monitoring tests check and unit-test the alert rules with
# promtool, and the gateway's metrics test has a real Prometheus scrape a running stack. The
# package's systemd unit is not used (tests start their own server on a free port).
if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then
  apt_install prometheus
fi
