# serve_lib.sh: shared by the agent's script tests (sourced). serve_port LOG waits up to 5 s
# for `fabtop serve --listen 127.0.0.1:0 --log LOG` to say where it listens and prints the
# port it chose; prints nothing if it never says so.
serve_port() {
    _log=$1
    _port=""
    for _ in $(seq 1 100); do
        _port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\):.*/\1/p' "$_log" 2>/dev/null)
        [ -n "$_port" ] && break
        sleep 0.05
    done
    echo "$_port"
}
