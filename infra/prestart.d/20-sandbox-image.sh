#!/usr/bin/env bash
# Bring-up: make sure the sandbox image matches its recipe (a no-op when it does).
set -euo pipefail
exec bash "$(dirname "$0")/../sandbox-image/build.sh"
