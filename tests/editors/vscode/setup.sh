#!/usr/bin/env bash
# Install VS Code's workbench (npm code-server, the newest whose engine is
# Node 20) and playwright-core here, offline-safe: code-server's postinstall
# downloads things, so install with --ignore-scripts, rebuild the native
# modules against the system Node's headers, and use Debian's ripgrep.
# Idempotent; writes node_modules/.nearsym-ready when done. One run at a
# time (a lock on this script): .ci/run starts one early, in the background,
# and the tests' own call waits for it to finish.
set -euo pipefail
cd "$(dirname "$0")"
exec 9<setup.sh
flock 9
[ -f node_modules/.nearsym-ready ] && exit 0
export npm_config_nodedir="${npm_config_nodedir:-/usr}"
npm ci --ignore-scripts --no-audit --no-fund --silent
cs=node_modules/code-server
(cd "$cs" && npm install --omit=dev --ignore-scripts --no-audit --no-fund --silent)
(cd "$cs/lib/vscode" && npm install --omit=dev --ignore-scripts --no-audit --no-fund --silent)
(cd "$cs" && npm rebuild argon2 --silent)
for module in @vscode/spdlog native-watchdog @parcel/watcher; do
  (cd "$cs/lib/vscode" && npm rebuild "$module" --silent)
done
# node-pty's post-install step fails after its build (it wants Windows files);
# the module itself is built, which is all the workbench needs.
(cd "$cs/lib/vscode" && npm rebuild node-pty --silent) || true
test -f "$cs/lib/vscode/node_modules/node-pty/build/Release/pty.node"
mkdir -p "$cs/lib/vscode/node_modules/@vscode/ripgrep/bin"
ln -sf "$(command -v rg)" "$cs/lib/vscode/node_modules/@vscode/ripgrep/bin/rg"
touch node_modules/.nearsym-ready
