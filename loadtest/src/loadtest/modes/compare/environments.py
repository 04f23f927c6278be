"""A compare file's derived arms (`from`, `with`): each one's environment built or found in the
cache before anything starts (lab/derived_environments.py), its command run on that
environment's interpreter, and what it resolved to printed and kept for results.json."""

from dataclasses import replace
from pathlib import Path

from rich.console import Console

from loadtest.lab.derived_environments import derive_environment
from loadtest.lab.errors import LabError
from loadtest.modes.compare.settings import CompareSettings


def with_derived_environments(settings: CompareSettings, console: Console) -> CompareSettings:
    """The settings with every derived arm's command on its own environment's interpreter; a
    pin uv cannot satisfy stops the run in one line, naming the arm and the conflict."""
    file = settings.file
    assert file is not None, "a compare run's settings come from its file"
    services = []
    environments = {}
    for service in file.plan.services:
        options = file.arm_options[service.name]
        if options.derive_from is None:
            services.append(service)
            continue
        assert service.command is not None, "a derived arm has its base's command"
        packages = (
            f"the packages of {options.requirements}"
            if options.requirements
            else f"{options.derive_from}'s packages"
        )
        pinned = f" with {', '.join(options.pins)} over them" if options.pins else ""
        console.print(
            f"{service.name}: {options.derive_from}'s interpreter, {packages}{pinned}",
            highlight=False,
        )
        try:
            environment = derive_environment(
                Path(service.command[0]), options.pins, requirements=options.requirements
            )
        except LabError as error:
            raise LabError(f"{file.path}: arms.{service.name}: {error}") from None
        console.print(f"{service.name}: {environment.sentence()}", highlight=False)
        environments[service.name] = {
            "from": options.derive_from,
            "with": list(options.pins),
            "requirements": str(options.requirements) if options.requirements else None,
            **environment.as_dict(),
        }
        services.append(replace(service, command=(str(environment.python), *service.command[1:])))
    if not environments:
        return settings
    plan = replace(file.plan, services=tuple(services))
    return replace(settings, file=replace(file, plan=plan, environments=environments))
