#!/usr/bin/env bash
# Entry point for the MCP conformance suite: runs scripts/conformance-client.ts from the repository
# (tsx needs its tsconfig for decorators) with the server URL the suite appends.
set -euo pipefail
cd "$(dirname "$0")/.."
exec node --import tsx scripts/conformance-client.ts "$@"
