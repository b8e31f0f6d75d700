"""Draw the docs' pictures of ftcost's Slack and Discord messages from the real payloads.

    python docs/render_messages.py            # write docs/img/*.png and docs/img/payloads.json
    python docs/render_messages.py --check    # exit 1 if a payload changed since the pictures

Each picture is drawn from the payload the bot builds now (:mod:`docs.tools.payloads`)
and the SHA-256 of that payload is recorded in ``docs/img/payloads.json``;
``tests/test_docs_pictures.py`` fails when the bot would now send something else.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from docs.tools import discord_picture, slack_picture
from docs.tools.payloads import (
    IMG_DIR,
    PICTURES,
    SLACK_USER_ID,
    USER_NAME,
    Picture,
    payload_sha256,
    read_record,
    record_entry,
    write_record,
)

CHANNEL = "ml-infra"
TIME = "10:24 AM"


def draw(picture: Picture, payload: dict[str, object], out_dir: Path) -> Path:
    """Draw one picture into ``out_dir``; its path."""
    path = out_dir / picture.file
    if picture.platform == "slack":
        slack_picture.render(payload, path, users={SLACK_USER_ID: USER_NAME}, channel=CHANNEL,
                             time=TIME, ephemeral=picture.ephemeral,
                             reply_to=(USER_NAME, picture.followup) if picture.followup else None)
    else:
        discord_picture.render(payload, path, user=USER_NAME, channel=CHANNEL,
                               time=f"Today at {TIME}", ephemeral=picture.ephemeral)
    return path


def stale(record: dict[str, dict[str, str]]) -> list[str]:
    """The pictures whose recorded payload hash is not the payload's hash now."""
    return [p.file for p in PICTURES
            if record.get(p.file, {}).get("sha256") != payload_sha256(p.payload())]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true",
                        help="draw nothing; exit 1 if a payload changed since the pictures")
    parser.add_argument("--out", type=Path, default=IMG_DIR, help="where to write (docs/img)")
    args = parser.parse_args(argv)
    record_path = args.out / "payloads.json"
    if args.check:
        changed = stale(read_record(record_path))
        for file in changed:
            print(f"payload changed: {file}")
        return 1 if changed else 0
    args.out.mkdir(parents=True, exist_ok=True)
    entries = {}
    for picture in PICTURES:
        payload = picture.payload()
        path = draw(picture, payload, args.out)
        entries[picture.file] = record_entry(picture, payload)
        print(f"{path} ({path.stat().st_size / 1000:.0f} KB)")
    write_record(entries, record_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
