"""The workers' own task: a round trip that proves a worker consumes from the broker."""

import os
import socket

from workers.app import app
from workers.device import describe_device


@app.task(name="workers.ping")
def ping(message: str = "ping") -> dict[str, object]:
    """Round-trip check: proves a worker consumed from the broker and wrote a result."""
    return {"echo": message, "hostname": socket.gethostname(), "pid": os.getpid(), "device": describe_device()}
