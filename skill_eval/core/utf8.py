"""The one way a text file the harness reads (a suite, an eval set, mock outputs, a prompt file)
becomes text: UTF-8, a byte-order mark dropped, and a file saved in another encoding told so in
the same words whichever reader met it, with the first bad byte's offset and line."""

from __future__ import annotations

from ..errors import SkillEvalError


class NotUtf8(SkillEvalError, ValueError):
    """A file's bytes are not UTF-8: `offset` and `line` (1-based) of the first bad byte. Each
    reader catches it and names the file; also a ValueError."""

    def __init__(self, byte: int, offset: int, line: int) -> None:
        super().__init__(
            f"not valid UTF-8 (byte 0x{byte:02x} at offset {offset}); save the file as UTF-8"
        )
        self.offset, self.line = offset, line


def utf8_text(raw: bytes) -> str:
    """`raw` as text; NotUtf8 naming the first byte that is not UTF-8."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise NotUtf8(raw[exc.start], exc.start, line) from None


__all__ = ["NotUtf8", "utf8_text"]
