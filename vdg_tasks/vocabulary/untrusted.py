"""What comes from outside (an export row, a local copy's ids, a task name, a settings string) checked before
vdg uses it as a path or writes it anywhere.

- :func:`confined` resolves a relative path from outside under the root it must stay in, or raises.
- :func:`path_component` checks a name that becomes one file or folder name.
- :func:`redact` / :func:`redact_value` hide secret-looking settings (``api_key=``, ``--api-key VALUE``,
  ``Authorization: Basic ...``, ``?token=``), URL credentials and values of a known secret shape (``sk-...``,
  ``hf_...``, a private key block) in any text or structure vdg prints or writes (messages, reports, export cards,
  provenance, manifests), in one pass linear in the text's length. They are applied where text is written or
  shown, never where it is read: two runs are compared on their settings as they were.

Written by hand: no library in vdg's stack confines a path against symlinks and ``..`` or knows which
settings are secrets; ``os.path.commonpath`` and ``Path.resolve`` do the path arithmetic.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

__all__ = [
    "REDACTED",
    "UntrustedPath",
    "confined",
    "is_secret_name",
    "path_component",
    "redact",
    "redact_value",
]

REDACTED = "<redacted>"


class UntrustedPath(ValueError):
    """A path or name from outside that would leave the folder it must stay in (or is no name at all).

    Attributes:
        value: the path or name as it came.
        root: the folder it must stay in (None for a bare name).
        reason: why it is refused, in words.
    """

    def __init__(self, value: str, root: Path | None, reason: str, what: str = "path"):
        self.value, self.root, self.reason = value, root, reason
        where = f" (must stay inside {root})" if root is not None else ""
        super().__init__(f"{what} {value!r} refused: {reason}{where}")


def _refusal(text: str) -> str | None:
    """Why ``text`` cannot be a relative path inside a root, judged by its spelling alone (None: it can)."""
    if not text:
        return "it is empty"
    if "\x00" in text:
        return "it holds a NUL character"
    if text.startswith(("/", "\\", "~")) or PureWindowsPath(text).drive or PurePosixPath(text).is_absolute():
        return "it is absolute"
    parts = re.split(r"[\\/]+", text)
    if ".." in parts:
        return "it climbs out with '..'"
    return None


def confined(
    root: str | os.PathLike[str], relative: str, what: str = "path", within: str | os.PathLike[str] | None = None
) -> Path:
    """``root / relative``, resolved, when it stays inside ``root`` (symlinks followed); else raise.

    ``within``: a folder holding ``root`` where the resolved path may also lie, for stores that link their files
    elsewhere under one folder (a Hugging Face snapshot's files are links into its repository's ``blobs/``);
    ``relative`` itself is still judged against ``root``.

    Raises:
        UntrustedPath: ``relative`` is empty, absolute, holds ``..`` or a NUL, or resolves (through a
            symlink) outside ``root`` (or ``within``).
    """
    text = str(relative)
    reason = _refusal(text)
    base = Path(root).expanduser()
    if reason is not None:
        raise UntrustedPath(text, base, reason, what)
    resolved_root = base.resolve()
    target = (resolved_root / text).resolve()
    if target == resolved_root:
        raise UntrustedPath(text, base, "it names the folder itself, not a file or folder inside it", what)
    allowed = resolved_root if within is None else Path(within).expanduser().resolve()
    if os.path.commonpath([allowed, resolved_root]) != str(allowed):
        raise ValueError(f"{allowed} does not hold {resolved_root}")
    if os.path.commonpath([allowed, target]) != str(allowed):
        raise UntrustedPath(text, base, "it resolves outside the folder (a symlink out)", what)
    return target


#: A name that becomes one file or folder name: letters, digits and ``._-+=@,`` not starting with a dot.
_COMPONENT = re.compile(r"[A-Za-z0-9_+=@,-][A-Za-z0-9._+=@,-]{0,199}")


def path_component(name: str, what: str = "name") -> str:
    """``name`` when it is safe as one file or folder name (no separator, no ``..``, not hidden, not empty,
    at most 200 characters of ``[A-Za-z0-9._+=@,-]``); else raise.

    Raises:
        UntrustedPath: naming the name and why.
    """
    text = str(name)
    if not _COMPONENT.fullmatch(text):
        if not text:
            reason = "it is empty"
        elif "\x00" in text:
            reason = "it holds a NUL character"
        elif text.startswith(("/", "\\")) or PureWindowsPath(text).drive:
            reason = "it is absolute"
        elif ".." in re.split(r"[\\/]+", text):
            reason = "it climbs out with '..'"
        elif "/" in text or "\\" in text:
            reason = "it holds a path separator"
        elif text.startswith("."):
            reason = "it starts with a dot"
        else:
            reason = "only letters, digits and . _ - + = @ , are allowed (at most 200)"
        raise UntrustedPath(text, None, reason, what)
    return text


#: Words that make a setting a secret as the LAST segment of its name (``hf_token``, ``client_secret``, ``x-auth``,
#: ``X-Amz-Signature``), never as a first or middle one (``token_strategy``, ``auth_mode``, ``pwd_dir``).
SECRET_SEGMENTS = frozenset(
    {
        "token",
        "secret",
        "auth",
        "authorization",
        "credential",
        "credentials",
        "cookie",
        "cookies",
        "signature",
        "sig",
        "pwd",
        "passphrase",
        "bearer",
        "apikey",
    }
)
#: Segments before a last ``key`` that make it a secret (``api_key``, ``access_key``); ``visual_key`` is no secret.
SECRET_KEY_PREFIXES = frozenset(
    {
        "api",
        "access",
        "secret",
        "private",
        "client",
        "account",
        "subscription",
        "master",
        "signing",
        "session",
        "auth",
        "hf",
        "openai",
        "azure",
        "anthropic",
        "aws",
        "gcp",
        "service",
        "encryption",
        "license",
    }
)
#: Segments before a last secret word that make the setting a count, a tokenizer's token or a switch, no secret
#: (``max_token``, ``pad_token``, ``use_auth``).
NOT_SECRET_PREFIXES = frozenset(
    {
        *("max", "min", "num", "n", "total", "count", "per", "first", "last", "default"),
        *("pad", "eos", "bos", "unk", "sep", "cls", "mask", "image", "video", "audio", "special", "start", "end"),
        *("stop", "new", "use", "enable", "disable", "require", "no", "skip", "with", "need", "has"),
    }
)
#: Secret words inside one-word names, wherever they stand (``DBPASSWORD``, ``secretkey``, ``accesstoken``).
_SECRET_WORD = re.compile(
    r"passw(?:or)?d|(?:api|access|secret|private|auth|client|github|session|refresh)_?(?:key|token)"
)

#: Where a setting's name starts: after no name character (``-`` and ``.`` included, so a scan never restarts
#: inside a name: linear), or right after a ``%XX`` escape (``%3Fpassword%3D...``). The name may be a ``--flag``.
#: The separator: ``=`` or ``:`` (after a closing quote, spaces around), an escaped ``%3D``, or blanks (taken only
#: after a ``--flag`` or an UPPER_CASE variable: ``--api-key sk-1``, ``HF_TOKEN hf_x``).
_SETTING = re.compile(
    r"(?:(?<![A-Za-z0-9_.%-])|(?<=%[0-9A-Fa-f]{2}))"
    r"(?P<name>-{0,2}[A-Za-z0-9_][A-Za-z0-9_.-]*+)"
    r"(?P<sep>[\"']?\s*+[=:]\s*+|%3[Dd]|(?P<blank>[ \t]++))"
)
#: A secret's value: quoted whole (escapes kept), else up to the next separator of a settings string (``,`` ``;``
#: ``&`` whitespace, quote, closing bracket; escaped ``%26`` ``%2C`` ``%3B`` ``%20``).
_VALUE = re.compile(r"\"(?:[^\"\\]|\\.)*+\"|'(?:[^'\\]|\\.)*+'|(?:[^\s,;\"'&)\]}%]|%(?!2[06Cc]|3[Bb]))++", re.DOTALL)
#: A quote that never closes: the value runs to the end of its line.
_OPEN_QUOTE = re.compile(r"[\"'][^\n]*+")
#: ``Authorization: <scheme> <credentials>`` (Basic, Bearer, Token, Digest...): both words are hidden.
_AUTH_VALUE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*+[ \t]++[^\s,;\"'&)\]}]++")
#: ``scheme://user:password@host``: the credentials of a URL.
_URL_CREDENTIALS = re.compile(
    r"(?<![A-Za-z0-9+.-])(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*+://)(?P<userinfo>[^/\s,;\"'<>]+)@"
)
#: Bearer tokens in a header written out as text.
_BEARER = re.compile(r"(?<![A-Za-z0-9_])(?P<word>Bearer\s++)[A-Za-z0-9._~+/=-]++", re.IGNORECASE)
#: Values of a known secret shape under any name: OpenAI, GitHub, Hugging Face, AWS access key ids, Slack tokens,
#: and private key blocks (to the end of the text when the block is cut off).
_SHAPES = re.compile(
    r"(?<![A-Za-z0-9_-])(?:sk-[A-Za-z0-9_-]{17,}+|gh[pousr]_[A-Za-z0-9]{20,}+|github_pat_[A-Za-z0-9_]{20,}+"
    r"|hf_[A-Za-z0-9]{30,}+|(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])|xox[baprs]-[A-Za-z0-9-]{10,}+)"
    r"|-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----(?:.*?-----END [A-Z ]{0,40}PRIVATE KEY-----|.*+)",
    re.DOTALL,
)


def _segments(name: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", str(name))  # apiKey -> api_Key
    return [s for s in re.split(r"[_.\-]+", spaced.lower()) if s]


def is_secret_name(name: str) -> bool:
    """Whether a setting named ``name`` holds a secret.

    It does when its last segment is token, secret, auth, authorization, credential, cookie, signature, sig, pwd
    (...) and the segment before is no count, tokenizer token or switch (``max_token``, ``pad_token``,
    ``use_auth`` are no secret); when its last segment is ``key``, alone or after api, access, secret, private,
    client (...); or when it holds ``password``/``passwd`` or (api|access|secret|private|auth|client)(key|token)
    anywhere (``DBPASSWORD``, ``secretkey``). ``api_key``, ``accessKey``, ``HF_TOKEN``, ``auth``, ``--api-key``
    are secrets; ``visual_key``, ``author``, ``token_strategy``, ``auth_mode`` are not.
    """
    text = str(name)
    return _secret_name(text) if len(text) <= 200 else _judge_name(text)  # a long "name" is not kept in the cache


@lru_cache(maxsize=4096)  # one settings text repeats its few names many times
def _secret_name(name: str) -> bool:
    return _judge_name(name)


def _judge_name(name: str) -> bool:
    parts = _segments(name)
    if not parts:
        return False
    if _SECRET_WORD.search("_".join(parts)):
        return True
    last, before = parts[-1], parts[-2] if len(parts) > 1 else ""
    if last in SECRET_SEGMENTS:
        return before not in NOT_SECRET_PREFIXES
    return last == "key" and (not before or before in SECRET_KEY_PREFIXES)


def _is_auth_name(name: str) -> bool:
    """An authorization header's name (``Authorization``, ``Proxy-Authorization``, ``basic_auth``): its value is
    a scheme and a credential, both hidden."""
    low = name.lower()
    return low in ("auth", "authorization") or low.endswith(("-authorization", "_authorization", "_auth", "-auth"))


def redact(text: str) -> str:
    """``text`` with every secret-looking setting's value, URL credential, bearer token, authorization header
    and value of a known secret shape replaced by ``<redacted>``; everything else as it was.

    One pass over the text, linear in its length: a setting whose name is no secret is not skipped but read on
    from its value, so settings nested in a value (``gen_kwargs=api_key=...``, ``"model_args": "...,auth=..."``)
    are found at any depth without recursion."""
    if not isinstance(text, str) or not text:
        return text
    out = _SHAPES.sub(REDACTED, text)
    out = _URL_CREDENTIALS.sub(lambda m: m["scheme"] + REDACTED + "@", out)
    out = _BEARER.sub(lambda m: m["word"] + REDACTED, out)
    return _hide_settings(out)


def _hide_settings(text: str) -> str:
    parts: list[str] = []
    done = pos = 0
    while (match := _SETTING.search(text, pos)) is not None:
        pos = match.end()
        name = match["name"]
        if match["blank"] is not None and not (name.startswith("-") or (name.isupper() and not name[0].isdigit())):
            continue  # a word and a blank: prose, not a setting
        if not is_secret_name(name.lstrip("-")):
            continue  # read on from its value, which may hold settings
        value = _secret_value(text, pos, name, flag=match["blank"] is not None)
        if value is None:
            continue
        end, opening, closing = value
        parts += [text[done:pos], opening, REDACTED, closing]
        done = pos = end
    parts.append(text[done:])
    return "".join(parts)


def _secret_value(text: str, start: int, name: str, flag: bool) -> tuple[int, str, str] | None:
    """Where the value of secret setting ``name`` starting at ``start`` ends, and the quotes around it ("" when
    unquoted; an unclosed quote hides the rest of its line); None when there is none to hide (no value, the next
    ``--flag`` after a flag, or ``<redacted>`` already)."""
    if text.startswith(REDACTED, start) or (flag and text.startswith("-", start)):
        return None
    if _is_auth_name(name) and (auth := _AUTH_VALUE.match(text, start)):
        return auth.end(), "", ""
    value = _VALUE.match(text, start)
    if value is None:
        unclosed = _OPEN_QUOTE.match(text, start)
        return (unclosed.end(), unclosed[0][0], "") if unclosed else None
    if value[0].strip("\"'") == REDACTED:
        return None
    quote = value[0][0] if value[0][0] in "\"'" else ""
    return value.end(), quote, quote


def redact_value(value: Any) -> Any:
    """A copy of ``value`` (str, mapping, list or tuple, nested) redacted for writing: a mapping's value under a
    secret-looking key becomes ``<redacted>``, every string goes through :func:`redact`."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {
            redact_value(k): (REDACTED if is_secret_name(str(k)) and v not in (None, "") else redact_value(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(redact_value(v) for v in value)
    return value
