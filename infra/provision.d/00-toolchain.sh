# Node.js >= 20.19 and pnpm 12 (pinned in package.json's packageManager).
if ! command -v node >/dev/null; then apt_install nodejs npm; fi
if ! pnpm --version 2>/dev/null | grep -q '^12\.4\.2$'; then
  npm i -g --allow-scripts=pnpm pnpm@12.4.2 >/dev/null 2>&1 || npm i -g pnpm@12.4.2 >/dev/null
fi
