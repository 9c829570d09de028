#!/bin/sh
# quickstart.sh - what `make quickstart` runs after the build: the quickstart
# cluster on the embedded sim provider (a simulated cloud kept in
# .kiln/sim/: no account, no cost, nothing real). Plans it, applies it, and
# shows the state commit the apply recorded. Running it again is safe: the
# second plan finds nothing to do.
set -eu
spec=examples/quickstart.yaml
export KILN_AUTHOR="${KILN_AUTHOR:-quickstart <quickstart@localhost>}"
run() {
	echo
	echo "== $*"
	"$@"
}
run ./kiln validate "$spec"
run ./kiln plan "$spec"
run ./kiln apply --auto-approve "$spec"
run ./kiln plan --detailed-exitcode "$spec"
run ./kiln log
cat <<'MSG'

That was a simulated cluster: `kiln state list` shows what was recorded,
.kiln/sim/ holds the simulated cloud. Try changing `count:` in
examples/quickstart.yaml and run ./kiln plan examples/quickstart.yaml again;
./kiln destroy examples/quickstart.yaml removes it all (the retained bucket stays).

To type `kiln` as the README's session does, put it on your PATH:
  make install PREFIX=$HOME/.local     (then ~/.local/bin/kiln; man kiln works too)
or, without installing:  export PATH="$PWD:$PATH"
MSG
