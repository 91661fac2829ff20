"""Make the small media files WPT-style multimodal tests load (``/media/speech.wav``,
``/images/computer.jpg``, ``/images/pattern.svg``, ``/media/test.webm``).

Run once; the output is committed under ``py_runtime/devtools/wpt_resources/``. The
JPEG and the WebM come from headless Chromium's own encoders.
"""

from __future__ import annotations

import base64
import math
import struct
import wave
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "py_runtime" / "devtools" / "wpt_resources"

SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64">
<rect width="32" height="32" fill="red"/><rect x="32" width="32" height="32" fill="green"/>
<rect y="32" width="32" height="32" fill="blue"/><rect x="32" y="32" width="32" height="32"/>
</svg>
"""

ENCODE_IN_CHROMIUM = """async () => {
  const canvas = Object.assign(document.createElement('canvas'), {width: 64, height: 48});
  const context = canvas.getContext('2d');
  const draw = (frame) => {
    context.fillStyle = frame % 2 ? 'yellow' : 'blue';
    context.fillRect(0, 0, 64, 48);
    context.fillStyle = 'white';
    context.fillRect(8 + frame, 8, 16, 16);
  };
  draw(0);
  const jpeg = await new Promise((resolve) => canvas.toBlob(resolve, 'image/jpeg', 0.8));
  const recorder = new MediaRecorder(canvas.captureStream(10), {mimeType: 'video/webm'});
  const parts = [];
  recorder.ondataavailable = (event) => parts.push(event.data);
  const stopped = new Promise((resolve) => { recorder.onstop = resolve; });
  recorder.start();
  for (let frame = 1; frame <= 10; frame++) {
    draw(frame);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  recorder.stop();
  await stopped;
  const base64 = async (blob) =>
    btoa(String.fromCharCode(...new Uint8Array(await blob.arrayBuffer())));
  return {jpeg: await base64(jpeg), webm: await base64(new Blob(parts))};
}"""


def write_wav(path: Path, seconds: float = 0.5, rate: int = 16000) -> None:
    """A 440 Hz tone, 16-bit mono."""
    samples = (
        int(8000 * math.sin(2 * math.pi * 440 * n / rate)) for n in range(int(seconds * rate))
    )
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"".join(struct.pack("<h", s) for s in samples))


def main() -> None:
    from playwright.sync_api import sync_playwright

    from py_runtime.devtools.browser import launch_args

    (OUT / "media").mkdir(parents=True, exist_ok=True)
    (OUT / "images").mkdir(parents=True, exist_ok=True)
    write_wav(OUT / "media" / "speech.wav")
    (OUT / "images" / "pattern.svg").write_text(SVG)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_args())
        encoded = browser.new_page().evaluate(ENCODE_IN_CHROMIUM)
        browser.close()
    (OUT / "images" / "computer.jpg").write_bytes(base64.b64decode(encoded["jpeg"]))
    (OUT / "media" / "test.webm").write_bytes(base64.b64decode(encoded["webm"]))


if __name__ == "__main__":
    main()
