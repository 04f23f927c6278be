"""Before timing, every scenario on every arm: the status, the content type, the fields the file
asks for, the cheap check the load will apply, a write read back where the file names a path;
then every arm's answer beside the baseline's, field by field, once what a migration may change
is normalised (normalise.py)."""

import json
import re
from dataclasses import dataclass, field
from typing import Any

import httpx

from loadtest.lab.http import http_client
from loadtest.load.locustfiles.checked import next_number
from loadtest.load.plan import ARM_PLACEHOLDER, COUNTER_PLACEHOLDER, PairedPlan, Scenario
from loadtest.modes.compare.normalise import differences, has_field, normalise

TIMEOUT_S = 30
READ_BACK_FIELD = re.compile(r"\{([A-Za-z0-9_]+)\}")


@dataclass
class Answer:
    """One arm's answer to one scenario, as verification saw it."""

    status: int
    content_type: str  # without its parameters
    body: Any  # the parsed JSON, or the text
    sent: dict[str, str] = field(default_factory=dict)  # what a template became -> the template
    problems: list[str] = field(default_factory=list)


def media_type(response: httpx.Response) -> str:
    return response.headers.get("content-type", "").split(";")[0].strip().lower()


def parsed_body(response: httpx.Response) -> Any:
    if media_type(response).endswith("json"):
        try:
            return response.json()
        except ValueError:
            return response.text
    return response.text


def filled_body(scenario: Scenario, arm: str) -> tuple[str | None, dict[str, str]]:
    """The arm's body, and for every string of it a template filled in, its filled value ->
    the template (so the arms' answers echoing them compare equal)."""
    template = scenario.request.body
    if template is None:
        return None, {}
    number = next_number()
    filled = template.replace(ARM_PLACEHOLDER, arm).replace(COUNTER_PLACEHOLDER, number)
    sent: dict[str, str] = {}
    try:
        templates, values = json.loads(template_as_json(template)), json.loads(filled)
    except ValueError:
        return filled, sent
    pair_strings(templates, values, sent)
    return filled, sent


def template_as_json(template: str) -> str:
    """The template as JSON text: as it is where {n} stands inside strings; where it stands
    for a number, with a digit there (that number is then not paired back)."""
    try:
        json.loads(template)
    except ValueError:
        return template.replace(COUNTER_PLACEHOLDER, "0")
    return template


def pair_strings(template: Any, value: Any, sent: dict[str, str]) -> None:
    if isinstance(template, dict) and isinstance(value, dict):
        for key in template:
            if key in value:
                pair_strings(template[key], value[key], sent)
    elif isinstance(template, list) and isinstance(value, list):
        for left, right in zip(template, value, strict=False):
            pair_strings(left, right, sent)
    elif isinstance(template, str) and isinstance(value, str) and template != value:
        sent[value] = template


def as_templates(value: Any, sent: dict[str, str]) -> Any:
    """The answer with every echoed filled-in value put back as its template."""
    if isinstance(value, dict):
        return {key: as_templates(item, sent) for key, item in value.items()}
    if isinstance(value, list):
        return [as_templates(item, sent) for item in value]
    if isinstance(value, str):
        return sent.get(value, value)
    return value


def ask(base_url: str, scenario: Scenario, arm: str) -> Answer:
    """The scenario's request on one arm, and what is wrong with the answer on its own."""
    request = scenario.request
    body, sent = filled_body(scenario, arm)
    try:
        with http_client(base_url=base_url, timeout=TIMEOUT_S) as client:
            response = client.request(
                request.method, request.path, content=body, headers=request.header_dict()
            )
            answer = Answer(response.status_code, media_type(response), parsed_body(response))
            answer.sent = sent
            answer.problems = answer_problems(scenario, response, answer)
            if not answer.problems and scenario.read_back is not None:
                answer.problems = read_back_problems(client, scenario, answer)
    except httpx.HTTPError as error:
        return Answer(0, "", None, problems=[f"{type(error).__name__}: {error}"])
    return answer


def answer_problems(scenario: Scenario, response: httpx.Response, answer: Answer) -> list[str]:
    request = scenario.request
    if response.status_code != request.status:
        return [f"status {response.status_code}, expected {request.status}"]
    problems = []
    if scenario.fields and not isinstance(answer.body, dict | list):
        return [f"content-type {answer.content_type or 'none'}: fields need a JSON answer"]
    missing = [name for name in scenario.fields if not has_field(answer.body, name)]
    if missing:
        problems.append(f"the answer lacks {', '.join(missing)}")
    cheap = request.problem(response.status_code, response.content)
    if cheap is not None:
        problems.append(f"the check under load would fail it: {cheap}")
    return problems


def read_back_problems(client: httpx.Client, scenario: Scenario, answer: Answer) -> list[str]:
    """The written row, asked for again on the read-back path: there, and as written."""
    assert scenario.read_back is not None
    created = answer.body if isinstance(answer.body, dict) else {}
    names = READ_BACK_FIELD.findall(scenario.read_back)
    absent = [name for name in names if name not in created]
    if absent:
        return [f"read_back names {', '.join(absent)}, which the answer lacks"]
    path = READ_BACK_FIELD.sub(lambda match: str(created[match.group(1)]), scenario.read_back)
    # With the scenario's own headers (an API key, say): what the write was sent with.
    response = client.get(path, headers=dict(scenario.request.headers))
    if response.status_code != 200:
        return [f"read back on {path}: status {response.status_code}"]
    stored = parsed_body(response)
    if not isinstance(stored, dict):
        return [f"read back on {path}: not a JSON object"]
    changed = [name for name, value in created.items() if stored.get(name) != value]
    if changed:
        return [f"read back on {path}: {', '.join(changed)} differ from the write's answer"]
    return []


def differing_fields(
    plan: PairedPlan,
    scenario: Scenario,
    answers: dict[str, Answer],
    normalisations: tuple[str, ...],
) -> dict[str, list[str]]:
    """Per arm that passed on its own, where its answer differs from the baseline's (or the
    first arm's, where the baseline failed) once normalised; arms that agree are left out."""
    passed = [arm for arm in plan.arms if arm in answers and not answers[arm].problems]
    if len(passed) < 2:
        return {}
    reference, *others = passed

    def comparable(arm: str) -> Any:
        answer = answers[arm]
        return normalise(as_templates(answer.body, answer.sent), normalisations, answer.status)

    found = {}
    expected = comparable(reference)
    for arm in others:
        seen = differences(expected, comparable(arm), scenario.vary)
        if answers[arm].content_type != answers[reference].content_type:
            seen.insert(
                0,
                f"content-type {answers[reference].content_type} vs {answers[arm].content_type}",
            )
        if seen:
            found[arm] = seen
    return found
