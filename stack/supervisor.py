"""Supervisor as the stack's process manager: render its config, run it, talk to it over XML-RPC."""

import os
import subprocess
import xmlrpc.client
from typing import Any, cast

from pydantic import SecretStr
from supervisor.xmlrpc import SupervisorTransport

from onceflow import paths
from onceflow.settings import Settings, get_observability_settings
from stack.components import Component
from stack.private_data import write_private
from stack.waiting import wait_for


def render_config(components: list[Component], settings: Settings) -> str:
    """The supervisord.conf for these components, with the settings exported to every child but
    its secrets: a program reads its own database password from its file (.stack/secrets/), or
    gets it in its environment when it can read no file (`Component.passwords_in_env`)."""
    env = ",".join(
        f'ONCEFLOW_{key.upper()}="{_quoted(value)}"'
        for key, value in _settings_env(settings).items()
    )
    sections = [
        f"[unix_http_server]\nfile={paths.SUPERVISOR_SOCKET}\nchmod=0700\n",
        "[supervisord]\n"
        f"logfile={paths.LOGS / 'supervisord.log'}\npidfile={paths.RUN / 'supervisord.pid'}\n"
        f"directory={paths.ROOT}\nlogfile_maxbytes=10MB\nenvironment={env}\n"
        # supervisord's own log (and its children's logs, which it writes) are its owner's only.
        "umask=077\n",
        "[rpcinterface:supervisor]\n"
        "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface\n",
        f"[supervisorctl]\nserverurl=unix://{paths.SUPERVISOR_SOCKET}\n",
    ]
    for priority, component in enumerate(components, start=1):
        lines = [
            f"[program:{component.name}]",
            f"command={_command(component)}",
            f"directory={paths.ROOT}",
            f"priority={priority * 10}",
            "autostart=false",
            "autorestart=true",
            "startsecs=3",
            "startretries=3",
            f"stopsignal={component.stopsignal}",
            f"stopwaitsecs={component.stopwait}",
            "stopasgroup=true",
            "killasgroup=true",
            "redirect_stderr=true",
            f"stdout_logfile={paths.LOGS / component.name}.log",
            "stdout_logfile_maxbytes=50MB",
            "stdout_logfile_backups=3",
            # What it writes (Kafka's segments, checkpoints, ...) is its owner's only. Set per
            # program: supervisord applies its own umask only when it starts, not on `update`.
            "umask=077",
        ]
        if component.user:
            lines.append(f"user={component.user}")
        own_env = [*component.env, *_passwords(component, settings)]
        if own_env:
            own = ",".join(f'{key}="{_quoted(value)}"' for key, value in own_env)
            lines.append(f"environment={own}")
        sections.append("\n".join(lines) + "\n")
    sections.append(_exporter_section([component.name for component in components]))
    return "\n".join(sections)


def _command(component: Component) -> str:
    """Its command, under its network group when it has one (still root: only its packets'
    group changes, which nftables can match)."""
    if component.network_group is None:
        return component.command
    return f"{SETPRIV} --regid {component.network_group} --clear-groups -- {component.command}"


# util-linux: on every Debian machine.
SETPRIV = "/usr/bin/setpriv"
EXPORTER = "supervisor-exporter"


def _exporter_section(programs: list[str]) -> str:
    """The event listener that counts every program's starts (stack/supervisor_exporter.py)."""
    port = get_observability_settings().supervisor_exporter_port
    lines = [
        f"[eventlistener:{EXPORTER}]",
        f"command={paths.VENV_BIN / 'python'} -m stack.supervisor_exporter {port} "
        + ",".join(programs),
        f"directory={paths.ROOT}",
        "events=PROCESS_STATE",
        "umask=077",
        # supervisord starts it with itself, before `make up` starts any program.
        "priority=1",
        "autostart=true",
        "autorestart=true",
        # Its stdout is supervisor's event protocol: only stderr is a log.
        f"stderr_logfile={paths.LOGS / EXPORTER}.log",
        "stderr_logfile_maxbytes=10MB",
        "stderr_logfile_backups=1",
    ]
    return "\n".join(lines) + "\n"


def _quoted(value: str) -> str:
    # supervisor expands %(name)s in its config and splits on unquoted commas.
    return value.replace("%", "%%").replace("\\", "\\\\").replace('"', '\\"')


def _settings_env(settings: Settings) -> dict[str, str]:
    """Every setting but the secrets (passwords, the superuser's DSN), as text (a sequence as
    `a,b`, as the settings read it)."""
    return {
        key: ",".join(value) if isinstance(value, tuple) else str(value)
        for key, value in settings.model_dump().items()
        if value is not None and not isinstance(value, SecretStr)
    }


def _passwords(component: Component, settings: Settings) -> list[tuple[str, str]]:
    """The component's own database passwords, when it takes them from its environment."""
    if not component.passwords_in_env:
        return []
    return [
        (f"ONCEFLOW_{role.upper()}_DB_PASSWORD", settings.credentials(role)[1])
        for role in component.db_roles
    ]


def proxy() -> Any:
    """An XML-RPC proxy to the running supervisord."""
    transport = SupervisorTransport(None, None, f"unix://{paths.SUPERVISOR_SOCKET}")
    return xmlrpc.client.ServerProxy("http://127.0.0.1", transport=transport)


def is_running() -> bool:
    """True when supervisord answers on its socket."""
    try:
        return cast(str, proxy().supervisor.getState()["statename"]) == "RUNNING"
    except (OSError, xmlrpc.client.Fault):
        return False


def _ctl() -> list[str]:
    return [str(paths.VENV_BIN / "supervisorctl"), "-c", str(paths.SUPERVISOR_CONF)]


def write_config(config_text: str) -> None:
    """Write the config: mode 0600 in a 0700 folder (it holds the passwords of the programs that
    take theirs from the environment)."""
    write_private(paths.SUPERVISOR_CONF, config_text)


def start_or_update(config_text: str) -> None:
    """Write the config and start supervisord, or make a running one pick up changes."""
    write_config(config_text)
    if is_running():
        subprocess.run([*_ctl(), "update"], check=True, capture_output=True)
        return
    # Every program inherits supervisord's environment: never its starter's Kafka principal
    # (the test suite's is `tests`, whose ACLs deny the pipeline's transactional ids; a
    # `make up` run by a test once made the notifications processor log in as it).
    env = {k: v for k, v in os.environ.items() if k != "ONCEFLOW_KAFKA_PRINCIPAL"}
    subprocess.run(
        [str(paths.VENV_BIN / "supervisord"), "-c", str(paths.SUPERVISOR_CONF)],
        check=True,
        capture_output=True,
        env=env,
    )
    wait_for(is_running, what="supervisord", timeout=30)


def state(name: str) -> str:
    """Supervisor's state name for one program (RUNNING, STOPPED, FATAL, ...); UNKNOWN for a
    program the running supervisord has not loaded yet (a component added since it started)."""
    try:
        return cast(str, proxy().supervisor.getProcessInfo(name)["statename"])
    except xmlrpc.client.Fault as fault:
        if "BAD_NAME" in fault.faultString:
            return "UNKNOWN"
        raise


def programs() -> set[str]:
    """The names of the programs the running supervisord has loaded."""
    return {info["name"] for info in proxy().supervisor.getAllProcessInfo()}


def start(name: str) -> None:
    """Start a program unless it is already running or starting."""
    if state(name) not in ("RUNNING", "STARTING"):
        proxy().supervisor.startProcess(name, False)


def stop(name: str) -> None:
    """Stop a program (waiting until it has stopped) unless it is not running."""
    if state(name) in ("RUNNING", "STARTING", "BACKOFF"):
        proxy().supervisor.stopProcess(name, True)


def restart(name: str) -> None:
    """Restart one program (or the event listener) with the config as written: supervisord
    re-reads it and applies this program's section only; every other program keeps running."""
    subprocess.run([*_ctl(), "update", name], check=True, capture_output=True)
    if state(name) in ("RUNNING", "STARTING"):
        proxy().supervisor.stopProcess(name, True)
    proxy().supervisor.startProcess(name, False)


def signal(name: str, signame: str) -> None:
    """Send a running program a signal (e.g. HUP: reload its config)."""
    proxy().supervisor.signalProcess(name, signame)


def shutdown() -> None:
    """Stop every program (in reverse start order) and supervisord itself."""
    if not is_running():
        return
    subprocess.run([*_ctl(), "stop", "all"], check=False, capture_output=True)
    proxy().supervisor.shutdown()
    wait_for(lambda: not paths.SUPERVISOR_SOCKET.exists(), what="supervisord shutdown", timeout=60)
