"""How the PostgreSQL store reports what went wrong: every psycopg error becomes a StoreError that
names the operation and the server (never its password) and says what to check."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

import psycopg

from docshelf.errors import StoreError


def without_password(url: str) -> str:
    """`url` with any password taken out, to be shown in messages and in `docshelf status`."""
    parts = urlsplit(url)
    userinfo, at, hosts = parts.netloc.rpartition("@")
    netloc = f"{userinfo.partition(':')[0]}@{hosts}" if at else hosts
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "password"]
    return urlunsplit(parts._replace(netloc=netloc, query=urlencode(query, safe="/:")))


def passwords(url: str) -> list[str]:
    """Every spelling of the password in `url`, to be scrubbed from server messages."""
    parts = urlsplit(url)
    userinfo, at, _ = parts.netloc.rpartition("@")
    found = [userinfo.partition(":")[2]] if at else []
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k == "password"]
    spellings = {s for p in found for s in (p, unquote(p))}
    return sorted((s for s in spellings if s), key=len, reverse=True)


def message(error: BaseException, secrets: Sequence[str]) -> str:
    """The error's text as sentences on one line, without the password."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = " ".join(line if line.endswith((".", "?", "!", ":")) else f"{line}." for line in lines)
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def store_error(
    action: str, location: str, error: psycopg.Error | UnicodeEncodeError, secrets: Sequence[str]
) -> StoreError:
    detail = message(error, secrets)
    if isinstance(error, psycopg.errors.DiskFull):
        advice = (
            "The server's disk is full: free space there, then try again; what was stored "
            "before is unchanged"
        )
    elif isinstance(error, psycopg.OperationalError):  # also the pool's timeouts
        advice = (
            "The store is unavailable: is PostgreSQL running there and accepting connections? "
            "Check it and the URL, then try again; docshelf reconnects by itself once the "
            "server is back"
        )
    elif isinstance(error, psycopg.errors.UndefinedFile):
        advice = (
            "The pgvector extension is not installed on that server: install pgvector "
            "(0.6 or later) there, then try again"
        )
    elif isinstance(error, psycopg.errors.InsufficientPrivilege):
        advice = (
            "The user lacks a privilege: have an administrator run CREATE EXTENSION vector in "
            "that database and grant the user CREATE on its schema, then try again"
        )
    elif isinstance(error, psycopg.DataError | UnicodeEncodeError):
        advice = (
            "PostgreSQL text holds neither NUL characters nor unpaired surrogates (left by file "
            "names that are not UTF-8): remove them from the names or documents, then try again"
        )
    else:
        advice = (
            "Check the server's log; if the store is damaged, point --store at a new database "
            "and index again"
        )
    return StoreError(f"{action} at {location} failed: {detail} {advice}")


def unavailable(location: str, error: psycopg.Error, secrets: Sequence[str]) -> StoreError:
    return StoreError(
        f"the store at {location} is unavailable: PostgreSQL cannot be reached "
        f"({message(error, secrets)}) Check that the server is running and reachable, then "
        "try again; docshelf reconnects by itself once it is back"
    )
