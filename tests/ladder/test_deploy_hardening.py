"""deploy/ as a host and an attacker read it: secrets only from Secrets or the host's env file,
Redis with a password and the stores unreachable from outside, every container unprivileged with
resources and pinned images, probes on what the services serve, environment names the code reads."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import tomllib
from typing import Any

import pytest
from sqlalchemy.engine import make_url

from arena.embedded_redis import free_port
from tests.ladder.test_deploy import (
    COMPOSE_ENV,
    DEPLOY,
    ROOT,
    MissingVariable,
    compose,
    k8s_expand,
    yaml_documents,
)

OURS = "ohell-arena"
STORES = ("redis", "postgres")
USES_REDIS = {"engine", "matchmaker", "worker-builtin", "worker-remote"}
USES_DATABASE = {"matchmaker", "worker-builtin", "worker-remote"}
MIGRATE = "migrate"  # compose's one-shot service that migrates the archive (Kubernetes: init containers)
COMPOSE_USES_DATABASE = USES_DATABASE | {MIGRATE}
# a release, not a series: x.y.z (PostgreSQL's releases since 10 are major.minor)
PINNED = re.compile(r"postgres:\d+\.\d+|[\w./-]+:v?\d+\.\d+\.\d+")
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def k8s_docs() -> list[dict[str, Any]]:
    return [doc for path, docs in yaml_documents().items() if path.startswith("k8s/") for doc in docs]


def workloads() -> dict[str, dict[str, Any]]:
    """Deployments and StatefulSets by name."""
    return {doc["metadata"]["name"]: doc for doc in k8s_docs() if doc["kind"] in ("Deployment", "StatefulSet")}


def pod(name: str) -> dict[str, Any]:
    spec: dict[str, Any] = workloads()[name]["spec"]["template"]["spec"]
    return spec


def container(name: str) -> dict[str, Any]:
    (only,) = pod(name)["containers"]
    return only


def all_containers(name: str) -> list[dict[str, Any]]:
    """A workload's init containers and containers."""
    spec = pod(name)
    containers: list[dict[str, Any]] = spec.get("initContainers", []) + spec["containers"]
    return containers


def env(c: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["name"]: item for item in c.get("env", [])}


def our_compose_services() -> dict[str, dict[str, Any]]:
    return {name: s for name, s in compose()["services"].items() if s["image"].startswith(OURS)}


def test_no_secret_is_committed_and_compose_refuses_to_start_without_them() -> None:
    assert not [doc for doc in k8s_docs() if doc["kind"] == "Secret"]  # made with kubectl, never applied from here
    text = (DEPLOY / "docker-compose.yml").read_text()
    for name in COMPOSE_ENV:
        with pytest.raises(MissingVariable, match=name):
            compose({key: value for key, value in COMPOSE_ENV.items() if key != name})
        assert "${" + name + ":?" in text
    services = compose()["services"]
    assert services["postgres"]["environment"]["POSTGRES_PASSWORD"] == COMPOSE_ENV["OHELL_DB_PASSWORD"]
    assert services["grafana"]["environment"]["GF_SECURITY_ADMIN_PASSWORD"] == COMPOSE_ENV["GRAFANA_ADMIN_PASSWORD"]
    for name in COMPOSE_USES_DATABASE:
        url = make_url(services[name]["environment"]["OHELL_DATABASE_URL"])
        assert url.password == COMPOSE_ENV["OHELL_DB_PASSWORD"], name
    # Kubernetes: every password, token and URL holding one comes from a Secret
    for c in (c for name in workloads() for c in all_containers(name)):
        for name, item in env(c).items():
            if re.search(r"PASSWORD|TOKEN|DATABASE_URL|REDISCLI_AUTH", name):
                assert "secretKeyRef" in item.get("valueFrom", {}), (c["name"], name)
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert "deploy/.env" in ignored
    dockerignore = (ROOT / ".dockerignore").read_text().splitlines()
    assert {".git", ".venv", "**/*.so", "**/__pycache__", "**/.env"} <= set(dockerignore)


def test_redis_wants_a_password_and_every_process_of_it_passes_its_own() -> None:
    from redis.connection import parse_url

    services = compose()["services"]
    command = services["redis"]["command"]
    assert command[command.index("--requirepass") + 1] == COMPOSE_ENV["OHELL_REDIS_PASSWORD"]
    for name, service in our_compose_services().items():
        environment = service.get("environment", {})
        assert ("REDIS_URL" in environment) == (name in USES_REDIS), name
        assert ("OHELL_DATABASE_URL" in environment) == (name in COMPOSE_USES_DATABASE), name
        if name in USES_REDIS:
            url = parse_url(environment["REDIS_URL"])
            assert url["password"] == COMPOSE_ENV["OHELL_REDIS_PASSWORD"] and url["host"] == "redis", name
        assert "--redis-url" not in service["command"] and "--database-url" not in service["command"], name
    args = container("redis")["args"]
    assert args[args.index("--requirepass") + 1] == "$(REDIS_PASSWORD)"
    redis_env = env(container("redis"))
    for name in ("REDIS_PASSWORD", "REDISCLI_AUTH"):  # the server's and its probe's
        assert redis_env[name]["valueFrom"]["secretKeyRef"] == {"name": "ohell-redis", "key": "password"}
    for name in workloads().keys() - set(STORES):
        c, found = container(name), env(container(name))
        assert ("REDIS_URL" in found) == (name in USES_REDIS), name
        assert ("OHELL_DATABASE_URL" in found) == (name in USES_DATABASE), name
        if name in USES_REDIS:
            names = list(found)  # $(REDIS_PASSWORD) expands only from a variable defined before it
            assert names.index("REDIS_PASSWORD") < names.index("REDIS_URL"), name
            assert found["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "ohell-redis", "key": "password"}
            url = parse_url(k8s_expand(found["REDIS_URL"]["value"]))
            assert url["password"] == COMPOSE_ENV["OHELL_REDIS_PASSWORD"] and url["host"] == "redis", name
        assert "--redis-url" not in c["command"] and "--database-url" not in c["command"], name


def test_redis_and_postgres_are_reachable_only_by_their_processes() -> None:
    services = compose()["services"]
    for name in STORES:
        assert "ports" not in services[name], name  # only the compose network reaches them
    for name in ("prometheus", "grafana"):  # no sign-in of their own: this machine only
        assert all(port.startswith("127.0.0.1:") for port in services[name]["ports"]), name
    k8s_services = {doc["metadata"]["name"]: doc for doc in k8s_docs() if doc["kind"] == "Service"}
    for name in STORES:
        assert k8s_services[name]["spec"].get("type", "ClusterIP") == "ClusterIP", name
    policies = {doc["metadata"]["name"]: doc for doc in k8s_docs() if doc["kind"] == "NetworkPolicy"}
    for name, users in (("redis", USES_REDIS), ("postgres", USES_DATABASE)):
        spec = policies[name]["spec"]
        assert spec["podSelector"] == {"matchLabels": {"app": name}} and spec["policyTypes"] == ["Ingress"]
        (rule,) = spec["ingress"]
        (source,) = rule["from"]
        (expression,) = source["podSelector"]["matchExpressions"]
        assert expression["key"] == "app" and expression["operator"] == "In"
        assert set(expression["values"]) == users, name
        for user in users:
            assert workloads()[user]["spec"]["template"]["metadata"]["labels"]["app"] == user


def test_every_container_runs_unprivileged() -> None:
    namespace = next(doc for doc in k8s_docs() if doc["kind"] == "Namespace")
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    for name in workloads():
        spec = pod(name)
        assert spec["automountServiceAccountToken"] is False, name
        security = spec["securityContext"]
        assert security["runAsNonRoot"] is True and security["runAsUser"] > 0, name
        assert security["seccompProfile"] == {"type": "RuntimeDefault"}, name
        for c in all_containers(name):
            assert c["securityContext"] == {
                "allowPrivilegeEscalation": False,
                "readOnlyRootFilesystem": True,
                "capabilities": {"drop": ["ALL"]},
            }, name
            mounts = {mount["mountPath"] for mount in c.get("volumeMounts", [])}
            assert "/tmp" in mounts or name == "redis", name  # a read-only root: /tmp is a volume
    for name in workloads().keys() - set(STORES):  # the workers' PROMETHEUS_MULTIPROC_DIR is on that volume
        directory = env(container(name)).get("PROMETHEUS_MULTIPROC_DIR", {}).get("value", "/tmp/")
        assert directory.startswith("/tmp/"), name
        assert pod(name)["securityContext"]["runAsUser"] == 65534, name
    users = [rest for word, rest in dockerfile_final_stage() if word == "USER"]
    assert users == ["65534:65534"]  # by number: Kubernetes cannot check a name is not root
    services = compose()["services"]
    for name, service in services.items():  # Prometheus and Grafana too (their images' own non-root users)
        assert service["cap_drop"] == ["ALL"] and "no-new-privileges:true" in service["security_opt"], name
    for name in [*our_compose_services(), *STORES]:
        service = services[name]
        assert service["read_only"] is True and "/tmp" in service["tmpfs"], name
    assert services["redis"]["user"] == services["postgres"]["user"] == "999:999"


def dockerfile_final_stage() -> list[tuple[str, str]]:
    from tests.ladder.test_dockerfile import stages

    return stages()[-1]


def test_every_container_has_resources_and_a_pinned_image() -> None:
    for name in workloads():
        for c in all_containers(name):
            resources = c["resources"]
            for kind in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(resources[kind]), (name, kind)
            image = c["image"]
            assert PINNED.fullmatch(image), image
            if image.startswith(OURS):
                assert image == f"{OURS}:{VERSION}", image
    workers = container("worker-builtin")  # one prefork child per CPU it may use
    command = workers["command"]
    assert command[command.index("--concurrency") + 1] == str(workers["resources"]["limits"]["cpu"])
    services = compose()["services"]
    for name, service in services.items():
        assert PINNED.fullmatch(service["image"]), service["image"]
        if service["image"].startswith(OURS):
            assert service["image"] == f"{OURS}:{VERSION}"
        assert {"cpus", "memory"} <= set(service["deploy"]["resources"]["limits"]), name
    from tests.ladder.test_dockerfile import instructions

    base = next(rest for word, rest in instructions() if word == "ARG" and rest.startswith("PYTHON_IMAGE="))
    assert re.fullmatch(r"PYTHON_IMAGE=python:3\.\d+\.\d+-slim-\w+", base), base
    text = " ".join(path.read_text() for path in [DEPLOY / "docker-compose.yml", *(DEPLOY / "k8s").glob("*.yaml")])
    assert ":latest" not in text


def option(command: list[str], flag: str) -> str:
    return command[command.index(flag) + 1]


def test_probes_and_scrapes_use_what_the_services_serve() -> None:
    routes = re.findall(r'Route\("([^"]+)", health\)', (ROOT / "services/web/app.py").read_text())
    assert routes == ["/healthz"]
    for name in ("engine", "matchmaker"):  # arena.rpc.server: grpc.health.v1 on the service's port
        c = container(name)
        port = int(option(c["command"], "--address").rpartition(":")[2])
        for probe in ("readinessProbe", "livenessProbe"):
            assert c[probe]["grpc"] == {"port": port}, (name, probe)
        annotations = workloads()[name]["spec"]["template"]["metadata"]["annotations"]
        assert annotations["prometheus.io/port"] == option(c["command"], "--metrics-port"), name
        assert option(c["command"], "--metrics-address") == "0.0.0.0", name
    web = container("web")
    port = int(option(web["command"], "--address").rpartition(":")[2])
    for probe in ("readinessProbe", "livenessProbe"):
        assert web[probe]["httpGet"] == {"path": routes[0], "port": port}, probe
    for name in ("worker-builtin", "worker-remote"):
        found = env(container(name))
        annotations = workloads()[name]["spec"]["template"]["metadata"]["annotations"]
        assert annotations["prometheus.io/port"] == found["OHELL_METRICS_PORT"]["value"], name
        assert found["OHELL_METRICS_ADDRESS"]["value"] == "0.0.0.0", name
    redis_probe = container("redis")["readinessProbe"]["exec"]["command"]
    assert redis_probe[-1] == "redis-cli ping | grep -q PONG"  # NOAUTH (no or a wrong password) fails it
    compose_probe = compose()["services"]["redis"]["healthcheck"]["test"]
    assert compose_probe == ["CMD-SHELL", "redis-cli ping | grep -q PONG"]
    assert compose()["services"]["redis"]["environment"]["REDISCLI_AUTH"] == COMPOSE_ENV["OHELL_REDIS_PASSWORD"]


def code_text() -> str:
    return "\n".join(
        path.read_text() for folder in ("arena", "services", "workers") for path in (ROOT / folder).rglob("*.py")
    )


def test_every_variable_given_to_our_processes_is_one_the_code_reads() -> None:
    code = code_text()
    given: dict[str, set[str]] = {}
    for name, service in our_compose_services().items():
        for variable in service.get("environment", {}):
            given.setdefault(variable, set()).add(f"compose {name}")
    for name in workloads().keys() - set(STORES):
        for c in all_containers(name):
            found = env(c)
            expanded = " ".join(str(item.get("value", "")) for item in found.values())
            for variable in found:
                if f"$({variable})" in expanded:  # only a part of another variable (REDIS_PASSWORD)
                    continue
                given.setdefault(variable, set()).add(f"k8s {name}/{c['name']}")
    assert {"REDIS_URL", "OHELL_DATABASE_URL", "OHELL_HOST_TOKEN", "OHELL_WEB_TOKEN"} <= set(given)
    unread = {variable: where for variable, where in given.items() if f'"{variable}"' not in code}
    assert not unread, unread


def compose_health(name: str) -> tuple[str, str]:
    """The script and the address of a compose service's health check (``python -c SCRIPT ADDRESS``)."""
    program, python, dash_c, script, address = compose()["services"][name]["healthcheck"]["test"]
    assert (program, python, dash_c) == ("CMD", "python", "-c"), name
    return script, address


def run_check(script: str, address: str) -> int:
    return subprocess.run([sys.executable, "-c", script, address], capture_output=True, timeout=60).returncode


@pytest.mark.slow  # over a second: the quick subset stays quick
def test_compose_health_checks_ask_what_the_services_serve() -> None:
    """Each check run against what the service's code serves: the gRPC harness's health service,
    the web app's /healthz; and against nothing there."""
    from arena.rpc.server import create_server, stop_server

    services = compose()["services"]
    for name in ("engine", "matchmaker"):
        script, address = compose_health(name)
        assert address == "127.0.0.1:" + option(services[name]["command"], "--address").rpartition(":")[2]

        async def check(script: str = script) -> tuple[int, int]:
            served = await create_server("127.0.0.1:0")
            try:
                serving = await asyncio.to_thread(run_check, script, f"127.0.0.1:{served.port}")
                await served.health.enter_graceful_shutdown()  # NOT_SERVING while it stops
                stopping = await asyncio.to_thread(run_check, script, f"127.0.0.1:{served.port}")
            finally:
                await stop_server(served, grace=0)
            return serving, stopping

        serving, stopping = asyncio.run(check())
        assert serving == 0 and stopping != 0, (name, serving, stopping)
        assert run_check(script, f"127.0.0.1:{free_port()}") != 0, name
    script, url = compose_health("web")
    port = option(services["web"]["command"], "--address").rpartition(":")[2]
    assert url == f"http://127.0.0.1:{port}/healthz"
    web = subprocess.Popen(
        [sys.executable, "-m", "services.web", "--address", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert web.stdout is not None
        line = web.stdout.readline()
        assert line.startswith("web service on port "), line
        bound = line.split()[-1]
        assert run_check(script, f"http://127.0.0.1:{bound}/healthz") == 0
        assert run_check(script, f"http://127.0.0.1:{bound}/no-such-page") != 0
    finally:
        web.terminate()
        web.wait(timeout=30)


def test_engine_replicas_never_all_go_at_once() -> None:
    """Agents reconnect to whichever replica serves: one must, through updates and node drains."""
    engine = workloads()["engine"]
    assert engine["spec"]["replicas"] >= 2
    assert engine["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1},
    }
    (budget,) = [doc for doc in k8s_docs() if doc["kind"] == "PodDisruptionBudget"]
    assert budget["spec"] == {"minAvailable": 1, "selector": {"matchLabels": {"app": "engine"}}}
    (term,) = pod("engine")["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
    assert term["podAffinityTerm"]["labelSelector"] == {"matchLabels": {"app": "engine"}}


def test_the_workers_consume_every_queue_and_wait_only_for_what_they_use() -> None:
    from arena.ladder.routing import ALL_QUEUES

    for commands in (
        [service["command"] for service in our_compose_services().values()],
        [container(name).get("command", []) for name in workloads()],
    ):
        consumed = {queue for command in commands if "celery" in command for queue in option(command, "-Q").split(",")}
        assert consumed == set(ALL_QUEUES)
    for name, service in our_compose_services().items():
        users_of = (USES_REDIS, COMPOSE_USES_DATABASE)
        needs = {store for store, users in zip(STORES, users_of, strict=True) if name in users}
        assert set(service["depends_on"]) & set(STORES) == needs, name


WORKERS = ("worker-builtin", "worker-remote")
WORKER_HEALTH = ["python", "-m", "workers.health"]


def test_the_workers_liveness_is_their_event_loops_heartbeat_on_a_writable_tmp() -> None:
    """Their metrics server answered while the worker hung: Kubernetes never restarted a hung worker."""
    from workers import health

    health.build_parser().parse_args(WORKER_HEALTH[3:])  # what python -m workers.health runs
    assert not health.DEFAULT_PATH.startswith("/tmp/ohell-metrics") and health.DEFAULT_PATH.startswith("/tmp/")
    for name in WORKERS:
        c = container(name)
        assert c["securityContext"]["readOnlyRootFilesystem"] is True, name
        assert {"name": "tmp", "mountPath": "/tmp"} in c["volumeMounts"], name
        assert "OHELL_WORKER_HEARTBEAT" not in env(c), name  # the default, under /tmp
        for probe in ("startupProbe", "livenessProbe"):
            assert c[probe]["exec"]["command"] == WORKER_HEALTH, (name, probe)
        liveness = c["livenessProbe"]
        assert liveness["timeoutSeconds"] >= 5, name  # a Python start on a busy node
        assert liveness["periodSeconds"] * liveness["failureThreshold"] >= health.DEFAULT_MAX_AGE_S, name
        startup = c["startupProbe"]
        assert startup["periodSeconds"] * startup["failureThreshold"] >= 60, name  # imports, broker connection
        service = our_compose_services()[name]
        assert service["read_only"] is True and "/tmp" in service["tmpfs"], name
        assert "OHELL_WORKER_HEARTBEAT" not in service["environment"], name
        check = service["healthcheck"]
        assert check["test"] == ["CMD", *WORKER_HEALTH], name
        assert check["start_period"] and check["timeout"], name
