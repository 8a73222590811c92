# Chromium (the fetch service's browser path, driven by playwright-core) and Tor (.onion fetches
# through its SOCKS5 port), both from Debian. CI only needs them installed: the fetch tests start
# Chromium themselves and use a local SOCKS5 peer in place of the Tor network.
apt_install chromium tor

# Bring-up (not CI): a Tor client with Drael's torrc (SOCKS on 127.0.0.1:9050 only, no relay,
# extended SOCKS errors so onion failures map to typed errors). Started only when nothing listens.
if [ -z "${CI:-}" ] && ! (exec 3<>/dev/tcp/127.0.0.1/9050) 2>/dev/null; then
  mkdir -p /var/lib/drael-tor && chmod 700 /var/lib/drael-tor
  owner=$(stat -c %U /var/lib/tor 2>/dev/null || echo root)
  chown "$owner" /var/lib/drael-tor 2>/dev/null || true
  tor --RunAsDaemon 1 -f "$here/tor/torrc" --DataDirectory /var/lib/drael-tor --Log "notice file /var/lib/drael-tor/tor.log" \
    ${owner:+--User "$owner"} >/dev/null 2>&1 || echo "provision: tor did not start (fetching .onion will answer onion_unreachable)"
fi
