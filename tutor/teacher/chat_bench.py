"""Teacher latency: how long a course-notes answer takes, and what our relay adds to a model's tokens.

    python -m tutor.teacher.chat_bench                      # course-notes answer latency
    python -m tutor.teacher.chat_bench --llm-url URL        # plus the LLM first-token relay latency

Course-notes latency is measured over the retrieval evaluation questions, as in-process ASGI requests
to the streaming endpoint. With an OpenAI-compatible server, it also measures how long the first
token takes to cross from our process to a client over HTTP (uvicorn on loopback).
"""

from __future__ import annotations

import argparse
import io
import platform
import statistics
import time

from tutor.startup import load_settings_or_exit


def chat_bench(llm_url: str | None, repeats: int) -> None:
    import asyncio
    import json
    import os
    import socket
    import subprocess
    import sys
    import urllib.request

    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import AsyncClient, Client

    from tutor.teacher.chat import start_conversation
    from tutor.teacher.retrieval_bench import load_questions, p95

    settings.ALLOWED_HOSTS.append("testserver")  # the in-process test client's host name
    settings.TEACHER_MESSAGES_PER_MINUTE = 10**6  # one bench user asks every question: no rate limit here
    call_command("migrate", verbosity=0)
    call_command("load_shipped_course", verbosity=0, stdout=io.StringIO())
    user, _ = get_user_model().objects.get_or_create(username="teacher-bench")
    questions = [q.q for q in load_questions()[1]]
    print(f"device: {platform.processor() or platform.machine()}, Python {platform.python_version()}")

    async def notes_run() -> list[float]:
        client = AsyncClient()
        await client.aforce_login(user)
        samples = []
        for q in (questions * repeats)[: max(len(questions), repeats)]:
            conversation = await asyncio.to_thread(start_conversation, user=user)
            t0 = time.perf_counter()
            response = await client.post(
                f"/api/teacher/conversations/{conversation.pk}/ask/", {"question": q}, content_type="application/json"
            )
            if response.status_code != 200:
                raise SystemExit(f"the teacher endpoint answered {response.status_code}: {response.content[:200]!r}")
            async for _ in response.streaming_content:
                pass
            samples.append((time.perf_counter() - t0) * 1000)
        return samples

    samples = asyncio.run(notes_run())
    print(
        f"course-notes answer, whole streamed response (retrieval, composition, storing both turns): "
        f"median {statistics.median(samples):.1f} ms, p95 {p95(samples):.1f} ms over "
        f"{len(samples)} questions (in-process ASGI requests; perf_counter)"
    )
    if not llm_url:
        print("LLM relay: skipped (pass --llm-url http://127.0.0.1:PORT/v1 of a running OpenAI-compatible server)")
        return

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "LLM_BASE_URL": llm_url, "LLM_MAX_TOKENS": "24", "TEACHER_MESSAGES_PER_MINUTE": "1000000"}
    web = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "tutor.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-access-log",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except Exception:
                time.sleep(0.2)
        client = Client()
        client.force_login(user)
        token = "a" * 32
        cookie = f"sessionid={client.cookies['sessionid'].value}; csrftoken={token}"
        gaps = []
        import http.client

        for q in questions[: min(len(questions), max(5, repeats // 4))]:
            conversation = start_conversation(user=user)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            conn.request(
                "POST",
                f"/api/teacher/conversations/{conversation.pk}/ask/",
                json.dumps({"question": q}),
                {
                    "Cookie": cookie,
                    "X-CSRFToken": token,
                    "Content-Type": "application/json",
                    "Referer": f"http://127.0.0.1:{port}/",
                },
            )
            response = conn.getresponse()
            while line := response.readline():
                text = line.decode()
                if text.startswith("data: ") and '"received_at"' in text:
                    gaps.append((time.time() - json.loads(text[6:])["received_at"]) * 1000)
                    break
            conn.close()
        print(
            f"LLM relay: first token, from our process receiving it from the model server to an HTTP client "
            f"reading it through uvicorn: median {statistics.median(gaps):.2f} ms, max {max(gaps):.2f} ms over "
            f"{len(gaps)} questions (wall clock on one machine, loopback)"
        )
    finally:
        web.terminate()
        web.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tutor.teacher.chat_bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--llm-url", help="base URL of a running OpenAI-compatible server, e.g. llama.cpp's")
    parser.add_argument("--repeats", type=int, default=96)
    args = parser.parse_args()
    load_settings_or_exit()
    chat_bench(args.llm_url, args.repeats)


if __name__ == "__main__":
    main()
