"""The image in a compose file, as a team's ``docker-compose.yml`` has its
local AWS (issue 31): Debian's ``docker-compose`` (1.29, file format 2.4)
brings up the SQS service and an application service that
``depends_on: {sqs: {condition: service_healthy}}``: the application starts
only once the image's HEALTHCHECK says healthy, and its one message (sent by
a Python one-liner in the same image, no SDK) is then in the queue."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from tests.container import _docker
from tests.container.test_image import client

# The first test of a run waits for both images to build (about 100 s on an idle
# machine, longer on a busy one): more than the suite's 300 s per test is allowed.
pytestmark = [pytest.mark.container, pytest.mark.timeout(1800)]

#: The application: creates a queue and sends a message with the image's
#: Python (urllib, the awsJson1_0 protocol, unsigned: the image allows it).
APP = r"""
import json, os, urllib.request
def call(action, params):
    req = urllib.request.Request(os.environ["SQS_URL"] + "/", json.dumps(params).encode(),
        {"X-Amz-Target": "AmazonSQS." + action, "Content-Type": "application/x-amz-json-1.0"})
    return json.load(urllib.request.urlopen(req, timeout=10))
url = call("CreateQueue", {"QueueName": "compose-jobs"})["QueueUrl"]
call("SendMessage", {"QueueUrl": url, "MessageBody": "hello from compose"})
print("sent to", url)
"""


def moment(text: str) -> datetime:
    """A time Docker wrote (RFC 3339, nanoseconds) as a datetime."""
    text = re.sub(r"(\.\d{6})\d+", r"\1", text.strip())
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


COMPOSE = """\
version: "2.4"
services:
  sqs:
    image: {image}
    network_mode: host
    environment:
      SQSQUEUE_PORT: "{port}"
      SQSQUEUE_HOST: "127.0.0.1"
  app:
    image: {image}
    network_mode: host
    depends_on:
      sqs:
        condition: service_healthy
    environment:
      SQS_URL: "http://127.0.0.1:{port}"
    entrypoint: ["/opt/sqsqueue/bin/python", "-c"]
    command: {app}
"""


def test_a_dependent_service_waits_for_healthy_then_sends(sqs_image: str, tmp_path: Path) -> None:
    compose = shutil.which("docker-compose")
    if compose is None:
        pytest.skip("no docker-compose (.ci/run installs Debian's as root)")
    port = _docker.free_port()
    (tmp_path / "docker-compose.yml").write_text(
        COMPOSE.format(image=sqs_image, port=port, app=json.dumps([APP]))
    )
    project = _docker.new_name("compose")
    base = [compose, "--no-ansi", "-p", project, "-f", str(tmp_path / "docker-compose.yml")]

    def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*base, *args], capture_output=True, text=True, timeout=timeout, check=False
        )

    try:
        up = run("up", "-d")
        assert up.returncode == 0, up.stderr
        app = f"{project}_app_1"
        code = int(_docker.docker("wait", app, timeout=60).strip())
        app_logs = _docker.docker("logs", app)
        assert code == 0, (app_logs, run("logs").stdout)
        assert "sent to" in app_logs, app_logs
        sqs_state = _docker.Container(f"{project}_sqs_1", port).state()
        assert sqs_state["Health"]["Status"] == "healthy", sqs_state
        # The application started after the server became healthy.
        first_ok = min(
            moment(log["Start"]) for log in sqs_state["Health"]["Log"] if log["ExitCode"] == 0
        )
        started = moment(_docker.docker("inspect", "--format", "{{.State.StartedAt}}", app))
        assert started > first_ok, (started, first_ok)
        sqs = client(f"http://127.0.0.1:{port}")
        url = sqs.get_queue_url(QueueName="compose-jobs")["QueueUrl"]
        [m] = sqs.receive_message(QueueUrl=url)["Messages"]
        assert m["Body"] == "hello from compose"
    finally:
        run("down", "-v", "--remove-orphans")
