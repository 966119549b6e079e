# sqsqueue's container images (docs/container.md).
#
#   docker build -t sqsqueue .                              # the SQS endpoint
#   docker build -t sqsqueue:with-moto --target with-moto .  # + every other AWS service through moto
#   docker run --rm -p 127.0.0.1:9324:9324 sqsqueue
#
# BASE is any Debian image with python3 and python3-venv (python3 -m venv
# working); the default is Python's slim image. Build tools stay in the build
# stages: the images hold the base, a venv with the wheel built from this tree
# and its dependencies (no pip, no caches) and the user the server runs as.
# The last stage is `docker build`'s default target: the SQS image.
# Nothing here needs BuildKit: the classic builder builds it too.

ARG BASE=python:3.13-slim

# --- build: the wheel of this tree, and a venv of the server extra from it ----
FROM ${BASE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore
# pip and its build frontend live in /opt/build, never in the images' venv:
# `pip --python` installs into a venv made without pip. botocore (the server
# extra's, for Signature V4 and the Query protocol's SQS model) is most of that
# venv; the whole venv adds about 32 MB to the base, within the SQS image's
# 80 MB budget (tests/container/test_image.py), so botocore is kept whole.
RUN python3 -m venv /opt/build
COPY pyproject.toml README.md LICENSE /src/
COPY sqsqueue /src/sqsqueue
RUN /opt/build/bin/pip wheel --no-deps --wheel-dir /dist /src \
    && python3 -m venv --without-pip /opt/sqsqueue \
    && set -- /dist/sqsqueue-*.whl \
    && /opt/build/bin/pip --python /opt/sqsqueue/bin/python install "$1[server]"

# --- the with-moto image's venv: moto's server and services beside it --------
FROM build AS venv-moto
RUN set -- /dist/sqsqueue-*.whl \
    && /opt/build/bin/pip --python /opt/sqsqueue/bin/python install "$1[server,moto]" "moto[server]"

# --- what both images share ---------------------------------------------------
FROM ${BASE} AS runtime
# A fixed uid that is not root; /data is its own, so a fresh named volume
# mounted there (initialised from the image's /data) is writable by it.
RUN echo 'sqsqueue:x:10001:10001:sqsqueue:/data:/usr/sbin/nologin' >> /etc/passwd \
    && echo 'sqsqueue:x:10001:' >> /etc/group \
    && mkdir -p /data \
    && chown 10001:10001 /data \
    && chmod 0750 /data
COPY docker/healthcheck.py /opt/sqsqueue-healthcheck.py
ENV PATH=/opt/sqsqueue/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    SQSQUEUE_HOST=0.0.0.0 \
    SQSQUEUE_PORT=9324 \
    SQSQUEUE_ALLOW_ANONYMOUS=1
# Anonymous access in the image only: the published port decides who reaches
# it (docs/container.md: -p 127.0.0.1:9324:9324, or require credentials with
# SQSQUEUE_CREDENTIALS and SQSQUEUE_ALLOW_ANONYMOUS=0).
VOLUME ["/data"]
WORKDIR /data
USER 10001:10001
EXPOSE 9324
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=5s --timeout=4s --start-period=10s --retries=3 \
    CMD ["/opt/sqsqueue/bin/python", "/opt/sqsqueue-healthcheck.py"]
# Arguments after the image name are serve's options: docker run IMAGE --region eu-west-1
ENTRYPOINT ["/opt/sqsqueue/bin/sqsqueue", "serve"]

# --- docker build --target with-moto . ---------------------------------------
FROM runtime AS with-moto
COPY --from=venv-moto /opt/sqsqueue /opt/sqsqueue
ENV SQSQUEUE_WITH_MOTO=1

# --- docker build . : the SQS image (the last stage is the default target) ----
FROM runtime AS sqs
COPY --from=build /opt/sqsqueue /opt/sqsqueue
