"""Clone URLs without their secrets: a password, or the token that stands in an http(s) URL's user
part, never reaches a message, a log line or a workspace name."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

# Clone URLs git understands, and scp-like user@host:path (a leading "-" would be an option).
URL = re.compile(r"(?:https?|ssh|git|file)://", re.IGNORECASE)
SCP_LIKE = re.compile(r"[^-/@:\s][^/@:\s]*@[^/:\s]+:")


def redact_url(url: str) -> str:
    """The URL without its secrets: the password, and for http(s) the whole user part, which is
    often a token (https://TOKEN@host/x, https://x-access-token:TOKEN@host/x). An ssh user name
    is kept: https://user:secret@host/x -> https://host/x, ssh://git:pw@host/x -> ssh://git@host/x.
    """
    if not URL.match(url):
        return url
    parts = urlsplit(url)
    userinfo, at, hostport = parts.netloc.rpartition("@")
    if not at:
        return url
    user = "" if parts.scheme.lower() in HTTP_SCHEMES else userinfo.partition(":")[0]
    if user == userinfo:
        return url
    return parts._replace(netloc=f"{user}@{hostport}" if user else hostport).geturl()


# Schemes whose user part is dropped from names and messages: a token often stands there.
HTTP_SCHEMES = ("http", "https")


def without_password(text: str, url: str) -> str:
    redacted = redact_url(url)
    if redacted == url:
        return text
    text = text.replace(url, redacted)
    parts = urlsplit(url)
    userinfo = parts.netloc.rpartition("@")[0]
    user = "" if parts.scheme.lower() in HTTP_SCHEMES else userinfo.partition(":")[0]
    for secret in {userinfo, unquote(userinfo)}:
        text = text.replace(f"{secret}@", f"{user}@" if user else "")
    hidden = {userinfo.partition(":")[2], unquote(userinfo.partition(":")[2])}
    if not user:
        hidden |= {userinfo.partition(":")[0], unquote(userinfo.partition(":")[0])}
    for secret in sorted(hidden, key=len, reverse=True):
        if secret:
            text = text.replace(secret, "***")
    return text
