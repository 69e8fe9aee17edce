# Multi-stage build of the runnable jar. No Docker engine exists on the development machines, so
# this image is linted (scripts/lint-dockerfile) but has not been built or run there: see README,
# "Docker".
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY pom.xml .
RUN mvn -B -q dependency:go-offline
COPY src src
RUN mvn -B -q -DskipTests package

# Debian 12's Java 17 and tini, as on the development machines and CI.
FROM debian:bookworm-slim
# openjdk's post-install step fails without man1, which the slim image lacks.
RUN mkdir -p /usr/share/man/man1 \
    && apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless tini \
    && rm -rf /var/lib/apt/lists/*
# A numeric user, so that Kubernetes' runAsNonRoot can check it; it also has a name because the
# embedded PostgreSQL (initdb) looks its user up and refuses a uid without one. The image's files
# stay root's and read-only; only the data volume is written.
RUN groupadd --gid 10001 ackpoint \
    && useradd --uid 10001 --gid 10001 --no-log-init --no-create-home --home-dir /app/data \
        --shell /usr/sbin/nologin ackpoint
WORKDIR /app
COPY --from=build /src/target/ackpoint.jar /app/ackpoint.jar
COPY conf /app/conf
# Everything written goes under the volume /app/data, so that the root filesystem can be
# read-only: the embedded PostgreSQL in /app/data/pgdata (a subdirectory: initdb wants an empty
# directory, and a volume's root may hold lost+found) and temporary files in /app/data/tmp, emptied
# at every start (the extracted PostgreSQL binaries among them). /tmp is a link to it, for what
# cannot be pointed elsewhere: PostgreSQL's Unix socket (without it PostgreSQL does not start on a
# read-only root), the JVM's perf data and attach socket. A JVM crash report goes to
# /app/data/hs_err_pid*.log instead, where it outlives the restart.
RUN mkdir -p /app/data \
    && chown 10001:10001 /app/data \
    && rm -rf /tmp \
    && ln -s /app/data/tmp /tmp
USER 10001:10001
# Listen on every interface inside the container. Off loopback the development key of
# conf/ackpoint.yaml is refused: set ACKPOINT_AUTH_JWKS (or ACKPOINT_AUTH_JWKS_URI with
# ACKPOINT_AUTH_JWKS='{}').
ENV ACKPOINT_HTTP_HOST=0.0.0.0 \
    ACKPOINT_EMBEDDED_DATA_DIR=/app/data/pgdata \
    JAVA_OPTS=""
VOLUME /app/data
EXPOSE 8080
# tini is PID 1: it forwards SIGTERM to java only (which stops gracefully, the embedded PostgreSQL
# last, within shutdown.timeout, 20s by default, and exits 0) and reaps the PostgreSQL processes
# left to it. Before java: /app/data/tmp is emptied, and the database directory gets back the mode
# PostgreSQL insists on (0700), which Kubernetes' fsGroup takes from it at every mount unless
# fsGroupChangePolicy is OnRootMismatch. JAVA_OPTS is split on whitespace, not globbed, and comes
# after the image's options (conf/jvm.options, then its own), so it can override them; another
# collector is chosen with the file's turned off (see conf/jvm.options).
ENTRYPOINT ["/usr/bin/tini", "--", "/bin/sh", "-c", "\
    set -ef; \
    mkdir -p /app/data/tmp; \
    find /app/data/tmp -mindepth 1 -delete; \
    if [ -d \"$ACKPOINT_EMBEDDED_DATA_DIR\" ]; then chmod 0700 \"$ACKPOINT_EMBEDDED_DATA_DIR\"; fi; \
    exec java $(grep -Ev '^[[:space:]]*(#|$)' /app/conf/jvm.options) -XX:ErrorFile=/app/data/hs_err_pid%p.log \
        -Djava.io.tmpdir=/app/data/tmp $JAVA_OPTS -jar /app/ackpoint.jar", "ackpoint"]
