# SearXNG for local bring-up and CI: Debian's `searx` (same JSON API) with fixture engines over
# corpora served on 127.0.0.1 (infra/searx/). Started unless it already answers; see
# infra/searx/start-local.sh for ports (8890 searx, 8891 fixture corpora).
apt_install searx curl
if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
  su "$SUDO_USER" -c "bash '$here/searx/start-local.sh'"
else
  bash "$here/searx/start-local.sh"
fi
