# Sourced by the load-run scripts: builds the release binary and starts it on a fresh database
# on loopback, in a temporary folder removed on exit.
#
#   source bench/service.sh BACKEND PORT [EXTRA SERVE ARGUMENTS...]
#
# Sets root, work, bin (CASTELLAN_BENCH_BIN when given), base, database (the SQLite file or the PostgreSQL URL), pid and key (the
# bootstrap API key), and defines admin (curl with the key, JSON bodies) and password_client.
backend="$1"
port="$2"
shift 2
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
cd "$work"

# CASTELLAN_BENCH_BIN runs another build (an earlier commit's, for a comparison) instead.
if [ -n "${CASTELLAN_BENCH_BIN:-}" ]; then
  bin="$CASTELLAN_BENCH_BIN"
else
  cargo build --release --quiet -p castellan --manifest-path "$root/Cargo.toml"
  bin="${CARGO_TARGET_DIR:-$root/target}/release/castellan"
fi
args=(serve --policies "$root/policies" --listen "127.0.0.1:$port" "$@")
if [ "$backend" = postgres ]; then
  url="${CASTELLAN_BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/castellan_bench}"
  psql "${url%/*}/postgres" -qc "DROP DATABASE IF EXISTS ${url##*/}" -c "CREATE DATABASE ${url##*/}"
  args+=(--database-url "$url")
  database="$url"
else
  database="$work/data/castellan.db"
fi
"$bin" "${args[@]}" >"$work/out.txt" 2>"$work/err.txt" &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
until curl -sf "127.0.0.1:$port/readyz" >/dev/null; do
  kill -0 "$pid" 2>/dev/null || { cat "$work/err.txt" >&2; echo "the service did not start" >&2; exit 1; }
done

key=$(grep -o 'cstl_key_[A-Za-z0-9_-]*' "$work/out.txt" | head -n 1)
admin() { curl -sf -H "x-api-key: $key" -H 'content-type: application/json' "$@"; }
base="http://127.0.0.1:$port"

# Creates the realm acme with a confidential client shop allowed the password grant; sets secret
# (the client's), token_url and BASIC (base64 of shop:secret, for the wrk scripts).
password_client() {
  admin -o /dev/null -d '{"id":"acme"}' "$base/api/v1/admin/realms"
  secret=$(admin -d '{"id":"shop","clientConfiguration":{"grantTypes":["password"]}}' \
    "$base/api/v1/admin/realms/acme/clients" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["clientSecret"])')
  token_url="$base/realms/acme/protocol/openid-connect/token"
  BASIC=$(printf 'shop:%s' "$secret" | base64 -w0)
  export BASIC
}
