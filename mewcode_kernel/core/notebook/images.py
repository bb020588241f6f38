"""Image outputs as the model sees them: checked, and downscaled so the long
side is at most ``MAX_SIDE`` pixels (what Anthropic reads without scaling
it down itself), as an ``ImageBlock``; or, when the payload is not a usable
image, a one-line note saying why.

Only PNG and JPEG are decoded (by Pillow); the declared type must match
the bytes, and the picture's size is read from its header before any
pixel is decoded, so a small file claiming a huge picture is refused.
"""

from __future__ import annotations

import base64
import binascii
import io

from ..messages import ImageBlock, ImageSource

__all__ = ["IMAGE_TYPES", "MAX_IMAGE_BYTES", "MAX_PIXELS", "MAX_SIDE", "image_for_model"]

MAX_SIDE = 1568
IMAGE_TYPES = {"image/png": "PNG", "image/jpeg": "JPEG"}
MAX_IMAGE_BYTES = 20_000_000
"""Larger payloads are not decoded."""
MAX_PIXELS = 60_000_000
_SEND_BYTES = 4_500_000  # what a provider takes per image (5 MB), with room


def _decode(data: object) -> bytes | None:
    if isinstance(data, list):
        data = "".join(x for x in data if isinstance(x, str))
    if not isinstance(data, str):
        return None
    text = "".join(data.split())
    if len(text) > MAX_IMAGE_BYTES * 4 // 3 + 4:
        return b""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def image_for_model(mime: str, data: object, note: str) -> ImageBlock | str:
    """The image (base64 ``data`` of type ``mime``) for the model, or why not."""
    what = f"{mime} image ({note})"
    raw = _decode(data)
    if raw is None:
        return f"[{what}: the data is not valid base64; not shown]"
    if raw == b"" or len(raw) > MAX_IMAGE_BYTES:
        return f"[{what}: larger than {MAX_IMAGE_BYTES // 1_000_000} MB; not shown]"
    fmt = IMAGE_TYPES.get(mime)
    if fmt is None:
        return f"[{what}: not shown: only PNG and JPEG outputs are read]"
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError:  # pragma: no cover - Pillow is a dependency
        return f"[{what}: not shown: Pillow is not installed]"
    try:
        with Image.open(io.BytesIO(raw), formats=[fmt]) as img:
            width, height = img.size
            if width < 1 or height < 1 or width * height > MAX_PIXELS:
                return f"[{what}: {width}×{height} pixels is not a usable size; not shown]"
            if max(width, height) <= MAX_SIDE and len(raw) <= _SEND_BYTES:
                img.verify()  # a damaged stream fails here, not at the provider
                encoded = base64.b64encode(raw).decode("ascii")
                return ImageBlock(source=ImageSource(media_type=mime, data=encoded), note=note)
            return _downscaled(img, mime, fmt, note)
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError):
        return f"[{what}: the data is not a readable {fmt} image; not shown]"


def _downscaled(img: object, mime: str, fmt: str, note: str) -> ImageBlock | str:
    from PIL import Image

    assert isinstance(img, Image.Image)
    if fmt == "JPEG":
        img.draft("RGB", (MAX_SIDE, MAX_SIDE))  # decode at a reduced scale: fast and small
    img.load()
    scale = MAX_SIDE / max(img.size)
    if scale < 1:
        size = (max(1, round(img.width * scale)), max(1, round(img.height * scale)))
        img = img.resize(size, Image.Resampling.LANCZOS)
    out = io.BytesIO()
    if fmt == "JPEG":
        img.convert("RGB").save(out, "JPEG", quality=85)
    else:
        img.save(out, "PNG")
    data = out.getvalue()
    if len(data) > _SEND_BYTES:
        out = io.BytesIO()
        img.convert("RGB").save(out, "JPEG", quality=80)
        data, mime = out.getvalue(), "image/jpeg"
        if len(data) > _SEND_BYTES:
            return f"[{mime} image ({note}): too large even scaled down; not shown]"
    encoded = base64.b64encode(data).decode("ascii")
    return ImageBlock(
        source=ImageSource(media_type=mime, data=encoded),
        note=f"{note}, scaled to {img.width}×{img.height}",
    )
