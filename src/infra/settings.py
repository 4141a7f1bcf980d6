"""One settings object, read once from the environment (decisions.md section 1)."""

from __future__ import annotations

import hashlib
import ipaddress
import math
import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

# The waits between the 5 attempts (spec 6: up to 5 over 24 hours, exponential backoff): x10
# each time, the last attempt 18.5 h after the first. A fifth wait would never be used.
DEFAULT_RETRY_SCHEDULE = (60.0, 600.0, 6000.0, 60000.0)


def host_port(host: str, port: int) -> str:
    """`host:port` for addresses and URLs: an IPv6 literal (`::1`, `::`) goes in brackets,
    which gRPC's address parser and URLs both need."""
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


def _schedule(value: str | None) -> tuple[float, ...]:
    if not value:
        return DEFAULT_RETRY_SCHEDULE
    refused = ValueError(f"PARTNER_API_WEBHOOK_RETRY_SCHEDULE: waits are seconds >= 0: {value}")
    try:
        waits = tuple(float(part) for part in value.split(",") if part.strip())
    except ValueError:
        raise refused from None
    if not all(math.isfinite(wait) and wait >= 0 for wait in waits):
        # An infinite or NaN wait would leave deliveries pending for good: refuse to start.
        raise refused
    return waits or DEFAULT_RETRY_SCHEDULE  # "," alone names no wait: keep the default


def _pool_size(value: str | None) -> int:
    size = int(value or "10")
    if size < 1:
        raise ValueError(f"PARTNER_API_DATABASE_POOL_SIZE: at least 1 connection: {value}")
    return size


def _replicas(value: str | None) -> int:
    replicas = int(value or "1")
    if not 1 <= replicas <= 5:  # JetStream's own bounds
        raise ValueError(f"PARTNER_API_NATS_REPLICAS: 1 to 5 copies of the stream: {value}")
    return replicas


def _path(value: str | None) -> Path | None:
    return Path(value).resolve() if value else None


def _secret_file(data_dir: Path, name: str, prefix: str = "") -> str:
    """A secret kept under the data dir, generated on first use (embedded default)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / name
    if not path.exists():
        # Processes starting together (a server and a CLI) race here: the secret is written
        # whole under a name of its own and linked into place, so one wins and none reads a
        # half-written file.
        draft = data_dir / f".{name}.{os.getpid()}.{secrets.token_hex(4)}"
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(prefix + secrets.token_hex(32))
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(draft, path)
        except FileExistsError:
            pass  # another process's secret stands
        finally:
            draft.unlink()
    return path.read_text().strip()


def _existing_secret(data_dir: Path, name: str, prefix: str = "") -> str:
    """The secret kept under the data dir if there is one, else "" (nothing written)."""
    path = data_dir / name
    return path.read_text().strip() if path.exists() else ""


def _search_path_of(url: str | None) -> str | None:
    """The first schema a libpq URL's `options` (`-c search_path=...`) names, if any."""
    if not url:
        return None
    for options in parse_qs(urlsplit(url).query).get("options", []):
        found = re.search(r"(?:-c\s*|--)search_path\s*=\s*([^\s]+)", options)
        if found:
            # The first schema named outright (`"$user"` stands for the role's own name).
            schemas = [part.strip().strip('"') for part in found.group(1).split(",")]
            return next((name for name in schemas if name and not name.startswith("$")), None)
    return None


SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def database_schema(env: dict[str, str]) -> str:
    """`PARTNER_API_DATABASE_SCHEMA`, or the schema the URL's own `options` name (the libpq way),
    or `public`. The pool sets `search_path` itself, so a schema named only in the URL would
    otherwise be dropped silently and two deployments would share `public`."""
    named = env.get("PARTNER_API_DATABASE_SCHEMA") or None
    in_url = _search_path_of(env.get("PARTNER_API_DATABASE_URL"))
    if named and in_url and named != in_url:
        raise ValueError(
            f"PARTNER_API_DATABASE_SCHEMA={named} but PARTNER_API_DATABASE_URL sets "
            f"search_path={in_url}; name one schema"
        )
    schema = named or in_url or "public"
    # PostgreSQL folds an unquoted name to lower case: a name of other letters would be made
    # as written and then looked for folded, and not found.
    if not SCHEMA_NAME.fullmatch(schema):
        raise ValueError(
            f"PARTNER_API_DATABASE_SCHEMA={schema}: a schema name is lower-case letters, digits "
            "and _, starting with a letter or _, at most 63 characters"
        )
    return schema


@dataclass(frozen=True)
class Settings:
    data_dir: Path = Path("./var")
    database_url: str | None = None
    database_schema: str = "public"
    # Connections the event store keeps open per process (twice as many more under load):
    # a process running only background roles needs few, and PostgreSQL's max_connections is shared.
    database_pool_size: int = 10
    nats_url: str | None = None
    nats_stream: str = "PARTNER_EVENTS"
    # Copies JetStream keeps of the stream (and its consumer): 3 on a three-node cluster lets
    # any one node die without losing an acknowledged event or stopping the webhooks.
    nats_replicas: int = 1
    host: str = "127.0.0.1"
    http_port: int = 8080
    grpc_port: int = 50051
    webhook_retry_schedule: tuple[float, ...] = DEFAULT_RETRY_SCHEDULE
    webhook_timeout_seconds: float = 15.0
    cancel_grace_seconds: float = 300.0
    fulfillment_step_seconds: float = 2.0
    allow_http_webhooks: bool = False
    # Scheme and host partners call (behind a proxy); list links use the request's otherwise.
    public_url: str | None = None
    default_rate_rps: float = 10.0
    default_rate_burst: int = 600
    max_body_bytes: int = 1024 * 1024
    # What one HTTP client may make the edge wait for or hold (runtime/http_edge.py).
    http_head_timeout_seconds: float = 10.0
    http_body_timeout_seconds: float = 30.0
    http_keep_alive_seconds: int = 5
    http_max_connections: int = 1000
    poll_interval_seconds: float = 0.05
    # Readiness fails once events wait this long for the outbox without it moving on.
    outbox_stuck_seconds: float = 30.0
    secret_key: str = field(default="", repr=False)
    operator_token: str = field(default="", repr=False)
    # PEM files: cert and key serve gRPC over TLS; a client CA also requires client certificates.
    grpc_tls_cert: Path | None = None
    grpc_tls_key: Path | None = None
    grpc_tls_client_ca: Path | None = None

    @property
    def uses_postgres(self) -> bool:
        return bool(self.database_url)

    @property
    def nats_servers(self) -> list[str]:
        """The servers NATS_URL lists, comma separated (decisions.md 1: a cluster)."""
        return [url.strip() for url in (self.nats_url or "").split(",") if url.strip()]

    @classmethod
    def from_env(
        cls, environ: dict[str, str] | None = None, create_secrets: bool = True
    ) -> Settings:
        """Without `create_secrets`, a secret the data dir does not hold yet is "" and the
        dir is left as it is (a CLI command that may still refuse to use this store)."""
        env = dict(os.environ if environ is None else environ)
        secret = _secret_file if create_secrets else _existing_secret
        data_dir = Path(env.get("PARTNER_API_DATA_DIR", "./var")).resolve()
        schema = database_schema(env)
        return cls(
            data_dir=data_dir,
            database_url=env.get("PARTNER_API_DATABASE_URL") or None,
            database_schema=schema,
            database_pool_size=_pool_size(env.get("PARTNER_API_DATABASE_POOL_SIZE")),
            nats_url=env.get("NATS_URL") or None,
            nats_stream=env.get("PARTNER_API_NATS_STREAM")
            or default_stream_name(
                env.get("PARTNER_API_DATABASE_URL") or None,
                schema,
                data_dir,
            ),
            nats_replicas=_replicas(env.get("PARTNER_API_NATS_REPLICAS")),
            host=env.get("PARTNER_API_HOST", "127.0.0.1"),
            http_port=int(env.get("PARTNER_API_HTTP_PORT", "8080")),
            grpc_port=int(env.get("PARTNER_API_GRPC_PORT", "50051")),
            webhook_retry_schedule=_schedule(env.get("PARTNER_API_WEBHOOK_RETRY_SCHEDULE")),
            webhook_timeout_seconds=float(env.get("PARTNER_API_WEBHOOK_TIMEOUT_SECONDS", "15")),
            cancel_grace_seconds=float(env.get("PARTNER_API_CANCEL_GRACE_SECONDS", "300")),
            fulfillment_step_seconds=float(env.get("PARTNER_API_FULFILLMENT_STEP_SECONDS", "2")),
            allow_http_webhooks=_flag(env.get("PARTNER_API_ALLOW_HTTP_WEBHOOKS")),
            public_url=(env.get("PARTNER_API_PUBLIC_URL") or "").rstrip("/") or None,
            default_rate_rps=float(env.get("PARTNER_API_DEFAULT_RATE_RPS", "10")),
            default_rate_burst=int(env.get("PARTNER_API_DEFAULT_RATE_BURST", "600")),
            http_head_timeout_seconds=float(env.get("PARTNER_API_HTTP_HEAD_TIMEOUT_SECONDS", "10")),
            http_body_timeout_seconds=float(env.get("PARTNER_API_HTTP_BODY_TIMEOUT_SECONDS", "30")),
            http_keep_alive_seconds=int(env.get("PARTNER_API_HTTP_KEEP_ALIVE_SECONDS", "5")),
            http_max_connections=int(env.get("PARTNER_API_HTTP_MAX_CONNECTIONS", "1000")),
            poll_interval_seconds=float(env.get("PARTNER_API_POLL_INTERVAL_SECONDS", "0.05")),
            outbox_stuck_seconds=float(env.get("PARTNER_API_OUTBOX_STUCK_SECONDS", "30")),
            secret_key=env.get("PARTNER_API_SECRET_KEY") or secret(data_dir, "secret.key"),
            operator_token=env.get("PARTNER_API_OPERATOR_TOKEN")
            or secret(data_dir, "operator.token", "op_"),
            grpc_tls_cert=_path(env.get("PARTNER_API_GRPC_TLS_CERT")),
            grpc_tls_key=_path(env.get("PARTNER_API_GRPC_TLS_KEY")),
            grpc_tls_client_ca=_path(env.get("PARTNER_API_GRPC_TLS_CLIENT_CA")),
        )


LOOPBACK = "127.0.0.1"  # as the documented URL writes it: its deployments keep their stream


def _host_of(hostname: str | None) -> str:
    """The database host as the stream name reads it: every spelling of this machine's own
    loopback over TCP (`localhost`, `::1`, `127.0.0.2`) is one. No host (libpq's local socket)
    stays as it always read."""
    if not hostname:
        return "localhost"
    if hostname.lower() == "localhost":
        return LOOPBACK
    try:
        return LOOPBACK if ipaddress.ip_address(hostname).is_loopback else hostname.lower()
    except ValueError:  # a name
        return hostname.lower()


def default_stream_name(database_url: str | None, schema: str, data_dir: Path) -> str:
    """One JetStream stream per deployment, named after the store it serves: deployments that
    share a NATS cluster (staging beside production, two test runs) must not take each other's
    events, and every process of one deployment must find the same stream. Only where the data
    lives counts (host, port, database, schema), not how a process spells or logs into it."""
    if database_url:
        url = urlsplit(database_url)
        host = _host_of(url.hostname)
        store = f"{host}:{url.port or 5432}/{url.path.lstrip('/')}#{schema}"
    else:
        store = str(data_dir)
    return "PARTNER_EVENTS_" + hashlib.sha256(store.encode()).hexdigest()[:12].upper()
