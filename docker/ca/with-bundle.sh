#!/bin/sh
# `with-bundle.sh COMMAND...`: docker/Dockerfile's steps that reach PyPI run through this. Where
# LAB_CA_URL is set (docker/ca/bundle.py serve, on the host, serves the CA bundle there while the
# images build), the bundle is fetched into a temporary file, trusted by pip and uv for COMMAND
# alone, and deleted before the step ends: no layer holds it. An unset or empty LAB_CA_URL (a
# normal machine) runs COMMAND with the base image's own trust.
set -eu
if [ -z "${LAB_CA_URL:-}" ]; then
  exec "$@"
fi
bundle="$(mktemp)"
trap 'rm -f "$bundle"' EXIT
python3 - "$LAB_CA_URL" "$bundle" <<'PYTHON'
import sys
import urllib.request

url, path = sys.argv[1:]
try:
    with urllib.request.urlopen(url, timeout=30) as response:
        pem = response.read()
except OSError as error:
    sys.exit(f"with-bundle.sh: cannot fetch the CA bundle from LAB_CA_URL={url}: {error} "
             "(docker/ca/README.md: it is served only while docker/ca/bundle.py serve runs)")
if b"-----BEGIN CERTIFICATE-----" not in pem:
    sys.exit(f"with-bundle.sh: LAB_CA_URL={url} served no PEM certificate")
with open(path, "wb") as file:
    file.write(pem)
print(f"with-bundle.sh: trusting the CA bundle from {url} for this step only", file=sys.stderr)
PYTHON
SSL_CERT_FILE="$bundle" PIP_CERT="$bundle" "$@"
