# Shared by Scripts/system/origin-cache and Scripts/bench/origin (sourced, not run).

# A free TCP port on 127.0.0.1.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Writes a package into $1 with the index naming appconfig org "acme".
make_package() {
  local root=$1
  mkdir -p "$root/assets" "$root/appconfig/acme"
  local config='{"org":"acme","productName":"Acme Live","theme":"dark"}'
  local version
  version=$(printf '%s' "$config" | sha256sum | cut -c1-64)
  printf '%s' "$config" > "$root/appconfig/acme/$version.json"
  printf '{"format":"pulse-public/1","packageId":"0123456789abcdef0123456789abcdef","appconfig":{"acme":{"packageVersion":"%s"}},"history":{}}\n' "$version" \
    > "$root/index.json"
}

# Adds a blob of $2 random bytes to package $1 (or stages it in $3 if given); prints its hash.
make_blob() {
  local root=$1 size=$2 stage=${3:-}
  local tmp="$root/.blob-$$-$RANDOM"
  head -c "$size" /dev/urandom > "$tmp"
  local hash
  hash=$(sha256sum "$tmp" | cut -c1-64)
  if [ -n "$stage" ]; then mv "$tmp" "$stage/$hash"; else mv "$tmp" "$root/assets/$hash"; fi
  echo "$hash"
}

# Starts pulse-origin ($1 binary) on a free port with the remaining arguments; sets ORIGIN_PID and ORIGIN_PORT.
start_origin() {
  local binary=$1; shift
  local errors="${ORIGIN_STDERR:-$WORK/origin.stderr}"
  "$binary" --listen 127.0.0.1:0 "$@" 2> "$errors" &
  ORIGIN_PID=$!
  ORIGIN_PORT=""
  for _ in $(seq 1 100); do
    ORIGIN_PORT=$(grep -o 'http://127.0.0.1:[0-9]*' "$errors" 2>/dev/null | head -1 | sed 's/.*://') || true
    [ -n "$ORIGIN_PORT" ] && return 0
    kill -0 "$ORIGIN_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "pulse-origin did not start:" >&2
  cat "$errors" >&2
  return 1
}

# Starts nginx with config $1 (prefix $WORK/nginx); sets NGINX_PID. Waits until port $2 answers.
start_nginx() {
  local config=$1 port=$2
  mkdir -p "$WORK/nginx/logs"
  nginx -p "$WORK/nginx" -c "$config" -g 'daemon off;' 2> "$WORK/nginx/logs/stderr" &
  NGINX_PID=$!
  for _ in $(seq 1 100); do
    curl -s -o /dev/null "http://127.0.0.1:$port/" && return 0
    kill -0 "$NGINX_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "nginx did not start:" >&2
  cat "$WORK/nginx/logs/stderr" "$WORK/nginx/logs/error.log" 2>/dev/null >&2
  return 1
}

# nginx directives that keep all its files inside $WORK (works without root).
nginx_common() {
  local user_line=""
  [ "$(id -u)" -eq 0 ] && user_line="user root;"
  cat <<CONF
$user_line
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log warn;
CONF
}

nginx_http_common() {
  cat <<CONF
    client_body_temp_path $WORK/nginx/client_body;
    proxy_temp_path $WORK/nginx/proxy_temp;
    fastcgi_temp_path $WORK/nginx/fastcgi_temp;
    uwsgi_temp_path $WORK/nginx/uwsgi_temp;
    scgi_temp_path $WORK/nginx/scgi_temp;
    types { }
    default_type application/octet-stream;
CONF
}

stop_pid() {
  local pid=${1:-}
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}
