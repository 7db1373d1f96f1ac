# PostgreSQL for the decision log, from Debian's package (no Docker Hub). Build context: docker/.
#   docker build -f docker/postgres.Dockerfile -t dollymp/postgres:15 docker
# Environment, as the usual postgres images take it: POSTGRES_PASSWORD (required), POSTGRES_USER,
# POSTGRES_DB. Testcontainers' PostgresContainer runs it too (tests/store).
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update -q \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/lib/postgresql/data /run/postgresql \
 && chown -R postgres:postgres /var/lib/postgresql /run/postgresql
ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PGDATA=/var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint
RUN chmod 755 /usr/local/bin/postgres-entrypoint
USER postgres
EXPOSE 5432
VOLUME ["/var/lib/postgresql/data"]
ENTRYPOINT ["postgres-entrypoint"]
