#!/bin/sh
# quickstart.sh - what `make quickstart` runs after the build: the quickstart
# spec on the embedded sim provider. This release validates it; plan and apply
# arrive with the engine (README "Commands").
set -eu
spec=examples/quickstart.yaml
echo "== kiln validate $spec"
./kiln validate "$spec"
echo
echo "The spec is valid. kiln $(./kiln --version | cut -d' ' -f2) checks specs; planning and"
echo "applying them on the sim provider come with the engine (README \"Commands\")."
echo "Next: break the spec on purpose and run ./kiln validate $spec again,"
echo "or read the format with: man -l man/kiln-spec.5"
