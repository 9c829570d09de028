#!/bin/sh
# kiln's local AWS (moto + tests/moto/kiln_moto.py) for tests.  POSIX sh; run or source it.
#
#   tests/moto/server.sh start DIR [PORT]  start kiln_moto.py in the background (output in
#                                          DIR/moto.log, pid in DIR/moto.pid, port in
#                                          DIR/moto.port), wait up to 30 s for it, then print
#                                          "export MOTO_PORT=N MOTO_PID=P"
#                                          e.g.  eval "$(tests/moto/server.sh start "$tmp")"
#   tests/moto/server.sh stop DIR          stop it: TERM, then KILL after 5 s; removes nothing
#   tests/moto/server.sh available         exit 0 if python3 can import moto (its server) and
#                                          boto3, else say what is missing and exit 1
#
# Sourced ('. tests/moto/server.sh'), it defines kiln_moto_start, kiln_moto_stop and
# kiln_moto_available; kiln_moto_start also exports MOTO_PORT and MOTO_PID in that shell.
# PYTHON overrides the interpreter (default python3); the environment is passed on, so
# INITIAL_NO_AUTH_ACTION_COUNT=N turns on moto's signature and IAM policy checks.

kiln_moto_here() {
    if [ -n "${KILN_MOTO_HOME:-}" ]; then
        printf '%s\n' "$KILN_MOTO_HOME"
    elif [ -n "${BASH_SOURCE:-}" ] && [ -f "$(dirname -- "${BASH_SOURCE}")/kiln_moto.py" ]; then
        dirname -- "${BASH_SOURCE}"
    elif [ -f "$(dirname -- "$0")/kiln_moto.py" ]; then
        dirname -- "$0"
    else
        printf '%s\n' tests/moto
    fi
}

kiln_moto_available() {
    _km_missing=""
    for _km_mod in moto moto.server boto3; do
        "${PYTHON:-python3}" -c "import $_km_mod" >/dev/null 2>&1 || _km_missing="$_km_missing $_km_mod"
    done
    if [ -n "$_km_missing" ]; then
        echo "kiln moto: ${PYTHON:-python3} cannot import:$_km_missing (moto[server] and boto3 are needed)" >&2
        return 1
    fi
    return 0
}

# Is PID a running kiln_moto.py?  (Guards against signalling a recycled pid.)
kiln_moto_is_ours() {
    kill -0 "$1" 2>/dev/null || return 1
    if [ -r "/proc/$1/cmdline" ]; then
        tr '\0' ' ' <"/proc/$1/cmdline" | grep -q 'kiln_moto\.py' || return 1
    fi
    return 0
}

kiln_moto_start() {
    _km_dir=${1:?usage: server.sh start DIR [PORT]}
    _km_port=${2:-0}
    mkdir -p "$_km_dir" || return 1
    _km_py="$(kiln_moto_here)/kiln_moto.py"
    if [ ! -f "$_km_py" ]; then
        echo "kiln moto: $_km_py not found (set KILN_MOTO_HOME to tests/moto)" >&2
        return 1
    fi
    kiln_moto_available || return 1
    rm -f "$_km_dir/moto.port"
    "${PYTHON:-python3}" "$_km_py" --port-file "$_km_dir/moto.port" --port "$_km_port" \
        </dev/null >"$_km_dir/moto.log" 2>&1 &
    _km_pid=$!
    echo "$_km_pid" >"$_km_dir/moto.pid"
    _km_i=0
    while [ ! -s "$_km_dir/moto.port" ]; do
        if ! kill -0 "$_km_pid" 2>/dev/null; then
            echo "kiln moto: server exited before it came up; end of $_km_dir/moto.log:" >&2
            tail -n 30 "$_km_dir/moto.log" >&2
            return 1
        fi
        _km_i=$((_km_i + 1))
        if [ "$_km_i" -gt 300 ]; then
            echo "kiln moto: server did not come up within 30 s; end of $_km_dir/moto.log:" >&2
            tail -n 30 "$_km_dir/moto.log" >&2
            kill "$_km_pid" 2>/dev/null
            return 1
        fi
        sleep 0.1 2>/dev/null || sleep 1
    done
    MOTO_PORT=$(cat "$_km_dir/moto.port")
    MOTO_PID=$_km_pid
    export MOTO_PORT MOTO_PID
    echo "export MOTO_PORT=$MOTO_PORT MOTO_PID=$MOTO_PID"
}

kiln_moto_stop() {
    _km_dir=${1:?usage: server.sh stop DIR}
    if [ ! -s "$_km_dir/moto.pid" ]; then
        echo "kiln moto: no $_km_dir/moto.pid: nothing to stop" >&2
        return 0
    fi
    _km_pid=$(cat "$_km_dir/moto.pid")
    if ! kiln_moto_is_ours "$_km_pid"; then
        return 0  # already gone
    fi
    kill -TERM "$_km_pid" 2>/dev/null
    _km_i=0
    while kiln_moto_is_ours "$_km_pid"; do
        _km_i=$((_km_i + 1))
        if [ "$_km_i" -gt 50 ]; then
            echo "kiln moto: pid $_km_pid ignored TERM for 5 s; sending KILL" >&2
            kill -KILL "$_km_pid" 2>/dev/null
            break
        fi
        sleep 0.1 2>/dev/null || sleep 1
    done
    # An exiting process loses its command line (so it is no longer "ours")
    # before it is gone: wait, bounded, until it is gone or only a zombie.
    _km_i=0
    while [ -r "/proc/$_km_pid/stat" ] && [ "$_km_i" -lt 50 ] &&
        [ "$(sed 's/.*) //' "/proc/$_km_pid/stat" 2>/dev/null | cut -c1)" != Z ]; do
        _km_i=$((_km_i + 1))
        sleep 0.1 2>/dev/null || sleep 1
    done
    return 0
}

kiln_moto_main() {
    _km_cmd=${1:-}
    [ $# -gt 0 ] && shift
    case "$_km_cmd" in
        start) kiln_moto_start "$@" ;;
        stop) kiln_moto_stop "$@" ;;
        available) kiln_moto_available ;;
        *)
            echo "usage: server.sh start DIR [PORT] | stop DIR | available" >&2
            return 2
            ;;
    esac
}

# Run as a command ($0 is this file): dispatch and exit.  Sourced ($0 is the shell or the
# sourcing script): dispatch only if given a command (shells that pass arguments to '.'),
# and never exit the caller's shell.
case "$(basename -- "$0")" in
    server.sh)
        kiln_moto_main "$@"
        exit $?
        ;;
    *)
        case "${1:-}" in
            start | stop | available) kiln_moto_main "$@" ;;
        esac
        ;;
esac
