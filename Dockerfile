# The server's image for a kind cluster (walkthrough.md section 6.9):
#   docker build -t genericserver:dev .
#   kind load docker-image genericserver:dev
# It runs `genericserver serve`; deploy/deployment.yaml gives the flags a pod needs. The same
# image has `genericserver load` for the load-client Job (deploy/load-job.yaml).
FROM python:3.11-slim

# no .pyc files in a read-only root filesystem; logs straight to the container's stdout/stderr
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

WORKDIR /src
# only what the package needs (see .dockerignore): no tests, no docs, no virtualenv
COPY setup.cfg pyproject.toml README.md LICENSE NOTICE ./
COPY genericserver ./genericserver
RUN pip install --no-cache-dir . && rm -rf /src

# a user of its own, no shell login, no home to write to
RUN useradd --uid 10001 --no-create-home --shell /usr/sbin/nologin genericserver
USER 10001

WORKDIR /
EXPOSE 8443
# The flags a pod needs, all set in deploy/deployment.yaml's args:
#   --bind-address=0.0.0.0 --secure-port=8443 --shutdown-delay-duration=5s --request-timeout=10s --v=2
# SIGTERM from the kubelet reaches this process directly (exec form, PID 1): the graceful
# shutdown of walkthrough section 1 starts at once.
ENTRYPOINT ["genericserver", "serve"]
CMD ["--bind-address=0.0.0.0", "--secure-port=8443"]
