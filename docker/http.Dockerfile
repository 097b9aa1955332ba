# agent-memory serve: the HTTP API, mem0's API and the inspector page (docs/http.md), over the database of
# docker/Dockerfile. Build from the repository root:  docker build -f docker/http.Dockerfile -t agent-memory-http .
FROM python:3.11-slim-bookworm

COPY python-client /usr/src/agent_memory/python-client
RUN pip install --no-cache-dir "/usr/src/agent_memory/python-client[http]" \
 && useradd --system --no-create-home agent-memory

USER agent-memory
EXPOSE 8420
# DATABASE_URL: a login granted memory_http (docker/http-login.sh makes memory_server).
CMD ["agent-memory", "serve", "--host", "0.0.0.0", "--http-port", "8420", "--forwarded-allow-ips", "*"]
