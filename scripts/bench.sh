#!/usr/bin/env bash
# make bench: the benchmark workloads of PRODUCT.md. Not yet written: see
# BENCHMARKS.md.
set -euo pipefail
echo "benchmarks are not written yet; see BENCHMARKS.md" >&2
