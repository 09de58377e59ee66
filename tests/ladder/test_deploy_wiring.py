"""deploy/ wired as the services are today: the archive migrated before its users start, every
address one process dials served by the process named there, only the gateway's, the matchmaker's
and the web app's ports open to the world, every environment variable documented with its default
and given only to a process the documentation says reads it, workers allowed to finish their
matches on a stop, and the web app (its sign-in sessions in memory) alone."""

from __future__ import annotations

import json
import re
from typing import Any

from redis.connection import parse_url
from sqlalchemy.engine import make_url

from tests.ladder.test_deploy import DEPLOY, ROOT, compose, scrape_targets
from tests.ladder.test_deploy_hardening import (
    COMPOSE_USES_DATABASE,
    MIGRATE,
    STORES,
    USES_DATABASE,
    USES_REDIS,
    all_containers,
    container,
    env,
    k8s_docs,
    option,
    our_compose_services,
    pod,
    workloads,
)

MIGRATE_COMMAND = ["python", "-m", "arena.archive.migrate"]
# the ports anyone may reach: the engine's gateway, the matchmaker (hosts, bots), the web app
OPEN = {"engine": 50051, "matchmaker": 50052, "web": 8080}


def listen_port(command: list[str]) -> int:
    return int(option(command, "--address").rpartition(":")[2])


# what the images of the stores and of Prometheus listen on by default
IMAGE_PORTS = {"redis": 6379, "postgres": 5432, "prom/prometheus": 9090}


def served_ports(service: dict[str, Any]) -> set[int]:
    command = [str(part) for part in service.get("command", [])]
    ports = {
        int(option(command, flag).rpartition(":")[2]) for flag in ("--address", "--metrics-port") if flag in command
    }
    if "OHELL_METRICS_PORT" in service.get("environment", {}):
        ports.add(int(service["environment"]["OHELL_METRICS_PORT"]))
    image = service["image"].partition(":")[0]
    return ports | ({IMAGE_PORTS[image]} if image in IMAGE_PORTS else set())


def test_the_archive_is_migrated_before_any_process_that_uses_it_starts() -> None:
    services = compose()["services"]
    migrate = services[MIGRATE]
    assert migrate["command"] == MIGRATE_COMMAND
    assert migrate["restart"] == "no"  # one run per `up`: it exits when done
    assert migrate["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    url = migrate["environment"]["OHELL_DATABASE_URL"]
    for name in USES_DATABASE:
        assert services[name]["depends_on"][MIGRATE] == {"condition": "service_completed_successfully"}, name
        assert services[name]["environment"]["OHELL_DATABASE_URL"] == url, name
    for name in workloads().keys() - set(STORES):
        uses = "OHELL_DATABASE_URL" in env(container(name))
        assert uses == (name in USES_DATABASE), name
        if not uses:
            continue
        first, *_ = pod(name).get("initContainers", [{}])
        assert first.get("command", [])[:3] == MIGRATE_COMMAND, name
        # a pod restarted while PostgreSQL is down still starts (the ladder plays on without its archive)
        assert "--unreachable-ok" in first["command"], name
        assert env(first)["OHELL_DATABASE_URL"] == env(container(name))["OHELL_DATABASE_URL"], name
        assert first["image"] == container(name)["image"], name


def test_every_address_a_process_dials_is_served_there() -> None:
    """Compose: the service named holds the port and shares a network with the caller (a service on
    no common network does not even resolve the name). Kubernetes: a Service of that name and port
    selects the pods that listen on it."""
    services = compose()["services"]
    networks = compose()["networks"]

    def reach(caller: str, host: str, port: int) -> None:
        assert host in services, (caller, host)
        shared = set(services[caller].get("networks", ["default"])) & set(services[host].get("networks", ["default"]))
        assert shared, f"{caller} shares no network with {host}"
        assert port in served_ports(services[host]), (caller, host, port)

    for name, service in services.items():
        environment = service.get("environment", {})
        if "REDIS_URL" in environment:
            url = parse_url(environment["REDIS_URL"])
            reach(name, url["host"], url["port"])
        if "OHELL_DATABASE_URL" in environment:
            database = make_url(environment["OHELL_DATABASE_URL"])
            reach(name, str(database.host), database.port or 5432)
    web = services["web"]["command"]
    for flag in ("--matchmaker", "--engine"):
        host, _, port = option(web, flag).rpartition(":")
        reach("web", host, int(port))
    for host, port in scrape_targets():
        reach("prometheus", host, int(port))
    datasource = (DEPLOY / "grafana/provisioning/datasources/prometheus.yml").read_text()
    (host,) = re.findall(r"url: http://([\w-]+):9090", datasource)
    reach("grafana", host, 9090)
    for name in STORES:  # on internal networks only, each with nobody but its users
        assert all(networks[net].get("internal") is True for net in services[name]["networks"]), name
        users = USES_REDIS if name == "redis" else COMPOSE_USES_DATABASE
        beside = {
            other
            for other, service in services.items()
            if other != name and set(service.get("networks", ["default"])) & set(services[name]["networks"])
        }
        assert beside == users, (name, beside)
    for name, port in OPEN.items():
        assert services[name]["ports"] == [f"{port}:{port}"] and listen_port(services[name]["command"]) == port

    k8s_services = {doc["metadata"]["name"]: doc for doc in k8s_docs() if doc["kind"] == "Service"}
    for name, service in k8s_services.items():
        (selected,) = [w for w in workloads() if service["spec"]["selector"] == {"app": w}]
        served = {p["containerPort"] for c in pod(selected)["containers"] for p in c.get("ports", [])}
        for port in service["spec"]["ports"]:
            assert port["port"] in served and "targetPort" not in port, (name, port)
            if name in OPEN:
                assert port["port"] == listen_port(container(name)["command"]) == OPEN[name], name
    web = container("web")["command"]
    for flag in ("--matchmaker", "--engine"):
        host, _, port = option(web, flag).rpartition(":")
        assert int(port) in {p["port"] for p in k8s_services[host]["spec"]["ports"]}, flag


def ingress_rules(workload: str) -> list[dict[str, Any]]:
    labels = workloads()[workload]["spec"]["template"]["metadata"]["labels"]
    rules = []
    for policy in (doc for doc in k8s_docs() if doc["kind"] == "NetworkPolicy"):
        selector = policy["spec"]["podSelector"]
        if all(labels.get(key) == value for key, value in selector.get("matchLabels", {}).items()):
            if "matchExpressions" not in selector:
                rules += policy["spec"].get("ingress", [])
    return rules


def test_only_the_gateway_the_matchmaker_and_the_web_app_take_connections_from_anywhere() -> None:
    policies = [doc for doc in k8s_docs() if doc["kind"] == "NetworkPolicy"]
    deny = [p for p in policies if p["spec"]["podSelector"] == {}]
    assert deny and deny[0]["spec"]["policyTypes"] == ["Ingress"] and "ingress" not in deny[0]["spec"]
    for name in workloads():
        open_ports = set()
        for rule in ingress_rules(name):
            ports = {p["port"] for p in rule["ports"]}  # a rule without ports would open every port
            if "from" not in rule:
                open_ports |= ports
                continue
            for source in rule["from"]:
                assert "ipBlock" not in source, name
                if "namespaceSelector" in source:  # Prometheus's namespace: the metrics port only
                    annotations = workloads()[name]["spec"]["template"]["metadata"]["annotations"]
                    assert ports == {int(annotations["prometheus.io/port"])}, name
        assert open_ports == ({OPEN[name]} if name in OPEN else set()), name


def documented_variables() -> tuple[dict[str, tuple[str, str]], set[str]]:
    """docs/operations.md: the "Environment" table (variable: (used by, default)) and the variables
    of ``ohell up``'s settings table."""
    text = (ROOT / "docs" / "operations.md").read_text()
    section = text.split("\n## Environment\n", 1)[1].split("\n## ", 1)[0]
    table: dict[str, tuple[str, str]] = {}
    for row in (line for line in section.splitlines() if line.startswith("| `")):
        names, used_by, default = (cell.strip() for cell in row.strip("|").split(" | ", 2))
        assert used_by and default, row
        for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", names):
            table[name] = (used_by, default)
    settings = text.split("| setting | flag | environment | default |", 1)[1].split("\n\n", 1)[0]
    # the environment and default columns (the data folder's default names $XDG_DATA_HOME)
    up = {
        name
        for row in settings.splitlines()[2:]
        for name in re.findall(r"\b[A-Z][A-Z0-9_]{3,}\b", row.split("|", 3)[3])
    }
    return table, up


def code_variables() -> set[str]:
    found = set()
    for folder in ("arena", "services", "workers"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text()
            found |= set(re.findall(r'"(OHELL_[A-Z0-9_]+)"', text))
            found |= set(re.findall(r'environ(?:\.get\(|\[)"([A-Z][A-Z0-9_]+)"', text))
    return found


def process_of(command: list[str]) -> str:
    """The process a command runs, as the documentation's "used by" names it."""
    for module, name in (
        ("services.engine", "engine"),
        ("services.matchmaker", "matchmaker"),
        ("services.web", "web app"),
        ("arena.archive.migrate", "arena.archive.migrate"),
    ):
        if module in command:
            return name
    assert command[0] == "celery", command
    return "workers"


def test_every_variable_is_documented_with_its_default_and_given_only_to_its_readers() -> None:
    table, up = documented_variables()
    undocumented = code_variables() - set(table) - up
    assert undocumented == {"OHELL_PG_BIN"}, undocumented  # the tests' and benchmarks' PostgreSQL: README.md
    assert "OHELL_PG_BIN" in (ROOT / "README.md").read_text()
    given: list[tuple[str, str, str, str]] = [  # (where, process, variable, its value)
        (f"compose {name}", process_of(service["command"]), variable, str(value))
        for name, service in our_compose_services().items()
        for variable, value in service.get("environment", {}).items()
    ]
    for name in workloads().keys() - set(STORES):
        for c in all_containers(name):
            found = env(c)
            expanded = " ".join(str(item.get("value", "")) for item in found.values())
            given += [
                (f"k8s {name}/{c['name']}", process_of(c["command"]), variable, json.dumps(item, sort_keys=True))
                for variable, item in found.items()
                if f"$({variable})" not in expanded  # only a part of another (REDIS_PASSWORD)
            ]
    assert len({process for _, process, _, _ in given}) == 5
    values: dict[tuple[str, str], set[str]] = {}
    for where, process, variable, value in given:
        assert variable in table, f"{variable} ({where}) is not in docs/operations.md's Environment table"
        used_by = table[variable][0]
        assert process in used_by or used_by.startswith("everything"), (where, variable, used_by)
        values.setdefault((where.split()[0], variable), set()).add(value)
    # one stack: the processes that share a setting (a token, the archive, the metrics port) agree on it
    differing = {key: found for key, found in values.items() if len(found) > 1}
    assert not differing, differing


def seconds(duration: str) -> int:
    value, unit = re.fullmatch(r"(\d+)(s|m)", duration).groups()  # type: ignore[union-attr]
    return int(value) * (60 if unit == "m" else 1)


def test_workers_are_given_the_same_time_to_finish_their_matches_in_compose_and_kubernetes() -> None:
    services = our_compose_services()
    for name in ("worker-builtin", "worker-remote"):
        grace = pod(name)["terminationGracePeriodSeconds"]
        assert grace >= 60, name  # a batch of built-in matches, or a remote match at agents' pace
        assert seconds(services[name]["stop_grace_period"]) == grace, name


def test_postgresql_stops_at_once_with_a_checkpoint_rather_than_waiting_for_its_clients() -> None:
    """SIGTERM, what Kubernetes sends, is PostgreSQL's smart shutdown: it waits for every client,
    and the pooled connections of the matchmaker and the workers never leave, so it was killed at
    the end of the grace period and recovered from its WAL on the next start."""
    postgres = container("postgres")
    command = postgres["lifecycle"]["preStop"]["exec"]["command"]
    assert command[:2] == ["sh", "-c"] and re.fullmatch(r'pg_ctl stop -D "\$PGDATA" -m fast -w -t (\d+)', command[2])
    waits = int(command[2].rpartition(" ")[2])
    assert "PGDATA" in env(postgres)
    grace = pod("postgres")["terminationGracePeriodSeconds"]
    assert waits < grace
    service = compose()["services"]["postgres"]
    assert "stop_signal" not in service  # the image's own: SIGINT, the fast shutdown
    assert seconds(service["stop_grace_period"]) == grace


def test_the_web_app_runs_alone_since_its_sign_in_sessions_live_in_its_memory() -> None:
    """A second replica behind a Service would not know the session (nor the CSRF token) of a host
    signed in at the first: every other request would sign the host out."""
    assert workloads()["web"]["spec"]["replicas"] == 1
    assert "deploy" not in our_compose_services()["web"] or "replicas" not in our_compose_services()["web"]["deploy"]
