# Sourced by docker/Dockerfile's build steps: trust docker/ca/ca-bundle.pem if one was put there.
# Without it (a normal machine) nothing changes: pip and uv keep the base image's trust.
if [ -s /lab-ca/ca-bundle.pem ]; then
  export SSL_CERT_FILE=/lab-ca/ca-bundle.pem PIP_CERT=/lab-ca/ca-bundle.pem
fi
