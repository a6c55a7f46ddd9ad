# One image for the five processes; the Deployment picks one with its command:
#   python -m services.gateway.main | services.billing.main | services.indexer.main
#   | services.analyzer.main | services.hostapp.main   (and services.kit.migrations SERVICE)
# Built from the repository root: docker build -t codereview:TAG .
#
# The base is pinned by tag and by the digest of its multi-architecture index; bump both together.
ARG PYTHON_IMAGE=python:3.11.14-slim-bookworm@sha256:65a93d69fa75478d554f4ad27c85c1e69fa184956261b4301ebaf6dbb0a3543d

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
RUN python -m venv /opt/venv
COPY pyproject.toml deploy/docker/requirements.py ./
# Exactly the runtime pins of pyproject.toml, less what only `make run` uses (embedded servers).
RUN python requirements.py pyproject.toml > requirements.txt \
    && /opt/venv/bin/pip install --only-binary=:all: -r requirements.txt
COPY services ./services
# The generated protobuf code is committed (CI's proto-check keeps it fresh): fail the build if it is
# missing rather than ship an image whose services cannot import their contracts.
RUN /opt/venv/bin/python -c "import services.contracts.v1.billing_pb2_grpc, services.contracts.v1.events_pb2" \
    && find services -name __pycache__ -prune -exec rm -rf {} + \
    && /opt/venv/bin/python -m compileall -q --invalidation-mode unchecked-hash services /opt/venv/lib

FROM ${PYTHON_IMAGE}
# git: the indexer mirrors and reads repositories with it (https only; ssh clones would need openssh-client).
# Pinned to bookworm's current build: when Debian replaces it, the build fails until this is bumped.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git=1:2.39.5-0+deb12u3 \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 codereview \
    && useradd --system --uid 10001 --gid 10001 --home-dir /tmp --no-create-home --shell /usr/sbin/nologin codereview
COPY --from=build /opt/venv /opt/venv
COPY --from=build /src/services /app/services
WORKDIR /app
# The root filesystem is read-only in the cluster: bytecode is compiled above (checked by hash, not
# by the files' times, which copying may change), temp files go to /tmp
# (an emptyDir), the indexer's mirrors to CR_DATA_DIR (a volume). Listeners bind the pod's interfaces.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    CR_BIND_HOST=0.0.0.0 \
    CR_LOG_JSON=true \
    CR_DATA_DIR=/var/lib/codereview
USER 10001:10001
EXPOSE 8080 50051 50052 50053 50054 9090
CMD ["python", "-m", "services.gateway.main"]
